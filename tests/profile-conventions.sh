#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-conventions.sh: the label conventions of Datadog, Grafana, Polar Signals and otel_traceid, with the default keys.
#
# Builds: testdata/conventions by the oldest installed toolchain (labels in
# a map before Go 1.24) and the newest (a slice), pure Go. Both run at once
# while ctxprof-go, with no --trace-key, samples them at 999 Hz until every
# job has 20 samples. Per build and job (each burns in its own function):
# no sample there carries another job's trace ID, at least 97% carry the
# right one, and the span ID printed is the job's, as 16 hex digits
# (Datadog's decimal "span id" converted). Expected IDs come from the Go
# source's constants.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "trace-ID label conventions"
src=$TOP/testdata/conventions/main.go
const() { sed -n "s/^\t$1 *= *\"\([0-9a-f]*\)\"$/\1/p" "$src"; }
# job -> "TRACE SPAN"
want=$(jq -n --arg dt "$(const traceDatadog)" --arg ds "$(const spanDatadogHex)" \
	--arg gt "$(const traceGrafana)" --arg gs "$(const spanGrafana)" \
	--arg pt "$(const tracePolar)" --arg ps "$(const spanPolar)" \
	--arg ut "$(const traceUnderscore)" --arg us "$(const spanUnderscore)" \
	'{"main.burnDatadog": {t: $dt, s: $ds}, "main.burnGrafana": {t: $gt, s: $gs},
	  "main.burnPolar": {t: $pt, s: $ps}, "main.burnUnderscore": {t: $ut, s: $us}}')
if [ "$(jq '[.[] | .t, .s | select(length > 0)] | length' <<<"$want")" -ne 8 ]; then
	not_ok "the IDs of testdata/conventions/main.go could not be read: $want"
	done_testing
fi

mapfile -t versions < <(go_toolchains | sed -n '1p;$p' | sort -u)
pids=()
declare -A name_of
for v in "${versions[@]}"; do
	bin=$(go_build "$v" plain conventions) || { not_ok "go$v: build failed"; continue; }
	nice -n 10 "$bin" -d 600s 2>/dev/null &
	pids+=($!)
	name_of[$!]="go$v ($(go_version_of "$v" "$bin"))"
done
[ "${#pids[@]}" -gt 0 ] || done_testing

# per job of one target: samples, right trace, wrong trace, right span
STATS_JQ='[ .[] as $r | $r.stacks[] |
	{ t: $r.trace_id, s: $r.span_id, n: .samples,
	  job: ([.frames[].func | select(. as $f | $want | has($f))] | first) } | select(.job != null) ] |
	group_by(.job) | map(.[0].job as $j | $want[$j] as $w |
	{ job: $j, total: (map(.n) | add),
	  right: (map(select(.t == $w.t)) | map(.n) | add // 0),
	  wrong: (map(select(.t != null and .t != $w.t)) | map(.n) | add // 0),
	  spans: (map(select(.t == $w.t) | .s) | unique) })'
enough() {
	jq -s -e --argjson want "$want" --argjson n "${#pids[@]}" "
		group_by(.pid) | length == \$n and all(.[]; ($STATS_JQ) | length == 4 and all(.[]; .total >= 20))" \
		"$1" >/dev/null 2>&1
}
sample_until 4 120 enough "$work/err" "$work/out.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -F 999
check_eq "ctxprof-go exits" 0 "$?"
sed 's/^/# /' "$work/err"
schema_verdict "records" "$work/out.jsonl"

for pid in "${pids[@]}"; do
	jq -c --argjson pid "$pid" 'select(.pid == $pid)' "$work/out.jsonl" >"$work/p.jsonl"
	stats=$(jq -s --argjson want "$want" "$STATS_JQ" "$work/p.jsonl")
	for job in burnDatadog burnGrafana burnPolar burnUnderscore; do
		name="${name_of[$pid]} $job"
		read -r total right wrong spans < <(jq -r --arg j "main.$job" \
			'map(select(.job == $j))[0] // {total: 0, right: 0, wrong: 0, spans: []} |
			 "\(.total) \(.right) \(.wrong) \(.spans | map(. // "null") | join(","))"' <<<"$stats")
		if [ "$total" -lt 20 ]; then
			not_ok "$name: only $total samples"
		elif [ "$wrong" -ne 0 ]; then
			not_ok "$name: $wrong of $total samples carry another job's trace ID"
		else
			share_verdict "$name" "$right" "$total" ", 0 wrong"
		fi
		check_eq "$name: span_id of the samples with its trace ID" \
			"$(jq -r --arg j "main.$job" '.[$j].s' <<<"$want")" "$spans"
	done
done
done_testing
