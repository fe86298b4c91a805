#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# wall.sh: make bench section 8: what --wall costs at 10,000, 100,000 and 1,000,000 parked goroutines, and how right it stays.
#
# Target: testdata/parked (newest Go): N goroutines parked in select, a
# third each under a trace ID label of its own, beside one worker computing
# in rounds. For each N (WALL_COUNTS, default "10000 100000 1000000"),
# WALL_ROUNDS rounds (default 5; 1 at a million) of: the worker's rate over
# 30 s without ctxprof-go, and a whole `ctxprof-go -v -p PID --wall -d 30`
# run (19 Hz, CPU sampling at 99 Hz, the default 10 s interval, records to
# a file) with the worker's rate meanwhile, taking turns which comes first.
# Measured per run:
# - ctxprof-go's CPU (user + sys, from its start to its exit: start-up,
#   first reads, every flush of records and the last look at every
#   goroutine included) over the run's wall time;
# - the worker's rate with it against without;
# - every trace ID's wall_ns against the time the recording covered (its
#   one goroutine was parked all along), and the goroutines without one
#   against 2N/3 x that time;
# - the stride (each goroutine looked at once in so many snapshots), looks
#   against samples, and snapshots taken against the periods covered.
# Bounds at 10,000 and 100,000: CPU <= 5% of a core, rate >= 0.99, every
# trace within 10%. A million is for the curve.
# Before that, at 10,000, tests/bench/wall_read.c reads every g's window
# three ways, 20 rounds taking turns: ranges of neighbours with
# process_vm_readv (cmd/record/wall.c's way), one iovec per g, and a
# sleepable task iterator calling bpf_copy_from_user_task per g.
# Runs alone too: bash tests/bench/wall.sh (after make bench's build).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../profile-lib.sh"

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
v=$(go_toolchains | tail -n 1)
park_bin=$(go_build "$v" plain parked)
median_of() { sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "none") }'; }
now() { date +%s%N; }
period=$((1000000000 / 19))
status=0

# rate_over SECONDS: the worker's median rounds per second over the next SECONDS
rate_over() {
	local from
	from=$(wc -l <"$work/park.rate")
	sleep "$1"
	tail -n +"$((from + 2))" "$work/park.rate" | median_of
}

# the goroutines' windows read three ways (10,000 only)
read_ways() {
	local syms win
	syms=$("/usr/lib/go-$v/bin/go" tool nm "$park_bin")
	win=$("$CTXPROF" check --json "$park_bin" | jq -r '[.wall.offsets["g.sched"], .wall.offsets["g.syscallsp"],
		.wall.offsets["g.atomicstatus"], .offsets["g.goid"], .offsets["g.labels"], .offsets["g.parentGoid"]] |
		"\(min) \(max + 8 - min)"')
	# shellcheck disable=SC2086
	"$OUTPUT/bench/wall-read" "$park" "$(awk '$3 == "runtime.allgs" { print $1 }' <<<"$syms")" \
		"$(awk '$3 == "runtime.allglen" { print $1 }' <<<"$syms")" $win 20
}

# accuracy OUT: covered-ns traces off-by-10% looks samples untraced-ns, from one run's records:
# jq streams a line per wall record, awk adds them up (a million goroutines write a GB)
accuracy() {
	jq -r 'select(.origin == "wall") |
		def ns(t): (t | sub("\\.[0-9]+Z$"; "Z") | fromdate) * 1e9 +
			(t | capture("\\.(?<f>[0-9]+)Z$").f | tonumber * 1e3);
		[ns(.start), ns(.end), .trace_id // "-", .wall_ns, .observed, .samples,
		 (any(.stacks[].frames[]; .func == "main.park") | tostring)] | @tsv' "$1" |
	awk -F'\t' -v p="$period" '
		NR == 1 || $1 < lo { lo = $1 }
		$2 > hi { hi = $2 }
		$3 != "-" { t[$3] += $4; looks += $5; n += $6; next }
		$7 == "true" { un += $4 }
		END {
			cov = hi - lo + p
			for (k in t) { traces++; if (t[k] < 0.9 * cov || t[k] > 1.1 * cov) off++ }
			printf "%.0f %d %d %.0f %.0f %.0f\n", cov, traces, off, looks, n, un
		}'
}

for n in ${WALL_COUNTS:-10000 100000 1000000}; do
	rounds=${WALL_ROUNDS:-5}
	[ "$n" -lt 1000000 ] || rounds=1
	: >"$work/park.rate"
	"$park_bin" -parked "$n" -report 2s -d 3600s >"$work/park.rate" 2>"$work/park.err" &
	park=$!
	until grep -q 'goroutines parked' "$work/park.err"; do sleep 0.5; done
	sleep 4
	printf '\n8. --wall: %d parked goroutines (a third with a trace ID label), 19 Hz, 30 s runs\n' "$n"
	[ "$n" != 10000 ] || read_ways || status=1
	: >"$work/runs"
	for ((r = 1; r <= rounds; r++)); do
		# taking turns: the machine drifts over minutes, by about as much as the bound
		[ $((r % 2)) = 0 ] || without=$(rate_over 30)
		t0=$(now)
		(
			TIMEFORMAT='%U %S'
			{ time "$CTXPROF" -v -p "$park" --wall -d 30 -o "$work/w.jsonl" 2>"$work/w.err"; } 2>"$work/time"
		) &
		runner=$!
		with=$(rate_over 30)
		wait "$runner" || { echo "wall bench: ctxprof-go failed: $(cat "$work/w.err")" >&2; status=1; break; }
		t1=$(now)
		[ $((r % 2)) = 1 ] || without=$(rate_over 30)
		own=$(awk -v t="$(cat "$work/time")" -v e="$((t1 - t0))" \
			'BEGIN { split(t, a, " "); printf "%.2f", 100 * (a[1] + a[2]) / (e / 1e9) }')
		ratio=$(awk -v a="$without" -v b="$with" 'BEGIN { printf "%.4f", b / a }')
		read -r cov traces off looks samples un < <(accuracy "$work/w.jsonl")
		line=$(grep '^ctxprof-go: wall:' "$work/w.err")
		stride=$(sed -n 's/.*(each goroutine in 1 of \([0-9]*\) snapshots).*/\1/p' <<<"$line")
		snaps=$(sed -n 's/.* in \([0-9]*\) snapshots .*/\1/p' <<<"$line")
		full=$(sed -n 's/.*, \([0-9]*\) read in full;.*/\1/p' <<<"$line")
		# where its CPU went (-v): writing records, and the snapshots
		split=$(sed -n 's/^ctxprof-go: own CPU: [0-9.]* ms in all, \([0-9.]*\) ms of it writing records ([0-9]* flushes), \([0-9.]*\) ms in --wall snapshots$/\1 ms writing records, \2 ms in snapshots/p' "$work/w.err")
		un_ratio=$(awk -v u="$un" -v c="$cov" -v n="$((n - n / 3))" 'BEGIN { printf "%.4f", u / (c * n) }')
		echo "$own $ratio $off $traces $un_ratio" >>"$work/runs"
		printf 'round %d: ctxprof-go %s%% of a core over its %.1f s run (%s); worker %s rounds/s without, %s with (%s); %d of %d traces off by more than 10%% of %.2f s covered; untraced %s of 2N/3 x covered; 1 look in %s snapshots, %s looks for %s samples of traces, %s read in full; %s snapshots for %d periods\n' \
			"$r" "$own" "$(awk -v e="$((t1 - t0))" 'BEGIN { print e / 1e9 }')" "$split" "$without" "$with" "$ratio" \
			"$off" "$traces" "$(awk -v c="$cov" 'BEGIN { print c / 1e9 }')" "$un_ratio" "${stride:-1}" \
			"$looks" "$samples" "$full" "$snaps" "$((cov / period))"
	done
	kill "$park" 2>/dev/null || true
	wait "$park" 2>/dev/null || true
	[ -s "$work/runs" ] || continue
	own=$(cut -d' ' -f1 "$work/runs" | median_of)
	ratio=$(cut -d' ' -f2 "$work/runs" | median_of)
	off=$(cut -d' ' -f3 "$work/runs" | sort -n | tail -n 1)
	un=$(cut -d' ' -f5 "$work/runs" | median_of)
	if [ "$n" -lt 1000000 ]; then
		printf -- '--wall, %d parked goroutines: ctxprof-go %s%% of a core over whole runs (must be <= 5); worker rate %s of unprofiled (must be >= 0.99); at most %s traces off by 10%% (must be 0); untraced %s of truth\n' \
			"$n" "$own" "$ratio" "$off" "$un"
		awk -v o="$own" 'BEGIN { exit !(o <= 5) }' || status=1
		awk -v r="$ratio" 'BEGIN { exit !(r >= 0.99) }' || status=1
		[ "$off" = 0 ] || status=1
	else
		printf -- '--wall, %d parked goroutines (for the curve): ctxprof-go %s%% of a core over a whole run; worker rate %s; %s traces off by 10%%; untraced %s of truth\n' \
			"$n" "$own" "$ratio" "$off" "$un"
	fi
done
exit $status
