#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# hostile-labels.sh: labels a target controls cannot break the output, hide a cut, or make the sampler slow.
#
# Workload: testdata/hostile (oldest and newest toolchain: map and slice
# labels). Its goroutines carry 1,000 labels; a 1 MB value; invalid UTF-8;
# quotes, backslashes, NUL and control characters; an empty key; and
# "trace IDs" of 33 hex digits and of 32 non-hex characters.
# Checks: every line parses with jq; a cut value is listed in "truncated"
# and a cut label set has "more_labels"; invalid UTF-8 becomes U+FFFD; the
# odd characters come back exactly; the empty key is kept; neither bad trace
# ID becomes a trace_id, while its label stays; ctxprof-go exits 0. Then the
# BPF cost per sample of the target (BPF run-time statistics, less the runs
# on other processes: none since -p samples the target's threads alone) on
# the hostile workload must stay within 2x its cost
# on testdata/traced's ordinary labels, both measured here, one after the
# other, with the same toolchain.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "hostile labels"
# BPF run-time statistics, enabled through a file descriptor held open for
# the test (BPF_ENABLE_STATS) rather than the kernel.bpf_stats_enabled
# sysctl: other tests on this machine may be measuring too, and a sysctl
# set back by one of them would stop the counting under the other
perl -e '
	my $attr = pack("L L", 0, 0);       # BPF_STATS_RUN_TIME
	syscall(321, 32, $attr, length($attr)) >= 0 or die "BPF_ENABLE_STATS: $!\n";
	print "enabled\n";
	close(STDOUT);
	sleep;' >"$work/stats" &
stats=$!
until grep -q enabled "$work/stats" 2>/dev/null || ! kill -0 "$stats" 2>/dev/null; do
	sleep 0.1
done

# run_stats PID: "RUN_TIME_NS RUN_CNT" of PID's BPF program named on_sample,
# found through PID's own descriptors: other instances may run here
run_stats() {
	local f id
	for f in /proc/"$1"/fdinfo/*; do
		id=$(awk '$1 == "prog_id:" { print $2 }' "$f" 2>/dev/null)
		[ -n "$id" ] && grep -q '^run_cnt:' "$f" || continue
		[ "$(bpftool prog show id "$id" -j | jq -r .name)" = on_sample ] || continue
		awk '$1 == "run_time_ns:" { t = $2 } $1 == "run_cnt:" { c = $2 } END { print t, c }' "$f"
		return
	done
	echo "0 0"
}

# cost_per_sample BINARY [IDLE_NS]: ns that on_sample spends on a sample
# of BINARY, sampled at 999 Hz for 3 s and until it has 2,000 samples. The
# perf events are per CPU, so on_sample also runs, and returns after one
# lookup, whenever the target is not on the CPU, which on a busy machine is
# most of the time and varies from run to run: those runs are charged at
# IDLE_NS each and taken out. Prints "NS TARGET_SAMPLES RUNS".
cost_per_sample() {
	local t time=0 runs=0 n=0 start
	"$1" -d 600s >/dev/null 2>&1 &
	t=$!
	if ctxprof_start "$work/cost.err" "$work/cost.jsonl" -p "$t" -F 999 -i 1 -d 300; then
		start=$SECONDS
		sleep 3
		while [ "$(jq -s 'map(.samples) | add // 0' "$work/cost.jsonl")" -lt 2000 ] &&
			[ $((SECONDS - start)) -lt 120 ]; do
			sleep 1
		done
		read -r time runs < <(run_stats "$ctxprof")
		ctxprof_stop
		n=$(sed -n 's/^ctxprof-go: \([0-9]*\) samples from.*/\1/p' "$work/cost.err")
	fi
	kill "$t" 2>/dev/null
	wait "$t" 2>/dev/null
	if [ "${n:-0}" -gt 0 ]; then
		echo $(((time - (runs - n) * ${2:-0}) / n)) "$n" "$runs"
	else
		echo 0 0 "$runs"
	fi
}

# idle_cost: ns per run of on_sample when the target never runs (leafy
# waiting for a signal), the price of every run on another process, and
# the runs (0: no other process's tick reaches it); "- -" when ctxprof-go
# did not start
idle_cost() {
	local t time=0 runs=0 bin
	# built first: a build in the background job would be what -p finds
	bin=$(go_build "$1" plain leafy) || { echo - -; return; }
	"$bin" -wait-usr1 -d 600s 2>/dev/null &
	t=$!
	# other processes on the CPUs: a quiet machine has none, and nothing to measure
	bash -c 'while :; do :; done' &
	hog=$!
	if ctxprof_start "$work/idle.err" /dev/null -p "$t" -F 999 -d 300; then
		sleep 3
		read -r time runs < <(run_stats "$ctxprof")
		ctxprof_stop
	else
		time=- runs=-
	fi
	kill "$hog" 2>/dev/null
	wait "$hog" 2>/dev/null
	kill "$t" 2>/dev/null
	wait "$t" 2>/dev/null
	if [ "$runs" = - ]; then
		echo - -
	else
		echo $((runs > 0 ? time / runs : 0)) "$runs"
	fi
}

# enough OUT: a sample in each of the seven burn functions, which the
# checks below look up
enough() {
	jq -s -e '[.[].stacks[].frames[].func | select(startswith("main.burn"))] | unique | length == 7' "$1" >/dev/null 2>&1
}

for v in $(go_toolchains | sed -n '1p;$p' | sort -u); do
	bin=$(go_build "$v" plain hostile) || { not_ok "go$v hostile: build failed"; continue; }
	"$bin" -d 600s 2>/dev/null &
	p=$!
	sample_until 4 120 enough "$work/err" "$work/out.jsonl" -p "$p" -F 999
	check_eq "go$v hostile labels: ctxprof-go exits" 0 "$?"
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	if jq -e . "$work/out.jsonl" >/dev/null 2>&1 && [ -s "$work/out.jsonl" ]; then
		ok "go$v: every one of $(wc -l <"$work/out.jsonl") lines parses with jq"
		schema_verdict "go$v hostile labels" "$work/out.jsonl"
	else
		not_ok "go$v: output is not valid JSON lines"
		continue
	fi
	# a record per job, found by its burn function
	jq -c '. as $r | .stacks[] | select(.frames | any(.func | startswith("main.burn"))) |
		{job: ([.frames[].func | select(startswith("main.burn"))] | first), trace_id: $r.trace_id,
		 labels: $r.labels, truncated: $r.truncated, more_labels: $r.more_labels}' \
		"$work/out.jsonl" | jq -s -c 'group_by(.job) | map(first) | INDEX(.job)' >"$work/jobs.json"
	j() { jq -c "$1" "$work/jobs.json"; }
	check_eq "go$v 1,000 labels: cut at 16, flagged" '{"n":16,"more":true}' \
		"$(j '.["main.burnThousand"] | {n: (.labels | length), more: .more_labels}')"
	check_eq "go$v 1 MB value: cut and listed in truncated" '{"len":128,"truncated":["huge"]}' \
		"$(j '.["main.burnHuge"] | {len: (.labels.huge | length), truncated}')"
	check_eq "go$v invalid UTF-8: U+FFFD in key and value" '{"bad��key":"val�(ue�"}' \
		"$(j '.["main.burnInvalidUTF8"].labels | del(.["otel.traceid"])')"
	check_eq "go$v quotes, backslashes, NUL, control characters: back exactly" \
		'{"q\"uo\\te":"nul\u0000ctl\u0001\u001f\"\\\n\t"}' \
		"$(j '.["main.burnQuotes"].labels | del(.["otel.traceid"])')"
	check_eq "go$v empty key: kept" '{"":"empty key"}' \
		"$(j '.["main.burnEmptyKey"].labels | del(.["otel.traceid"])')"
	check_eq "go$v 33 hex digits: no trace_id, the label kept" \
		'{"trace_id":null,"label":"5ff7651916cd43dd8448eb211c80319c0"}' \
		"$(j '.["main.burnTrace33"] | {trace_id, label: .labels["otel.traceid"]}')"
	check_eq "go$v 32 non-hex characters: no trace_id, the label kept" \
		'{"trace_id":null,"label":"6gf7651916cd43dd8448eb211c80319z"}' \
		"$(j '.["main.burnTraceNotHex"] | {trace_id, label: .labels["otel.traceid"]}')"

	read -r idle iruns < <(idle_cost "$v")
	read -r hostile hn hruns < <(cost_per_sample "$bin" "${idle/-/0}")
	read -r ordinary on oruns < <(cost_per_sample "$(go_build "$v" plain)" "${idle/-/0}")
	figures="hostile labels $hostile ns ($hn samples of $hruns runs), ordinary labels $ordinary ns ($on of $oruns), other processes' runs $idle ns ($iruns runs)"
	if [ "$idle" != - ] && { [ "$idle" -gt 0 ] || [ "$iruns" -eq 0 ]; } && [ "$hostile" -gt 0 ] && [ "$ordinary" -gt 0 ] && [ "$hostile" -le $((2 * ordinary)) ]; then
		ok "go$v BPF cost per target sample, at most 2x: $figures"
	else
		not_ok "go$v BPF cost per target sample: $figures; more than 2x, or not measured"
	fi
done
done_testing
