#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-otel.sh: ctxprof-go samples testdata/otelserver, traced by the real OpenTelemetry Go SDK.
#
# Builds: testdata/otelserver in GOPATH mode (GO111MODULE=off
# GOPATH=/usr/share/gocode) against Debian's golang-opentelemetry-otel-dev
# (>= 1.31) and golang-opentelemetry-contrib-dev (otelhttp), with the newest
# installed Go >= 1.22 that builds it, pure Go. curl sends requests from
# three clients in parallel, cycling over three trace IDs in W3C
# traceparent headers, while ctxprof-go samples the server at 499 Hz: for
# 5 s, and on until each trace has 50 samples in main.handleWork. The
# expected values come from the test (the trace IDs it sends) and from the
# server's replies (the server span ID otelhttp started for each request):
# every trace has samples in main.handleWork, no such sample carries a trace
# ID that was not sent, and span_id and route labels match the request.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

OTEL_PKGS=(golang-opentelemetry-otel-dev golang-opentelemetry-contrib-dev)
OTEL_MIN=1.31
TRACES=(0af7651916cd43dd8448eb211c80319c 4bf92f3577b34da6a3ce929d0e0e4736 d4cda95b652f4a1592b449d5929fda1b)
MIN_SAMPLES=50

# otel_missing: prints why the OpenTelemetry sources cannot be used, if so.
otel_missing() {
	local p ver missing=()
	for p in "${OTEL_PKGS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing+=("$p")
	done
	if [ "${#missing[@]}" -gt 0 ]; then
		echo "not installed: ${missing[*]} (from trixie)"
		return 0
	fi
	ver=$(dpkg-query -W -f='${Version}' golang-opentelemetry-otel-dev)
	if dpkg --compare-versions "$ver" lt "$OTEL_MIN"; then
		echo "golang-opentelemetry-otel-dev $ver is older than $OTEL_MIN (install it from trixie)"
		return 0
	fi
	return 1
}

# otel_build VERSION: builds testdata/otelserver with Go VERSION in GOPATH mode
# and prints the binary's path. Rebuilds only when the sources, or the
# installed OpenTelemetry packages, are newer than the binary.
otel_build() {
	local v=$1 src=$TOP/testdata/otelserver out
	out=$BUILDS/otelserver/go$v/otelserver
	mkdir -p "$(dirname "$out")"
	if [ -x "$out" ] && [ -z "$(find "$src" /var/lib/dpkg/info -newer "$out" -type f \
		\( -path "$src/*" -o -name 'golang-opentelemetry-*.list' \) | head -n 1)" ]; then
		printf '%s\n' "$out"
		return 0
	fi
	(cd "$src" && env GO111MODULE=off GOPATH=/usr/share/gocode CGO_ENABLED=0 \
		"/usr/lib/go-$v/bin/go" build -o "$out" .) >&2 || return 1
	printf '%s\n' "$out"
}

# wait_for FILE REGEX PID: waits for a line in FILE while PID lives, 300 s at most.
wait_for() {
	local i
	for i in $(seq 3000); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# client N STOP PORT: requests until the file STOP exists, starting at
# trace N; one line per request: sent trace, sent parent span ID, the
# server's reply (its trace ID and server span ID), HTTP status.
client() {
	local n=$1 stop=$2 port=$3 i=0 t parent reply
	while [ ! -e "$stop" ]; do
		t=${TRACES[(n + i) % 3]}
		parent=$(printf '%08x%08x' "$((n + 1))" "$i")
		reply=$(curl -sS --max-time 120 -H "traceparent: 00-$t-$parent-01" \
			-w ' %{http_code}' "http://127.0.0.1:$port/work" 2>&1 | tr '\n' ' ')
		printf '%s %s %s\n' "$t" "$parent" "$reply"
		i=$((i + 1))
	done
}

e2e_setup "OpenTelemetry end-to-end sampling"
if why=$(otel_missing); then
	skip "OpenTelemetry end-to-end sampling" "$why"
	done_testing
fi
if ! command -v curl >/dev/null; then
	skip "OpenTelemetry end-to-end sampling" "curl is not installed"
	done_testing
fi


bin= gov=
for v in $(go_toolchains | sort -t. -k1,1nr -k2,2nr); do
	[ "${v#1.}" -ge 22 ] 2>/dev/null || continue
	if bin=$(otel_build "$v" 2>>"$work/build.log"); then
		gov=$v
		break
	fi
	echo "# go$v cannot build testdata/otelserver; trying an older Go"
done
if [ -z "$gov" ]; then
	not_ok "testdata/otelserver builds with no installed Go >= 1.22"
	sed 's/^/# /' "$work/build.log" | tail -n 20
	done_testing
fi
otelver=$(dpkg-query -W -f='${Version}' golang-opentelemetry-otel-dev)
contribver=$(dpkg-query -W -f='${Version}' golang-opentelemetry-contrib-dev)
ok "testdata/otelserver built with $(go_version_of "$gov" "$bin") (GOPATH mode), otel $otelver, contrib $contribver"
syms=$("/usr/lib/go-$gov/bin/go" tool nm "$bin" | awk '$2 == "T" && $3 == "main.handleWork"' | wc -l)
check_eq "main.handleWork is a function of its own in the binary (text symbols, not inlined)" 1 "$syms"

"$bin" -d 600s >"$work/server.out" 2>"$work/server.err" &
srv=$!
if ! wait_for "$work/server.out" '^listening on 127\.0\.0\.1:[0-9]*$' "$srv"; then
	not_ok "otelserver did not start listening"
	sed 's/^/# /' "$work/server.out" "$work/server.err"
	done_testing
fi
port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/server.out")

# enough OUT: every trace has MIN_SAMPLES samples in main.handleWork
enough() {
	jq -s -e --argjson min "$MIN_SAMPLES" --argjson sent "$(printf '%s\n' "${TRACES[@]}" | jq -R . | jq -s .)" '
		[ .[] as $r | $r.stacks[] | select(any(.frames[]; .func == "main.handleWork")) |
		  {t: $r.trace_id, n: .samples} ] as $w |
		all($sent[]; . as $t | ($w | map(select(.t == $t) | .n) | add // 0) >= $min)' "$1" >/dev/null 2>&1
}
if ! ctxprof_start "$work/err" "$work/out.jsonl" -p "$srv" -F 499 -i 1 -d 300; then
	not_ok "ctxprof-go did not start sampling pid $srv"
	sed 's/^/# /' "$work/err"
	done_testing
fi
echo "# otelserver pid $srv on 127.0.0.1:$port; 3 curl clients for 5 s, then until each trace has $MIN_SAMPLES samples in main.handleWork (at most 120 s), while ctxprof-go samples at 499 Hz"
clients=()
for n in 0 1 2; do
	client "$n" "$work/stop" "$port" >"$work/client.$n" &
	clients+=($!)
done
samples_wait 5 120 enough "$work/out.jsonl"
touch "$work/stop"
wait "${clients[@]}"
ctxprof_stop
rc=$?
check_eq "ctxprof-go -p $srv exits" 0 "$rc"
echo "# clients ran ${sampled} s"
sed 's/^/# /' "$work/err"

# requests: the server must have seen each trace ID the client sent
cat "$work"/client.? >"$work/requests"
nreq=$(wc -l <"$work/requests")
good=$(awk 'NF == 5 && $3 == $1 && $5 == 200' "$work/requests" | wc -l)
check_eq "requests answered 200 with the trace ID from traceparent" "$nreq/$nreq" "$good/$nreq"

if ! jq -e . "$work/out.jsonl" >/dev/null; then
	not_ok "output is not valid JSON lines"
	done_testing
fi
ok "every output line is valid JSON ($(wc -l <"$work/out.jsonl") records)"

# server span ID -> trace ID, from the replies; and the parent span IDs sent
spans=$(awk 'NF == 5 && $5 == 200 { print $4, $3 }' "$work/requests" |
	jq -R -s 'split("\n") | map(select(length > 0) | split(" ") | {key: .[0], value: .[1]}) | from_entries')
parents=$(awk '{ print $2 }' "$work/requests" | jq -R -s 'split("\n") | map(select(length > 0))')
sent=$(printf '%s\n' "${TRACES[@]}" | jq -R -s 'split("\n") | map(select(length > 0))')

# one object per stack in main.handleWork: the record's trace, span, route
jq -s '[ .[] as $r | $r.stacks[] | select(any(.frames[]; .func == "main.handleWork")) |
	{ trace: $r.trace_id, span: $r.span_id, route: $r.labels.route, n: .samples } ]' \
	"$work/out.jsonl" >"$work/work.json"

for t in "${TRACES[@]}"; do
	reqs=$(awk -v t="$t" '$1 == t' "$work/requests" | wc -l)
	n=$(jq --arg t "$t" 'map(select(.trace == $t) | .n) | add // 0' "$work/work.json")
	if [ "$n" -ge "$MIN_SAMPLES" ]; then
		ok "trace $t: $n samples in main.handleWork ($reqs requests)"
	else
		not_ok "trace $t: $n samples in main.handleWork ($reqs requests), need $MIN_SAMPLES"
	fi
done

read -r total right wrong none < <(jq -r --argjson sent "$sent" '
	(map(.n) | add // 0) as $total |
	(map(select(.trace as $t | any($sent[]; . == $t))) | map(.n) | add // 0) as $right |
	(map(select(.trace != null and (.trace as $t | any($sent[]; . == $t) | not))) | map(.n) | add // 0) as $wrong |
	(map(select(.trace == null)) | map(.n) | add // 0) as $none |
	"\($total) \($right) \($wrong) \($none)"' "$work/work.json")
check_eq "main.handleWork samples with a trace ID that was not sent (of $total)" 0 "$wrong"
if [ "$total" -eq 0 ]; then
	not_ok "main.handleWork: no samples at all"
else
	share_verdict "main.handleWork samples with a sent trace ID" "$right" "$total" ", $none without"
fi

# the server's own labels: span_id is the server span otelhttp started for a
# request of the same trace (never the client's parent span), route is /work
read -r spanbad parentspan < <(jq -r --argjson spans "$spans" --argjson parents "$parents" '
	map(select(.trace != null)) |
	(map(select($spans[.span // ""] != .trace)) | map(.n) | add // 0) as $bad |
	(map(select(.span as $s | any($parents[]; . == $s))) | map(.n) | add // 0) as $par |
	"\($bad) \($par)"' "$work/work.json")
check_eq "main.handleWork samples whose span_id is not the server span of a request in their trace" 0 "$spanbad"
check_eq "main.handleWork samples whose span_id is the client's parent span" 0 "$parentspan"
routes=$(jq -r 'map(select(.trace != null) | .route) | unique | join(",")' "$work/work.json")
check_eq "route label of traced main.handleWork samples" "/work" "$routes"
done_testing
