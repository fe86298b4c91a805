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
# BPF cost per sample (kernel.bpf_stats_enabled) on the hostile workload
# must stay within 2x its cost on testdata/traced's ordinary labels, both
# measured here, one after the other, with the same toolchain.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "hostile labels"
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled=$old_stats; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

# cost_per_sample BINARY: ns per run of on_sample while ctxprof-go samples BINARY at 999 Hz
cost_per_sample() {
	local t c id
	"$1" -d 12s >/dev/null 2>&1 &
	t=$!
	sleep 0.5
	"$CTXPROF" -p "$t" -F 999 -d 6 -o /dev/null 2>/dev/null &
	c=$!
	sleep 5
	bpftool prog show -j | jq -r '[.[] | select(.name == "on_sample")] | max_by(.id) |
		if .run_cnt > 0 then .run_time_ns / .run_cnt | floor else 0 end'
	wait "$c"
	kill "$t" 2>/dev/null
	wait "$t" 2>/dev/null
}

sysctl -qw kernel.bpf_stats_enabled=1
for v in $(go_toolchains | sed -n '1p;$p' | sort -u); do
	bin=$(go_build "$v" plain hostile) || { not_ok "go$v hostile: build failed"; continue; }
	"$bin" -d 10s 2>/dev/null &
	p=$!
	sleep 0.5
	"$CTXPROF" -p "$p" -F 999 -d 4 -o "$work/out.jsonl" 2>"$work/err"
	check_eq "go$v hostile labels: ctxprof-go exits" 0 "$?"
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	if jq -e . "$work/out.jsonl" >/dev/null 2>&1 && [ -s "$work/out.jsonl" ]; then
		ok "go$v: every one of $(wc -l <"$work/out.jsonl") lines parses with jq"
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

	hostile=$(cost_per_sample "$bin")
	ordinary=$(cost_per_sample "$(go_build "$v" plain)")
	if [ "$hostile" -gt 0 ] && [ "$ordinary" -gt 0 ] && [ "$hostile" -le $((2 * ordinary)) ]; then
		ok "go$v BPF cost per sample: hostile labels $hostile ns, ordinary labels $ordinary ns (at most 2x)"
	else
		not_ok "go$v BPF cost per sample: hostile labels $hostile ns against ordinary $ordinary ns (more than 2x)"
	fi
done
done_testing
