#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-summary.sh: the lines at exit name the costliest traces by CPU and the slowest by elapsed time, with their leaf; --quiet drops them.
#
# testdata/traced (newest Go) burns CPU under five known trace IDs, each job
# in its own function over main.spin, beside parked goroutines: ctxprof-go
# -p PID --wall -d 4 as a user types it. On stderr: the CPU heading and five
# lines, every trace ID one of the program's, the leaf of each but the
# allocating one main.spin or main.mix, inlined into it; the elapsed
# heading and its lines, each with its goroutine time; every line at most
# 80 columns; the CPU and goroutine time figures those of the records (jq
# over stdout, to the hundredth of a second); stdout nothing but JSON
# records. With --quiet, none of it.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "the exit summary"
v=$(go_toolchains | tail -n 1)
bin=$(go_build "$v" plain) || { not_ok "go$v: build failed"; done_testing; }
src=$TOP/testdata/traced/main.go
ids=$(sed -n 's/^\ttrace[A-Za-z]* *= "\([0-9a-f]\{32\}\)"$/\1/p' "$src" | sort | tr '\n' ' ')
"$bin" -d 60s >/dev/null 2>&1 &
pid=$!
wait_exec "$pid"

"$CTXPROF" -p "$pid" --wall -d 4 >"$work/out.jsonl" 2>"$work/err"
check_eq "exit status" 0 "$?"
sed -n '/costliest/,$p' "$work/err" | sed 's/^/# /'
cpu=$(sed -n '/the costliest traces by CPU/,/the slowest traces of/p' "$work/err" | grep -E '^ctxprof-go: [0-9a-f]{32} ')
wall=$(sed -n '/the slowest traces of/,$p' "$work/err" | grep -E '^ctxprof-go: [0-9a-f]{32} ')
check_eq "the CPU heading" 1 "$(grep -c '^ctxprof-go: the costliest traces by CPU, of [0-9]*, with the commonest leaf:$' "$work/err")"
check_eq "five lines of traces by CPU" 5 "$(grep -c . <<<"$cpu")"
check_eq "the elapsed heading and five lines" "1 5" \
	"$(grep -c '^ctxprof-go: the slowest traces of [0-9]*: elapsed, goroutine time, commonest leaf:$' "$work/err") $(grep -c . <<<"$wall")"
check_eq "every trace ID one of testdata/traced's" "" \
	"$(awk '{ print $2 }' <<<"$cpu$wall" | while read -r t; do [[ " $ids" == *" $t "* ]] || echo "$t"; done)"
# main.mix is inlined into main.spin's loop: which of the two most samples
# land in depends on the CPU's timing of the loop's instructions
check_eq "the leaf of each CPU line, the allocating job's aside, is main.spin or main.mix in it" "" \
	"$(grep -v 8f3d6b7a1a5e6f9bac4d5e6f70819203 <<<"$cpu" | awk '$4 != "main.spin" && $4 != "main.mix"')"
check_eq "its lines of at most 80 columns" "" "$(sed -n '/costliest/,$p' "$work/err" | awk 'length > 80')"
# the figures are the records': each line's seconds, and jq's sum of the trace's cpu_ns
check_eq "the CPU figures are the records'" "" "$(awk '{ print $2, $3 }' <<<"$cpu" | while read -r t s; do
	want=$(jq -s -r --arg t "$t" 'map(select(.trace_id == $t and .origin == "sampling") | .cpu_ns) | add / 1e9 | . * 100 | round / 100 |
		tostring | if test("\\.") then . else . + ".0" end' "$work/out.jsonl")
	awk -v a="${s%s}" -v b="$want" 'BEGIN { exit !(a - b < 0.006 && b - a < 0.006) }' || echo "$t: $s, records $want"
done)"
# goroutine time: each elapsed line's second figure, and jq's sum of the trace's wall_ns
check_eq "the goroutine time figures are the records'" "" "$(awk '{ print $2, $4 }' <<<"$wall" | while read -r t s; do
	want=$(jq -s -r --arg t "$t" 'map(select(.trace_id == $t and .origin == "wall") | .wall_ns) | add / 1e9 | . * 100 | round / 100 |
		tostring | if test("\\.") then . else . + ".0" end' "$work/out.jsonl")
	awk -v a="${s%s}" -v b="$want" 'BEGIN { exit !(a - b < 0.006 && b - a < 0.006) }' || echo "$t: $s, records $want"
done)"
check_eq "stdout: JSON records only" "$(grep -c . "$work/out.jsonl")" "$(jq -c 'select(.pid)' "$work/out.jsonl" 2>/dev/null | grep -c .)"
"$CTXPROF" -p "$pid" -d 1 --quiet >/dev/null 2>"$work/quiet.err"
check_eq "--quiet: no summary" "0 0" "$? $(grep -c costliest "$work/quiet.err")"
kill "$pid"
done_testing
