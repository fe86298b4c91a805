#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-lifetime.sh: a request counts only while it lives: goroutines that outlive it carry inherited_trace_id.
#
# Builds testdata/services by the newest installed Go and by Go 1.19 (no
# g.parentGoid: a probe where goroutines start hands requests down). Per
# toolchain and trace source (labels set with pprof.Do; the traceparent
# header alone, -labels=false), runs inventory and checkout, each recorded
# by a ctxprof-go of its own with --wall into a file of its own, while a
# client sends checkout requests one at a time, the first under a trace
# of its own (it dials the pool), then under three trace IDs in turn:
# every request is the same work, so the three traces' goroutine time,
# summed over both files, is within 10% of each other's. The pool of
# checkout's http.Client (persistConn.readLoop and writeLoop, started by
# the request that dialled and kept for the connection's life) carries a
# trace ID only while that first request lives (each such look taken
# before the end checkout logged for it), the collector's workers never;
# with labels, the pool's time is inherited (inherited_trace_id), and that
# is the first request's. The three traces' elapsed time (their requests'
# spans, origin request) is within 10% of each other's too, and the
# request goroutine's commonest leaf in checkout's exit summary is where
# it waited for inventory (net/http.(*persistConn).roundTrip), not the
# connection reader's IO wait. Both services are named in the records.
# With labels on the newest Go the client starts before the recordings
# (the pool's labels were set before the probe: found by reading the
# goroutines), otherwise after. For that one, the page of convert --html
# of both files, seen in Chromium: every trace's CPU and goroutine time
# summed over both, both services named, each one's CPU and pids on the
# trace's page, its timeline's lanes grouped by service; the same page
# with one file given twice: said, and counted once.
#
# Then a goroutine each checkout starts and does not wait for
# (main.auditOrder, -audit 200ms), requests 300 ms apart: its samples
# before the request ended (the times checkout logs) carry the trace ID,
# those after it inherited_trace_id and no trace ID (a sample within 5 ms
# of the end is not judged); no probe hit in checkout (the label, request
# and goroutine-start probes) was stepped out of line.
#
# With --traced-only, none of those inherited samples is written.
#
# Last, with -p alone (the probe sees pprof.Do's sets, not its restores:
# check says label_probe pprof.Do; runtime_setProfLabel for
# testdata/traced, which calls SetGoroutineLabels), each request runs
# 1.5 s under another trace in a pprof.Do inside its own (-nest): the
# samples of its work before, beside and after it carry its trace, the
# nested work's the nested trace.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"
. "$(dirname "$0")/browser-lib.sh"

e2e_setup "request lifetime"

TRACES=(4bf92f3577b34da6a3ce929d0e0e4736 0af7651916cd43dd8448eb211c80319c b7ad6b7169203331b7ad6b7169203331)
# the client's first request, which dials the pool, under a trace of its own
WARMUP=5c1a0000000000000000000000000001
SAMPLE_S=8

# start_service NAME OUT ARGS...: a testdata/services role in the background
# (pid in $svc), named NAME by OTEL_SERVICE_NAME; true once it has printed
# its address into OUT
start_service() {
	local name=$1 out=$2
	shift 2
	: >"$out"
	OTEL_SERVICE_NAME=$name "$bin" "$@" >"$out" 2>&1 &
	svc=$!
	wait_line "$out" '^http://' 300
}

# record_both ARGS...: one ctxprof-go on checkout ($co) into $work/a.jsonl,
# one on inventory ($inv) into $work/b.jsonl, both with ARGS; returns once
# both sample (pids in $rec_a, $rec_b), false if either did not start
record_both() {
	local f i
	: >"$work/a.err"
	: >"$work/b.err"
	"$CTXPROF" -p "$co" "$@" -o "$work/a.jsonl" 2>"$work/a.err" &
	rec_a=$!
	"$CTXPROF" -p "$inv" "$@" -o "$work/b.jsonl" 2>"$work/b.err" &
	rec_b=$!
	for i in $(seq 3000); do
		grep -q 'Ctrl-C to stop' "$work/a.err" && grep -q 'Ctrl-C to stop' "$work/b.err" && return 0
		kill -0 "$rec_a" 2>/dev/null && kill -0 "$rec_b" 2>/dev/null || break
		sleep 0.1
	done
	for f in a b; do sed 's/^/# /' "$work/$f.err"; done
	return 1
}

stop_all() {
	kill "$@" 2>/dev/null
	wait "$@" 2>/dev/null
}

# report_pages NAME: the page of both files, and with a.jsonl given twice, in Chromium
report_pages() {
	local why
	if ! why=$(browser_setup); then
		not_ok "$1: the browser tests cannot run: $why"
		return
	fi
	mkdir -p "$OUTPUT/report-lifetime"
	"$CTXPROF" convert --html "$work/two.html" "$work/a.jsonl" "$work/b.jsonl" 2>"$work/two.err"
	check_eq "$1: convert --html of both files exits" 0 "$?"
	browser_verdicts "$1 page" node "$TOP/tests/browser/report-check.js" services "$work/two.html" \
		"$work/a.jsonl,$work/b.jsonl" "$OUTPUT/report-lifetime" "$1"
	"$CTXPROF" convert --html "$work/dup.html" "$work/a.jsonl" "$work/b.jsonl" "$work/a.jsonl" 2>"$work/dup.err"
	check_eq "$1: convert of a file given twice says so" \
		"ctxprof-go: $work/a.jsonl: $(grep -c . "$work/a.jsonl") records came already in $work/a.jsonl (a file read twice?): counted once" \
		"$(grep 'came already' "$work/dup.err")"
	browser_verdicts "$1 page, a file twice" node "$TOP/tests/browser/report-check.js" services "$work/dup.html" \
		"$work/a.jsonl,$work/b.jsonl" "$OUTPUT/report-lifetime" "$1 twice"
}

mapfile -t all < <(go_toolchains)
versions=("${all[-1]}")
[[ " ${all[*]} " == *" 1.19 "* ]] && versions+=(1.19)
echo "# Go versions: ${versions[*]} (installed: ${all[*]})"

for v in "${versions[@]}"; do
	bin=$(go_build "$v" plain services) || { not_ok "go$v: build failed"; continue; }
	for source in label traceparent; do
		name="go$v $source"
		labels=$([ "$source" = label ] && echo true || echo false)
		first=$([ "$source" = label ] && [ "$v" = "${versions[0]}" ] && echo yes || echo no)
		start_service inventory "$work/inv.addr" -role inventory -labels="$labels" ||
			{ not_ok "$name: inventory did not start: $(cat "$work/inv.addr")"; continue; }
		inv=$svc
		start_service checkout "$work/co.addr" -role checkout -labels="$labels" \
			-log "$work/co.log" -inventory "$(cat "$work/inv.addr")" ||
			{ not_ok "$name: checkout did not start: $(cat "$work/co.addr")"; stop_all "$inv"; continue; }
		co=$svc
		client() {
			"$bin" -role client -target "$(cat "$work/co.addr")" -first "$WARMUP" \
				-traces "$(IFS=,; echo "${TRACES[*]}")" 2>"$work/client.err" &
			cl=$!
		}
		[ "$first" = no ] || { client; sleep 1; }
		if ! record_both --wall --wall-hz 99 -d "$SAMPLE_S"; then
			not_ok "$name: ctxprof-go did not start"
			stop_all "$rec_a" "$rec_b" "$co" "$inv" ${cl:-}
			continue
		fi
		[ "$first" = yes ] || client
		wait "$rec_a"
		ra=$?
		wait "$rec_b"
		rb=$?
		stop_all "$cl" "$co" "$inv"
		check_eq "$name: both recordings exit" "0 0" "$ra $rb"
		echo "# $name: the pool dialled $([ "$first" = yes ] && echo before || echo after) the recordings began"
		# the three traces' goroutine time over both files
		read -r lo hi each < <(cat "$work/a.jsonl" "$work/b.jsonl" | jq -s -r --argjson t "$(printf '%s\n' "${TRACES[@]}" | jq -R . | jq -s .)" '
			map(select(.origin == "wall" and .trace_id != null)) as $w |
			[$t[] as $id | $w | map(select(.trace_id == $id) | .wall_ns) | add // 0] as $s |
			"\($s | min) \($s | max) \($s | map(. / 1e6 | floor | tostring + " ms") | join(", "))"')
		if [ "${lo:-0}" -gt 0 ] && [ $((hi * 100)) -le $((lo * 110)) ]; then
			ok "$name: the three traces' goroutine time over both services within 10%: $each"
		else
			not_ok "$name: the three traces' goroutine time over both services: $each, not within 10%"
		fi
		# the pool and the collector: never under a trace, but for the request that dialled
		first_end=$(awk 'NR == 1 { print $3 }' "$work/co.log")
		read -r pool pool_traced pool_late pool_inh gc_traced < <(cat "$work/a.jsonl" "$work/b.jsonl" |
			jq -s -r --arg first "$WARMUP" --argjson until "${first_end:-0}" '
			def has($f): any(.stacks[].frames[]; .func == $f);
			def n: map(.samples) | add // 0;
			def us: (.[0:19] + "Z" | fromdateiso8601) * 1000000 + (.[20:26] | tonumber);
			map(select(.origin == "wall")) as $w |
			($w | map(select(has("net/http.(*persistConn).readLoop") or has("net/http.(*persistConn).writeLoop")))) as $p |
			($p | map(select(.trace_id != null))) as $t |
			([$t[] | (.start | us) as $s | .trace_id as $id | .stacks[] | .times_us[] |
			  select(. + $s > $until + 5000 or $id != $first)] | length) as $late |
			"\($p | n) \($t | n) \($late) \($p | map(select(.inherited_trace_id != null)) | n) \($w | map(select(has("runtime.gcBgMarkWorker") and .trace_id != null)) | n)"')
		check_eq "$name: looks at the client pool's readLoop and writeLoop under a trace after the request that dialled ended (of $pool_traced under a trace, $pool in all)" \
			0 "$pool_late"
		check_eq "$name: samples of the collector's workers under a trace" 0 "$gc_traced"
		if [ "$source" = label ]; then
			want=$(cat "$work/a.jsonl" | jq -s -r 'map(select(.inherited_trace_id != null and
				any(.stacks[].frames[]; .func == "net/http.(*persistConn).readLoop"))) |
				map(.inherited_trace_id) | unique | join(" ")')
			if [ "${pool_inh:-0}" -gt 0 ] && [ "$want" = "$WARMUP" ]; then
				ok "$name: the pool's $pool_inh wall samples are inherited, from the request that dialled only"
			else
				not_ok "$name: the pool's inherited wall samples: ${pool_inh:-none}, from '${want}' (want the request that dialled only, $WARMUP)"
			fi
		fi
		# elapsed: when each trace's requests were in flight, a request of both services once
		read -r lo hi each < <(cat "$work/a.jsonl" "$work/b.jsonl" | jq -s -r --argjson t "$(printf '%s\n' "${TRACES[@]}" | jq -R . | jq -s .)" '
			def us: (.[0:19] + "Z" | fromdateiso8601) * 1000000 + (.[20:26] | tonumber);
			def union: sort_by(.[0]) | reduce .[] as $i ({n: 0, lo: null, hi: null};
				if .hi == null or $i[0] > .hi then .n += (if .hi == null then 0 else .hi - .lo end) | .lo = $i[0] | .hi = $i[1]
				else .hi = ([.hi, $i[1]] | max) end) | .n + (if .hi == null then 0 else .hi - .lo end);
			map(select(.origin == "request")) as $q |
			[$t[] as $id | [$q[] | select(.trace_id == $id) | (.start | us) as $s | .stacks[] |
			  [.times_us, .durations_us] | transpose[] | [.[0] + $s, .[0] + $s + .[1]]] | union] as $e |
			"\($e | min | floor) \($e | max | floor) \($e | map(. / 1000 | floor | tostring + " ms") | join(", "))"')
		if [ "${lo:-0}" -gt 0 ] && [ $((hi * 100)) -le $((lo * 110)) ]; then
			ok "$name: the three traces' elapsed time (their requests' spans) within 10%: $each"
		else
			not_ok "$name: the three traces' elapsed time: ${each:-none}, not within 10%"
		fi
		wait_leaf=$(sed -n '/the slowest traces of/,/inherited/p' "$work/a.err" | grep -E '^ctxprof-go: [0-9a-f]{32} ' |
			awk '{ print $5 }' | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
		check_eq "$name: checkout's summary: the request goroutine's commonest leaf" "http.(*per..." "$wait_leaf"
		check_eq "$name: services named in the records" "checkout inventory" \
			"$(cat "$work/a.jsonl" "$work/b.jsonl" | jq -r .service_name | sort -u | xargs)"
		[ "$first" = yes ] && report_pages "$name"
		schema_verdict "$name: records" "$work/a.jsonl" "$work/b.jsonl"
	done
done

# audit_verdict NAME LOG JSONL: main.auditOrder's samples by the request
# whose times LOG gives: traced before its end, inherited after
audit_verdict() {
	local right wrong before after example
	read -r right wrong before after example < <(jq -s -r -R --slurpfile recs "$3" '
		[split("\n")[] | select(length > 0) | split(" ") | {t: .[0], s: (.[1] | tonumber), e: (.[2] | tonumber)}] as $req |
		def us: (.[0:19] + "Z" | fromdateiso8601) * 1000000 + (.[20:26] | tonumber);
		[$recs[] | select(.origin == "sampling") | (.start | us) as $st | . as $r | .stacks[] |
		 select(any(.frames[]; .func == "main.auditOrder")) | .times_us[] | . + $st |
		 {at: ., own: $r.trace_id, inh: $r.inherited_trace_id}] as $samples |
		[$samples[] | . as $s | ($req | map(select(.s <= $s.at)) | last) as $q | select($q != null) |
		 if $s.at < $q.e - 5000 then {ok: ($s.own == $q.t and $s.inh == null), side: "before"}
		 elif $s.at > $q.e + 5000 then {ok: ($s.inh == $q.t and $s.own == null), side: "after"}
		 else empty end] as $j |
		"\($j | map(select(.ok)) | length) \($j | map(select(.ok | not)) | length) \($j | map(select(.side == "before")) | length) \($j | map(select(.side == "after")) | length) -"' "$2")
	if [ "${before:-0}" -lt 20 ] || [ "${after:-0}" -lt 50 ]; then
		not_ok "$1: too few main.auditOrder samples to judge: ${before:-0} before requests ended, ${after:-0} after"
	else
		share_verdict "$1: main.auditOrder's samples, traced before its request ended, inherited after" \
			"$right" "$((right + wrong))" " ($before before, $after after)"
	fi
}

for v in "${versions[@]}"; do
	bin=$(go_build "$v" plain services) || continue
	name="go$v audit"
	start_service inventory "$work/inv.addr" -role inventory ||
		{ not_ok "$name: inventory did not start"; continue; }
	inv=$svc
	start_service checkout "$work/co.addr" -role checkout -audit 200ms -log "$work/requests.log" \
		-inventory "$(cat "$work/inv.addr")" ||
		{ not_ok "$name: checkout did not start"; stop_all "$inv"; continue; }
	co=$svc
	if ! ctxprof_start "$work/audit.err" "$work/audit.jsonl" -p "$co" -F 499 -i 1; then
		not_ok "$name: ctxprof-go did not start: $(tail -n 3 "$work/audit.err")"
		stop_all "$co" "$inv"
		continue
	fi
	"$bin" -role client -target "$(cat "$work/co.addr")" -n 24 -every 300ms \
		-traces "$(IFS=,; echo "${TRACES[*]}")" 2>"$work/client.err"
	sleep 0.5
	ctxprof_stop
	xol_verdict "$name checkout" "$co"
	stop_all "$co" "$inv"
	audit_verdict "$name" "$work/requests.log" "$work/audit.jsonl"
done

# --traced-only: a trace only inherited, from a request that ended, is none
v=${versions[0]}
bin=$(go_build "$v" plain services)
name="go$v audit --traced-only"
if start_service checkout "$work/co.addr" -role checkout -audit 200ms -litter=false; then
	co=$svc
	if ctxprof_start "$work/only.err" "$work/only.jsonl" -p "$co" -F 499 --traced-only; then
		"$bin" -role client -target "$(cat "$work/co.addr")" -n 12 -every 300ms \
			-traces "$(IFS=,; echo "${TRACES[*]}")" 2>"$work/client.err"
		ctxprof_stop
		read -r nulls traced < <(jq -s -r '"\(map(select(.origin == "sampling" and .trace_id == null)) | length) \(map(select(.trace_id != null)) | length)"' "$work/only.jsonl")
		if [ "${nulls:-1}" -eq 0 ] && [ "${traced:-0}" -gt 0 ]; then
			ok "$name: $traced records, none without a trace ID (the audit's time after its request is dropped)"
		else
			not_ok "$name: ${nulls:-?} records without a trace ID, ${traced:-0} with"
		fi
	else
		not_ok "$name: ctxprof-go did not start: $(tail -n 3 "$work/only.err")"
	fi
	stop_all "$co"
else
	not_ok "$name: checkout did not start"
fi

# fn_share FILE FUNC TRACE: "RIGHT TOTAL", FUNC's samples in FILE, and those with trace ID TRACE
fn_share() {
	jq -s -r --arg f "$2" --arg t "$3" '
		[.[] | select(.origin == "sampling") as $r | $r.stacks[] |
		 select(any(.frames[]; .func == $f)) | {t: $r.trace_id, n: .samples}] |
		"\(map(select(.t == $t)) | map(.n) | add // 0) \(map(.n) | add // 0)"' "$1"
}

# A pprof.Do of another trace inside the request's (-nest): the probe sees
# pprof.Do's sets alone, not its restores. The request's set outlives the
# once-a-second sweep that runs while the nested one is held: its work
# after the nested Do (main.packOrder), and a goroutine it started just
# before (main.keepOrder), are the request's; the nested work its own.
nest_trace=${TRACES[0]}
for v in "${versions[@]}"; do
	bin=$(go_build "$v" plain services) || continue
	name="go$v nested pprof.Do"
	check_eq "$name: check says one probe hit a pprof.Do" pprof.Do \
		"$("$CTXPROF" check --json "$bin" | jq -r .label_probe)"
	start_service checkout "$work/co.addr" -role checkout -burn 400ms -nest 1500ms -litter=false ||
		{ not_ok "$name: checkout did not start"; continue; }
	co=$svc
	if ! ctxprof_start "$work/nest.err" "$work/nest.jsonl" -p "$co" -F 499 -v; then
		not_ok "$name: ctxprof-go did not start: $(tail -n 3 "$work/nest.err")"
		stop_all "$co"
		continue
	fi
	"$bin" -role client -target "$(cat "$work/co.addr")" -n 3 -traces "$nest_trace" 2>"$work/client.err"
	ctxprof_stop
	stop_all "$co"
	check_eq "$name: -v says where label sets are seen" 1 \
		"$(grep -c "label sets followed (pprof.Do's set, one hit a request)" "$work/nest.err")"
	for fn in main.priceCart main.keepOrder main.nestedWork main.packOrder; do
		want=$nest_trace
		[ "$fn" = main.nestedWork ] && want=${nest_trace:16}${nest_trace:0:16}
		read -r right total < <(fn_share "$work/nest.jsonl" "$fn" "$want")
		if [ "${total:-0}" -lt 20 ]; then
			not_ok "$name: too few $fn samples to judge: ${total:-0}"
		else
			share_verdict "$name: $fn's samples carry trace $want" "$right" "$total" ""
		fi
	done
done
check_eq "testdata/traced (SetGoroutineLabels): check says every set is probed" runtime_setProfLabel \
	"$("$CTXPROF" check --json "$(go_build "${versions[0]}" plain traced)" | jq -r .label_probe)"

done_testing
