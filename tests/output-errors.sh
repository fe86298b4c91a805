#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# output-errors.sh: a record that cannot be written is an error: a full device, a reader that went away.
#
# Target: testdata/traced built by the newest toolchain (plain), busy for the
# whole test. Every case must exit 1 and name the file and the reason in one
# stderr line:
# 1. -o /dev/full, stdout redirected to /dev/full, --pprof /dev/full (with
#    the JSON lines still complete in their own file), -f with stdout on
#    /dev/full, `convert -f` to /dev/full, --html /dev/full, and `convert
#    --html` and `--speedscope` to /dev/full.
# 2. A reader that goes away: `ctxprof-go -p P -i 1 -d 290 | head -n 1` (and
#    `| head -c 100`) must end on its own, long before -d, quietly (exit 0,
#    no error said, as perf and jq end), with head's line a whole record;
#    and `--pin DIR --uprobe ... | head -n 1` must also remove its pins on
#    the way out.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "output errors"
v=$(go_toolchains | tail -n 1)
bin=$(go_build "$v" plain) || { not_ok "go$v: build failed"; done_testing; }
"$bin" -d 600s 2>/dev/null &
tp=$!
sleep 0.5

# expect_failure NAME PATTERN RC ERRFILE: exit status 1 and a line matching PATTERN
expect_failure() {
	local line
	line=$(grep -m1 -E "$2" "$4")
	if [ "$3" -eq 1 ] && [ -n "$line" ]; then
		ok "$1: exit 1, '$line'"
	else
		not_ok "$1: exit $3, stderr: $(tr '\n' ' ' <"$4" | head -c 400)"
	fi
}

"$CTXPROF" -p "$tp" -F 999 -d 3 -o /dev/full 2>"$work/full-o.err"
expect_failure "-o /dev/full" 'failed to write records to /dev/full: No space left on device' $? "$work/full-o.err"

"$CTXPROF" -p "$tp" -F 999 -d 3 >/dev/full 2>"$work/full-stdout.err"
expect_failure "stdout on /dev/full" 'failed to write records to stdout: No space left on device' $? "$work/full-stdout.err"

"$CTXPROF" -p "$tp" -F 999 -d 3 --pprof /dev/full -o "$work/with-pprof.jsonl" 2>"$work/full-pprof.err"
expect_failure "--pprof /dev/full" 'failed to write the pprof profile /dev/full: No space left on device' $? "$work/full-pprof.err"
check_eq "--pprof /dev/full: the JSON lines are still whole" same \
	"$(records_hold_stats "$work/with-pprof.jsonl" "$work/full-pprof.err")"

"$CTXPROF" -p "$tp" -F 999 -d 3 -f >/dev/full 2>"$work/full-folded.err"
expect_failure "-f with stdout on /dev/full" 'failed to write (folded stacks|records) to stdout: No space left on device' $? "$work/full-folded.err"

"$CTXPROF" convert -f "$work/with-pprof.jsonl" >/dev/full 2>"$work/full-convert.err"
expect_failure "convert -f to /dev/full" 'failed to write .*stdout: No space left on device' $? "$work/full-convert.err"

"$CTXPROF" -p "$tp" -F 999 -d 3 --html /dev/full -o /dev/null 2>"$work/full-html.err"
expect_failure "--html /dev/full" 'failed to write the report /dev/full: No space left on device' $? "$work/full-html.err"
for f in html speedscope; do
	"$CTXPROF" convert --$f /dev/full "$work/with-pprof.jsonl" 2>"$work/full-$f.err"
	expect_failure "convert --$f /dev/full" 'failed to write the (report|speedscope file) /dev/full: No space left on device' $? "$work/full-$f.err"
done

# a reader that goes away, after a part of a line (| head -c 100): the same
timeout -s KILL 300 "$CTXPROF" -p "$tp" -i 1 -d 290 2>"$work/pipec.err" | head -c 100 >/dev/null
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ] && ! grep -q 'failed\|Broken pipe' "$work/pipec.err"; then
	ok "| head -c 100 ends the run quietly: exit 0, no error said"
else
	not_ok "| head -c 100: exit $rc; stderr: $(tr '\n' ' ' <"$work/pipec.err" | head -c 400)"
fi
# a reader that goes away; `timeout` only keeps a hang from stalling the suite
start=$(date +%s)
timeout -s KILL 300 "$CTXPROF" -p "$tp" -i 1 -d 290 2>"$work/pipe.err" | head -n 1 >"$work/pipe.out"
rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))
if [ "$rc" -eq 0 ] && ! grep -q 'failed\|Broken pipe' "$work/pipe.err" && [ "$secs" -lt 200 ] &&
	jq -e 'has("trace_id") and has("stacks")' "$work/pipe.out" >/dev/null 2>&1; then
	ok "a reader that goes away (| head -n 1) ends a -d 290 run on its own after ${secs}s, quietly (exit 0); head got a whole record"
else
	not_ok "| head -n 1: exit $rc after ${secs}s; stderr: $(tr '\n' ' ' <"$work/pipe.err" | head -c 400)"
fi

# events to a pipe whose reader leaves: records go out at once, the pins are removed
ex=$work/ex
mkdir -p "$ex"
gcc -O1 -g -fno-omit-frame-pointer "$TOP/testdata/custom/report_trace.c" -o "$ex/report_trace" ||
	{ not_ok "building report_trace failed"; done_testing; }
pindir=/sys/fs/bpf/ctxprof-outerr-$$
{ timeout -s KILL 300 "$CTXPROF" --pin "$pindir" --uprobe "$ex/report_trace:report_trace" -d 290 \
	2>"$work/evpipe.err"; echo "$?" >"$work/evpipe.rc"; } | head -n 1 >"$work/evpipe.out" &
hp=$!
# start-up can take many seconds on a busy machine
for ((i = 0; i < 3000; i++)); do
	grep -q 'Ctrl-C to stop' "$work/evpipe.err" 2>/dev/null && break
	sleep 0.1
done
"$ex/report_trace" >/dev/null
wait "$hp"
rc=$(cat "$work/evpipe.rc" 2>/dev/null)
if [ "$rc" = 0 ] && ! grep -q 'failed\|Broken pipe' "$work/evpipe.err" &&
	[ "$(jq -r .origin "$work/evpipe.out" 2>/dev/null)" = uprobe ] && [ ! -e "$pindir/custom__generic" ]; then
	ok "events to a pipe whose reader leaves: the first record arrives, then a quiet end (exit 0), pins removed"
else
	not_ok "events to a closed pipe: exit ${rc:-?}, pins: $(ls "$pindir" 2>&1 | tr '\n' ' '), stderr: $(tr '\n' ' ' <"$work/evpipe.err" | head -c 400)"
fi
rm -rf "$pindir"
done_testing
