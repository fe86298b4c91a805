#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-traceparent.sh: trace IDs from the W3C traceparent of requests a plain net/http server serves, no labels.
#
# Builds: testdata/httpserver (GOPATH mode, Debian's golang.org/x/net for
# h2c) by Go 1.19, 1.22 and the newest installed toolchain, plain and
# stripped: six servers, all sampled by one ctxprof-go at 999 Hz with the
# default trace sources. Each server gets 20 requests over HTTP/1.1, 20 over
# h2c (prior knowledge) and 4 over HTTP/2 with TLS, four at a time, every
# one with a traceparent of its own. A request burns 60 ms in
# main.handleBurn, then 60 ms in main.childBurn on a goroutine the handler
# starts and waits for. Per server:
# - every trace ID sent has samples in main.handleBurn, with the parent
#   span ID that was sent with it, and trace_source "traceparent";
# - Go >= 1.21: for at least 90% of the requests, main.childBurn's samples
#   carry the request's trace ID (through g.parentGoid). Go 1.19 has no
#   parentGoid: its child goroutines carry none, as the README says;
# - no sample carries a trace ID that was never sent to that server, and
#   at most 1% of main.handleBurn's samples carry none.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "traceparent source"
command -v curl >/dev/null || { not_ok "curl is missing (make deps installs it)"; done_testing; }

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
		"$bin" -burn 60ms >"$work/srv$n" 2>&1 &
		pid=$!
		for _ in $(seq 100); do
			grep -q '^https ' "$work/srv$n" && break
			sleep 0.1
		done
		if ! grep -q '^https ' "$work/srv$n"; then
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
		parent_goid[$pid]=$([ "$v" = 1.19 ] && echo no || echo yes)
		n=$((n + 1))
	done
done
[ "${#pids[@]}" -gt 0 ] || done_testing
# a program that serves no HTTP: the source is refused, with the reason
bin=$(go_build "${versions[-1]}" plain traced)
check_eq "check testdata/traced: traceparent unsupported, with a reason" \
	"false serves no HTTP with net/http (no net/http.serverHandler.ServeHTTP)" \
	"$("$CTXPROF" check --json "$bin" | jq -r '"\(.trace_sources.traceparent.supported) \(.trace_sources.traceparent.reason)"')"

ctxprof_start "$work/err" "$work/out.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -F 999 -i 3600
check_eq "ctxprof-go starts with ${#pids[@]} targets" 0 "$?" || { cat "$work/err"; done_testing; }

# Requests as "URL PROTO TRACEPARENT" lines; trace IDs name server, protocol and request.
for pid in "${pids[@]}"; do
	i=${idx_of[$pid]}
	: >"$work/req$i"
	for r in $(seq 1 44); do
		if [ "$r" -le 20 ]; then proto=h1 url=http://${port_of[$pid]}/work
		elif [ "$r" -le 40 ]; then proto=h2c url=http://${port_of[$pid]}/work
		else proto=h2 url=https://${tls_of[$pid]}/work
		fi
		printf '%s %s 00-%08x%08x%016x-%016x-01\n' "$url" "$proto" $((0xc0ffee00 + i)) "$r" \
			$((0x1000 + r)) $((0xabc0000 + i * 100 + r)) >>"$work/req$i"
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
for pid in "${pids[@]}"; do
	xargs -P 4 -L 1 bash -c 'one_request "$@"' _ <"$work/req${idx_of[$pid]}" \
		>"$work/replies${idx_of[$pid]}" 2>"$work/curlerr${idx_of[$pid]}" &
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
	# what the server saw: "HTTP/1.1 tp", "HTTP/2.0 tp"
	check_eq "$name: 44 replies: 20 HTTP/1.1, 24 HTTP/2.0" "20 24" \
		"$(grep -c '^HTTP/1.1 ' "$work/replies$i") $(grep -c '^HTTP/2.0 ' "$work/replies$i")"
	sent=$(awk '{ split($3, p, "-"); print p[2], p[3] }' "$work/req$i" |
		jq -R -s 'split("\n") | map(select(length > 0) | split(" ") | {key: .[0], value: .[1]}) | from_entries')
	stats=$(jq -s --argjson sent "$sent" --argjson pid "$pid" '
		[ .[] | select(.pid == $pid) as $r | $r.stacks[] |
		  { t: $r.trace_id, s: $r.span_id, src: $r.trace_source, n: .samples,
		    fn: ([.frames[].func | select(. == "main.handleBurn" or . == "main.childBurn")] | first) } ] as $all |
		def in_fn(f): $all | map(select(.fn == f));
		{ unsent: ($all | map(select(.t != null and (.t as $t | $sent | has($t) | not))) | map(.n) | add // 0),
		  bad_span: ($all | map(select(.t != null and $sent[.t] != null and .s != $sent[.t])) | length),
		  bad_source: ($all | map(select(.t != null and .src != "traceparent")) | length),
		  handler_traces: (in_fn("main.handleBurn") | map(select(.t != null) | .t) | unique | length),
		  handler_total: (in_fn("main.handleBurn") | map(.n) | add // 0),
		  handler_untraced: (in_fn("main.handleBurn") | map(select(.t == null) | .n) | add // 0),
		  child_traces: (in_fn("main.childBurn") | map(select(.t != null) | .t) | unique | length),
		  child_total: (in_fn("main.childBurn") | map(.n) | add // 0),
		  child_traced: (in_fn("main.childBurn") | map(select(.t != null) | .n) | add // 0) }' \
		"$work/out.jsonl")
	echo "# $name: $(jq -c . <<<"$stats")"
	get() { jq -r ".$1" <<<"$stats"; }
	check_eq "$name: samples with a trace ID never sent" 0 "$(get unsent)"
	check_eq "$name: records whose span ID is not the one sent with their trace ID" 0 "$(get bad_span)"
	check_eq "$name: traced records whose trace_source is not traceparent" 0 "$(get bad_source)"
	check_eq "$name: trace IDs with samples in main.handleBurn, of 44 sent" 44 "$(get handler_traces)"
	if [ "$(get handler_total)" -gt 0 ] && [ $(($(get handler_untraced) * 100)) -le "$(get handler_total)" ]; then
		ok "$name: main.handleBurn samples without a trace ID: $(get handler_untraced) of $(get handler_total) (<= 1%)"
	else
		not_ok "$name: main.handleBurn samples without a trace ID: $(get handler_untraced) of $(get handler_total) (> 1%)"
	fi
	if [ "${parent_goid[$pid]}" = yes ]; then
		if [ $(($(get child_traces) * 100)) -ge $((44 * 90)) ]; then
			ok "$name: requests whose child goroutine's samples carry their trace ID: $(get child_traces) of 44 (>= 90%)"
		else
			not_ok "$name: requests whose child goroutine's samples carry their trace ID: $(get child_traces) of 44 (< 90%)"
		fi
	else
		check_eq "$name (no g.parentGoid): main.childBurn samples with a trace ID, of $(get child_total)" 0 "$(get child_traced)"
	fi
done
done_testing
