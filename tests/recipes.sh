#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# recipes.sh: every jq recipe of --help, the man page and the README works on a --wall recording.
#
# testdata/demo (newest Go), sending itself requests under trace IDs, its
# handlers labelled and its requests' traceparents read, is recorded with
# --wall and --alloc for 4 s: CPU, wall, request, alloc and inherited
# records alike. Every
# jq command the user is shown (tests/recipes.py finds them: --help and
# convert --help, the man page's EXAMPLES, the README's code) runs on it,
# $T a trace of the demo's: each exits 0 and says nothing on stderr.
# The same recording is `make demo`'s: no record of a trace, and no line
# of the exit summary, names the collector's workers or a pooled
# connection's readLoop and writeLoop (they outlive any request).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "jq recipes"
v=$(go_toolchains | tail -n 1)
bin=$(go_build "$v" plain demo) || { not_ok "go$v: demo build failed"; done_testing; }
"$bin" -load 40 >"$work/demo.addr" 2>/dev/null &
demo=$!
wait_exec "$demo"
if ctxprof_start "$work/err" "$work/prof.jsonl" -p "$demo" --wall --alloc -d 4; then
	wait "$ctxprof"
	check_eq "ctxprof-go -p demo --wall --alloc -d 4 exits" 0 "$?"
else
	not_ok "ctxprof-go did not start: $(tail -n 2 "$work/err")"
fi
kill "$demo" 2>/dev/null
echo "# origins: $(jq -r .origin "$work/prof.jsonl" | sort | uniq -c | xargs)"
outliving='runtime.gcBgMarkWorker|net/http.\(\*persistConn\).(readLoop|writeLoop)'
check_eq "the demo's records of a trace with the collector's workers or the pool's goroutines in their stacks" "" \
	"$(jq -r --arg re "^($outliving)$" 'select(.trace_id and (.origin == "sampling" or .origin == "wall"))
		| select(any(.stacks[].frames[].func; test($re))) | "\(.trace_id) \(.origin) \(.samples)"' "$work/prof.jsonl" | head -n 3 | xargs)"
check_eq "the demo's exit summary names none of them" "" "$(grep -E 'gcBgMark|readLoop|writeLoop' "$work/err")"
ln -sf prof.jsonl "$work/cpu.jsonl"
ln -sf prof.jsonl "$work/w.jsonl"
ln -sf prof.jsonl "$work/mem.jsonl"
"$CTXPROF" check --json "$bin" >"$work/check.json"
python3 "$TOP/tests/recipes.py" "$CTXPROF" "$TOP/cmd/ctxprof-go.8" "$TOP/README.md" "$work" \
	4bf92f3577b34da6a3ce929d0e0e4736 >"$work/verdicts" 2>&1
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	"1.."*) ;;
	*) printf '# %s\n' "$line" ;;
	esac
done <"$work/verdicts"
done_testing
