#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-lifecycle.sh: how a recording ends: target exits, SIGINT, SIGTERM, duration, interval.
#
# Uses testdata/traced built by the newest installed Go (plain). Each case
# checks the exit status, that records were flushed, and that the per-record
# sample counts add up to the statistics line on stderr. Targets run until
# the test ends them (traced: SIGUSR1 exits, SIGUSR2 execs a shell), and
# every step waits for ctxprof-go to sample first: its start-up takes
# seconds on a busy machine.
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
"$bin" -d 600s 2>/dev/null &
t=$!
elapsed=-
if ctxprof_start "$work/err" "$work/out.jsonl" -p "$t" -d 300; then
	sleep 1
	kill -USR1 "$t"
	start=$SECONDS
	wait "$ctxprof"
	rc=$?
	elapsed=$((SECONDS - start))
else
	rc=$?
fi
check_eq "target exits mid-run: exit status" 0 "$rc"
if grep -q "pid $t .* exited" "$work/err" && grep -q "every target has exited" "$work/err"; then
	ok "target exits mid-run: ctxprof-go noticed and stopped ${elapsed}s after the exit, long before -d 300"
else
	not_ok "target exits mid-run: stopped ${elapsed}s after the exit; stderr: $(tr '\n' ' ' <"$work/err")"
fi
samples_agree "target exits mid-run"

# kill -9 mid-run: the same, for a target that gets no chance to exit
"$bin" -d 600s 2>/dev/null &
t=$!
disown "$t" # no "Killed" from the shell in the test's output
ctxprof_start "$work/err" "$work/out.jsonl" -p "$t" -d 300 && {
	sleep 1
	kill -9 "$t"
	wait "$ctxprof"
}
rc=$?
check_eq "kill -9 of the target mid-run: exit status" 0 "$rc"
if grep -q "pid $t .* exited" "$work/err" && [ "$(jq -s length "$work/out.jsonl")" -gt 0 ]; then
	ok "kill -9 of the target mid-run: its records flushed ($(jq -s length "$work/out.jsonl")), a note on stderr"
else
	not_ok "kill -9 of the target mid-run: stderr: $(tr '\n' ' ' <"$work/err")"
fi
samples_agree "kill -9 of the target mid-run"

# a target that execs a shell: no longer read as Go, no garbage records
"$bin" -d 600s 2>/dev/null &
t=$!
ctxprof_start "$work/err" "$work/out.jsonl" -p "$t" -d 300 && {
	sleep 1
	kill -USR2 "$t"
	# then long enough for the shell to be sampled, had it not been dropped
	for ((i = 0; i < 600; i++)); do
		grep -q "now runs another program" "$work/err" && break
		sleep 0.1
	done
	sleep 2
	ctxprof_stop
}
rc=$?
kill "$t" 2>/dev/null
check_eq "a target that execs /bin/sh: exit status" 0 "$rc"
# The Go runtime calls the vDSO (nanotime, walltime) on the g0 stack, so a
# sample there is only its leaf: __vdso_* is the Go program's too.
go_frame='^((main|runtime|time|runtime/pprof|internal/|sync|os/signal|syscall)[./]|__vdso_)'
bad=$(jq -s --arg re "$go_frame" '[.[].stacks[] | select(all(.frames[]; .func | test($re) | not))] | length' "$work/out.jsonl")
if grep -q "pid $t (traced) now runs another program" "$work/err" && [ "$bad" -eq 0 ] &&
	[ "$(jq -s length "$work/out.jsonl")" -gt 0 ]; then
	ok "a target that execs /bin/sh: noticed ($(grep -c 'dropped from targets' "$work/err") drop notes), Go records only, none from the shell"
else
	not_ok "a target that execs /bin/sh: $bad stacks without Go frames: $(jq -c -s --arg re "$go_frame" '[.[] | .stacks[] as $s | select(all($s.frames[]; .func | test($re) | not)) | {pid, comm, tid: $s.tid, samples: $s.samples, frames: [$s.frames[] | "\(.func) \(.addr // "")"]}]' "$work/out.jsonl" | head -c 2000); stderr: $(tr '\n' ' ' <"$work/err")"
fi

# of two targets, one exits: the other is still sampled until the end
# niced: eight spinning threads on two CPUs would slow ctxprof-go down
nice -n 10 "$bin" -d 600s 2>/dev/null &
t1=$!
nice -n 10 "$bin" -d 600s 2>/dev/null &
t2=$!
late=0
ctxprof_start "$work/err" "$work/out.jsonl" -p "$t1,$t2" -d 300 -i 1 && {
	sleep 1
	kill -USR1 "$t1"
	for ((i = 0; i < 600; i++)); do
		grep -q "pid $t1 .* exited" "$work/err" && break
		sleep 0.1
	done
	# the survivor's records flushed after t1's exit was noticed: from
	# three different seconds, however long a busy machine makes that take
	after=$(wc -l <"$work/out.jsonl")
	for ((i = 0; i < 120; i++)); do
		late=$(tail -n +$((after + 1)) "$work/out.jsonl" |
			jq -s --argjson p "$t2" '[.[] | select(.pid == $p) | .start[0:19]] | unique | length')
		[ "$late" -ge 3 ] && break
		sleep 1
	done
	ctxprof_stop
}
check_eq "one of two targets exits: exit status" 0 "$?"
if [ "$late" -ge 3 ]; then
	ok "one of two targets exits: the other is still recorded, records from $late different seconds after the exit"
else
	not_ok "one of two targets exits: the survivor has records from only $late different seconds after the exit"
fi
kill "$t2" 2>/dev/null
wait "$t2" 2>/dev/null

for sig in INT TERM; do
	"$bin" -d 600s 2>/dev/null &
	t=$!
	ctxprof_start "$work/err" "$work/out.jsonl" -p "$t" -F 999 && {
		sleep 2
		kill -"$sig" "$ctxprof"
		wait "$ctxprof"
	}
	check_eq "SIG$sig during heavy sampling: exit status" 0 "$?"
	samples_agree "SIG$sig during heavy sampling"
	kill "$t" 2>/dev/null
	wait "$t" 2>/dev/null
done

# -i: several flushes, each record's window inside its interval
"$bin" -d 600s 2>/dev/null &
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
"$bin" -d 600s 2>/dev/null &
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
