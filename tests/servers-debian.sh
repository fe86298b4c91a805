#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# servers-debian.sh: whole stacks and every request's trace ID on Go servers Debian ships, stripped, under load.
#
# Subjects, fetched and unpacked by `make deps` into .output/debian-programs
# and never installed: caddy from bookworm, trixie and sid (Go 1.19, 1.24,
# 1.26, cgo), and bookworm's prometheus-node-exporter (Go 1.19).
#
# 1. caddy: one process, two servers. The front one proxies /static/* to
#    the back one, which serves a 2 MB text file gzip'd (encode, then
#    file_server), and everything else to testdata/httpserver's /small.
#    Three curl loops, each under a traceparent ID of its own, fetch both
#    for 6 s while ctxprof-go -p CADDY -F 499 samples. The proxy's stacks
#    are deep and its frames large (35 frames from a write system call to
#    runtime.goexit), gzip's code calls duffcopy and duffzero, and Go's
#    preemption signals land in its handlers. Per suite:
#    - at least 99% of the CPU samples have a whole stack: the last frame
#      is where Go's own traceback ends (ROOTS);
#    - no stack is a lone frame outside Go code (a file that is not .go:
#      assembly such as runtime.duffcopy, or C such as __restore_rt), but
#      for libc's thread creation (pthread_create, clone, start_thread),
#      built without frame pointers: a sample there ends there, as with
#      perf's frame-pointer walk (pthread_create once, in caddy);
#    - every trace ID sent has samples, and none was never sent;
#    - --wall, on at the same time: at least 50% of the wall samples of
#      running goroutines have frames, those of the goroutine's CPU sample
#      nearest in time (none before: a running goroutine has no saved
#      context to read).
# 2. prometheus-node-exporter, scraped back to back by two loops under a
#    traceparent ID each for 8 s, -F 999: its registry gathers in
#    goroutines the handler starts, and each of those runs the collectors
#    in goroutines of its own (a grandchild of the request). Go 1.19 keeps
#    no g.parentGoid: the goroutine-start probe hands the trace ID on,
#    within its share of the server's CPU. At the default share (2%): at
#    least 95% of the CPU samples in collector code (a frame in
#    node_exporter/collector) carry one of the two trace IDs, none carries
#    another, and the probe's cost, as -v says it, is within the share (a
#    scrape starts about 55 goroutines in 5.4 ms of CPU here, about 2% at
#    the price of a hit, so the probe may rest for part of a period).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "whole stacks and trace IDs on Debian's own Go servers"
command -v curl >/dev/null || { not_ok "curl is missing (make deps installs it)"; done_testing; }
programs=$OUTPUT/debian-programs
mapfile -t all < <(go_toolchains)
newest=${all[-1]}
SECS=6

# wait_http URL: true once URL answers
wait_http() {
	local i
	for ((i = 0; i < 150; i++)); do
		curl -sf --max-time 2 -o /dev/null "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# loops SECONDS ID URL...: fetches the URLs in turn under traceparent ID
# until SECONDS have passed (in the background; pid in $!), resting PAUSE
# seconds (default none) after each
loops() {
	local secs=$1 id=$2 end u
	shift 2
	(
		end=$((SECONDS + secs))
		while [ $SECONDS -lt "$end" ]; do
			for u in "$@"; do
				curl -s --max-time 10 -H 'Accept-Encoding: gzip' \
					-H "traceparent: 00-$id-00f067aa0ba902b7-01" -o /dev/null "$u"
				[ "${PAUSE:-0}" = 0 ] || sleep "$PAUSE"
			done
		done
	) &
}

# sent_json ID...: the IDs as a JSON array
sent_json() { printf '%s\n' "$@" | jq -R . | jq -s -c .; }

srv_bin=$(go_build "$newest" plain httpserver) || not_ok "go$newest httpserver: build failed"
httpserver_start "$srv_bin"
upstream=$srv_http
[ -n "$upstream" ] || { not_ok "testdata/httpserver did not start"; done_testing; }

mkdir -p "$work/www"
# text that gzip has work with: words from a small vocabulary, 2 MB
awk 'BEGIN { srand(1); split("alpha beta gamma delta proxy server request trace profile goroutine", w, " ");
	for (i = 0; i < 330000; i++) printf "%s%s", w[int(rand() * 10) + 1], (i % 16 == 15 ? "\n" : " ") }' \
	>"$work/www/big.txt"

for suite in bookworm trixie sid; do
	bin=$programs/$suite/usr/bin/caddy
	if [ ! -x "$bin" ]; then
		not_ok "$suite's caddy: not in $programs/$suite (make deps fetches it)"
		continue
	fi
	name="$suite's caddy ($("$CTXPROF" check --json "$bin" | jq -r .go_version))"
	dir=$work/$suite
	mkdir -p "$dir"
	front=$(free_port)
	back=$(free_port)
	cat >"$dir/caddy.json" <<-JSON
	{"admin": {"disabled": true},
	 "apps": {
	  "pki": {"certificate_authorities": {"local": {"install_trust": false}}},
	  "http": {"servers": {
	   "back": {"listen": ["127.0.0.1:$back"], "automatic_https": {"disable": true},
	    "routes": [{"handle": [{"handler": "encode", "encodings": {"gzip": {}}},
	                           {"handler": "file_server", "root": "$work/www"}]}]},
	   "front": {"listen": ["127.0.0.1:$front"], "automatic_https": {"disable": true},
	    "routes": [
	     {"match": [{"path": ["/static/*"]}], "handle": [
	       {"handler": "rewrite", "strip_path_prefix": "/static"},
	       {"handler": "reverse_proxy", "upstreams": [{"dial": "127.0.0.1:$back"}]}]},
	     {"handle": [{"handler": "reverse_proxy", "upstreams": [{"dial": "$upstream"}]}]}]}}}}}
	JSON
	HOME=$dir XDG_DATA_HOME=$dir/data XDG_CONFIG_HOME=$dir/config \
		"$bin" run --config "$dir/caddy.json" >"$dir/caddy.log" 2>&1 &
	caddy=$!
	if ! wait_http "http://127.0.0.1:$front/static/big.txt"; then
		not_ok "$name did not serve: $(tail -n 3 "$dir/caddy.log" | tr '\n' ' ')"
		kill "$caddy"
		continue
	fi
	if ! ctxprof_start "$dir/err" "$dir/out.jsonl" -v -p "$caddy" -F 499 --wall; then
		not_ok "$name: ctxprof-go did not start: $(tr '\n' ' ' <"$dir/err" | head -c 1000)"
		kill "$caddy"
		continue
	fi
	ids=()
	pids=()
	for i in 1 2 3; do
		id=$(printf 'deb5e7%02d%024x' "$i" "$((RANDOM * 65536 + RANDOM))")
		ids+=("$id")
		loops "$SECS" "$id" "http://127.0.0.1:$front/static/big.txt" "http://127.0.0.1:$front/small"
		pids+=($!)
	done
	wait "${pids[@]}"
	ctxprof_stop
	rc=$?
	kill "$caddy"
	wait "$caddy" 2>/dev/null
	check_eq "$name: ctxprof-go exits" 0 "$rc"
	stats=$(jq -s -c --argjson roots "$ROOTS" --argjson sent "$(sent_json "${ids[@]}")" '
		[.[] | select(.origin == "sampling") | .trace_id as $t | .stacks[] |
		 {n: .samples, t: $t, f: [.frames[].func], file: (.frames[0].file // "")}] as $s |
		($s | map(select(.f[-1] as $r | $roots | index($r)))) as $whole |
		{total: ($s | map(.n) | add // 0),
		 whole: ($whole | map(.n) | add // 0),
		 cut: ($s - $whole | group_by(.f[-1]) | map({end: .[0].f[-1], n: (map(.n) | add)}) |
			sort_by(-.n) | .[0:4] | map("\(.end) (\(.n))") | join(", ")),
		 lone: ([$s[] | select((.f | length) == 1 and (.file | endswith(".go") | not) and
			(.f[0] as $r | $roots | index($r) | not) and
			(.f[0] | test("^(pthread_create|clone3?|start_thread)(@|$)") | not)) | .f[0]] |
			unique | join(" ")),
		 found: ([$s[] | .t | select(. as $x | $x != null and ($sent | index($x)))] | unique | length),
		 unsent: ([$s[] | .t | select(. as $x | $x != null and ($sent | index($x) | not))] | unique |
			join(" "))}' \
		"$dir/out.jsonl")
	echo "# $name: $stats"
	get() { jq -r ".$1" <<<"$stats"; }
	part_verdict "$name: CPU samples whose stack reaches where Go's traceback ends" \
		"$(get whole)" "$(get total)" 300 "samples" "$(get cut)"
	check_eq "$name: stacks that are a lone frame outside Go code" "" "$(get lone)"
	# --wall: a running goroutine's look has no stack of its own to read
	read -r running framed < <(jq -s -r '[.[] | select(.origin == "wall" and .state == "running") |
		.stacks[] | {n: .samples, framed: any(.frames[]; .func | startswith("[") | not)}] |
		"\(map(.n) | add // 0) \(map(select(.framed) | .n) | add // 0)"' "$dir/out.jsonl")
	if [ "$running" -ge 30 ] && [ $((framed * 100)) -ge $((running * 50)) ]; then
		ok "$name: --wall samples of running goroutines with the stack of their nearest CPU sample: $framed of $running (>= 50%)"
	else
		not_ok "$name: --wall samples of running goroutines with the stack of their nearest CPU sample: $framed of $running (need 50% of at least 30); $(grep 'wall:' "$dir/err")"
	fi
	check_eq "$name: trace IDs sent that have samples" 3 "$(get found)"
	check_eq "$name: trace IDs on samples that were never sent" "" "$(get unsent)"
done

# ne_run SHARE NAME MIN: node-exporter ($ne on $port) scraped back to
# back by two loops under a trace ID each for 8 s, recorded with
# --goroutine-start-share SHARE: the probe's cost within SHARE, as -v
# says it; collector samples with a trace ID never sent, none; at least
# MIN% of them with the scrape's
ne_run() {
	local ids=() pids=() i id stats total traced cost pct
	if ! ctxprof_start "$work/ne.err" "$work/ne.jsonl" -v -p "$ne" -F 999 --goroutine-start-share "$1"; then
		not_ok "$2: ctxprof-go did not start: $(tr '\n' ' ' <"$work/ne.err" | head -c 1000)"
		return
	fi
	for i in 1 2; do
		id=$(printf 'e0e0e7%02d%024x' "$i" "$((RANDOM * 65536 + RANDOM))")
		ids+=("$id")
		PAUSE=0 loops 8 "$id" "http://127.0.0.1:$port/metrics"
		pids+=($!)
	done
	wait "${pids[@]}"
	ctxprof_stop
	check_eq "$2: ctxprof-go exits" 0 "$?"
	stats=$(jq -s -c --argjson sent "$(sent_json "${ids[@]}")" '
		[.[] | select(.origin == "sampling") | .trace_id as $t | .stacks[] |
		 select(any(.frames[]; .func | contains("node_exporter/collector."))) |
		 {n: .samples, t: $t}] as $s |
		{total: ($s | map(.n) | add // 0),
		 traced: ($s | map(select(.t as $x | $x != null and ($sent | index($x)))) | map(.n) | add // 0),
		 other: ([$s[] | .t | select(. as $x | $x != null and ($sent | index($x) | not))] | unique |
			join(" "))}' \
		"$work/ne.jsonl")
	echo "# $2: $stats; $(grep -m1 'probes for' "$work/ne.err")"
	total=$(jq -r .total <<<"$stats")
	traced=$(jq -r .traced <<<"$stats")
	echo "# $2: $(grep -F 'goroutine-start probe saw' "$work/ne.err" | grep -F rested | sed 's/^ctxprof-go: //')"
	if [ "$total" -ge 200 ] && [ $((traced * 100)) -ge $((total * $3)) ]; then
		ok "$2: collector samples with the scrape's trace ID, scraped back to back: $traced of $total (>= $3%; collectors run in the request's grandchildren)"
	else
		not_ok "$2: collector samples with the scrape's trace ID, scraped back to back: $traced of $total (need $3% of at least 200)"
	fi
	check_eq "$2: collector samples with a trace ID never sent" "" "$(jq -r .other <<<"$stats")"
	cost=$(grep -F "pid $ne (" "$work/ne.err" | grep -F 'goroutine-start probe saw' | grep -F ' us a hit ')
	echo "# $2: ${cost#ctxprof-go: }"
	if [[ $cost =~ :\ ([0-9]+)\.([0-9]+)%\ of\ the ]]; then
		pct=$((10#${BASH_REMATCH[1]}${BASH_REMATCH[2]}))
	fi
	if [ "${pct:-0}" -gt 0 ] && [ "$pct" -le $(($1 * 100)) ]; then
		ok "$2: the goroutine-start probe's cost, within its share: ${BASH_REMATCH[1]}.${BASH_REMATCH[2]}% of the server's CPU (<= $1%)"
	else
		not_ok "$2: the goroutine-start probe's cost: no share of at most $1% in '$cost'"
	fi
}

bin=$programs/bookworm/usr/bin/prometheus-node-exporter
if [ -x "$bin" ]; then
	name="bookworm's prometheus-node-exporter ($("$CTXPROF" check --json "$bin" | jq -r .go_version))"
	port=$(free_port)
	"$bin" --web.listen-address="127.0.0.1:$port" >"$work/ne.log" 2>&1 &
	ne=$!
	if ! wait_http "http://127.0.0.1:$port/metrics"; then
		not_ok "$name did not serve: $(tail -n 3 "$work/ne.log" | tr '\n' ' ')"
	else
		ne_run 2 "$name, the default --goroutine-start-share 2" 95
	fi
	kill "$ne" 2>/dev/null
	wait "$ne" 2>/dev/null
else
	not_ok "bookworm's prometheus-node-exporter: not in $programs/bookworm (make deps fetches it)"
fi
kill "$srv" 2>/dev/null
done_testing
