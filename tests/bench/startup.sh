#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# startup.sh: make bench section 14: 200 busy targets added at once, by this build and by the build before the rings were kept.
#
# 200 processes of testdata/traced (newest Go, one worker each, nice 10),
# as tests/capacity.sh runs them, recorded with -p at 999 Hz: from the
# start of ctxprof-go to its "Ctrl-C to stop" line, its CPU time by then,
# and the samples lost (the statistics line, -d 3 past ready). Rounds
# take turns between this build and $STARTUP_BASELINE (default 78c2cef,
# the last before the rings were read by a thread of their own while
# targets are added); medians of $ROUNDS14 rounds (default 3). This
# build must lose none. Printed too: how long it took to exit (the
# uprobes' ends, one after another in the kernel).
# Runs alone too: bash tests/bench/startup.sh (after make bench's build).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../profile-lib.sh"

work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
v=$(go_toolchains | tail -n 1)
base=${STARTUP_BASELINE:-78c2cef}
base_bin=$(baseline_build "$base" "$work/baseline-build.log") || exit 1
traced=$(go_build "$v" plain traced)
N=${N:-200}
for ((i = 0; i < N; i++)); do
	nice -n 10 "$traced" -d 900s -workers 1 2>/dev/null &
	pids+=($!)
done
sleep 2
targets=$(IFS=,; echo "${pids[*]}")

# one_start BIN: "READY_MS CPU_MS LOST EXIT_MS" of one -p run over the N targets
one_start() {
	local t0 t1 t2 ticks rc
	t0=$EPOCHREALTIME
	"$1" -p "$targets" -F 999 -d 3 -o /dev/null 2>"$work/err" &
	local pid=$!
	until grep -q 'Ctrl-C to stop' "$work/err" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; echo "none 0 none 0"; return; }
		sleep 0.05
	done
	t1=$EPOCHREALTIME
	ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	# the statistics line comes once the records are written, before the probes go
	until grep -q 'lost [0-9]* (ring buffer full)' "$work/err" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	t2=$EPOCHREALTIME
	wait "$pid" || true
	awk -v a="${t0/./}" -v b="${t1/./}" -v c="${t2/./}" -v d="${EPOCHREALTIME/./}" -v t="$ticks" \
		-v hz="$(getconf CLK_TCK)" -v lost="$(sed -n 's/.*lost \([0-9]*\) (ring buffer full).*/\1/p' "$work/err")" \
		'BEGIN { printf "%.0f %.0f %s %.0f\n", (b - a) / 1000, t * 1000 / hz, lost == "" ? "none" : lost, (d - c) / 1000 }'
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "none") }'; }
: >"$work/base"
: >"$work/this"
printf '\n%d busy targets (testdata/traced go%s, one worker each, nice 10), -p at 999 Hz; %s against this build:\n' "$N" "$v" "$base"
for ((r = 1; r <= ${ROUNDS14:-3}; r++)); do
	for kind in base this; do
		bin=$CTXPROF
		[ "$kind" = base ] && bin=$base_bin
		one_start "$bin" | tee -a "$work/$kind" >"$work/one"
		read -r ready cpu lost gone <"$work/one"
		printf 'round %d, %s: ready after %s ms, %s ms of CPU by then; %s samples lost; %s ms to exit after its statistics\n' \
			"$r" "$([ "$kind" = base ] && echo "$base" || echo "this build")" "$ready" "$cpu" "$lost" "$gone"
	done
done
col() { awk -v c="$2" '{ print $c }' "$work/$1" | median; }
printf 'start-up with %d busy targets: ready after %s ms (%s: %s ms), %s ms of CPU by then (%s ms); samples lost, most in a round: %s (%s); exit %s ms (%s ms)\n' \
	"$N" "$(col this 1)" "$base" "$(col base 1)" "$(col this 2)" "$(col base 2)" \
	"$(awk '{ print $3 }' "$work/this" | sort -n | tail -n 1)" "$(awk '{ print $3 }' "$work/base" | sort -n | tail -n 1)" \
	"$(col this 4)" "$(col base 4)"
awk '$3 != 0 { bad = 1 } END { exit bad }' "$work/this"
