#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# wall-many.sh: --wall on more goroutines than a snapshot may read: each looked at in turn, totals kept.
#
# testdata/parked, built stripped by the newest toolchain, parks 30,000
# goroutines in select, a third of them under a trace ID of their own, and
# a CPU hog spins on every core, as on a busy host. ctxprof-go --wall at
# its default 19 Hz then has more goroutines than its share of looks a
# snapshot (WALL_LOOKS_PER_SEC in cmd/record/session.c) and looks at each
# goroutine once in several snapshots, counting each look as the snapshots
# since the one before. Checked:
# - the statistics line says so ("each goroutine in 1 of N snapshots", N > 1);
# - every one of the 10,000 trace IDs is there, waiting in select in
#   main.park, and its wall_ns is within 10% of the time the recording
#   covered (its one goroutine was parked all along), although its
#   records' "observed" looks are fewer than their samples;
# - the goroutines without a trace ID add up to 20,000 x that time, within 10%;
# - the traced looks carry their times (90% or more) and weights that add
#   up to their samples (90% or more, never past them);
# - the records fit the schema.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "--wall on 30,000 goroutines"
newest=$(go_toolchains | tail -n 1)
n=30000
bin=$(go_build "$newest" stripped parked) || { not_ok "go$newest stripped parked: build failed"; done_testing; }

"$bin" -parked "$n" -report 3600s -d 600s >/dev/null 2>"$work/parked.err" &
park=$!
for ((i = 0; i < 600; i++)); do
	[ -s "$work/parked.err" ] && break
	sleep 0.1
done
grep -q "$n goroutines parked" "$work/parked.err" || { not_ok "parked did not start: $(cat "$work/parked.err")"; done_testing; }
# a busy host: one spinning process per core
for ((i = 0; i < $(nproc); i++)); do
	sh -c 'while :; do :; done' &
done

ctxprof_start "$work/err" "$work/out.jsonl" -p "$park" --wall -i 3 -d 8
check_eq "ctxprof-go --wall starts on $n goroutines" 0 "$?" || { cat "$work/err"; done_testing; }
wait "$ctxprof"
check_eq "ctxprof-go --wall -d 8: exit status" 0 "$?"

line=$(grep '^ctxprof-go: wall:' "$work/err")
stride=$(sed -n 's/.*(each goroutine in 1 of \([0-9]*\) snapshots).*/\1/p' <<<"$line")
if [ -n "$stride" ] && [ "$stride" -gt 1 ]; then
	ok "each goroutine looked at once in $stride snapshots: $line"
else
	not_ok "every goroutine looked at in every snapshot, or not said: $line"
fi

# the time the recording covered: from its first snapshot to its last, one period each
period=$((1000000000 / 19))
read -r covered traces short observed samples parked_ns < <(jq -rs --argjson p "$period" '
	map(select(.origin == "wall")) as $w |
	def ns(t): (t | sub("\\.[0-9]+Z$"; "Z") | fromdate) * 1e9 + (t | capture("\\.(?<f>[0-9]+)Z$").f | tonumber * 1e3);
	(($w | map(ns(.end)) | max) - ($w | map(ns(.start)) | min) + $p) as $cov |
	($w | map(select(.trace_id != null))) as $t |
	($t | group_by(.trace_id) | map({id: .[0].trace_id, ns: (map(.wall_ns) | add),
		park: all(.[]; .state == "waiting" and .wait_reason == "select" and
			any(.stacks[].frames[]; .func == "main.park"))})) as $g |
	"\($cov | floor) \($g | length)" +
	" \($g | map(select(.park | not) or (.ns < 0.9 * $cov or .ns > 1.1 * $cov)) | length)" +
	" \($t | map(.observed) | add) \($t | map(.samples) | add)" +
	" \($w | map(select(.trace_id == null and any(.stacks[].frames[]; .func == "main.park")) | .wall_ns) | add | floor)"
	' "$work/out.jsonl")
check_eq "trace IDs with wall time" $((n / 3)) "$traces"
if [ "${short:-1}" = 0 ]; then
	ok "every trace ID waits in select in main.park for the time covered ($((covered / 1000000)) ms), within 10%"
else
	not_ok "$short of $traces trace IDs off by more than 10% of $((covered / 1000000)) ms, or not in main.park"
	jq -c 'select(.trace_id != null) | {trace_id, samples, observed, wall_ns, state, wait_reason}' "$work/out.jsonl" | head -n 5
fi
if [ "${observed:-0}" -gt 0 ] && [ "$observed" -lt "${samples:-0}" ]; then
	ok "traced records: $observed looks behind $samples samples"
else
	not_ok "traced records: observed ${observed:-?}, samples ${samples:-?}: looks should be fewer"
fi
want=$((covered / 1000 * (n - n / 3)))
if awk -v got="${parked_ns:-0}" -v want="$want" 'BEGIN { exit !(got >= 0.9 * want * 1000 && got <= 1.1 * want * 1000) }'; then
	ok "goroutines without a trace ID: $((parked_ns / 1000000000)) s of wall time, $((n - n / 3)) x the time covered within 10%"
else
	not_ok "goroutines without a trace ID: ${parked_ns:-?} ns, want $((n - n / 3)) x $covered ns within 10%"
fi
# each look's time and weight: the traced goroutines' looks at their times,
# weighing the snapshots they stand for
read -r looks timed weighed < <(jq -rs 'map(select(.origin == "wall" and .trace_id != null)) |
	"\(map(.observed) | add) \([.[].stacks[].times_us | length] | add) \([.[].stacks[].weights[]] | add)"' "$work/out.jsonl")
if [ "${timed:-0}" -ge $((looks * 9 / 10)) ] && [ "${weighed:-0}" -le "${samples:-0}" ] &&
	[ "${weighed:-0}" -ge $((samples * 9 / 10)) ]; then
	ok "traced records: $timed of $looks looks timed, weighing $weighed of $samples samples"
else
	not_ok "traced records: ${timed:-?} of ${looks:-?} looks timed, weighing ${weighed:-?} of ${samples:-?} samples (want 90% or more, never past)"
fi
schema_verdict "--wall records on $n goroutines" "$work/out.jsonl"
kill "$park" 2>/dev/null
done_testing
