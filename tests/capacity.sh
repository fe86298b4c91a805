#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# capacity.sh: 200 targets at once, and ring buffers too small for the load: counted drops, no failure.
#
# 1. 200 processes of testdata/traced (newest toolchain, one worker each,
#    niced) sampled together at 999 Hz for 8 s, and on until each has had
#    50 ms of CPU (at most 120 s): ctxprof-go starts, every
#    target gets records, the records hold every sample the statistics line
#    counts, none is lost, and it exits 0.
#    Then --all over the same processes for 6 s: no sample lost while
#    the loop describes them.
# 2. --ring-kib 4 (one page per CPU) under four busy targets: samples are
#    lost, and the statistics line says how many; nothing else fails, and
#    the records still hold every sample that arrived.
# 3. One step of adding a target made slow on purpose: testdata/parked
#    with 400,000 goroutines, a third inside pprof.Do, whose label sets are
#    read when it is added (about 2 s here: with 200,000, an add that
#    took under a second once left -v nothing to say of its progress), after a
#    busy testdata/traced, both in one -p, with rings of 64 KiB (a few
#    hundred ms of samples): none is lost meanwhile, the rings were read
#    while the loop was busy adding (-v), and -v said how far the add was
#    and how long it took.
# 4. A node whose CPUs heavier cgroups take: the agent's cgroup weighted as
#    a DaemonSet's 50m, eight busy targets' as 2 CPUs, at 999 Hz: the loop
#    waits seconds for a CPU (said), the rings' reader runs SCHED_FIFO
#    (--realtime), and no sample is lost.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "capacity"
N=${N:-200}
v=$(go_toolchains | tail -n 1)
bin=$(go_build "$v" plain) || { not_ok "go$v: build failed"; done_testing; }

pids=()
for ((i = 0; i < N; i++)); do
	nice -n 10 "$bin" -d 600s -workers 1 2>/dev/null &
	pids+=($!)
done
# cpu_ticks PID...: "PID TICKS" lines, the CPU time (user and system, 1/100
# s) each has used so far
cpu_ticks() {
	local p
	for p; do
		echo "/proc/$p/stat"
	done | xargs awk '{ print $1, $14 + $15 }' 2>/dev/null
}
# Sampled for 8 s, and on until every target has had 50 ms of CPU since
# ctxprof-go started sampling (at most 120 s): then each was on a CPU for
# some 50 of its 999 Hz ticks, and must have records. Records are flushed
# once, at the end: a flush of 200 targets' records holds up the reading
# of the rings, and with one every second more than half the samples were
# lost (12,600 of 22,000; none with one flush).
start=$SECONDS
if ctxprof_start "$work/many.err" "$work/many.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -F 999 -d 300 -i 300; then
	cpu_ticks "${pids[@]}" >"$work/ticks.0"
	sampling=$SECONDS
	sleep 8
	while [ $((SECONDS - sampling)) -lt 120 ]; do
		starved=$(cpu_ticks "${pids[@]}" | awk 'NR == FNR { t[$1] = $2; next } $2 - t[$1] < 5' "$work/ticks.0" - | wc -l)
		[ "$starved" -eq 0 ] && break
		sleep 1
	done
	sampled=$((SECONDS - sampling))
	ctxprof_stop
	rc=$?
else
	rc=$?
fi
secs=$((SECONDS - start))
check_eq "$N targets: exit status" 0 "$rc"
got=$(jq -s -r '[.[].pid] | unique | length' "$work/many.jsonl")
if grep -q "sampling $N targets" "$work/many.err" && [ "$got" -eq "$N" ]; then
	ok "$N targets sampled at once: every one has records (${sampled:-0} s of sampling, until each had 50 ms of CPU; ${secs} s in all)"
else
	not_ok "$N targets: $got have records, ${starved:-?} had under 50 ms of CPU in ${sampled:-0} s; stderr: $(head -c 300 "$work/many.err" | tr '\n' ' ')"
fi
check_eq "$N targets: records hold every counted sample" same "$(records_hold_stats "$work/many.jsonl" "$work/many.err")"
# adding them takes seconds here: the first ones' samples are read meanwhile
check_eq "$N targets: samples lost while they were added or after" 0 \
	"$(sed -n 's/.*lost \([0-9]*\) (ring buffer full).*/\1/p' "$work/many.err")"
sed 's/^/# /' "$work/many.err" | tail -n 1

# The same processes found by --all: each is described (name, container,
# mappings) in the loop after sampling starts, a few seconds of work on
# this busy host, between reads of the rings: no sample is lost for it.
"$CTXPROF" --all -F 999 -d 6 -i 300 -o "$work/all.jsonl" 2>"$work/all.err"
rc=$?
lost=$(sed -n 's/.*lost \([0-9]*\) (ring buffer full).*/\1/p' "$work/all.err")
got=$(jq -s -r --argjson want "$(printf '%s\n' "${pids[@]}" | jq -s .)" \
	'[.[].pid] | unique | map(select(. as $p | $want | index($p))) | length' "$work/all.jsonl")
if [ "$rc" -eq 0 ] && [ "${lost:-x}" = 0 ] && [ "$got" -ge $((N * 9 / 10)) ]; then
	ok "--all over the $N: none lost while they are described, $got have records"
else
	not_ok "--all over the $N: exit $rc, lost ${lost:-?}, $got have records; $(tail -n 3 "$work/all.err" | tr '\n' ' ')"
fi
check_eq "--all over the $N: records hold every counted sample" same "$(records_hold_stats "$work/all.jsonl" "$work/all.err")"
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null

# a step of the add that takes seconds: the rings are read meanwhile
if parked=$(go_build "$v" plain parked); then
	"$parked" -parked 400000 -d 600s >/dev/null 2>"$work/parked.err" &
	pk=$!
	wait_line "$work/parked.err" '^parked: pid' 1200 || not_ok "parked did not start: $(head -c 200 "$work/parked.err")"
	"$bin" -d 600s -workers 1 2>/dev/null &
	busy=$!
	"$CTXPROF" -p "$busy,$pk" -F 999 --ring-kib 64 -v -d 2 -o "$work/slow.jsonl" 2>"$work/slow.err"
	rc=$?
	kill "$busy" "$pk" 2>/dev/null
	wait "$busy" "$pk" 2>/dev/null
	lost=$(sed -n 's/.*lost \([0-9]*\) (ring buffer full).*/\1/p' "$work/slow.err")
	reads=$(sed -n 's/.*the rings were read \([0-9]*\) times while the loop was busy.*/\1/p' "$work/slow.err")
	took=$(sed -n 's/.*2 targets added in \([0-9.]*\) s$/\1/p' "$work/slow.err")
	if [ "$rc" -eq 0 ] && [ "${lost:-x}" = 0 ] && [ "${reads:-0}" -ge 10 ] && [ -n "$took" ]; then
		ok "a target that takes ${took} s to add (400,000 goroutines' label sets read), rings of 64 KiB: none lost, the rings read $reads times meanwhile"
	else
		not_ok "a target slow to add: exit $rc, lost ${lost:-?}, rings read ${reads:-0} times while busy, added in ${took:-?} s; $(tail -n 4 "$work/slow.err" | tr '\n' ' ')"
	fi
	if grep -q '^ctxprof-go: adding 2 targets: [12] ready$' "$work/slow.err"; then
		ok "a target slow to add: -v says how far the add is: $(grep -m 1 '^ctxprof-go: adding 2 targets' "$work/slow.err")"
	else
		not_ok "a target slow to add: -v says nothing of how far the add is"
	fi
	check_eq "a target slow to add: records hold every counted sample" same \
		"$(records_hold_stats "$work/slow.jsonl" "$work/slow.err")"
else
	not_ok "go$v: build of testdata/parked failed"
fi

# cgroup_pair: DIR with cgroups agent (weight of 50m) and busy (of 2
# CPUs), as Kubernetes gives a DaemonSet's agent and a busy pod; on cgroup
# v1 the agent's has a real-time budget, as its reader thread needs there.
# Prints DIR; fails with why when the host has no cpu controller to use.
cgroup_pair() {
	local d
	if [ -f /sys/fs/cgroup/cpu/cpu.shares ]; then
		d=/sys/fs/cgroup/cpu/ctxprof-capacity-$$
		mkdir -p "$d/agent" "$d/busy" || return 1
		echo 51 >"$d/agent/cpu.shares" && echo 2048 >"$d/busy/cpu.shares" || return 1
		if [ -f "$d/cpu.rt_runtime_us" ]; then
			echo 100000 >"$d/cpu.rt_runtime_us" && echo 50000 >"$d/agent/cpu.rt_runtime_us" || return 1
		fi
	elif grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		d=/sys/fs/cgroup/ctxprof-capacity-$$
		mkdir -p "$d" && echo +cpu >/sys/fs/cgroup/cgroup.subtree_control &&
			echo +cpu >"$d/cgroup.subtree_control" && mkdir -p "$d/agent" "$d/busy" || return 1
		echo 2 >"$d/agent/cpu.weight" && echo 79 >"$d/busy/cpu.weight" || return 1
	else
		echo "no cpu cgroup controller here"
		return 1
	fi
	echo "$d"
}

# A node whose CPUs heavier cgroups take: eight busy targets in a cgroup
# weighted as 2 CPUs, ctxprof-go in one weighted as 50m. The loop then
# waits seconds for a CPU; the rings' reader thread runs SCHED_FIFO
# (--realtime) and keeps their events for it: none is lost.
if cg=$(cgroup_pair); then
	pids=()
	for ((i = 0; i < 8; i++)); do
		sh -c 'echo $$ >"$1/busy/cgroup.procs" && exec "$2" -d 600s -workers 1' sh "$cg" "$bin" 2>/dev/null &
		pids+=($!)
	done
	# stopped while ctxprof-go starts: its start-up would wait as long
	sleep 0.5
	kill -STOP "${pids[@]}"
	sh -c 'echo $$ >"$1/agent/cgroup.procs" && shift && exec "$@"' sh "$cg" "$CTXPROF" \
		-p "$(IFS=,; echo "${pids[*]}")" -F 999 -d 8 -v --realtime -o "$work/starved.jsonl" 2>"$work/starved.err" &
	agent=$!
	wait_line "$work/starved.err" 'Ctrl-C to stop' 600 || true
	kill -CONT "${pids[@]}"
	# the loop's wait for a CPU, from its schedstat, until the statistics line
	waited=0
	for _ in $(seq 600); do
		w=$(awk '{ print $2 }' /proc/"$agent"/schedstat 2>/dev/null) && waited=${w:-$waited}
		grep -q 'samples from' "$work/starved.err" && break
		sleep 0.2
	done
	# the exit's teardown would wait for a CPU as long
	kill "${pids[@]}" 2>/dev/null
	wait "$agent"
	rc=$?
	wait 2>/dev/null
	rmdir "$cg/agent" "$cg/busy" "$cg"
	lost=$(sed -n 's/.*lost \([0-9]*\) (ring buffer full).*/\1/p' "$work/starved.err")
	ran=$(sed -n 's/.*their reader ran \(SCHED_[A-Z]*\).*/\1/p' "$work/starved.err")
	echo "# starved: the loop waited $(awk -v w="$waited" 'BEGIN { printf "%.1f", w / 1e9 }') s for a CPU; $(grep 'samples from' "$work/starved.err")"
	if [ "$ran" = SCHED_OTHER ] && grep -q 'is not permitted' "$work/starved.err"; then
		skip "a starved agent" "no real-time scheduling for a child cgroup here: $(grep -o 'their reader ran.*' "$work/starved.err")"
	elif [ "$rc" -eq 0 ] && [ "${lost:-x}" = 0 ] && [ "$ran" = SCHED_FIFO ]; then
		ok "an agent weighted as 50m beside 2 CPUs of busy targets: none lost, the rings' reader ran SCHED_FIFO"
	else
		not_ok "a starved agent: exit $rc, lost ${lost:-?}, reader ${ran:-?}; $(tail -n 3 "$work/starved.err" | tr '\n' ' ')"
	fi
	check_eq "a starved agent: records hold every counted sample" same \
		"$(records_hold_stats "$work/starved.jsonl" "$work/starved.err")"
else
	not_ok "a starved agent: cannot make its cgroups: $cg"
fi

pids=()
for ((i = 0; i < 4; i++)); do
	"$bin" -d 600s 2>/dev/null &
	pids+=($!)
done
"$CTXPROF" -p "$(IFS=,; echo "${pids[*]}")" -F 999 -d 4 --ring-kib 4 -o "$work/small.jsonl" 2>"$work/small.err"
rc=$?
kill "${pids[@]}" 2>/dev/null
lost=$(sed -n 's/.*lost \([0-9]*\) (ring buffer full).*/\1/p' "$work/small.err")
if [ "$rc" -eq 0 ] && [ "${lost:-0}" -gt 0 ] && [ "$(records_hold_stats "$work/small.jsonl" "$work/small.err")" = same ]; then
	ok "--ring-kib 4: $lost samples lost and counted, exit 0, every arriving sample in the records"
else
	not_ok "--ring-kib 4: exit $rc, lost ${lost:-?}; $(records_hold_stats "$work/small.jsonl" "$work/small.err")"
fi
"$CTXPROF" -p "${pids[0]}" --ring-kib 3 -d 1 2>"$work/bad.err" >/dev/null
check_eq "--ring-kib 3 is refused" "2 yes" "$? $(grep -q 'power of two' "$work/bad.err" && echo yes)"
done_testing
