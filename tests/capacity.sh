#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# capacity.sh: 200 targets at once, and ring buffers too small for the load: counted drops, no failure.
#
# 1. 200 processes of testdata/traced (newest toolchain, one worker each,
#    niced) sampled together at 999 Hz for 8 s: ctxprof-go starts, every
#    target gets records, the records hold every sample the statistics line
#    counts, and it exits 0.
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
	nice -n 10 "$bin" -d 60s -workers 1 2>/dev/null &
	pids+=($!)
done
sleep 1
start=$(date +%s%N)
"$CTXPROF" -p "$(IFS=,; echo "${pids[*]}")" -F 999 -d 8 -i 60 -o "$work/many.jsonl" 2>"$work/many.err"
rc=$?
secs=$(( ($(date +%s%N) - start) / 1000000000 ))
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
check_eq "$N targets: exit status" 0 "$rc"
got=$(jq -s -r '[.[].pid] | unique | length' "$work/many.jsonl")
if grep -q "sampling $N targets" "$work/many.err" && [ "$got" -eq "$N" ]; then
	ok "$N targets sampled at once: every one has records (${secs}s in all, 8 s of sampling)"
else
	not_ok "$N targets: $got have records; stderr: $(head -c 300 "$work/many.err" | tr '\n' ' ')"
fi
check_eq "$N targets: records hold every counted sample" same "$(records_hold_stats "$work/many.jsonl" "$work/many.err")"
sed 's/^/# /' "$work/many.err" | tail -n 1

pids=()
for ((i = 0; i < 4; i++)); do
	"$bin" -d 30s 2>/dev/null &
	pids+=($!)
done
sleep 0.5
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
