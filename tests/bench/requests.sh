#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# requests.sh: make bench section 15: what the traceparent source costs a request, per Go release, against the build before.
#
# testdata/httpserver built by Go 1.19, 1.22 and the newest toolchain,
# each in turn: /fan at 1,000 requests a second from 8 connections (each
# request starts 10 goroutines of about 40 us of work, every one under a
# traceparent), 10 s a load. Per round, four loads taking turns (the
# order rotates): no ctxprof-go; `ctxprof-go -p` of this build; the same
# of $REQUESTS_BASELINE (default 70fb571: two hits an HTTP/1.1 request,
# the header read at each); this build with `--trace-sources label`, the
# sampler without the source's probes, so that the source's own share
# stands apart from the sampler's. Measured: the server's CPU a request
# (its threads' schedstat: the traps and programs run on them), and for
# each ctxprof-go its http_request program's hits and BPF nanoseconds a
# request (kernel.bpf_stats_enabled, by the program ids it holds).
# Medians of $ROUNDS15 rounds (default 3). Goals printed beside: the
# source within 2% of the server's CPU (this build over its sampler
# alone), and 1,000 ns of BPF a request on the newest Go. Bound: one hit
# a request on the newest Go (Go 1.19 adds the goroutine-start probe's,
# within its budget).
# Runs alone too: bash tests/bench/requests.sh (after make bench's build);
# REQUESTS_GOS="1.19" measures those releases only. LOAD15=1s
# ROUNDS15=30: a round's loads swing together, so many short rounds, and
# the quartiles of each round's source over its sampler alone, tell a
# share of 2% where a few long rounds cannot.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../profile-lib.sh"

work=$(mktemp -d)
srv=
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap '[ -z "$srv" ] || kill "$srv" 2>/dev/null; wait 2>/dev/null; sysctl -qw kernel.bpf_stats_enabled="$old_stats"; rm -rf "$work"' EXIT
base=${REQUESTS_BASELINE:-70fb571}
base_bin=$(baseline_build "$base" "$work/baseline-build.log")
mapfile -t all < <(go_toolchains)
newest=${all[-1]}
load_bin=$(go_build "$newest" plain httpload)
median_of() { sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "none") }'; }
srv_cpu() { cat /proc/"$srv"/task/*/schedstat | awk '{ t += $1 } END { printf "%.0f", t }'; }
# prog_stats PID: "RUN_NS RUNS" of the http_request program ctxprof-go PID holds
prog_stats() {
	bpftool prog show -j | jq -r --argjson ids "$(bpf_ids "$1" prog)" \
		'[.[] | select(.name == "http_request" and (.id as $i | $ids | index($i)))] | first // {} |
		"\(.run_time_ns // 0) \(.run_cnt // 0)"'
}
# one_load BIN|none [ARGS]: "CPU_NS REQUESTS RUN_NS HITS" of a 10 s load
one_load() {
	local c0 n t0 r0 t1 r1 pid=
	if [ "$1" != none ]; then
		"$1" -p "$srv" -o /dev/null "${@:2}" 2>"$work/t.err" &
		pid=$!
		until grep -q 'Ctrl-C to stop' "$work/t.err" 2>/dev/null; do
			kill -0 "$pid" 2>/dev/null || { cat "$work/t.err" >&2; return 1; }
			sleep 0.1
		done
		read -r t0 r0 < <(prog_stats "$pid")
	fi
	c0=$(srv_cpu)
	read -r _ n _ < <("$load_bin" -url "http://$port/fan?kids=10&grandkids=0&loops=20000" -c 8 -rate 1000 -d "${LOAD15:-10s}") ||
		return 1
	echo -n "$(($(srv_cpu) - c0)) $n "
	if [ -n "$pid" ]; then
		read -r t1 r1 < <(prog_stats "$pid")
		kill -INT "$pid"
		wait "$pid" || return 1
		echo "$((t1 - t0)) $((r1 - r0))"
	else
		echo "0 0"
	fi
}
status=0
sysctl -qw kernel.bpf_stats_enabled=1
printf '\nthe traceparent source a request, per Go release (testdata/httpserver /fan at 1,000 requests a second; this build against %s):\n' "$base"
for v in ${REQUESTS_GOS:-1.19 1.22 $newest}; do
	[[ " ${all[*]} " == *" $v "* ]] || continue
	bin=$(go_build "$v" plain httpserver)
	"$bin" >"$work/srv.out" 2>&1 &
	srv=$!
	for _ in $(seq 100); do grep -q '^http ' "$work/srv.out" && break; sleep 0.1; done
	port=$(awk '$1 == "http" { print $2 }' "$work/srv.out")
	one_load none >/dev/null
	: >"$work/rounds"
	kinds=(none this base alone)
	for ((r = 1; r <= ${ROUNDS15:-3}; r++)); do
		declare -A got=()
		for ((k = 0; k < 4; k++)); do
			kind=${kinds[$(((k + r) % 4))]}
			case $kind in
			none) got[$kind]=$(one_load none) ;;
			this) got[$kind]=$(one_load "$CTXPROF") ;;
			base) got[$kind]=$(one_load "$base_bin") ;;
			alone) got[$kind]=$(one_load "$CTXPROF" --trace-sources label) ;;
			esac
		done
		read -r c0 n0 _ _ <<<"${got[none]}"
		read -r c1 n1 t1 h1 <<<"${got[this]}"
		read -r c2 n2 t2 h2 <<<"${got[base]}"
		read -r c3 n3 _ _ <<<"${got[alone]}"
		# per request: server CPU us without, with this build, with the base; hits and BPF ns
		# of each; the sampler alone, and this build over it
		line=$(awk -v c0="$c0" -v n0="$n0" -v c1="$c1" -v n1="$n1" -v c2="$c2" -v n2="$n2" \
			-v t1="$t1" -v h1="$h1" -v t2="$t2" -v h2="$h2" -v c3="$c3" -v n3="$n3" 'BEGIN {
			u0 = c0 / n0 / 1000; u1 = c1 / n1 / 1000; u2 = c2 / n2 / 1000; u3 = c3 / n3 / 1000
			printf "%.1f %.1f %.1f %.2f %.2f %.2f %.0f %.0f %.2f %.1f %.2f", u0, u1, u2,
				100 * (u1 - u0) / u0, 100 * (u2 - u0) / u0, h1 / n1, t1 / n1, t2 / n2, h2 / n2,
				u3, 100 * (u1 - u3) / u3 }')
		echo "$line" >>"$work/rounds"
		read -r u0 u1 u2 p1 p2 hr1 b1 b2 hr2 u3 p3 <<<"$line"
		printf 'go%s round %d: server CPU a request %s us without, %s us with this build (%+.2f%%), %s us with %s (%+.2f%%), %s us with the sampler alone (the source %+.2f%% over it); this build %s hits and %s ns of BPF a request, %s %s hits and %s ns\n' \
			"$v" "$r" "$u0" "$u1" "$p1" "$u2" "$base" "$p2" "$u3" "$p3" "$hr1" "$b1" "$base" "$hr2" "$b2"
	done
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
	srv=
	col() { cut -d' ' -f"$1" "$work/rounds" | median_of; }
	hits_base=$(awk '{ print $9 }' "$work/rounds" | median_of)
	quartiles=$(cut -d' ' -f11 "$work/rounds" | sort -n |
		awk '{ a[NR] = $1 } END { printf "%s%% to %s%%", a[int(NR / 4) + 1], a[int((3 * NR + 3) / 4)] }')
	printf 'go%s: the source %s%% of the server'"'"'s CPU over the sampler alone (goal <= 2; quartiles %s); this build %s%% over none, %s hits and %s ns of BPF a request; %s: %s%%, %s hits, %s ns (medians of %s rounds)\n' \
		"$v" "$(col 11)" "$quartiles" "$(col 4)" "$(col 6)" "$(col 7)" "$base" "$(col 5)" "$hits_base" "$(col 8)" "${ROUNDS15:-3}"
	if [ "$v" = "$newest" ]; then
		printf 'newest Go: %s ns of BPF a request (goal <= 1000)\n' "$(col 7)"
		awk -v h="$(col 6)" 'BEGIN { exit !(h <= 1.05) }' || { echo "more than one hit a request on go$v"; status=1; }
	fi
done
exit "$status"
