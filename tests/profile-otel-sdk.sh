#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-otel-sdk.sh: trace and span IDs from the spans a process records itself with the OpenTelemetry Go SDK, no labels.
#
# Builds: testdata/otelroot (Debian's OpenTelemetry Go SDK) by Go 1.22 and
# the newest toolchain in GOPATH mode, as tests/profile-otel.sh builds,
# plain, and by the newest as a module (go_vendor_tree), stripped: its
# offsets come from the module table by the versions its build info names
# (a stripped GOPATH build only goes through check, which must refuse the
# source with the reason). All run at once, sampled by one ctxprof-go at 999 Hz with
# the default trace sources; on SIGUSR1 each starts 20 root spans itself,
# four at a time, with no traceparent ever arriving and no labels. Each job
# burns 20 ms of CPU (however busy the machine) in main.spanWork (root span), main.childWork (a child span),
# main.parentWork (the root span again, once the child ended) and
# main.afterWork (after the root span ended). Per build:
# - every root span's trace ID has samples in main.spanWork, with the root's
#   span ID and trace_source "otel-sdk"; main.childWork's carry the child's
#   span ID, main.parentWork's the root's again (the goroutine returned to
#   the parent), for at least 90% of the jobs;
# - no sample carries a trace ID that was never started, no sample in
#   main.afterWork carries one, and at most 1% of main.spanWork's carry none;
# - no probe hit was stepped out of line (the SDK's functions have a large
#   frame's stack check, whose branch the kernel emulates): each lingers,
#   its jobs done, for a look at its mappings.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "otel-sdk source"
mapfile -t all < <(go_toolchains)
pids=()
declare -A name_of idx_of
n=0
for v in $(printf '%s\n' 1.22 "${all[-1]}" | sort -u); do
	[[ " ${all[*]} " == *" $v "* ]] || continue
	# plain: DWARF; mod-stripped: a module build (versions in its build info), no DWARF
	for variant in plain mod-stripped; do
		[ "$variant" = plain ] || [ "$v" = "${all[-1]}" ] || continue
		bin=$(go_build "$v" "$variant" otelroot) || { not_ok "go$v $variant otelroot: build failed"; continue; }
		check_eq "check go$v $variant otelroot: otel-sdk source, offsets from $([ $variant = plain ] && echo DWARF || echo the module table)" \
			"true null $([ $variant = plain ] && echo dwarf || echo table)" \
			"$("$CTXPROF" check --json "$bin" | jq -r '"\(.trace_sources."otel-sdk".supported) \(.trace_sources."otel-sdk".reason) \(.source)"')"
		"$bin" -signal -linger -spans 20 -workers 4 -burn 20ms >"$work/spans$n" 2>"$work/stderr$n" &
		pids+=($!)
		name_of[$!]="go$v $variant otelroot ($(go_version_of "$v" "$bin"))"
		idx_of[$!]=$n
		n=$((n + 1))
	done
done
[ "${#pids[@]}" -gt 0 ] || done_testing
bin=$(go_build "${all[-1]}" stripped otelroot)
check_eq "check stripped GOPATH-mode otelroot: otel-sdk refused, with the reason" \
	"false no DWARF, and .go.buildinfo names no module version for go.opentelemetry.io/otel/trace (built in GOPATH mode?) to look its layout up by" \
	"$("$CTXPROF" check --json "$bin" | jq -r '"\(.trace_sources."otel-sdk".supported) \(.trace_sources."otel-sdk".reason)"')"

ctxprof_start "$work/err" "$work/out.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -F 999 -i 3600
check_eq "ctxprof-go starts with ${#pids[@]} targets" 0 "$?" || { cat "$work/err"; done_testing; }
kill -USR1 "${pids[@]}"
# done with its jobs, each lingers for a look at its mappings
for pid in "${pids[@]}"; do
	for _ in $(seq 1200); do
		[ "$(wc -l <"$work/spans${idx_of[$pid]}")" -ge 20 ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	xol_verdict "${name_of[$pid]}" "$pid"
done
kill -USR1 "${pids[@]}"
for pid in "${pids[@]}"; do
	wait "$pid"
	check_eq "${name_of[$pid]}: exit status" 0 "$?"
done
# ctxprof-go ends with its last target
wait "$ctxprof"
check_eq "ctxprof-go exits when the targets have" 0 "$?"
sed 's/^/# /' "$work/err"
schema_verdict "records" "$work/out.jsonl"

for pid in "${pids[@]}"; do
	i=${idx_of[$pid]}
	name=${name_of[$pid]}
	check_eq "$name: 20 jobs printed their spans" 20 "$(wc -l <"$work/spans$i")"
	# trace -> {root, child}
	started=$(jq -R -s 'split("\n") | map(select(length > 0) | split(" ") | {key: .[0], value: {root: .[1], child: .[2]}}) | from_entries' "$work/spans$i")
	stats=$(jq -s --argjson s "$started" --argjson pid "$pid" '
		[ .[] | select(.pid == $pid) as $r | $r.stacks[] |
		  { t: $r.trace_id, sp: $r.span_id, src: $r.trace_source, n: .samples,
		    fn: ([.frames[].func | select(test("^main\\.(spanWork|childWork|parentWork|afterWork)$"))] | first) } ] as $all |
		def in_fn(f): $all | map(select(.fn == f));
		def jobs_with(f; which): in_fn(f) | map(select(.t != null and $s[.t] != null and .sp == $s[.t][which]) | .t) | unique | length;
		{ unstarted: ($all | map(select(.t != null and (.t as $t | $s | has($t) | not))) | map(.n) | add // 0),
		  bad_source: ($all | map(select(.t != null and .src != "otel-sdk")) | length),
		  after_traced: (in_fn("main.afterWork") | map(select(.t != null) | .n) | add // 0),
		  after_total: (in_fn("main.afterWork") | map(.n) | add // 0),
		  span_total: (in_fn("main.spanWork") | map(.n) | add // 0),
		  span_untraced: (in_fn("main.spanWork") | map(select(.t == null) | .n) | add // 0),
		  root_jobs: jobs_with("main.spanWork"; "root"),
		  child_jobs: jobs_with("main.childWork"; "child"),
		  parent_jobs: jobs_with("main.parentWork"; "root") }' "$work/out.jsonl")
	echo "# $name: $(jq -c . <<<"$stats")"
	get() { jq -r ".$1" <<<"$stats"; }
	check_eq "$name: samples with a trace ID no span had" 0 "$(get unstarted)"
	check_eq "$name: traced records whose trace_source is not otel-sdk" 0 "$(get bad_source)"
	check_eq "$name: root spans with samples in main.spanWork under their own IDs, of 20" 20 "$(get root_jobs)"
	check_eq "$name: main.afterWork samples (after the root span ended) with a trace ID, of $(get after_total)" 0 "$(get after_traced)"
	if [ "$(get span_total)" -gt 0 ] && [ $(($(get span_untraced) * 100)) -le "$(get span_total)" ]; then
		ok "$name: main.spanWork samples without a trace ID: $(get span_untraced) of $(get span_total) (<= 1%)"
	else
		not_ok "$name: main.spanWork samples without a trace ID: $(get span_untraced) of $(get span_total) (> 1%)"
	fi
	for k in child parent; do
		if [ $(($(get ${k}_jobs) * 100)) -ge $((20 * 90)) ]; then
			ok "$name: jobs whose main.${k}Work samples carry the $([ $k = child ] && echo "child span's" || echo "root span's (back from the child)") IDs: $(get ${k}_jobs) of 20 (>= 90%)"
		else
			not_ok "$name: jobs whose main.${k}Work samples carry the right span's IDs: $(get ${k}_jobs) of 20 (< 90%)"
		fi
	done
done
done_testing
