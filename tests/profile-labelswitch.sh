#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-labelswitch.sh: label sets that change every few ms, freed and made again by a busy GC, are never mixed up.
#
# Workload: testdata/labelswitch, built by the oldest and the newest
# toolchain (map and slice labels), plain (the sampler skips reading a set
# it has just sent when g.labels and the GC cycle count are unchanged) and
# stripped (no runtime.work symbol: every set is read). Each runs two
# workers with requests of 100 us that make 64 KiB of garbage each, with
# GOGC=1, so that the GC runs hundreds of times a second and old label
# sets' memory is handed out again to new ones, at the very addresses
# that samples saw before: a check of the g.labels pointer alone, without
# the GC cycle count, puts samples under another request's trace ID here
# (figures: tests/bench/README.md, Other commands). Request ID burns in
# main.burn<ID mod 3> under a trace ID whose last 16 hex digits are ID and
# labels kI = "value-I-<ID mod 1000>". All four are sampled at once at
# 999 Hz until each has 300 samples in the burn functions.
# Per target: every sample in main.burnN has a trace ID with ID mod 3 = N
# (a stale set would be another request's: two times in three, the wrong
# function); every record's k1, when present, is "value-1-<ID mod 1000>";
# and the GC ran at least 20 times while it was sampled (gctrace).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "label sets switching under a busy GC"
first=$(go_toolchains | head -n 1)
last=$(go_toolchains | tail -n 1)
pids=()
declare -A name_of gclog
for v in $(printf '%s\n' "$first" "$last" | sort -u); do
	for var in plain stripped; do
		bin=$(go_build "$v" "$var" labelswitch) || { not_ok "go$v $var labelswitch: build failed"; continue; }
		GOGC=1 GODEBUG=gctrace=1 "$bin" -d 600s -workers 2 -slice 100us -garbage 65536 2>"$work/gc-$v-$var" &
		pids+=($!)
		name_of[$!]="go$v $var"
		gclog[$!]=$work/gc-$v-$var
	done
done
[ "${#pids[@]}" -gt 0 ] || done_testing

# per record and stack: the request ID (the trace ID's last 16 hex digits),
# which burnN it is in, its k1 label, and the samples
PER_STACK='
def hexval: explode | reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 else $c - 48 end));
[ .[] | select(.pid == $pid and .trace_id != null) as $r | $r.stacks[] |
  { id: ($r.trace_id[16:32] | hexval), k1: $r.labels.k1, n: .samples,
    f: ([.frames[].func | select(test("^main\\.burn[012]$"))] | first) } |
  select(.f != null) ]'
enough() {
	local p
	for p in "${pids[@]}"; do
		jq -s -e --argjson pid "$p" "$PER_STACK | map(.n) | add // 0 | . >= 300" "$1" >/dev/null 2>&1 || return 1
	done
}
start_gcs=()
for p in "${pids[@]}"; do start_gcs+=("$(grep -c '^gc ' "${gclog[$p]}")"); done
sample_until 3 120 enough "$work/err" "$work/out.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -F 999
check_eq "ctxprof-go exits" 0 "$?"
i=0
for p in "${pids[@]}"; do
	gcs=$(($(grep -c '^gc ' "${gclog[$p]}") - start_gcs[i]))
	i=$((i + 1))
	read -r total wrong badk1 < <(jq -s -r --argjson pid "$p" "$PER_STACK |
		[ (map(.n) | add // 0),
		  (map(select((.id % 3 | tostring) != (.f | .[-1:]))) | map(.n) | add // 0),
		  (map(select(.k1 != null and .k1 != \"value-1-\\(.id % 1000)\")) | length) ] | @tsv" \
		"$work/out.jsonl")
	if [ "$total" -ge 300 ] && [ "$wrong" -eq 0 ] && [ "$badk1" -eq 0 ] && [ "$gcs" -ge 20 ]; then
		ok "${name_of[$p]}: $total samples in main.burn0..2, 0 under another request's trace ID, k1 labels consistent; $gcs GC cycles meanwhile"
	else
		not_ok "${name_of[$p]}: $total samples, $wrong under a trace ID of the wrong residue, $badk1 records with a k1 of another request; $gcs GC cycles"
	fi
done
done_testing
