#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-lifecycle.sh: how a recording ends: target exits, SIGINT, SIGTERM, duration, interval.
#
# Uses testdata/traced built by the newest installed Go (plain). Each case
# checks the exit status, that records were flushed, and that the per-record
# sample counts add up to the statistics line on stderr.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "recording lifecycle"
v=$(go_toolchains | tail -n 1)
bin=$(go_build "$v" plain) || { not_ok "build go$v plain"; done_testing; }

# samples_agree NAME: JSON sample total equals the statistics line
samples_agree() {
	local r
	r=$(records_hold_stats "$work/out.jsonl" "$work/err")
	if [ "$r" = same ]; then
		ok "$1: records hold all $(jq -s 'map(.samples) | add' "$work/out.jsonl") samples the statistics line counts"
	else
		not_ok "$1: $r"
	fi
}

# a target that exits mid-run: records flushed, exit 0, a note on stderr
"$bin" -d 2s 2>/dev/null &
t=$!
start=$(date +%s)
"$CTXPROF" -p "$t" -d 30 -o "$work/out.jsonl" 2>"$work/err"
rc=$?
elapsed=$(( $(date +%s) - start ))
check_eq "target exits mid-run: exit status" 0 "$rc"
if [ "$elapsed" -lt 15 ] && grep -q "pid $t .* exited" "$work/err" && grep -q "every target has exited" "$work/err"; then
	ok "target exits mid-run: ctxprof-go noticed and stopped after ${elapsed}s"
else
	not_ok "target exits mid-run: ran ${elapsed}s; stderr: $(tr '\n' ' ' <"$work/err")"
fi
samples_agree "target exits mid-run"

# kill -9 mid-run: the same, for a target that gets no chance to exit
"$bin" -d 30s 2>/dev/null &
t=$!
disown "$t" # no "Killed" from the shell in the test's output
( sleep 2; kill -9 "$t" ) &
"$CTXPROF" -p "$t" -d 20 -o "$work/out.jsonl" 2>"$work/err"
rc=$?
check_eq "kill -9 of the target mid-run: exit status" 0 "$rc"
if grep -q "pid $t .* exited" "$work/err" && [ "$(jq -s length "$work/out.jsonl")" -gt 0 ]; then
	ok "kill -9 of the target mid-run: its records flushed ($(jq -s length "$work/out.jsonl")), a note on stderr"
else
	not_ok "kill -9 of the target mid-run: stderr: $(tr '\n' ' ' <"$work/err")"
fi
samples_agree "kill -9 of the target mid-run"

# a target that execs a shell: no longer read as Go, no garbage records
"$bin" -d 30s -exec-after 2s 2>/dev/null &
t=$!
"$CTXPROF" -p "$t" -d 5 -o "$work/out.jsonl" 2>"$work/err"
rc=$?
kill "$t" 2>/dev/null
check_eq "a target that execs /bin/sh: exit status" 0 "$rc"
bad=$(jq -s '[.[].stacks[] | select(all(.frames[]; .func | test("^(main|runtime|time|runtime/pprof|internal/|sync)[./]") | not))] | length' "$work/out.jsonl")
if grep -q "pid $t (traced) now runs another program" "$work/err" && [ "$bad" -eq 0 ] &&
	[ "$(jq -s length "$work/out.jsonl")" -gt 0 ]; then
	ok "a target that execs /bin/sh: noticed ($(grep -c 'dropped from targets' "$work/err") drop notes), Go records only, none from the shell"
else
	not_ok "a target that execs /bin/sh: $bad stacks without Go frames; stderr: $(tr '\n' ' ' <"$work/err")"
fi

# of two targets, one exits: the other is still sampled until the end
# niced: eight spinning threads on two CPUs would slow ctxprof-go's start past t1's end
nice -n 10 "$bin" -d 2s 2>/dev/null &
t1=$!
nice -n 10 "$bin" -d 8s 2>/dev/null &
t2=$!
"$CTXPROF" -p "$t1,$t2" -d 5 -i 1 -o "$work/out.jsonl" 2>"$work/err"
check_eq "one of two targets exits: exit status" 0 "$?"
late=$(jq -s --argjson p "$t2" '[.[] | select(.pid == $p)] | length' "$work/out.jsonl")
if [ "$late" -ge 3 ]; then
	ok "one of two targets exits: the other is still recorded ($late records over 1 s intervals)"
else
	not_ok "one of two targets exits: only $late records for the survivor"
fi
wait "$t2" 2>/dev/null

for sig in INT TERM; do
	"$bin" -d 20s 2>/dev/null &
	t=$!
	"$CTXPROF" -p "$t" -F 999 -o "$work/out.jsonl" 2>"$work/err" &
	c=$!
	sleep 3
	kill -"$sig" "$c"
	wait "$c"
	check_eq "SIG$sig during heavy sampling: exit status" 0 "$?"
	samples_agree "SIG$sig during heavy sampling"
	kill "$t" 2>/dev/null
	wait "$t" 2>/dev/null
done

# -i: several flushes, each record's window inside its interval
"$bin" -d 20s 2>/dev/null &
t=$!
"$CTXPROF" -p "$t" -d 3.5 -i 1 -o "$work/out.jsonl" 2>"$work/err"
check_eq "-i 1 -d 3.5: exit status" 0 "$?"
windows=$(jq -s '[.[] | .start[0:19]] | unique | length' "$work/out.jsonl")
if [ "$windows" -ge 3 ]; then
	ok "-i 1 -d 3.5: records from $windows different seconds"
else
	not_ok "-i 1 -d 3.5: records from only $windows distinct start seconds"
fi
samples_agree "-i 1 -d 3.5"
kill "$t" 2>/dev/null

# positional duration, and --traced-only
"$bin" -d 20s 2>/dev/null &
t=$!
"$CTXPROF" -p "$t" --traced-only -o "$work/out.jsonl" 2 2>"$work/err"
check_eq "--traced-only with positional duration: exit status" 0 "$?"
nulls=$(jq -s '[.[] | select(.trace_id == null)] | length' "$work/out.jsonl")
traced=$(jq -s '[.[] | select(.trace_id != null)] | length' "$work/out.jsonl")
if [ "$nulls" -eq 0 ] && [ "$traced" -gt 0 ]; then
	ok "--traced-only: $traced records, none without a trace ID"
else
	not_ok "--traced-only: $nulls records without a trace ID, $traced with"
fi
kill "$t" 2>/dev/null
done_testing
