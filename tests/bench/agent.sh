#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# agent.sh: make bench section 12: the agent as the DaemonSet runs it, on a host of N Go processes: its CPU and memory.
#
# N (default 200) processes of testdata/traced (newest Go, one worker
# each, niced: the CPUs stay busy), ctxprof-go with the DaemonSet's
# arguments (--all -i 10 --metrics-addr, no JSON lines) and OTLP through
# a collector (built as in tests/otlp.sh, to its debug exporter), for
# AGENT_SECONDS (default 60).
# Measured: ctxprof-go's CPU (user + sys, /proc/PID/stat) to its "Ctrl-C
# to stop" line and then as a share of one core, and its peak resident
# memory (VmHWM), with the samples it took and sent; none may be lost.
# deploy/kubernetes/ctxprof-go.yaml's requests and limits come from these:
# the request the CPU share and the RSS, the limits with room for a host
# four times as busy.
# Runs alone too: bash tests/bench/agent.sh (after make bench's build).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../profile-lib.sh"
. "$(dirname "$0")/../otlp-lib.sh"

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
if ! otelcol_build; then
	echo "agent bench: $otelcol_why" >&2
	exit 1
fi
N=${N:-200}
SECS=${AGENT_SECONDS:-60}
traced=$(go_build "$(go_toolchains | tail -n 1)" plain)
for ((i = 0; i < N; i++)); do
	nice -n 10 "$traced" -d 900s -workers 1 >/dev/null 2>&1 &
done
cport=$(free_port)
collector_start "$work" "$cport" - || { echo "agent bench: the collector did not start" >&2; exit 1; }
mport=$(free_port)
sleep 2
"$CTXPROF" --all -i 10 --metrics-addr "127.0.0.1:$mport" -o /dev/null -d "$SECS" \
	--otlp "http://127.0.0.1:$cport" 2>"$work/err" &
agent=$!
until grep -q 'Ctrl-C to stop' "$work/err" 2>/dev/null; do
	kill -0 "$agent" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
	sleep 0.2
done
ticks0=$(awk '{ print $14 + $15 }' "/proc/$agent/stat")
hwm0=$(awk '/^VmHWM:/ { print $2 }' "/proc/$agent/status")
t0=$SECONDS
sleep $((SECS - 5))
ticks1=$(awk '{ print $14 + $15 }' "/proc/$agent/stat")
t1=$SECONDS
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$agent/status")
page=$(curl -s "http://127.0.0.1:$mport/metrics")
wait "$agent" || true
hz=$(getconf CLK_TCK)
printf '\n12. the agent as the DaemonSet runs it: %d Go processes, --all -i 10 --otlp, %d s\n' "$N" "$SECS"
awk -v a="$ticks0" -v b="$ticks1" -v hz="$hz" -v s=$((t1 - t0)) -v hwm="$hwm" -v hwm0="$hwm0" 'BEGIN {
	printf "ctxprof-go: start-up %.2f s of CPU, peak RSS %.1f MiB by then\n", a / hz, hwm0 / 1024
	printf "then %.1f%% of a core (%.2f s of CPU over %d s), peak RSS %.1f MiB\n",
		100 * (b - a) / hz / s, (b - a) / hz, s, hwm / 1024 }'
grep -E '^ctxprof_(samples_total|targets|otlp_requests_sent_total|otlp_samples_sent_total|otlp_bytes_sent_total) ' <<<"$page" |
	sed 's/^/  /'
grep -E '^ctxprof-go: [0-9]+ samples from' "$work/err" | cut -c1-160
# bound: the agent keeps up with a host this busy, start-up included
lost=$(sed -n 's/.*lost \([0-9]*\) (ring buffer full).*/\1/p' "$work/err")
if [ "${lost:-x}" != 0 ]; then
	echo "agent bench: ${lost:-?} samples lost (ring buffer full), must be 0" >&2
	exit 1
fi
