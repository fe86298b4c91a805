#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-traceparent.sh: trace IDs from the W3C traceparent of requests that net/http and grpc-go servers serve, no labels.
#
# Builds: testdata/httpserver (GOPATH mode, Debian's golang.org/x/net for
# h2c) by Go 1.19, 1.22 and the newest installed toolchain, plain and
# stripped; testdata/grpcserver (Debian's grpc-go) by Go 1.22 and the
# newest in GOPATH mode, as the OTel test builds, plain, and by the newest
# as a module (go_vendor_tree), stripped: its offsets come from the module
# table by the versions its build info names (a stripped GOPATH build only
# goes through check, which must refuse it with the reason). All servers are
# sampled by one ctxprof-go at 999 Hz with the default trace sources. Each
# HTTP server gets 20 requests over HTTP/1.1, 20 over h2c (prior
# knowledge) and 4 over HTTP/2 with TLS, four at a time (curl); each grpc
# server 20 RPCs, four at a time, traceparent in the metadata; every one
# with a traceparent of its own. A request burns 20 ms of CPU (however busy
# the machine) in main.handleBurn (grpc: main.rpcBurn), then as much in
# main.childBurn (main.rpcChild) on a goroutine the handler starts and waits
# for: about 20 samples each at 999 Hz. Per server:
# - every trace ID sent has samples in main.handleBurn, with the parent
#   span ID that was sent with it, and trace_source "traceparent";
# - for at least 90% of the requests, main.childBurn's samples carry the
#   request's trace ID: through g.parentGoid (Go >= 1.21), or from the
#   probe where goroutines start (Go 1.19, which has no parentGoid);
# - no sample carries a trace ID that was never sent to that server, and
#   at most 1% of main.handleBurn's samples carry none;
# - no probe hit was stepped out of line: each probe is on the branch of
#   its function's stack check (Go 1.19's ServeHTTP and grpc-go's
#   functions have a large frame's), which the kernel emulates.
# Then --trace-sources label on one HTTP server: its requests carry none.
# 2. Keep-alive connections with requests back to back: no sample of a
#    connection's goroutine outside its handlers carries a trace ID.
# 3. The DaemonSet's capabilities without tracefs: the refusal said, with
#    what would do, counted in the statistics and on /metrics. With
#    tracefs: the events a run killed with SIGKILL leaves, the next removes.
# 4. --trace-sources otel-sdk on a server without the SDK: said when the
#    target is described; nothing said with the default sources.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "traceparent source"
command -v curl >/dev/null || { not_ok "curl is missing (make deps installs it)"; done_testing; }

# start_server BIN WORD OUT: starts BIN in the background (pid in $pid),
# burning 20 ms of CPU a request; true once it has printed its WORD line (its
# address) into OUT
start_server() {
	local i
	"$1" -burn 20ms >"$3" 2>&1 &
	pid=$!
	for i in $(seq 100); do
		grep -q "^$2 " "$3" && return 0
		sleep 0.1
	done
	return 1
}

mapfile -t all < <(go_toolchains)
versions=()
for v in 1.19 1.22 "${all[-1]}"; do
	[[ " ${all[*]} " == *" $v "* ]] && [[ " ${versions[*]} " != *" $v "* ]] && versions+=("$v")
done
pids=()
declare -A name_of port_of tls_of idx_of parent_goid
n=0
for v in "${versions[@]}"; do
	for variant in plain stripped; do
		bin=$(go_build "$v" "$variant" httpserver) || { not_ok "go$v $variant: build failed"; continue; }
		if ! start_server "$bin" https "$work/srv$n"; then
			not_ok "go$v $variant: httpserver did not start: $(cat "$work/srv$n")"
			continue
		fi
		want_map=$([[ $v =~ ^1\.(19|2[0-3])$ ]] && echo hmap || echo swiss)
		check_eq "check go$v $variant: traceparent source and header map" "true $want_map" \
			"$("$CTXPROF" check --json "$bin" | jq -r '"\(.trace_sources.traceparent.supported) \(.header_map)"')"
		pids+=("$pid")
		name_of[$pid]="go$v $variant ($(go_version_of "$v" "$bin"))"
		port_of[$pid]=$(awk '$1 == "http" { print $2 }' "$work/srv$n")
		tls_of[$pid]=$(awk '$1 == "https" { print $2 }' "$work/srv$n")
		idx_of[$pid]=$n
		parent_goid[$pid]=$([ "$v" = 1.19 ] && echo "a probe where goroutines start" || echo g.parentGoid)
		n=$((n + 1))
	done
done
# grpc-go builds with Go >= 1.21 only (its protobuf needs unsafe.StringData)
declare -A kind_of sent_of handler_of child_of
for pid in "${pids[@]}"; do
	kind_of[$pid]=http sent_of[$pid]=44 handler_of[$pid]=main.handleBurn child_of[$pid]=main.childBurn
done
for v in $(printf '%s\n' 1.22 "${all[-1]}" | sort -u); do
	[[ " ${all[*]} " == *" $v "* ]] || continue
	# plain: DWARF; mod-stripped: a module build (versions in its build info), no DWARF
	for variant in plain mod-stripped; do
		[ "$variant" = plain ] || [ "$v" = "${all[-1]}" ] || continue
		bin=$(go_build "$v" "$variant" grpcserver) || { not_ok "go$v $variant grpcserver: build failed"; continue; }
		if ! start_server "$bin" grpc "$work/srv$n"; then
			not_ok "go$v $variant grpcserver did not start: $(cat "$work/srv$n")"
			continue
		fi
		check_eq "check go$v $variant grpcserver: traceparent source from grpc-go, offsets from $([ $variant = plain ] && echo DWARF || echo the module table)" \
			"true grpc-go $([ $variant = plain ] && echo dwarf || echo table)" \
			"$("$CTXPROF" check --json "$bin" | jq -r '"\(.trace_sources.traceparent.supported) \(.trace_sources.traceparent.servers | join(",")) \(.source)"')"
		pids+=("$pid")
		name_of[$pid]="go$v $variant grpcserver ($(go_version_of "$v" "$bin"))"
		port_of[$pid]=$(awk '$1 == "grpc" { print $2 }' "$work/srv$n")
		idx_of[$pid]=$n
		parent_goid[$pid]=g.parentGoid
		kind_of[$pid]=grpc sent_of[$pid]=20 handler_of[$pid]=main.rpcBurn child_of[$pid]=main.rpcChild
		grpc_client=$bin
		n=$((n + 1))
	done
done
[ "${#pids[@]}" -gt 0 ] || done_testing
# a program that serves neither: the source is refused, with the reason
bin=$(go_build "${versions[-1]}" plain traced)
check_eq "check testdata/traced: traceparent unsupported, with a reason" \
	"false serves no HTTP with net/http (no net/http.serverHandler.ServeHTTP) and no grpc-go" \
	"$("$CTXPROF" check --json "$bin" | jq -r '"\(.trace_sources.traceparent.supported) \(.trace_sources.traceparent.reason)"')"
# a stripped grpc-go server built in GOPATH mode: no DWARF, no module version to key the table by
bin=$(go_build "${versions[-1]}" stripped grpcserver)
check_eq "check stripped GOPATH-mode grpcserver: traceparent refused, with the reason" \
	"false no DWARF, and .go.buildinfo names no module version for golang.org/x/net/http2 (built in GOPATH mode?) to look its layout up by" \
	"$("$CTXPROF" check --json "$bin" | jq -r '"\(.trace_sources.traceparent.supported) \(.trace_sources.traceparent.reason)"')"

ctxprof_start "$work/err" "$work/out.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -F 999 -i 3600
check_eq "ctxprof-go starts with ${#pids[@]} targets" 0 "$?" || { cat "$work/err"; done_testing; }

# Requests as "URL PROTO TRACEPARENT" lines (grpc: TRACEPARENT only); trace
# IDs name server, protocol and request.
for pid in "${pids[@]}"; do
	i=${idx_of[$pid]}
	: >"$work/req$i"
	for r in $(seq 1 "${sent_of[$pid]}"); do
		if [ "${kind_of[$pid]}" = grpc ]; then proto=grpc
		elif [ "$r" -le 20 ]; then proto=h1 url=http://${port_of[$pid]}/work
		elif [ "$r" -le 40 ]; then proto=h2c url=http://${port_of[$pid]}/work
		else proto=h2 url=https://${tls_of[$pid]}/work
		fi
		tp=$(printf '00-%08x%08x%016x-%016x-01' $((0xc0ffee00 + i)) "$r" $((0x1000 + r)) \
			$((0xabc0000 + i * 100 + r)))
		if [ "$proto" = grpc ]; then echo "$tp"; else echo "$url $proto $tp"; fi >>"$work/req$i"
	done
done
one_request() {
	local opt
	case $2 in
	h1) opt=--http1.1 ;;
	h2c) opt=--http2-prior-knowledge ;;
	h2) opt="--http2 -k" ;;
	esac
	# shellcheck disable=SC2086
	curl -sS --max-time 60 $opt -H "traceparent: $3" "$1" || echo "curl failed: $*" >&2
}
export -f one_request
clients=()
for pid in "${pids[@]}"; do
	i=${idx_of[$pid]}
	if [ "${kind_of[$pid]}" = grpc ]; then
		"$grpc_client" -client "${port_of[$pid]}" -c 4 <"$work/req$i" >"$work/replies$i" 2>"$work/curlerr$i" &
	else
		xargs -P 4 -L 1 bash -c 'one_request "$@"' _ <"$work/req$i" >"$work/replies$i" 2>"$work/curlerr$i" &
	fi
	clients+=($!)
done
wait "${clients[@]}"
ctxprof_stop
check_eq "ctxprof-go exits" 0 "$?"
sed 's/^/# /' "$work/err"
schema_verdict "records" "$work/out.jsonl"

for pid in "${pids[@]}"; do
	i=${idx_of[$pid]}
	name=${name_of[$pid]}
	if [ -s "$work/curlerr$i" ]; then
		not_ok "$name: every request answered: $(head -3 "$work/curlerr$i")"
		continue
	fi
	# what the server saw: "HTTP/1.1 tp", "HTTP/2.0 tp"; grpc: "[tp]"
	if [ "${kind_of[$pid]}" = grpc ]; then
		check_eq "$name: 20 replies, each with the traceparent sent" 20 \
			"$(sort "$work/replies$i" | tr -d '[]' | comm -12 - <(sort "$work/req$i") | wc -l)"
	else
		check_eq "$name: 44 replies: 20 HTTP/1.1, 24 HTTP/2.0" "20 24" \
			"$(grep -c '^HTTP/1.1 ' "$work/replies$i") $(grep -c '^HTTP/2.0 ' "$work/replies$i")"
	fi
	sent=$(awk '{ split($NF, p, "-"); print p[2], p[3] }' "$work/req$i" |
		jq -R -s 'split("\n") | map(select(length > 0) | split(" ") | {key: .[0], value: .[1]}) | from_entries')
	stats=$(jq -s --argjson sent "$sent" --argjson pid "$pid" --arg hf "${handler_of[$pid]}" \
		--arg cf "${child_of[$pid]}" '
		[ .[] | select(.pid == $pid) as $r | $r.stacks[] |
		  { t: $r.trace_id, s: $r.span_id, src: $r.trace_source, n: .samples,
		    fn: ([.frames[].func | select(. == $hf or . == $cf)] | first) } ] as $all |
		def in_fn(f): $all | map(select(.fn == f));
		{ unsent: ($all | map(select(.t != null and (.t as $t | $sent | has($t) | not))) | map(.n) | add // 0),
		  bad_span: ($all | map(select(.t != null and $sent[.t] != null and .s != $sent[.t])) | length),
		  bad_source: ($all | map(select(.t != null and .src != "traceparent")) | length),
		  handler_traces: (in_fn($hf) | map(select(.t != null) | .t) | unique | length),
		  handler_total: (in_fn($hf) | map(.n) | add // 0),
		  handler_untraced: (in_fn($hf) | map(select(.t == null) | .n) | add // 0),
		  child_traces: (in_fn($cf) | map(select(.t != null) | .t) | unique | length),
		  child_total: (in_fn($cf) | map(.n) | add // 0),
		  child_traced: (in_fn($cf) | map(select(.t != null) | .n) | add // 0) }' \
		"$work/out.jsonl")
	echo "# $name: $(jq -c . <<<"$stats")"
	get() { jq -r ".$1" <<<"$stats"; }
	check_eq "$name: samples with a trace ID never sent" 0 "$(get unsent)"
	xol_verdict "$name" "$pid"
	check_eq "$name: records whose span ID is not the one sent with their trace ID" 0 "$(get bad_span)"
	check_eq "$name: traced records whose trace_source is not traceparent" 0 "$(get bad_source)"
	hf=${handler_of[$pid]} cf=${child_of[$pid]} nsent=${sent_of[$pid]}
	check_eq "$name: trace IDs with samples in $hf, of $nsent sent" "$nsent" "$(get handler_traces)"
	if [ "$(get handler_total)" -gt 0 ] && [ $(($(get handler_untraced) * 100)) -le "$(get handler_total)" ]; then
		ok "$name: $hf samples without a trace ID: $(get handler_untraced) of $(get handler_total) (<= 1%)"
	else
		not_ok "$name: $hf samples without a trace ID: $(get handler_untraced) of $(get handler_total) (> 1%)"
	fi
	if [ $(($(get child_traces) * 100)) -ge $((nsent * 90)) ]; then
		ok "$name: requests whose child goroutine's samples carry their trace ID: $(get child_traces) of $nsent (>= 90%, ${parent_goid[$pid]})"
	else
		not_ok "$name: requests whose child goroutine's samples carry their trace ID: $(get child_traces) of $nsent (< 90%, ${parent_goid[$pid]})"
	fi
done

# 2. A request ends with its handler: keep-alive connections, requests
#    back to back, each with 40 headers more, which the connection's
#    goroutine parses before the next handler runs
load_bin=$(go_build "${versions[-1]}" plain httpload) || { not_ok "httpload: build failed"; done_testing; }
# IN_CONN_JQ: samples of the connection's goroutine outside any handler,
# and those inside one: "OUTSIDE OUTSIDE_TRACED INSIDE INSIDE_TRACED". A
# sample in serverHandler.ServeHTTP itself is neither: its first
# instructions, and the probe's trap, come before the request is taken up.
IN_CONN_JQ='[.[] | .trace_id as $t | .stacks[] | [.frames[].func] as $f |
	select(($f | index("net/http.(*conn).serve")) and $f[0] != "net/http.serverHandler.ServeHTTP") |
	{in: ($f | index("net/http.serverHandler.ServeHTTP") != null), t: $t, n: .samples}] |
	"\(map(select(.in | not) | .n) | add // 0) \(map(select((.in | not) and .t != null) | .n) | add // 0) \(map(select(.in) | .n) | add // 0) \(map(select(.in and .t != null) | .n) | add // 0)"'
enough_between() {
	local out
	read -r out _ < <(jq -s -r "$IN_CONN_JQ" "$1" 2>/dev/null)
	[ "${out:-0}" -ge 100 ]
}
for pid in "${pids[@]}"; do
	[ "${kind_of[$pid]}" = http ] && [[ ${name_of[$pid]} == *" plain "* ]] || continue
	name=${name_of[$pid]}
	# the load once the probes are on: a request in flight as they attach
	# began unseen, and its handler's samples carry no trace ID
	ctxprof_start "$work/err" "$work/ka.jsonl" -p "$pid" -F 999 -i 1 -d 120 ||
		not_ok "$name keep-alive: ctxprof-go did not start: $(tail -n 3 "$work/err")"
	"$load_bin" -url "http://${port_of[$pid]}/small" -c 4 -d 600s -headers 40 >/dev/null 2>"$work/load.err" &
	load=$!
	samples_wait 3 120 enough_between "$work/ka.jsonl"
	ctxprof_stop
	check_eq "$name keep-alive: ctxprof-go exits" 0 "$?"
	kill "$load" 2>/dev/null
	wait "$load" 2>/dev/null
	read -r out out_traced inside inside_traced < <(jq -s -r "$IN_CONN_JQ" "$work/ka.jsonl")
	check_eq "$name keep-alive: samples of a connection's goroutine outside its handlers (of $out) with a trace ID" \
		0 "$out_traced"
	if [ "$inside" -gt 0 ] && [ $((inside_traced * 100)) -ge $((inside * 99)) ]; then
		ok "$name keep-alive: samples inside a handler with a trace ID: $inside_traced of $inside (>= 99%)"
	else
		not_ok "$name keep-alive: samples inside a handler with a trace ID: $inside_traced of $inside (< 99%)"
	fi
	last_http=$pid
done

# 3. The DaemonSet's capabilities, and no tracefs (a mount namespace
#    without it): the uprobe PMU refuses, and that is said, with what
#    would do, counted in the statistics and on /metrics
caps=-all,+bpf,+perfmon,+sys_ptrace,+dac_read_search,+checkpoint_restore
mport=$(free_port)
unshare -m sh -c "umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null
	exec setpriv --bounding-set=$caps --inh-caps=$caps --ambient-caps=$caps -- $CTXPROF -p $last_http \
		-F 99 -d 4 --metrics-addr 127.0.0.1:$mport -o /dev/null" >"$work/denied.err" 2>&1 &
denied=$!
for _ in $(seq 100); do grep -q 'Ctrl-C to stop' "$work/denied.err" && break; sleep 0.1; done
metrics=$(curl -s "http://127.0.0.1:$mport/metrics" | awk '$1 == "ctxprof_probe_attach_failures_total{source=\"traceparent\"}" { print $2 }')
wait "$denied"
check_eq "without CAP_SYS_ADMIN or tracefs: ctxprof-go exits" 0 "$?"
check_eq "without CAP_SYS_ADMIN or tracefs: the warning says what would do" 1 \
	"$(grep -c 'warning: failed to attach to net/http.serverHandler.ServeHTTP: Permission denied (the uprobe PMU needs CAP_SYS_ADMIN; without it, uprobe events need tracefs, writable, at /sys/kernel/tracing); no trace IDs from traceparent' "$work/denied.err")"
check_eq "without CAP_SYS_ADMIN or tracefs: the statistics count it" 1 \
	"$(grep -c '^ctxprof-go: probes that failed to attach (a process without that source): traceparent 1$' "$work/denied.err")"
check_eq "without CAP_SYS_ADMIN or tracefs: /metrics counts it" 1 "${metrics:-none}"

# 3b. The same capabilities with tracefs: the probes are tracefs uprobe
#     events. A run killed with SIGKILL leaves its events behind; the next
#     one removes them.
events=/sys/kernel/tracing/uprobe_events
[ -w "$events" ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
if [ -w "$events" ]; then
	setpriv --bounding-set=$caps --inh-caps=$caps --ambient-caps=$caps -- "$CTXPROF" -p "$last_http" \
		-F 99 -o /dev/null 2>"$work/killed.err" &
	killed=$!
	for _ in $(seq 100); do grep -q 'Ctrl-C to stop' "$work/killed.err" && break; sleep 0.1; done
	kill -KILL "$killed"
	wait "$killed" 2>/dev/null
	left=$(grep -c "^p:ctxprof/p${killed}_" "$events")
	if [ "$left" -ge 1 ]; then
		ok "tracefs uprobe events: a run killed leaves its $left behind"
	else
		not_ok "tracefs uprobe events: a run killed left none behind: $(head -c 300 "$work/killed.err")"
	fi
	setpriv --bounding-set=$caps --inh-caps=$caps --ambient-caps=$caps -- "$CTXPROF" -p "$last_http" \
		-F 99 -d 1 -o /dev/null 2>"$work/sweep.err"
	check_eq "tracefs uprobe events: the next run removes them, and its own" "0 0" \
		"$(grep -c "^p:ctxprof/p${killed}_" "$events") $(grep -c '^p:ctxprof/' "$events")"
else
	not_ok "tracefs uprobe events: $events is not writable, and tracefs could not be mounted"
fi

# 4. A source asked for that the binary cannot have: said as it is described
out=$("$CTXPROF" -p "$last_http" --trace-sources traceparent,otel-sdk -d 1 -o /dev/null 2>&1)
check_eq "--trace-sources otel-sdk on a server without the SDK: said when it is described" 1 \
	"$(grep -c "^ctxprof-go: pid $last_http (httpserver): warning: --trace-sources otel-sdk: not in this binary: does not record spans with the OpenTelemetry Go SDK" <<<"$out")"
check_eq "--trace-sources left at its default: nothing said of otel-sdk" 0 \
	"$("$CTXPROF" -p "$last_http" -d 1 -o /dev/null 2>&1 | grep -c 'otel-sdk')"
done_testing
