#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# demo.sh: `make demo`: profiles a bundled Go service that serves requests under trace IDs.
#
# Builds testdata/demo with the newest installed Go, starts it with its own
# load generator, records 5 seconds with ctxprof-go (--wall, --html), and
# shows the records, CPU per trace ID, and the top functions of one trace,
# all with jq, and where the report page is.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

v=$(go_toolchains | tail -n 1)
bin=$(go_build "$v" plain demo)
out=$OUTPUT/demo.jsonl
echo "== ctxprof-go check: can we read trace IDs from the demo service (go$v)?"
"$CTXPROF" check "$bin"
echo
if ! why=$(e2e_capable); then
	echo "demo: cannot record here: $why (run: sudo make demo)" >&2
	exit 1
fi
"$bin" -load 40 >"$OUTPUT/demo.addr" &
svc=$!
trap 'kill $svc 2>/dev/null; wait $svc 2>/dev/null || true' EXIT
sleep 1
echo "== demo service $(cat "$OUTPUT/demo.addr") (pid $svc), sending itself 40 requests/s"
echo "== sudo ctxprof-go -p $svc --wall -d 5 --html $OUTPUT/demo.html -o $out"
"$CTXPROF" -p "$svc" --wall -d 5 --html "$OUTPUT/demo.html" -o "$out"
echo
echo "== two CPU records (their first stack cut to 3 frames and 3 sample times):"
jq -s -c 'map(select(.origin == "sampling"))[0:2][] | del(.mappings) |
	.stacks |= (.[0:1] | map(.frames |= .[0:3] | .times_us |= .[0:3] | .goids |= .[0:3]))' "$out"
echo
echo "== where trace 4bf92f3577b34da6a3ce929d0e0e4736 spent its CPU (leaf functions):"
jq -s -c '[.[] | select(.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736" and .origin == "sampling") | .stacks[] |
	{func: .frames[0].func, samples}] | group_by(.func) |
	map({func: .[0].func, samples: (map(.samples) | add)}) | sort_by(-.samples) | .[0:5][]' "$out"
echo
echo "== ... and where it waited (--wall: wait reasons):"
jq -s -c '[.[] | select(.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736" and .origin == "wall")] |
	group_by(.wait_reason // .state) | map({what: (.[0].wait_reason // .[0].state), ms: (map(.wall_ns) | add / 1e6)}) |
	sort_by(-.ms) | .[0:5][]' "$out"
echo
echo "== the same 5 s as a picture, one file: open $OUTPUT/demo.html in a browser"
