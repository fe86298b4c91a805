#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# wall-debian.sh: --wall on Go programs Debian itself ships, stripped, by the trace IDs of their requests.
#
# Subjects: caddy from bookworm, trixie and sid (built by Go 1.19, 1.24
# and 1.26, stripped GOPATH builds with cgo), fetched and unpacked by
# `make deps` into .output/debian-programs, never installed. Each runs as a
# reverse proxy (its JSON config: no admin endpoint, no automatic HTTPS, no
# local CA put into the trust store) in front of testdata/httpserver, whose
# /wait answers late. Under ctxprof-go -p CADDY --wall, three requests go
# through it, each with a traceparent of its own, and wait 4 s upstream.
# Per suite:
# - check --json: no DWARF, no symbol table, and --wall supported with its
#   facts from the golayout table, runtime.allgadd's code and the binary's
#   data; no warning about grpc-go, whose server caddy links but never makes;
# - every request answers 200, and its trace ID (trace_source traceparent)
#   has its waits: at least half of 4 s x 19 Hz wall samples waiting in
#   "select" with net/http.(*persistConn).roundTrip on the stack, where the
#   proxy waits for the upstream's answer;
# - no wall sample of caddy carries a trace ID that was never sent.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "--wall on Debian's own Go programs"
programs=$OUTPUT/debian-programs
mapfile -t all < <(go_toolchains)
newest=${all[-1]}

srv_bin=$(go_build "$newest" plain httpserver) || not_ok "go$newest httpserver: build failed"
httpserver_start "$srv_bin"
upstream=$srv_http
[ -n "$upstream" ] || { not_ok "testdata/httpserver did not start"; done_testing; }

for suite in bookworm trixie sid; do
	bin=$programs/$suite/usr/bin/caddy
	if [ ! -x "$bin" ]; then
		not_ok "$suite's caddy: not in $programs/$suite (make deps fetches it)"
		continue
	fi
	json=$("$CTXPROF" check --json "$bin")
	name="$suite's caddy ($(jq -r .go_version <<<"$json"))"
	check_eq "$name: check: dwarf, symtab, --wall supported, its facts from" \
		"false false true table code data" \
		"$(jq -r '"\(.dwarf) \(.symtab) \(.wall.supported) \(.wall.sources.offsets) \(.wall.sources.goroutines) \(.wall.sources.wait_reasons)"' <<<"$json")"

	# caddy links grpc-go's server methods but never makes a server
	check_eq "$name: check warns of nothing but what applies (no grpc-go server here)" "" \
		"$(jq -r '[.warnings[] | select(test("grpc"))] | join("; ")' <<<"$json")"

	port=$(free_port)
	dir=$work/$suite
	mkdir -p "$dir"
	cat >"$dir/caddy.json" <<-JSON
	{"admin": {"disabled": true},
	 "apps": {
	  "pki": {"certificate_authorities": {"local": {"install_trust": false}}},
	  "http": {"servers": {"proxy": {
	   "listen": ["127.0.0.1:$port"],
	   "automatic_https": {"disable": true},
	   "routes": [{"handle": [{"handler": "reverse_proxy", "upstreams": [{"dial": "$upstream"}]}]}]}}}}}
	JSON
	HOME=$dir XDG_DATA_HOME=$dir/data XDG_CONFIG_HOME=$dir/config \
		"$bin" run --config "$dir/caddy.json" >"$dir/caddy.log" 2>&1 &
	caddy=$!
	for ((i = 0; i < 100; i++)); do
		curl -sf --max-time 2 "http://127.0.0.1:$port/small" >/dev/null 2>&1 && break
		sleep 0.1
	done
	if ! ctxprof_start "$dir/err" "$dir/out.jsonl" -v -p "$caddy" --wall; then
		not_ok "$name: ctxprof-go --wall did not start: $(tr '\n' ' ' <"$dir/err" | head -c 1000)"
		kill "$caddy"
		continue
	fi
	ids=()
	curls=()
	for i in 1 2 3; do
		id=$(printf 'deb1a1%02d%024x' "$i" "$((RANDOM * 65536 + RANDOM))")
		ids+=("$id")
		curl -sS --max-time 30 -o /dev/null -w '%{http_code}\n' \
			-H "traceparent: 00-$id-00f067aa0ba902b7-01" \
			"http://127.0.0.1:$port/wait?ms=4000" >"$dir/curl$i" 2>&1 &
		curls+=($!)
	done
	wait "${curls[@]}"
	kill -INT "$ctxprof"
	wait "$ctxprof"
	rc=$?
	kill "$caddy"
	wait "$caddy" 2>/dev/null
	check_eq "$name: ctxprof-go exits" 0 "$rc"
	check_eq "$name: the three requests through the proxy answer" "200 200 200" "$(cat "$dir"/curl[123] | paste -sd' ')"
	for id in "${ids[@]}"; do
		read -r n src < <(jq -s -r --arg id "$id" '[.[] | select(.origin == "wall" and .trace_id == $id and
			.state == "waiting" and .wait_reason == "select") |
			{s: .trace_source, n: ([.stacks[] | select(any(.frames[]; .func == "net/http.(*persistConn).roundTrip")) | .samples] | add // 0)}] |
			"\(map(.n) | add // 0) \(map(.s) | unique | join(","))"' "$dir/out.jsonl")
		if [ "${n:-0}" -ge 38 ] && [ "$src" = traceparent ]; then
			ok "$name: request $id waited $n wall samples in select, in net/http.(*persistConn).roundTrip (trace_source $src)"
		else
			not_ok "$name: request $id: ${n:-0} wall samples waiting in select in persistConn.roundTrip (need 38), trace_source '$src'; its records: $(jq -s -c --arg id "$id" '[.[] | select(.trace_id == $id) | {origin, trace_source, state, wait_reason, samples, f: [.stacks[0].frames[]?.func][0:5]}]' "$dir/out.jsonl" | head -c 1500); $(grep -i "warning\|probes" "$dir/err" | tr '\n' ' ')"
		fi
	done
	stray=$(jq -s -r --argjson sent "$(printf '%s\n' "${ids[@]}" | jq -R . | jq -s .)" \
		'[.[] | select(.origin == "wall" and .trace_id != null and (.trace_id as $t | $sent | index($t) | not)) | .trace_id] | unique | join(" ")' "$dir/out.jsonl")
	check_eq "$name: no wall sample carries a trace ID never sent" "" "$stray"
done
done_testing
