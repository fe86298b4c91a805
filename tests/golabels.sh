#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# golabels.sh: gomap.h's account of Go's label sets holds for every toolchain, read by the sampler and by --wall.
#
# Workload: testdata/labelsets, built by every toolchain, plain, and by the
# oldest and the newest stripped (the layout from the golayout table).
# Each holds label sets of 1, 2, 7, 8, 9, 13, 16, 17 and 27 labels, one
# goroutine each, running 1 ms and sleeping 30 ms by turns: the sampler
# reads a set in BPF while its goroutine runs, the --wall reader in user
# space while it sleeps, both through bpf/gomap.h. Up to Go 1.23 the sets
# are maps of one, two and four buckets, and one left halfway through a
# grow to eight, with evacuated slots in its old buckets; from Go 1.24,
# lists. All are recorded at once, -F 999 --wall --wall-hz 49, for 4 s.
# Per target and set, for sampling and wall records alike: at least one
# record; a set of up to 16 labels is read whole, exactly, with its trace
# ID; a larger one is cut at 16 distinct labels of its own, more_labels
# true (a slot read twice, or an evacuated one, would repeat a key); no
# record mixes two sets.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "label sets of every shape, every toolchain"
mapfile -t all < <(go_toolchains)
sizes=(1 2 7 8 9 13 16 17 27)
builds=()
for v in "${all[@]}"; do builds+=("$v plain"); done
builds+=("${all[0]} stripped")
[ "${all[-1]}" = "${all[0]}" ] || builds+=("${all[-1]} stripped")

pids=()
declare -A name_of
for build in "${builds[@]}"; do
	read -r v variant <<<"$build"
	bin=$(go_build "$v" "$variant" labelsets) || { not_ok "go$v $variant labelsets: build failed"; continue; }
	"$bin" -d 600s -cpu 1ms -wait 30ms -sizes "$(IFS=,; echo "${sizes[*]}")" 2>/dev/null &
	pids+=($!)
	name_of[$!]="go$v $variant"
done
[ "${#pids[@]}" -gt 0 ] || done_testing

ctxprof_start "$work/err" "$work/out.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -F 999 --wall \
	--wall-hz 49 -i 3600 -d 4
check_eq "ctxprof-go -F 999 --wall starts with ${#pids[@]} targets" 0 "$?" || { cat "$work/err"; done_testing; }
wait "$ctxprof"
check_eq "ctxprof-go exits" 0 "$?"
kill "${pids[@]}" 2>/dev/null
wait "${pids[@]}" 2>/dev/null
schema_verdict "label set records" "$work/out.jsonl"

# Per record with labels: the sets its keys and trace ID name, and whether
# its labels are what that set's goroutine holds, as much as is read.
JUDGE='
def pad: if . < 10 then "0\(.)" else "\(.)" end;
def hex2: "0123456789abcdef" as $h | [(. / 16 | floor), (. % 16)] | map($h[.:. + 1]) | add;
def want($n): {"otel.traceid": ("0" * 30 + ($n | hex2))} +
	([range(1; $n) | pad as $i | {key: "s\($n).k\($i)", value: "v\($n).\($i)"}] | from_entries);
select(.origin == "sampling" or .origin == "wall") | select(.labels | length > 0) |
([.labels | keys[] | capture("^s(?<n>[0-9]+)\\.").n | tonumber] +
 [.labels["otel.traceid"] // "" | capture("^0{30}(?<h>[0-9a-f]{2})$").h |
  explode | map(if . >= 97 then . - 87 else . - 48 end) | .[0] * 16 + .[1]] | unique) as $ns |
if ($ns | length) != 1 then {pid, origin, n: 0, ok: false, why: "sets \($ns)"}
else $ns[0] as $n | want($n) as $w |
	{pid, origin, n: $n, ok: (if $n <= 16 then .labels == $w and (.more_labels | not)
		else (.labels | length) == 16 and .more_labels and
			(.labels | to_entries | all(.value == $w[.key])) end),
	 why: "\(.labels | length) labels, more_labels \(.more_labels)"}
end'
jq -c "$JUDGE" "$work/out.jsonl" >"$work/judged.jsonl"

for pid in "${pids[@]}"; do
	name=${name_of[$pid]}
	mixed=$(jq -s -c --argjson p "$pid" '[.[] | select(.pid == $p and .n == 0) | .why] | unique' \
		"$work/judged.jsonl")
	check_eq "$name: no record mixes label sets" "[]" "$mixed"
	for n in "${sizes[@]}"; do
		for origin in sampling wall; do
			got=$(jq -s -c --argjson p "$pid" --argjson n "$n" --arg o "$origin" '
				[.[] | select(.pid == $p and .n == $n and .origin == $o)] |
				{records: length, wrong: [.[] | select(.ok | not) | .why] | unique}' \
				"$work/judged.jsonl")
			if jq -e '.records > 0 and (.wrong | length == 0)' <<<"$got" >/dev/null; then
				ok "$name, $n labels, $origin: read as held ($got)"
			else
				not_ok "$name, $n labels, $origin: $got"
			fi
		done
	done
done
done_testing
