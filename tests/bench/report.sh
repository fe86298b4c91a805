#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# report.sh: make bench section 10: the report page and speedscope on a minute of 200 targets: convert time, size, load and click.
#
# 200 Go processes, niced, as --all finds them on a busy host: 100 of
# testdata/traced (six fixed traces each, the installed toolchains, plain
# and stripped) and 100 of testdata/labelswitch (a fresh trace ID every few
# ms, 1 to 12 labels). ctxprof-go --all records them for 60 s (records
# every 10 s) with --html, then again with --wall. For each recording:
# - the JSON lines: size, and the bytes a sample that times_us, goids and
#   weights add (the same lines without them, through jq);
# - convert --html and convert --speedscope: wall time, median of 3 (bar:
#   <= 2 s for --html of the CPU minute), and the files' sizes;
# - the page in Debian's headless Chromium (tests/browser/report-check.js
#   timing), median of 3 fresh browsers: from navigation to drawn
#   (bar: <= 1000 ms), a click on the costliest trace until it is drawn
#   (bar: <= 1000 ms), and the whole-run tab;
# - how long the live run took past its -d to write its page and exit.
# Runs alone too: bash tests/bench/report.sh (after make bench's build).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../profile-lib.sh"
. "$(dirname "$0")/../browser-lib.sh"

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null; rm -rf "$work"' EXIT
if ! why=$(browser_setup); then
	echo "report bench: $why" >&2
	exit 1
fi
N=${N:-200}
SECS=${SECS:-60}
median_of() { sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "none") }'; }
ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }
status=0

mapfile -t tc < <(go_toolchains)
kinds=()
for v in "${tc[@]}"; do kinds+=("$(go_build "$v" plain)" "$(go_build "$v" stripped)"); done
switch=$(go_build "${tc[-1]}" plain labelswitch)
pids=()
for ((i = 0; i < N; i++)); do
	if ((i % 2)); then
		nice -n 10 "$switch" -d 600s -workers 1 >/dev/null 2>&1 &
	else
		nice -n 10 "${kinds[(i / 2) % ${#kinds[@]}]}" -d 600s -workers 1 >/dev/null 2>&1 &
	fi
	pids+=($!)
done
sleep 1
printf '\n10. The report page and speedscope: %d targets (%d of testdata/traced, %d of testdata/labelswitch), --all for %d s\n' \
	"$N" $(((N + 1) / 2)) $((N / 2)) "$SECS"

# record NAME ARGS...: a minute of --all, with --html, JSON lines beside
record() {
	local name=$1 t0
	shift
	t0=$EPOCHREALTIME
	"$CTXPROF" --all -d "$SECS" "$@" --html "$work/$name.live.html" -o "$work/$name.jsonl" 2>"$work/$name.err" || {
		echo "report bench: ctxprof-go $*: $(tail -n 2 "$work/$name.err")" >&2
		return 1
	}
	awk -v a="$t0" -v b="$EPOCHREALTIME" -v s="$SECS" 'BEGIN { printf "%.0f\n", (b - a - s) * 1000 }' >"$work/$name.past"
}

# measure NAME: its conversions and its page in Chromium, on a machine the
# targets no longer keep busy (200 spinning processes leave a tool 5% of it)
measure() {
	local name=$1 t0 size bare conv ss ready script click run samples records traces
	read -r samples records traces < <(jq -s -r '"\(map(.samples) | add) \(length) \(map(.trace_id) | unique | length)"' "$work/$name.jsonl")
	size=$(stat -c %s "$work/$name.jsonl")
	jq -c 'if .stacks then .stacks |= map(del(.times_us, .goids, .weights)) else . end' "$work/$name.jsonl" >"$work/$name.bare.jsonl"
	bare=$(stat -c %s "$work/$name.bare.jsonl")
	printf '%s: %s samples in %s records, %s traces; JSON lines %s bytes, %.1f bytes a sample, of which times_us, goids, weights %.1f\n' \
		"$name" "$samples" "$records" "$traces" "$size" "$(awk -v s="$size" -v n="$samples" 'BEGIN { print s / n }')" \
		"$(awk -v s="$size" -v b="$bare" -v n="$samples" 'BEGIN { print (s - b) / n }')"
	: >"$work/conv"
	: >"$work/ss"
	for _ in 1 2 3; do
		t0=$EPOCHREALTIME
		"$CTXPROF" convert --html "$work/$name.html" "$work/$name.jsonl" 2>/dev/null
		ms_since "$t0" >>"$work/conv"
		echo >>"$work/conv"
		t0=$EPOCHREALTIME
		"$CTXPROF" convert --speedscope "$work/$name.speedscope.json" "$work/$name.jsonl" 2>/dev/null
		ms_since "$t0" >>"$work/ss"
		echo >>"$work/ss"
	done
	conv=$(median_of <"$work/conv")
	ss=$(median_of <"$work/ss")
	printf '%s: convert --html %s ms (median of 3; runs %s), page %s bytes; convert --speedscope %s ms, file %s bytes; the live run wrote its page and exited %s ms after -d (its targets still busy)\n' \
		"$name" "$conv" "$(tr '\n' ' ' <"$work/conv")" "$(stat -c %s "$work/$name.html")" "$ss" \
		"$(stat -c %s "$work/$name.speedscope.json")" "$(cat "$work/$name.past")"
	: >"$work/timing"
	for _ in 1 2 3; do
		node "$TOP/tests/browser/report-check.js" timing "$work/$name.html" >>"$work/timing" || return 1
	done
	ready=$(jq -r .ready_ms "$work/timing" | median_of)
	script=$(jq -r .script_ms "$work/timing" | median_of)
	click=$(jq -r .click_ms "$work/timing" | median_of)
	run=$(jq -r .whole_run_ms "$work/timing" | median_of)
	printf '%s: in headless Chromium, drawn %s ms after navigation (its script %s ms of it), a click on the costliest trace drawn in %s ms, the whole run in %s ms (medians of 3 browsers)\n' \
		"$name" "$ready" "$script" "$click" "$run"
	echo "$conv $ready $click" >"$work/$name.bars"
}

record cpu || status=1
record wall --wall || status=1
kill "${pids[@]}" 2>/dev/null || true
wait 2>/dev/null || true
sleep 2
# REPORT_KEEP=DIR keeps the recordings, to look into them after
[ -n "${REPORT_KEEP:-}" ] && mkdir -p "$REPORT_KEEP" && cp "$work"/*.jsonl "$REPORT_KEEP/"
measure cpu || status=1
read -r conv ready click <"$work/cpu.bars" || status=1
printf 'bars (the CPU minute): convert --html %s ms (must be <= 2000), drawn %s ms (<= 1000), click %s ms (<= 1000)\n' \
	"$conv" "$ready" "$click"
awk -v c="$conv" -v r="$ready" -v k="$click" 'BEGIN { exit !(c <= 2000 && r <= 1000 && k <= 1000) }' || status=1
measure wall || status=1
exit $status
