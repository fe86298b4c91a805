#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# lifetime.sh: make bench section 13: what following requests' lifetimes costs a server at 1,000 requests a second.
#
# testdata/services as checkout alone (newest Go, no inventory to ask, 50
# us of CPU a request, no garbage), each request's work in pprof.Do under
# the trace ID of its traceparent, at 1,000 requests a second from 8
# connections (testdata/httpload, a traceparent each), 10 s a load. Per
# round, five loads in turns (the order rotates): no ctxprof-go; the build
# of $LIFETIME_BASELINE (default 062c258, the last before requests had a
# lifetime) and this build, each with -p and with -p --wall (which adds
# the requests' spans). Each load's cost is the server's CPU (its threads'
# schedstat: the traps and programs run on them) plus ctxprof-go's own
# (/proc/PID/stat); this build's over the baseline's in the same mode, as
# a share of one core, must be <= 1%. Printed too: the label probe's hits
# a request with -p (label_do, at pprof.Do's set alone) and its BPF time a
# hit (kernel.bpf_stats_enabled), and the requests this build counted with
# --wall (origin request).
# Runs alone too: bash tests/bench/lifetime.sh (after make bench's build).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../profile-lib.sh"

work=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old_stats"; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
v=$(go_toolchains | tail -n 1)
base=${LIFETIME_BASELINE:-062c258}
base_bin=$(baseline_build "$base" "$work/baseline-build.log") || exit 1
bin=$(go_build "$v" plain services)
load_bin=$(go_build "$v" plain httpload)
"$bin" -role checkout -burn 50us -litter=false >"$work/co.addr" 2>&1 &
srv=$!
wait_line "$work/co.addr" '^http://' 100 || { echo "lifetime bench: checkout did not start" >&2; exit 1; }
url=$(head -n 1 "$work/co.addr")/checkout
srv_cpu() { cat /proc/"$srv"/task/*/schedstat | awk '{ t += $1 } END { printf "%.0f", t }'; }
# the label probe's runs and BPF time: label_do (-p, one a pprof.Do) or label_set (--wall)
hits() { bpftool prog show -j | jq -r '[.[] | select(.name == "label_set" or .name == "label_do")] | "\(map(.run_cnt // 0) | add // 0) \(map(.run_time_ns // 0) | add // 0)"'; }

# one_load KIND: "SERVER_NS AGENT_NS REQUESTS HITS HIT_NS" of a 10 s load, ctxprof-go as KIND says
one_load() {
	local kind=$1 c0 c1 a0=0 a1=0 n h0=0 t0=0 h1=0 t1=0 agent
	case $kind in
	none) agent= ;;
	base | basew) agent=$base_bin ;;
	this | thisw) agent=$CTXPROF ;;
	esac
	local -a flags=(-p "$srv")
	[ "${kind%w}" = "$kind" ] || flags+=(--wall)
	if [ -n "$agent" ]; then
		CTXPROF=$agent ctxprof_start "$work/$kind.err" "$work/$kind.jsonl" "${flags[@]}" 2>/dev/null || return 1
		a0=$(awk '{ print ($14 + $15) * 10000000 }' /proc/"$ctxprof"/stat)
		read -r h0 t0 < <(hits)
	fi
	c0=$(srv_cpu)
	read -r _ n _ _ _ _ < <("$load_bin" -url "$url" -c 8 -rate 1000 -d 10s) || return 1
	c1=$(srv_cpu)
	if [ -n "$agent" ]; then
		a1=$(awk '{ print ($14 + $15) * 10000000 }' /proc/"$ctxprof"/stat)
		read -r h1 t1 < <(hits)
		ctxprof_stop || return 1
	fi
	echo "$((c1 - c0)) $((a1 - a0)) $n $((h1 - h0)) $((t1 - t0))"
}

sysctl -qw kernel.bpf_stats_enabled=1
one_load none >/dev/null
kinds=(none base this basew thisw)
: >"$work/rounds"
printf '\na request'"'"'s lifetime (testdata/services checkout, pprof.Do each request, 1,000 requests a second; %s against this build):\n' "$base"
for ((r = 1; r <= ${ROUNDS13:-5}; r++)); do
	declare -A of=()
	for ((k = 0; k < 5; k++)); do
		kind=${kinds[$(((k + r) % 5))]}
		of[$kind]=$(one_load "$kind") || { echo "lifetime bench: a load failed" >&2; exit 1; }
	done
	read -r s_none _ n_none _ _ <<<"${of[none]}"
	read -r s_base a_base n_base _ _ <<<"${of[base]}"
	read -r s_this a_this n_this h_this t_this <<<"${of[this]}"
	read -r s_basew a_basew _ _ _ <<<"${of[basew]}"
	read -r s_thisw a_thisw _ _ _ <<<"${of[thisw]}"
	echo "$s_none $s_base $a_base $s_this $a_this $n_this $h_this $t_this $s_basew $a_basew $s_thisw $a_thisw" >>"$work/rounds"
	printf 'round %d: server + ctxprof-go CPU (ms): %d without it; -p: %d + %d with %s, %d + %d with this build; --wall: %d + %d, %d + %d (%d requests, %d label probe hits, %.0f ns each)\n' \
		"$r" $((s_none / 1000000)) $((s_base / 1000000)) $((a_base / 1000000)) "$base" \
		$((s_this / 1000000)) $((a_this / 1000000)) $((s_basew / 1000000)) $((a_basew / 1000000)) \
		$((s_thisw / 1000000)) $((a_thisw / 1000000)) "$n_this" "$h_this" \
		"$(awk -v t="$t_this" -v h="$h_this" 'BEGIN { print h ? t / h : 0 }')"
done
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : 0) }'; }
# each round's difference, server and agent, as a share of a core over its 10 s
extra=$(awk '{ printf "%.3f\n", 100 * (($4 + $5) - ($2 + $3)) / 10e9 }' "$work/rounds" | median)
extra_wall=$(awk '{ printf "%.3f\n", 100 * (($11 + $12) - ($9 + $10)) / 10e9 }' "$work/rounds" | median)
hits_req=$(awk '{ printf "%.2f\n", $6 ? $7 / $6 : 0 }' "$work/rounds" | median)
# the extra CPU (-p) per label probe hit: a hit's trap and its program, against the bare trap of section 7
us_hit=$(awk '{ printf "%.1f\n", $7 ? (($4 + $5) - ($2 + $3)) / $7 / 1000 : 0 }' "$work/rounds" | median)
ns_hit=$(awk '{ printf "%.0f\n", $7 ? $8 / $7 : 0 }' "$work/rounds" | median)
counted=$(jq -s 'map(select(.origin == "request") | .samples) | add // 0' "$work/thisw.jsonl")
printf 'requests'"'"' lifetimes: %s%% of a core over %s with -p, %s%% with -p --wall (server and ctxprof-go, median of rounds; each must be <= 1); with -p, the label probe %s hits a request, %s us of extra CPU a hit (-p), %s ns of it BPF; the last --wall load'"'"'s records count %s requests\n' \
	"$extra" "$base" "$extra_wall" "$hits_req" "$us_hit" "$ns_hit" "$counted"
awk -v e="$extra" -v w="$extra_wall" 'BEGIN { exit !(e <= 1 && w <= 1) }'
