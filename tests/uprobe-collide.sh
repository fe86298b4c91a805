#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# uprobe-collide.sh: uprobe events and CPU samples of the same threads at once; neither may take the other's data.
#
# On 6.x kernels a uprobe's BPF program runs with interrupts on, and a
# cpu-clock sample of the same thread can fire in its middle; both programs
# fill the same per-CPU scratch event. This test makes that happen tens of
# thousands of times a second and checks every record.
#
# Builds testdata/collide with the oldest and newest installed toolchain (map
# and slice label layouts). Each build runs with GOMAXPROCS=8 (8 threads on
# this machine's CPUs), niced, with 8 goroutines: goroutine i runs under
# pprof.Do with otel.traceid=trace<i> and worker=<i> and calls
# main.collide(ctxBase + i) from main.work<i> in a loop. One run of
# `ctxprof-go -p PID --uprobe BIN:main.collide -F 999` per build. Expected
# values come from the Go source (ctxBase, the trace<i> constants, and the
# order of the traces and works arrays). Per build:
# - every uprobe record is self-consistent: its context is one the program
#   uses, its trace_id and labels are those of the goroutine with that
#   context, the stack starts main.collide then main.work<i>, it has a goid,
#   and each context has one goid of its own; every goroutine has records;
# - the statistics line adds up: uprobe records = reported, and nothing
#   "not written" (an event the kernel sent that did not arrive as an event);
#   ring-buffer losses are expected and only counted;
# - every CPU sample whose stack holds main.work<i> carries trace<i> and
#   exactly goroutine i's labels, and no stack holds two goroutines'
#   functions (samples elsewhere, e.g. in the uprobe's single-step slot,
#   cannot name their goroutine and are only counted).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "uprobe and sample collisions"
DURATION=${DURATION:-4}
src=$TOP/testdata/collide/main.go

# {"<context>": {"trace": ..., "worker": "<i>", "caller": "main.work<i>"}}, from the source
want_json_collide() {
	local base traces works
	base=$(sed -n 's/^\tctxBase *= *\([0-9]*\)$/\1/p' "$src")
	traces=$(sed -n 's/^\ttraces *= *\[\.\.\.\]string{\(.*\)}$/\1/p' "$src" | tr -d ' ')
	works=$(sed -n 's/^\tworks *= *\[\.\.\.\]func(int) uint64{\(.*\)}$/\1/p' "$src" | tr -d ' ')
	sed -n 's/^\t\(trace[0-9]*\) *= *"\([0-9a-f]\{32\}\)"$/\1 \2/p' "$src" |
		jq -R -s -c --argjson base "$base" --arg traces "$traces" --arg works "$works" '
		(split("\n") | map(select(length > 0) | split(" ") | {(.[0]): .[1]}) | add) as $hex |
		[$traces | split(","), ($works | split(","))] | transpose | to_entries |
		map({key: ($base + .key | tostring),
		     value: {trace: $hex[.value[0]], worker: (.key | tostring), caller: ("main." + .value[1])}}) |
		from_entries'
}
want=$(want_json_collide)
if [ "$(jq 'length' <<<"$want" 2>/dev/null)" != 8 ]; then
	not_ok "could not read 8 contexts and trace IDs from $src: $want"
	done_testing
fi

# One line per record (uprobe) or per stack (sampling): what was checked,
# and why it is wrong, if it is. Streamed: a run makes over 100,000 records.
CHECK_JQ='
def fn(i): .stacks[0].frames[i].func;
if .origin == "uprobe" then
	$want[.context | tostring] as $w |
	{kind: "uprobe", context, goid,
	 bad: [if $w == null then "context \(.context) is not one the program uses" else
		(if .trace_id != $w.trace then "trace_id \(.trace_id)" else empty end),
		(if .labels != {"otel.traceid": $w.trace, "worker": $w.worker} then "labels \(.labels | tojson)" else empty end),
		(if fn(1) != $w.caller then "second frame \(fn(1)), not \($w.caller)" else empty end)
	      end,
	      (if (.stacks | length) != 1 or .stacks[0].samples != 1 then "stacks \(.stacks | map(.samples))" else empty end),
	      (if fn(0) != "main.collide" then "leaf \(fn(0))" else empty end),
	      (if .goid == null then "no goid" else empty end)]}
elif .origin == "sampling" then
	. as $r | .stacks[] |
	([.frames[].func | select(test("^main\\.work[0-9]+$"))] | unique) as $ws |
	($want | to_entries | map(select(.value.caller == $ws[0]))[0].value) as $w |
	{kind: "sample", n: .samples,
	 bad: (if ($ws | length) == 0 then null
	       elif ($ws | length) > 1 then ["one stack in \($ws | join(" and "))"]
	       else [(if $r.trace_id != $w.trace then "\($ws[0]) with trace_id \($r.trace_id)" else empty end),
		     (if $r.labels != {"otel.traceid": $w.trace, "worker": $w.worker} then "\($ws[0]) with labels \($r.labels | tojson)" else empty end)]
	       end)}
else {kind: "other", origin} end |
. + {bad: (if .bad == null then null else (.bad | join("; ")) end)}'

# Sums of those lines: counts, and up to 3 examples of each kind of fault.
SUM_JQ='
(map(select(.kind == "uprobe"))) as $u | (map(select(.kind == "sample"))) as $s |
{uprobe: ($u | length),
 uprobe_bad: ($u | map(select(.bad != "")) | length),
 uprobe_examples: ($u | map(select(.bad != "") | "context \(.context): \(.bad)") | .[:3]),
 contexts: ($u | map(.context | tostring) | unique),
 goids: ($u | map(select(.goid != null)) | group_by(.context) |
	 map({context: .[0].context, goids: (map(.goid) | unique)})),
 samples: ($s | map(.n) | add // 0),
 samples_checked: ($s | map(select(.bad != null) | .n) | add // 0),
 samples_bad: ($s | map(select(.bad != null and .bad != "") | .n) | add // 0),
 sample_examples: ($s | map(select(.bad != null and .bad != "") | .bad) | unique | .[:3]),
 other: (map(select(.kind == "other") | .origin) | unique)}'

first=$(go_toolchains | head -n 1)
last=$(go_toolchains | tail -n 1)
for v in $(printf '%s\n' "$first" "$last" | sort -u); do
	name="go$v collide"
	bin=$(go_build "$v" plain collide) || { not_ok "$name: build failed"; continue; }
	GOMAXPROCS=8 nice -n 10 "$bin" -d $((DURATION + 60))s 2>/dev/null &
	pid=$!
	sleep 0.5
	# each uprobe hit is a trap into the kernel: the ring buffers overflow, and
	# draining them can hold ctxprof-go past -d, so it gets a deadline
	t0=$(date +%s%N)
	timeout -s INT 180 "$CTXPROF" -p "$pid" --uprobe "$bin:main.collide" -F 999 -d "$DURATION" -i 600 --ring-kib 4096 \
		-o "$work/$v.jsonl" 2>"$work/$v.err"
	rc=$?
	t1=$(date +%s%N)
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	sed 's/^/# /' "$work/$v.err"
	echo "# ctxprof-go ran $(( (t1 - t0) / 1000000 )) ms for -d $DURATION"
	check_eq "$name: ctxprof-go exits" 0 "$rc"

	sums=$(jq -c --argjson want "$want" "$CHECK_JQ" "$work/$v.jsonl" | jq -s -c "$SUM_JQ")
	read -r n bad contexts goids_ok examples < <(jq -r --argjson want "$want" '
		[.uprobe, .uprobe_bad, (.contexts | length),
		 ((.goids | length) == ($want | length) and (.goids | all(.goids | length == 1)) and
		  (.goids | map(.goids[0]) | unique | length) == ($want | length)),
		 (.uprobe_examples | join(" | ") | if . == "" then "-" else . end)] | map(tostring) | join(" ")' <<<"$sums")
	if [ "$n" -gt 0 ] && [ "$bad" -eq 0 ] && [ "$contexts" -eq 8 ] && [ "$goids_ok" = true ]; then
		ok "$name: $n uprobe records checked, 0 inconsistent; all 8 goroutines, one goid each"
	else
		not_ok "$name: $n uprobe records checked, $bad inconsistent, $contexts of 8 contexts seen, one goid per goroutine: $goids_ok; e.g. $examples"
		jq -c '.goids' <<<"$sums" | sed 's/^/# goids per context: /'
	fi

	line=$(grep 'custom-trace and uprobe events' "$work/$v.err")
	read -r seen reported lost unwritten < <(sed -n \
		's/.*: \([0-9]*\) custom-trace and uprobe events: \([0-9]*\) reported, \([0-9]*\) lost.*, \([0-9]*\) not written/\1 \2 \3 \4/p' \
		<<<"$line")
	if [ -n "${seen:-}" ] && [ "$reported" -eq "$n" ] && [ "$unwritten" -eq 0 ]; then
		ok "$name: $seen events = $reported reported (as many uprobe records) + $lost lost (ring buffer full) + 0 not written"
	else
		not_ok "$name: $n uprobe records; statistics: ${line:-none} (an event not written left the kernel but did not arrive as one)"
	fi

	read -r samples checked sbad sexamples < <(jq -r '
		[.samples, .samples_checked, .samples_bad,
		 (.sample_examples | join(" | ") | if . == "" then "-" else . end)] | map(tostring) | join(" ")' <<<"$sums")
	if [ "$checked" -gt 0 ] && [ "$sbad" -eq 0 ]; then
		ok "$name: $checked of $samples samples have main.work<i> on the stack, 0 with another trace ID or label set"
	else
		not_ok "$name: $checked of $samples samples have main.work<i> on the stack, $sbad wrong; e.g. $sexamples"
	fi
	other=$(jq -c '.other' <<<"$sums")
	check_eq "$name: no record of another origin" '[]' "$other"
done
done_testing
