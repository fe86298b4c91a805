#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# otlp-alloc.sh: --alloc --otlp through the Collector: allocation profiles as Pyroscope files them, per trace as the JSON lines count them.
#
# Workload: testdata/allocs built by the newest toolchain, plain, at
# -rate 65536: four requests under trace IDs a110c0...01 to ...04, each
# allocating in a function of its own (main.allocSmall, alloc1K, alloc64K,
# allocChild), and main.allocUntraced with no labels; it waits for a start
# file, allocates for 3 s, writes what its own runtime.MemProfile counted
# (unbiased as runtime/pprof does) and exits. ctxprof-go -p --alloc -i 1
# --otlp records it through testdata/otelcol to testdata/otlpsink (see
# tests/otlp.sh), which reads each sample as Pyroscope's OTLP ingest does
# and refuses what the format or Pyroscope would. Checks:
# - the allocation samples arrive as two profiles, filed by Pyroscope as
#   memory:alloc_objects:count:memory:bytes and
#   memory:alloc_space:bytes:memory:bytes (its OTLP ingest names a profile
#   after its period type), period the program's rate, one value a sample;
# - per trace ID (the link), the sink's alloc_space and alloc_objects
#   totals equal the alloc records' alloc_bytes and alloc_objects of the
#   same run, exactly; each traced function's within 2% of the program's
#   own count;
# - main.allocUntraced's samples carry no link; no attribute holds a
#   trace ID; a trace's allocation samples carry the attributes its CPU
#   samples do;
# - the CPU profile is as without --alloc: process_cpu, timestamps alone,
#   per trace ID the CPU time of the JSON lines;
# - the statistics line's samples sent are the JSON lines' samples, CPU
#   samples and sampled allocations, none dropped; nothing refused.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"
. "$(dirname "$0")/otlp-lib.sh"

e2e_setup "allocation profiles through a collector (--alloc --otlp)"
if [ ! -s "$OTELCOL_TREE/packages" ] && [ -e "$OTELCOL_TREE/apt" ]; then
	skip "--alloc --otlp through a collector" "golang-opentelemetry-collector-dev is not in sid (make deps looked)"
	done_testing
fi
if ! otelcol_build; then
	not_ok "the collector and the sink: $otelcol_why"
	done_testing
fi
last=$(go_toolchains | tail -n 1)
bin=$(go_build "$last" plain allocs) || { not_ok "go$last allocs: build failed"; done_testing; }
"$bin" -rate 65536 -d 3s -start "$work/go" -out "$work/truth.json" >"$work/ready" 2>&1 &
pid=$!
wait_line "$work/ready" '^ready' 100 || { not_ok "go$last allocs: not ready"; done_testing; }
echo "# go$last allocs, pid $pid, -rate 65536"

d=$work/alloc
pipeline alloc "$d"
ctxprof_start "$d/err" "$d/out.jsonl" -p "$pid" --alloc -i 1 --otlp "http://127.0.0.1:$cport"
check_eq "ctxprof-go -p --alloc --otlp starts" 0 "$?" || { cat "$d/err"; done_testing; }
touch "$work/go"
wait "$ctxprof"
check_eq "ctxprof-go exits 0 once its target has" 0 "$?"
wait "$pid" 2>/dev/null
stats=$(grep '^ctxprof-go: otlp:' "$d/err" | tail -n 1)
echo "# $stats"
smp=$d/sink/samples.jsonl

# per_trace TYPE: {"trace or null": total, ...} of the sink's TYPE profile
per_trace() {
	jq -s -S -c --arg t "$1" 'map(select(.type == $t)) | group_by(.trace_id)
		| map({key: (.[0].trace_id // "null"), value: (map(.value) | add)}) | from_entries' "$smp"
}
# json_alloc FIELD: the same of the alloc records' FIELD
json_alloc() {
	jq -s -S -c --arg f "$1" 'map(select(.origin == "alloc")) | group_by(.trace_id)
		| map({key: (.[0].trace_id // "null"), value: (map(.[$f]) | add)}) | from_entries' "$d/out.jsonl"
}

# the collector forwards as it receives: wait for the last request to arrive
want_space=$(json_alloc alloc_bytes)
for i in $(seq 60); do
	[ "$(per_trace alloc_space)" = "$want_space" ] && break
	sleep 0.5
done
why=$(sink_refusals "$d/sink")
if [ -z "$why" ]; then
	ok "every request kept the format's rules and Pyroscope's ($(wc -l <"$d/sink/requests.jsonl") requests)"
else
	not_ok "the sink refused: $(tr '\n' ';' <<<"$why")"
fi

check_eq "the allocation profiles as Pyroscope files them (named after their period type)" \
	"memory:alloc_objects:count:memory:bytes memory:alloc_space:bytes:memory:bytes" \
	"$(jq -r 'select(.type | startswith("alloc_")) | .profile_type' "$smp" | sort -u | tr '\n' ' ' | sed 's/ $//')"
check_eq "their period: the program's runtime.MemProfileRate, one value a sample, no timestamps" \
	"$(jq -r .rate "$work/truth.json") 1 0" \
	"$(jq -r 'select(.type | startswith("alloc_")) | "\(.period) \(.values) \(.timestamps)"' "$smp" | sort -u | tr '\n' ' ' | sed 's/ $//')"
got=$(per_trace alloc_space)
if [ "$got" = "$want_space" ] && [ "$(jq length <<<"$got")" -ge 5 ]; then
	ok "per trace ID, the sink's alloc_space equals the records' alloc_bytes ($(jq -r 'to_entries | map("\(.key | .[:8])… \(.value)") | join(", ")' <<<"$got"))"
else
	not_ok "alloc_space per trace: JSON lines $want_space, sink $got"
fi
check_eq "per trace ID, the sink's alloc_objects equals the records' alloc_objects" \
	"$(json_alloc alloc_objects)" "$(per_trace alloc_objects)"

# each traced function against the program's own count, through its trace
for f in main.allocSmall main.alloc1K main.alloc64K main.allocChild; do
	read -r trace want < <(jq -r --arg f "$f" '.functions[$f] | "\(.trace_id) \(.bytes)"' "$work/truth.json")
	got=$(jq -r --arg t "$trace" '.[$t] // 0' <<<"$want_space")
	if [ "${want:-0}" -gt 0 ] && awk -v w="$want" -v g="$got" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= 0.02 * w) }'; then
		ok "$f: trace $trace's alloc_space at the sink, $got bytes, within 2% of runtime.MemProfile's $want"
	else
		not_ok "$f: trace $trace's alloc_space at the sink $got bytes, runtime.MemProfile $want (not within 2%)"
	fi
done

read -r n linked < <(jq -s -r 'map(select((.type | startswith("alloc_")) and any(.frames[]; startswith("main.allocUntraced "))))
	| "\(length) \(map(select(.trace_id != null)) | length)"' "$smp")
if [ "${n:-0}" -gt 0 ] && [ "$linked" = 0 ]; then
	ok "main.allocUntraced: $n allocation samples, none with a link"
else
	not_ok "main.allocUntraced: $linked of ${n:-0} allocation samples have a link"
fi
check_eq "no allocation sample attribute holds a trace ID" 0 \
	"$(jq -s 'map(select((.type | startswith("alloc_")) and (.attributes | to_entries | any(.value | test("a110c0"))))) | length' "$smp")"
# a trace's attributes, as a sorted list of distinct sets, of its allocation and CPU samples
check_eq "a trace's allocation samples carry the attributes its CPU samples do" "[]" \
	"$(jq -s -c 'map(select(.trace_id != null)) | group_by(.trace_id)
		| map({a: (map(select(.type == "alloc_space") | .attributes) | unique),
		       c: (map(select(.profile == "process_cpu") | .attributes) | unique)})
		| map(select(.c != [] and .a != .c))' "$smp")"

# the CPU profile, as without --alloc
check_eq "the CPU profile: process_cpu, samples/count, timestamps alone" \
	"process_cpu:cpu:nanoseconds:cpu:nanoseconds samples/count 0" \
	"$(jq -r 'select(.type | startswith("alloc_") | not) | "\(.profile_type) \(.type)/\(.unit) \(.values)"' "$smp" | sort -u | tr '\n' ' ' | sed 's/ $//')"
want=$(json_totals "$d/out.jsonl" cpu)
got=$(sink_totals "$smp" cpu)
if [ "$got" = "$want" ] && [ "$want" != "{}" ]; then
	ok "per trace ID, the CPU time the sink received equals the JSON lines ($(jq -r 'length' <<<"$want") trace IDs, $(jq -r '[.[]] | add / 1e6 | floor' <<<"$want") ms)"
else
	not_ok "CPU per trace: JSON lines $want, sink $got"
fi

json=$(jq -s '[.[].samples] | add // 0' "$d/out.jsonl")
allocs=$(jq -s '[.[] | select(.origin == "alloc") | .samples] | add // 0' "$d/out.jsonl")
if [[ $stats =~ \(([0-9]+)\ samples,.*\ 0\ dropped ]] && [ "${BASH_REMATCH[1]}" = "$json" ] && [ "$allocs" -gt 0 ]; then
	ok "statistics: ${BASH_REMATCH[1]} samples sent, the JSON lines' ($allocs of them sampled allocations), none dropped"
else
	not_ok "statistics: '$stats'; the JSON lines hold $json samples, $allocs of them sampled allocations"
fi
kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null
done_testing
