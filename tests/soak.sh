#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# soak.sh: `make soak`: ctxprof-go --all for SOAK_SECONDS (default 600) while Go processes come and go; memory and fds stay flat.
#
# Five binaries: testdata/traced built by five installed toolchains (plain).
# Twenty processes stay up the whole time (four of each, one worker, niced);
# meanwhile SHORT (default 1,000) short-lived ones are started, spread evenly
# over the run, each running 1 to 4 s, round-robin over the five binaries.
# ctxprof-go --all -F 99 -i 10 writes to a file. Every 10 s the script
# records ctxprof-go's VmRSS and its open fds other than pidfds (one per
# live target). After WARMUP seconds (default a fifth of the run), RSS may
# grow by at most 5 MiB and that fd count must stay within 4 of its warm-up
# value; every short-lived process must have
# records, and ctxprof-go must exit 0. Prints the series and the verdicts.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "soak"
SOAK_SECONDS=${SOAK_SECONDS:-600}
SHORT=${SHORT:-1000}
WARMUP=${WARMUP:-$((SOAK_SECONDS / 5))}
mapfile -t versions < <(go_toolchains | tail -n 5)
bins=()
for v in "${versions[@]}"; do
	bins+=("$(go_build "$v" plain)") || { not_ok "go$v: build failed"; done_testing; }
done
echo "# ${#bins[@]} binaries (go${versions[*]}), 20 processes up, $SHORT short-lived over $SOAK_SECONDS s"

ctxprof_start "$work/err" "$work/out.jsonl" -v --all -F 99 -i 10 -d "$((SOAK_SECONDS + 30))" ||
	{ not_ok "ctxprof-go --all did not start: $(tr '\n' ' ' <"$work/err")"; done_testing; }
keep=()
for ((i = 0; i < 20; i++)); do
	nice -n 10 "${bins[i % ${#bins[@]}]}" -d "$((SOAK_SECONDS + 60))s" -workers 1 2>/dev/null &
	keep+=($!)
done

rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$ctxprof/status" 2>/dev/null; }
# open fds other than pidfds: a pidfd is held per live target, and their
# number follows how many processes run at that moment, not a leak
fds() { find "/proc/$ctxprof/fd" -mindepth 1 -printf '%l\n' 2>/dev/null | grep -vc '^anon_inode:\[pidfd\]$'; }
start=$SECONDS
next_sample=0
started=0
: >"$work/short.pids"
: >"$work/series"
while [ $((SECONDS - start)) -lt "$SOAK_SECONDS" ]; do
	t=$((SECONDS - start))
	# the next short-lived processes due by now
	while [ "$started" -lt "$SHORT" ] && [ $((started * SOAK_SECONDS / SHORT)) -le "$t" ]; do
		"${bins[started % ${#bins[@]}]}" -d "$((1 + started % 4))s" -workers 1 2>/dev/null &
		echo "$! $t $((1 + started % 4)) ${bins[started % ${#bins[@]}]}" >>"$work/short.pids"
		started=$((started + 1))
	done
	if [ "$t" -ge "$next_sample" ]; then
		echo "$t $(rss) $(fds)" >>"$work/series"
		next_sample=$((next_sample + 10))
	fi
	sleep 0.2
	wait -n 2>/dev/null
done
sleep 5
echo "$((SECONDS - start)) $(rss) $(fds)" >>"$work/series"
ctxprof_stop
rc=$?
kill "${keep[@]}" 2>/dev/null
check_eq "ctxprof-go --all exits after $SOAK_SECONDS s of churn" 0 "$rc"
sed 's/^/# t=/; s/ / s: RSS KiB /2; s/ \([0-9]*\)$/, fds but pidfds \1/' "$work/series"
sed 's/^/# /' "$work/err" | tail -n 3

read -r base_rss base_fds < <(awk -v w="$WARMUP" '$1 >= w { print $2, $3; exit }' "$work/series")
read -r max_rss max_fds min_fds < <(awk -v w="$WARMUP" '$1 >= w {
	if ($2 > r) r = $2; if ($3 > f) f = $3; if (m == "" || $3 < m) m = $3 } END { print r, f, m }' "$work/series")
grow=$((max_rss - base_rss))
if [ -n "$base_rss" ] && [ "$grow" -le 5120 ]; then
	ok "RSS after warm-up (${WARMUP} s): ${base_rss} KiB, at most ${max_rss} KiB (+${grow} KiB, limit +5120)"
else
	not_ok "RSS grew by ${grow} KiB after warm-up (from ${base_rss:-?} to ${max_rss:-?} KiB; limit 5120)"
fi
if [ -n "$base_fds" ] && [ $((max_fds - base_fds)) -le 4 ] && [ $((base_fds - min_fds)) -le 4 ]; then
	ok "open fds other than the pidfds of live targets, after warm-up: ${base_fds}, between ${min_fds} and ${max_fds}"
else
	not_ok "open fds other than the pidfds of live targets moved after warm-up from ${base_fds:-?} to between ${min_fds:-?} and ${max_fds:-?}"
fi
missing=$(jq -s -r --slurpfile p <(awk '{ print $1 }' "$work/short.pids") \
	'([.[].pid] | unique) as $seen | [$p[] | select(. as $x | $seen | index($x) | not)] | join(" ")' "$work/out.jsonl")
for pid in $missing; do
	awk -v p="$pid" '$1 == p { print "# no records: pid " $1 ", started at t=" $2 " s for " $3 " s: " $4 }' "$work/short.pids"
	grep -F "pid $pid " "$work/err" | sed 's/^/#   /'
done
check_eq "short-lived processes without records (of $started)" 0 "$(wc -w <<<"$missing")"
done_testing
