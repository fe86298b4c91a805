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
