#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# otlp.sh: --otlp through a real OpenTelemetry Collector (0.152, built from Debian's sources) to a sink that decodes with pdata.
#
# Targets: testdata/traced built by the oldest toolchain (labels in a map)
# and the newest (labels in a slice), plain, busy for the whole test, one of
# them with OTEL_SERVICE_NAME set. The collector receives OTLP/HTTP and
# forwards to testdata/otlpsink, which decodes each request with the
# collector's own pdata and writes one JSON line per sample, its link and
# stack resolved, read as Grafana Pyroscope reads it (profile type, stored
# nanoseconds, series labels); it refuses, and the test fails on, a request
# that breaks the format's rules or Pyroscope's. Cases:
# 0. Settings checked at start-up, before anything is loaded (run before the
#    collector is built, which they need not): a CA file and a client key
#    that do not exist, a URL whose IPv6 host is not closed, an
#    OTEL_EXPORTER_OTLP_ENDPOINT that is no URL, a port of 70000: exit 2,
#    one line naming the setting (--otlp or the variable) and the value,
#    then --help's pointer, and nothing else.
# 1. CPU: per trace ID, the CPU time the sink received equals the JSON lines
#    of the same run, for each target; the profile is Pyroscope's
#    process_cpu (samples/count, period cpu/nanoseconds of 1e9/Hz), every
#    sample carried by the time it was taken; resource attributes are the
#    target's. With five OTEL_RESOURCE_ATTRIBUTES, every sample's resource
#    and sample attributes stay within the budget of 25, testdata/traced's
#    job of twelve labels keeps the first by key that fit, and the rest are
#    named on the statistics line.
# 2. Wall: with --wall, the same for wall time (wall:wall:nanoseconds, one
#    value a sample), and state and wait_reason arrive as attributes.
# 3. Collector restart: the collector is killed mid-run and started again
#    3 s later; the per-trace totals, CPU and wall, still match, and
#    retries are counted.
# 4. No collector: exit 1, the JSON lines whole, every request and sample
#    counted as dropped, and a last line saying how many samples were not
#    delivered. Against nothing listening and against a listener that never
#    answers, a -d 3 run ends within 6 s of -d (1 s here: a collector that
#    has answered nothing is not waited for), the request in flight too,
#    and says on stderr that it waits and for how long.
# 5. Permanent errors: a sink answering 400, and a wrong path at the
#    collector (404): one clear message, no retry, requests counted, exit
#    1. A partial success is said once and its rejected profiles counted,
#    exit 1. A sink answering 501 with a long HTML page (as a proxy may):
#    one line with the status and the endpoint, and at most 200 bytes of
#    the page, cut with an ellipsis.
# 6. TLS: a self-signed CA, the collector's TLS receiver requiring a client
#    certificate (mTLS); without the CA the certificate is refused, once.
# 7. gzip and headers, straight to the sink: it sees Content-Encoding gzip
#    without being asked, none with OTEL_EXPORTER_OTLP_COMPRESSION=none, and
#    the OTEL_EXPORTER_OTLP_HEADERS, and decodes the same totals.
# 8. A body limit far below one request: the collector's
#    max_request_body_size at 16 KiB against -F 999 -i 10 (a request of
#    about 120 KB an interval): it refuses the first (HTTP 400, request body
#    too large), ctxprof-go cuts it and what follows in halves until each
#    is taken: per trace ID the sink's totals equal the JSON lines, nothing
#    dropped, the cuts counted.
# 9. Busy: a sink that answers 429 with Retry-After: 1 for its first 3 s
#    (as the Collector's memory limiter does): nothing lost, retries counted.
# 10. /metrics: --metrics-addr 127.0.0.1:0, straight to the sink; with the
#    targets stopped (SIGSTOP) and what was taken sent, the page's samples
#    equal the JSON lines' and the samples sent, and the sink's CPU time is
#    those samples times the period; requests sent as the statistics line
#    will say; other paths 404; an address it cannot take is refused.
# 11. Requests, each with IDs of its own (testdata/conventions -requests,
#    newest Go): 10, then 200, under the four tracers' label conventions in
#    turn and two routes, with --wall; the first run straight to the sink, as
#    to a Pyroscope server, the second through the collector. No sample
#    attribute holds a trace or span ID of any request, for each
#    convention; the series the samples land in are the same in both runs,
#    one for each label set of the requests with their IDs aside (2 routes,
#    with and without Grafana's span_name: 4), where the IDs as attributes
#    would have made one a request; per trace ID the CPU and wall totals
#    equal the JSON lines; nothing refused.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"
. "$(dirname "$0")/otlp-lib.sh"

e2e_setup "OTLP profiles through a collector"

# --- 0. settings checked at start-up ---
# refused_at_start NAME WANT ARGS...: ctxprof-go -p (this shell: parsing
# does not look at it) ARGS exits 2 with WANT and --help's pointer alone:
# nothing was loaded, no probe attached, no target looked at
refused_at_start() {
	local name=$1 want=$2 out rc
	shift 2
	out=$("$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" = 2 ] && [ "$out" = "ctxprof-go: $want"$'\n'"ctxprof-go: Try 'ctxprof-go --help'." ]; then
		ok "$name: exit 2 at start-up: $want"
	else
		not_ok "$name: exit $rc (want 2), stderr: $(tr '\n' '|' <<<"$out") (want '$want' and --help's pointer alone)"
	fi
}
: >"$work/client.pem"
refused_at_start "a CA file that does not exist" \
	"OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read '/nonexistent': No such file or directory" \
	env OTEL_EXPORTER_OTLP_CERTIFICATE=/nonexistent "$CTXPROF" -p $$ -d 1 --otlp https://127.0.0.1:4318
refused_at_start "a client key that does not exist, in the profiles signal's variable" \
	"OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY: cannot read '$work/client.key': No such file or directory" \
	env OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE="$work/client.pem" OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY="$work/client.key" \
	"$CTXPROF" -p $$ -d 1 --otlp https://127.0.0.1:4318
refused_at_start "--otlp 'http://[::1'" "--otlp: invalid URL 'http://[::1': the IPv6 address has no closing ']'" \
	"$CTXPROF" -p $$ -d 1 --otlp 'http://[::1'
refused_at_start "a bad OTEL_EXPORTER_OTLP_ENDPOINT, named" \
	"OTEL_EXPORTER_OTLP_ENDPOINT: invalid URL 'collector:4318': not an http:// or https:// URL" \
	env OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318 "$CTXPROF" -p $$ -d 1
refused_at_start "a port out of range in OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT, named" \
	"OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT: invalid URL 'http://127.0.0.1:70000/v1development/profiles': port '70000' is not a number from 1 to 65535" \
	env OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT=http://127.0.0.1:70000/v1development/profiles "$CTXPROF" -p $$ -d 1

if [ ! -s "$OTELCOL_TREE/packages" ] && [ -e "$OTELCOL_TREE/apt" ]; then
	skip "OTLP through a collector" "golang-opentelemetry-collector-dev is not in sid (make deps looked)"
	done_testing
fi
if ! otelcol_build; then
	not_ok "the collector and the sink: $otelcol_why"
	done_testing
fi
ok "the collector ($($OTELCOL --version)) and the sink, built from Debian's collector sources"

first=$(go_toolchains | head -n 1)
last=$(go_toolchains | tail -n 1)
map_bin=$(go_build "$first" plain) || { not_ok "go$first: build failed"; done_testing; }
slice_bin=$(go_build "$last" plain) || { not_ok "go$last: build failed"; done_testing; }
nice -n 10 "$map_bin" -d 900s 2>/dev/null &
map_pid=$!
OTEL_SERVICE_NAME=checkout nice -n 10 "$slice_bin" -d 900s 2>/dev/null &
slice_pid=$!
echo "# targets: go$first plain (map labels, pid $map_pid), go$last plain (slice labels, pid $slice_pid, OTEL_SERVICE_NAME=checkout)"

# one_target_totals JSONL PID: the records of PID only
pid_records() { jq -c --argjson p "$2" 'select(.pid == $p)' "$1"; }
pid_samples() { jq -c --arg p "$2" 'select(.resource["process.pid"] == $p)' "$1"; }

# compare NAME TYPE DIR [PIDS]: per target and per trace ID, the sink's totals against the JSON lines
compare() {
	local name=$1 type=$2 dir=$3 pid want got i
	for pid in ${4:-$map_pid $slice_pid}; do
		want=$(json_totals <(pid_records "$dir/out.jsonl" "$pid") "$type")
		# the collector forwards as it receives: wait for the last request to arrive
		for i in $(seq 60); do
			got=$(sink_totals <(pid_samples "$dir/sink/samples.jsonl" "$pid") "$type")
			[ "$got" = "$want" ] && break
			sleep 0.5
		done
		if [ "$got" = "$want" ] && [ "$want" != "{}" ]; then
			ok "$name, pid $pid: per trace ID, the $type time the sink received equals the JSON lines ($(jq -r 'length' <<<"$want") trace IDs, $(jq -r '[.[]] | add / 1e6 | floor' <<<"$want") ms)"
		else
			not_ok "$name, pid $pid: $type per trace: JSON lines $want, sink $got"
		fi
	done
}

# enough samples of every job, in both targets
enough() { jobs_enough 5 2 "$1"; }
stats_line() { grep '^ctxprof-go: otlp:' "$1" | tail -n 1; }

# record DIR MIN ARGS...: ctxprof-go ARGS on both targets, flushing every
# second into DIR/out.jsonl, for MIN seconds and until every job has samples;
# its exit status in $rc
record() {
	local dir=$1 min=$2
	shift 2
	if ctxprof_start "$dir/err" "$dir/out.jsonl" -p "$map_pid,$slice_pid" -F 499 -i 1 -d 300 "$@"; then
		samples_wait "$min" 120 enough "$dir/out.jsonl"
		ctxprof_stop
		rc=$?
	else
		rc=$?
	fi
}

# refused NAME DIR: the sink took every request (the format's rules and Pyroscope's)
refused() {
	local why
	why=$(sink_refusals "$2/sink")
	if [ -z "$why" ]; then
		ok "$1: every request kept the format's rules and Pyroscope's ($(wc -l <"$2/sink/requests.jsonl") requests)"
	else
		not_ok "$1: the sink refused: $(tr '\n' ';' <<<"$why")"
	fi
}

# --- 1. CPU through the collector ---
d=$work/cpu
pipeline cpu "$d"
OTEL_RESOURCE_ATTRIBUTES="k8s.node.name=node-7,deployment.environment=test%20lab,k8s.namespace.name=shop,k8s.cluster.name=c1,cloud.region=eu-1" \
	record "$d" 4 --otlp "http://127.0.0.1:$cport"
check_eq "cpu: ctxprof-go --otlp exits" 0 "$rc"
echo "# $(stats_line "$d/err")"
compare "cpu" cpu "$d"
refused "cpu" "$d"
check_eq "cpu: the profile as Pyroscope files it, the one type" process_cpu:cpu:nanoseconds:cpu:nanoseconds \
	"$(jq -r 'select(.type != "wall") | .profile_type' "$d/sink/samples.jsonl" | sort -u | tr '\n' ' ' | sed 's/ $//')"
check_eq "cpu: its sample type, period type and period (1e9/499 ns)" "samples/count cpu/nanoseconds $((1000000000 / 499))" \
	"$(jq -r 'select(.profile == "process_cpu") | "\(.type)/\(.unit) \(.period_type)/nanoseconds \(.period)"' "$d/sink/samples.jsonl" | sort -u | tr '\n' ' ' | sed 's/ $//')"
check_eq "cpu: a record's cpu_ns is its samples times that period" "$((1000000000 / 499))" \
	"$(jq -r -s 'map(select(.origin == "sampling") | .cpu_ns / .samples) | unique | map(tostring) | join(" ")' "$d/out.jsonl")"
# the budget: resource and sample attributes of one series, at most 25
over=$(jq -s 'map(select(((.resource | length) + (.attributes | length)) > 25)) | length' "$d/sink/samples.jsonl")
most=$(jq -s 'map((.resource | length) + (.attributes | length)) | max' "$d/sink/samples.jsonl")
names=$(jq -s 'map(.series_labels) | max' "$d/sink/samples.jsonl")
if [ "$over" = 0 ] && [ "$names" -le 30 ]; then
	ok "cpu: with five OTEL_RESOURCE_ATTRIBUTES, every sample within 25 attributes (at most $most); Pyroscope's series at most $names label names of 30"
else
	not_ok "cpu: $over samples over 25 attributes (at most $most); series of $names label names"
fi
# traced's twelve-label job: the first k labels by key that fit, the rest named on the statistics line
many_labels "$d/sink/samples.jsonl" "$slice_pid"
left=$(printf 'k%s\n' 0 1 2 3 4 5 6 7 8 9 10 | sort | sed -n "$((fit + 1))p")
if [ "$got" = "$want" ] && [[ $(stats_line "$d/err") =~ [1-9][0-9]*\ samples\ sent\ without\ some\ of\ their\ labels.*\'$left\' ]]; then
	ok "cpu: $nres resource attributes leave $fit labels: the twelve-label job keeps $want; '$left' and after are counted: $(stats_line "$d/err" | sed 's/.*; \([0-9]* samples sent without\)/\1/')"
else
	not_ok "cpu: the twelve-label job's labels at the sink: '$got' (want '$want' of $nres resource attributes); statistics: $(stats_line "$d/err")"
fi
# every CPU sample's own time, within its records' span
for pid in $map_pid $slice_pid; do
	want=$(pid_records "$d/out.jsonl" "$pid" | jq -s 'map(select(.origin == "sampling") | .samples) | add')
	got=$(pid_samples "$d/sink/samples.jsonl" "$pid" | jq -s 'map(select(.profile == "process_cpu" and .values == 0) | .timestamps) | add')
	read -r lo hi < <(pid_records "$d/out.jsonl" "$pid" |
		jq -s -r '[(map(.start | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) | min),
			   (map(.end | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) | max) + 1] | @tsv')
	out=$(pid_samples "$d/sink/samples.jsonl" "$pid" | jq -s --argjson lo "$lo" --argjson hi "$hi" \
		'map(select(.profile == "process_cpu" and (.time_min / 1e9 < $lo or .time_max / 1e9 > $hi))) | length')
	if [ "$got" = "$want" ] && [ "$out" = 0 ]; then
		ok "cpu, pid $pid: every sample is its time alone ($got timestamps for $got samples, no values), all within the records' span"
	else
		not_ok "cpu, pid $pid: $got timestamps for $want samples, $out samples with times outside [$lo, $hi] s"
	fi
done
res=$(jq -c --arg p "$slice_pid" 'select(.resource["process.pid"] == $p) | .resource' "$d/sink/samples.jsonl" | head -n 1)
check_eq "cpu: service.name from the target's OTEL_SERVICE_NAME" checkout "$(jq -r '."service.name"' <<<"$res")"
check_eq "cpu: process.runtime.version, the target's Go" "$(go_version_of "$last" "$slice_bin")" \
	"$(jq -r '."process.runtime.version"' <<<"$res")"
check_eq "cpu: process.executable.path" "$(readlink -f "$slice_bin")" "$(jq -r '."process.executable.path"' <<<"$res")"
check_eq "cpu: process.executable.build_id.gnu, as readelf reads it" \
	"$(readelf -n "$slice_bin" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')" \
	"$(jq -r '."process.executable.build_id.gnu"' <<<"$res")"
check_eq "cpu: OTEL_RESOURCE_ATTRIBUTES on every resource, percent-decoded" "node-7/test lab" \
	"$(jq -r '."k8s.node.name" + "/" + ."deployment.environment"' <<<"$res")"
check_eq "cpu: host.name" "$(hostname)" "$(jq -r '."host.name"' <<<"$res")"
res=$(jq -c --arg p "$map_pid" 'select(.resource["process.pid"] == $p) | .resource' "$d/sink/samples.jsonl" | head -n 1)
check_eq "cpu: without OTEL_SERVICE_NAME, service.name is the executable's name" traced \
	"$(jq -r '."service.name"' <<<"$res")"
n=$(jq -s 'map(select(.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736" and .span_id == "00f067aa0ba902b7"
	and .attributes.trace_source == "label" and .attributes.route == "/do"
	and .attributes["otel.traceid"] == null and .attributes.span_id == null
	and (.frames | any(startswith("main.burnDo "))))) | length' "$d/sink/samples.jsonl")
if [ "$n" -gt 0 ]; then
	ok "cpu: main.burnDo's samples are linked to its trace and span, with trace_source label and route /do, no ID label ($n samples)"
else
	not_ok "cpu: no sample of main.burnDo linked to 4bf92f35.../00f067aa... with route /do and without its ID labels"
fi
inl=$(jq -s '[.[].frames | length] | max' "$d/sink/samples.jsonl")
echo "# deepest stack at the sink: $inl lines"
kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null

# --- 2. wall through the collector ---
d=$work/wall
pipeline wall "$d"
record "$d" 4 --wall --otlp "http://127.0.0.1:$cport"
check_eq "wall: ctxprof-go --wall --otlp exits" 0 "$rc"
compare "wall" wall "$d"
compare "wall, its CPU" cpu "$d"
refused "wall" "$d"
n=$(jq -s 'map(select(.profile == "wall" and .attributes.state != null)) | length' "$d/sink/samples.jsonl")
m=$(jq -s 'map(select(.profile == "wall" and .attributes.state == "waiting" and .attributes.wait_reason != null)) | length' "$d/sink/samples.jsonl")
if [ "$n" -gt 0 ] && [ "$m" -gt 0 ]; then
	ok "wall: every wall sample has its state ($n), the waiting ones their wait_reason ($m)"
else
	not_ok "wall: wall samples with a state: $n, waiting with a wait_reason: $m"
fi
check_eq "wall: the profile as Pyroscope files it" wall:wall:nanoseconds:wall:nanoseconds \
	"$(jq -r 'select(.type == "wall") | .profile_type' "$d/sink/samples.jsonl" | sort -u | tr '\n' ' ' | sed 's/ $//')"
check_eq "wall: every sample one value, its nanoseconds, and no timestamps (the format pairs them one to one)" \
	"1 0" "$(jq -r 'select(.profile == "wall") | "\(.values) \(.timestamps)"' "$d/sink/samples.jsonl" | sort -u | tr '\n' ' ' | sed 's/ $//')"
kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null

# --- 3. the collector killed mid-run, started again ---
d=$work/restart
pipeline restart "$d"
if ctxprof_start "$d/err" "$d/out.jsonl" -p "$map_pid,$slice_pid" -F 499 -i 1 -d 300 --wall \
	--otlp "http://127.0.0.1:$cport"; then
	sleep 2.5
	kill -KILL "$collector_pid"
	wait "$collector_pid" 2>/dev/null
	echo "# collector killed; started again in 3 s"
	sleep 3
	collector_start "$d" "$cport" "http://127.0.0.1:$sink_port" || not_ok "restart: the collector did not start again"
	sleep 3
	ctxprof_stop
	rc=$?
else
	rc=$?
fi
check_eq "restart: ctxprof-go exits" 0 "$rc"
echo "# $(stats_line "$d/err")"
compare "restart" cpu "$d"
compare "restart" wall "$d"
if grep -q 'retrying with backoff' "$d/err" && grep -q 'takes requests again' "$d/err" &&
	[[ $(stats_line "$d/err") =~ [1-9][0-9]*\ retr(y|ies),\ 0\ dropped ]]; then
	ok "restart: the outage and the recovery are said once each; retries counted, nothing dropped"
else
	not_ok "restart: stderr: $(grep 'otlp' "$d/err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null

# --- 4. no collector at all ---
d=$work/absent
mkdir -p "$d"
cport=$(free_port)
# exit_after_d NAME URL: a -d 3 run against URL, from its readiness to its
# exit; the run must say it waits, not wait for a collector that took
# nothing, and fail: nothing was delivered
exit_after_d() {
	local name=$1 url=$2 t0 rc past
	shift 2
	ctxprof_start "$d/$name.err" "$d/$name.jsonl" -p "$map_pid" -F 499 -i 1 -d 3 --otlp "$url"
	t0=$EPOCHREALTIME
	wait "$ctxprof"
	rc=$?
	past=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a - 3 }')
	if [ "$rc" = 1 ] && awk -v p="$past" 'BEGIN { exit !(p <= 6) }' &&
		grep -q "ctxprof-go: otlp: sending [0-9]* requests\? to .* before exiting, for 1.0 s at most (it has answered none in this run)" "$d/$name.err" &&
		tail -n 1 "$d/$name.err" | grep -q '^ctxprof-go: failed to send OTLP profiles to '; then
		ok "$name: the run ended ${past} s after -d (at most 6), saying it waited 1 s for a collector that took nothing; exit 1"
	else
		not_ok "$name: exit $rc, ${past} s after -d; stderr: $(grep otlp "$d/$name.err" | tr '\n' ' ')"
	fi
}
exit_after_d "refusing (nothing listening)" "http://127.0.0.1:$cport"
# a collector that takes the connection and never answers: the request in
# flight ends with the run too, not at its own 10 s timeout
sport=$(free_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16); held = []
while True:
    held.append(s.accept()[0])' "$sport" &
silent=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$sport") 2>/dev/null && break; sleep 0.1; done
exit_after_d "silent (accepts, never answers)" "http://127.0.0.1:$sport"
kill "$silent" 2>/dev/null
"$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 3 --otlp "http://127.0.0.1:$cport" -o "$d/out.jsonl" 2>"$d/err"
check_eq "absent: exit status with no collector for the whole run: nothing exported" 1 "$?"
check_eq "absent: the JSON lines hold every sample" same "$(records_hold_stats "$d/out.jsonl" "$d/err")"
total=$(jq -s 'map(.samples) | add' "$d/out.jsonl")
if [[ $(stats_line "$d/err") =~ \ 0\ requests\ sent.*\ ([0-9]+)\ dropped\ \(([0-9]+)\ samples\) ]] &&
	[ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" = "$total" ]; then
	ok "absent: every request dropped and counted, with all $total samples: $(stats_line "$d/err")"
	reqs="${BASH_REMATCH[1]} requests"
	[ "${BASH_REMATCH[1]}" != 1 ] || reqs="1 request"
	check_eq "absent: the last line says what was not delivered" \
		"ctxprof-go: failed to send OTLP profiles to http://127.0.0.1:$cport/v1development/profiles: $total samples in $reqs not delivered (the statistics line says why)" \
		"$(tail -n 1 "$d/err")"
else
	not_ok "absent: statistics: $(stats_line "$d/err") (the records hold $total samples)"
fi

# --- 5. permanent errors ---
d=$work/refused
sink_start "$d/sink" -status 400 || not_ok "refused: the sink did not start"
"$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 3 --otlp "http://127.0.0.1:$sink_port" -o "$d/out.jsonl" 2>"$d/err"
check_eq "refused: exit status when the collector answers 400" 1 "$?"
said=$(grep -c 'refused a request, not retried' "$d/err")
line=$(grep -m1 'refused a request' "$d/err")
hits=$(wc -l <"$d/sink/headers.jsonl")
if [ "$said" = 1 ] && [[ $line == *"HTTP 400"*"the sink was told to answer so"* ]] &&
	[[ $(stats_line "$d/err") =~ \ 0\ retries,\ ${hits}\ dropped ]]; then
	ok "refused: one message with the collector's own ('$line'); $hits requests, each tried once"
	grep -qE "^ctxprof-go: failed to send OTLP profiles to .*: [0-9]+ samples? in $hits requests? not delivered" "$d/err" &&
		ok "refused: the last line: $(tail -n 1 "$d/err")" ||
		not_ok "refused: no line of the $hits requests not delivered: $(tail -n 1 "$d/err")"
else
	not_ok "refused: said $said times, $hits requests reached the sink; stderr: $(grep otlp "$d/err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" 2>/dev/null
d=$work/partial
sink_start "$d/sink" -reject 2 || not_ok "partial success: the sink did not start"
"$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 3 --otlp "http://127.0.0.1:$sink_port" -o "$d/out.jsonl" 2>"$d/err"
check_eq "partial success: exit status (profiles rejected)" 1 "$?"
hits=$(wc -l <"$d/sink/headers.jsonl")
if [ "$(grep -c 'took a request in part' "$d/err")" = 1 ] &&
	grep -q 'the sink was told to reject some' "$d/err" &&
	[[ $(stats_line "$d/err") =~ \ ${hits}\ requests?\ sent.*\ $((2 * hits))\ profiles?\ rejected ]]; then
	ok "partial success: said once with the collector's message; $((2 * hits)) rejected profiles counted over $hits requests"
	check_eq "partial success: the last line" \
		"ctxprof-go: failed to send OTLP profiles to http://127.0.0.1:$sink_port/v1development/profiles: $((2 * hits)) profiles rejected by the collector (the statistics line says why)" \
		"$(tail -n 1 "$d/err")"
else
	not_ok "partial success: $hits requests; stderr: $(grep otlp "$d/err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" 2>/dev/null
d=$work/wrongpath
pipeline "wrong path" "$d"
"$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 2 --otlp "http://127.0.0.1:$cport/not/here" -o "$d/out.jsonl" 2>"$d/err"
check_eq "wrong path: exit status" 1 "$?"
if [ "$(grep -c 'refused a request, not retried' "$d/err")" = 1 ] && grep -q 'HTTP 404' "$d/err" &&
	[[ $(stats_line "$d/err") =~ \ 0\ retries ]]; then
	ok "wrong path: $(grep -m1 'refused a request' "$d/err")"
else
	not_ok "wrong path: $(grep otlp "$d/err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null
# a proxy's error page: one line of it, with the status and the endpoint
d=$work/page
mkdir -p "$d"
{
	printf '<!DOCTYPE html>\n<html>\n<head>\n\t<title>501 Not Implemented</title>\n</head>\n<body>\n'
	for i in $(seq 60); do printf '<p>The method is not implemented here (line %d of the page).</p>\r\n' "$i"; done
	printf '<address>the end of the page</address>\n</body>\n</html>\n'
} >"$d/page.html"
sink_start "$d/sink" -status 501 -body "$d/page.html" || not_ok "501 page: the sink did not start"
"$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 2 --otlp "http://127.0.0.1:$sink_port" -o "$d/out.jsonl" 2>"$d/err"
rc=$?
line=$(grep 'refused a request' "$d/err")
quoted=$(sed -n 's/.* refused a request, not retried: HTTP 501: \(.*\) (said once; later refusals are counted)$/\1/p' <<<"$line")
if [ "$(grep -c 'refused a request' "$d/err")" = 1 ] &&
	[[ $line == "ctxprof-go: otlp: http://127.0.0.1:$sink_port/v1development/profiles refused a request, not retried: HTTP 501: <!DOCTYPE html> <html> <head> <title>501 Not Implemented</title> </head> <body> <p>The method"* ]] &&
	[ "$(printf '%s' "$quoted" | wc -c)" -le 203 ] && [[ $quoted == *… ]] &&
	! grep -q 'line 60 of the page\|the end of the page' "$d/err"; then
	ok "501 with a $(wc -c <"$d/page.html")-byte page: one line, the status, the endpoint and $(printf '%s' "$quoted" | wc -c) bytes of the page, cut: $line"
else
	not_ok "501 page: $(grep -c 'refused a request' "$d/err") refusal lines, the page quoted in $(printf '%s' "$quoted" | wc -c) bytes; stderr: $(head -c 3000 "$d/err")"
fi
check_eq "501 page: exit status" 1 "$rc"
kill "${sink_pid:-}" 2>/dev/null

# --- 6. TLS, with a client certificate ---
d=$work/tls
mkdir -p "$d/pki"
(
	cd "$d/pki" &&
		openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=ctxprof-test-ca -keyout ca.key -out ca.pem &&
		openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr &&
		printf 'subjectAltName=IP:127.0.0.1\n' >san.ext &&
		openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.pem &&
		openssl req -newkey rsa:2048 -nodes -subj /CN=ctxprof-go -keyout client.key -out client.csr &&
		openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out client.pem
) >"$d/openssl.log" 2>&1 || not_ok "tls: openssl: $(tail -n 2 "$d/openssl.log")"
pipeline tls "$d" "$d/pki"
OTEL_EXPORTER_OTLP_CERTIFICATE=$d/pki/ca.pem OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE=$d/pki/client.pem \
	OTEL_EXPORTER_OTLP_CLIENT_KEY=$d/pki/client.key record "$d" 3 --otlp "https://127.0.0.1:$cport"
check_eq "tls: ctxprof-go --otlp https:// exits" 0 "$rc"
compare "tls (mutual)" cpu "$d"
"$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 2 --otlp "https://127.0.0.1:$cport" -o "$d/noca.jsonl" 2>"$d/noca.err"
rc=$?
if [ "$rc" = 1 ] && [ "$(grep -c 'refused a request, not retried' "$d/noca.err")" = 1 ] &&
	grep -qi 'certificate' "$d/noca.err"; then
	ok "tls: without the CA, the collector's certificate is refused, said once: $(grep -m1 'refused' "$d/noca.err" | cut -c1-160)"
else
	not_ok "tls: without the CA: exit $rc; $(grep otlp "$d/noca.err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null

# --- 7. gzip and headers, straight to the sink ---
d=$work/gzip
sink_start "$d/sink" || not_ok "gzip: the sink did not start"
OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20s3cr3t, x-scope-orgid=tenant-7" \
	record "$d" 3 --otlp "http://127.0.0.1:$sink_port"
check_eq "gzip: ctxprof-go exits" 0 "$rc"
compare "gzip" cpu "$d"
h=$(head -n 1 "$d/sink/headers.jsonl")
check_eq "gzip: the request's Content-Encoding, unasked" gzip "$(jq -r '."content-encoding"' <<<"$h")"
check_eq "headers: OTEL_EXPORTER_OTLP_HEADERS arrive, percent-decoded" "Bearer s3cr3t|tenant-7" \
	"$(jq -r '.authorization + "|" + ."x-scope-orgid"' <<<"$h")"
check_eq "headers: the path" /v1development/profiles "$(jq -r .path <<<"$h")"
check_eq "headers: Content-Type" application/x-protobuf "$(jq -r '."content-type"' <<<"$h")"
n=$(wc -l <"$d/sink/headers.jsonl")
OTEL_EXPORTER_OTLP_COMPRESSION=none "$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 2 --otlp "http://127.0.0.1:$sink_port" \
	-o "$d/none.jsonl" 2>"$d/none.err"
check_eq "OTEL_EXPORTER_OTLP_COMPRESSION=none: the requests' Content-Encoding" "" \
	"$(tail -n +"$((n + 1))" "$d/sink/headers.jsonl" | jq -r '."content-encoding" // ""' | sort -u | tr '\n' ' ' | sed 's/ $//')"
kill "${sink_pid:-}" 2>/dev/null

# --- 8. a body limit far below one request ---
d=$work/limit
cport=$(free_port)
sink_start "$d/sink" && COLLECTOR_BODY_MAX=16384 collector_start "$d" "$cport" "http://127.0.0.1:$sink_port" ||
	not_ok "limit: the sink or the collector did not start: $(tail -n 3 "$d/collector.log" 2>/dev/null)"
ctxprof_start "$d/err" "$d/out.jsonl" -p "$map_pid,$slice_pid" -F 999 -i 10 -d 300 --otlp "http://127.0.0.1:$cport" &&
	sleep 13 && ctxprof_stop
check_eq "limit: ctxprof-go exits" 0 "$?"
echo "# $(stats_line "$d/err")"
compare "limit (16 KiB bodies, -F 999 -i 10)" cpu "$d"
refused "limit" "$d"
if [[ $(stats_line "$d/err") =~ \ 0\ dropped.*\ ([0-9]+)\ requests?\ cut\ in\ halves ]] &&
	[ "${BASH_REMATCH[1]}" -gt 0 ] && grep -q 'goes as halves: HTTP 400: .*request body too large' "$d/err"; then
	ok "limit: the collector's refusal said once, ${BASH_REMATCH[1]} requests cut in halves, none dropped"
else
	not_ok "limit: $(grep otlp "$d/err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null

# --- 9. a busy sink: 429 with Retry-After ---
d=$work/busy
sink_start "$d/sink" -busy 3s || not_ok "busy: the sink did not start"
record "$d" 6 --otlp "http://127.0.0.1:$sink_port"
check_eq "busy: ctxprof-go exits" 0 "$rc"
compare "busy (429 for 3 s)" cpu "$d"
n=$(jq -r 'select(.status == "429")' "$d/sink/headers.jsonl" | grep -c status)
if [ "$n" -gt 0 ] && [[ $(stats_line "$d/err") =~ \ ([1-9][0-9]*)\ retr(y|ies),\ 0\ dropped ]]; then
	ok "busy: $n requests answered 429, ${BASH_REMATCH[1]} retries, none dropped"
else
	not_ok "busy: $n answered 429; $(stats_line "$d/err")"
fi
kill "${sink_pid:-}" 2>/dev/null

# --- 10. /metrics ---
d=$work/metrics
sink_start "$d/sink" || not_ok "metrics: the sink did not start"
metric() { awk -v m="ctxprof_$1" '$1 == m { print $2 }' "$d/page"; }
started=$(date +%s)
if ctxprof_start "$d/err" "$d/out.jsonl" -p "$map_pid,$slice_pid" -F 499 -i 1 -d 300 \
	--otlp "http://127.0.0.1:$sink_port" --metrics-addr 127.0.0.1:0; then
	addr=$(sed -n 's|^ctxprof-go: serving /metrics on http://\([^/]*\)/metrics$|\1|p' "$d/err")
	sleep 3
	kill -STOP "$map_pid" "$slice_pid"
	# the samples of the last ticks read, written and sent: two intervals
	sleep 3
	curl -sS -o "$d/page" -D "$d/page.head" "http://$addr/metrics"
	check_eq "metrics: a page on http://$addr/metrics" 200 "$(awk 'NR == 1 { print $2 }' "$d/page.head")"
	check_eq "metrics: Prometheus's text format" "text/plain; version=0.0.4; charset=utf-8" \
		"$(sed -n 's/^Content-Type: \(.*\)\r$/\1/p' "$d/page.head")"
	check_eq "metrics: another path" 404 "$(curl -s -o /dev/null -w '%{http_code}' "http://$addr/")"
	json=$(jq -s '[.[].samples] | add // 0' "$d/out.jsonl")
	sink=$(jq -s --argjson p "$((1000000000 / 499))" '[.[] | select(.profile == "process_cpu") | .ns / $p] | add // 0 | round' "$d/sink/samples.jsonl")
	check_eq "metrics: samples taken, sent and at the sink, against the JSON lines' ($json)" \
		"$json $json $json 0 0" "$(metric samples_total) $(metric otlp_samples_sent_total) $sink $(metric otlp_samples_failed_total) $(metric otlp_requests_queued)"
	check_eq "metrics: targets" 2 "$(metric targets)"
	version=$("$CTXPROF" --version | awk '{ print $2 }')
	check_eq "metrics: build_info with the version ($version)" 1 \
		"$(awk -v m="ctxprof_build_info{version=\"$version\"}" '$1 == m { print $2 }' "$d/page")"
	self=$(awk '$1 == "process_cpu_seconds_total" || $1 == "process_resident_memory_bytes" { print $2 }' "$d/page" | tr '\n' ' ')
	if awk -v c="${self% *}" -v r="${self#* }" 'BEGIN { exit !(c > 0 && c < 600 && r > 1048576) }'; then
		ok "metrics: its own CPU seconds and resident bytes: $self"
	else
		not_ok "metrics: its own CPU seconds and resident bytes: '$self'"
	fi
	last_sent=$(metric otlp_last_sent_timestamp_seconds)
	if awk -v l="${last_sent:-0}" -v s="$started" -v n="$(date +%s)" 'BEGIN { exit !(l >= s && l <= n + 1) }'; then
		ok "metrics: the last request the collector took, at $last_sent (started at $started)"
	else
		not_ok "metrics: the last request taken: '${last_sent:-}', started at $started"
	fi
	kill -CONT "$map_pid" "$slice_pid"
	ctxprof_stop
	check_eq "metrics: ctxprof-go exits" 0 "$?"
	[[ $(stats_line "$d/err") =~ ^ctxprof-go:\ otlp:\ ([0-9]+)\ requests? ]]
	if [ "$(metric otlp_requests_sent_total)" -gt 0 ] && [ "$(metric otlp_requests_sent_total)" -le "${BASH_REMATCH[1]:-0}" ]; then
		ok "metrics: $(metric otlp_requests_sent_total) requests sent by the scrape, ${BASH_REMATCH[1]} by the end"
	else
		not_ok "metrics: $(metric otlp_requests_sent_total) requests sent by the scrape; $(stats_line "$d/err")"
	fi
else
	not_ok "metrics: ctxprof-go did not start: $(cat "$d/err")"
fi
kill -CONT "$map_pid" "$slice_pid" 2>/dev/null
out=$("$CTXPROF" -p "$map_pid" -d 1 --metrics-addr 127.0.0.1:$sink_port -o /dev/null 2>&1)
check_eq "metrics: an address in use: exit status" 1 "$?"
grep -q "failed to serve /metrics: cannot listen on '127.0.0.1:$sink_port': Address already in use" <<<"$out" &&
	ok "metrics: an address in use is said: $out" || not_ok "metrics: an address in use: $out"
kill "${sink_pid:-}" 2>/dev/null

# --- 11. requests, each with IDs of its own: the series a Pyroscope would keep ---
kill "$map_pid" "$slice_pid" 2>/dev/null
conv=$(go_build "$last" plain conventions) || { not_ok "go$last conventions: build failed"; done_testing; }
mkfifo "$work/conv.in"
"$conv" -requests -workers 4 -burn 30ms <"$work/conv.in" >"$work/conv.out" 2>/dev/null &
conv_pid=$!
exec 7>"$work/conv.in"
batches=0
echo "# testdata/conventions -requests by go$last, pid $conv_pid"

# serve DIR N URL: ctxprof-go --wall --otlp URL on the server while it serves N
# requests (their lines into DIR/requests.jsonl); its exit status in $rc
serve() {
	local dir=$1 n=$2 url=$3 before i
	mkdir -p "$dir"
	before=$(wc -l <"$work/conv.out")
	if ctxprof_start "$dir/err" "$dir/out.jsonl" -p "$conv_pid" -F 499 -i 1 -d 300 --wall --wall-hz 97 \
		--otlp "$url"; then
		echo "$n" >&7
		batches=$((batches + 1))
		for i in $(seq 1200); do
			[ "$(grep -c '"done"' "$work/conv.out")" -ge "$batches" ] && break
			sleep 0.1
		done
		ctxprof_stop
		rc=$?
	else
		rc=$?
	fi
	tail -n +"$((before + 1))" "$work/conv.out" | grep -v '"done"' >"$dir/requests.jsonl"
}

# ids_held DIR: per convention, "NAME LINKED HELD" where LINKED counts the
# samples linked to its requests and HELD those with an attribute that names
# or holds an ID of any request (its key, or its value: the IDs, the labels'
# forms of them, a 32-hex run that is a trace ID)
ids_held() {
	jq -n -r --slurpfile reqs "$1/requests.jsonl" --slurpfile smp "$1/sink/samples.jsonl" '
		($reqs | map({key: .trace_id, value: .convention}) | from_entries) as $conv
		| ([$reqs[] | .trace_id, .span_id, (.labels | to_entries[] | select(.key != "route" and .key != "span_name") | .value)]
		   | map({key: ., value: true}) | from_entries) as $id
		| ["trace id", "span id", "local root span id", "trace_id", "span_id", "otel.traceid", "otel.spanid", "otel_traceid"] as $keys
		| [$smp[] | select(.trace_id != null) | {c: ($conv[.trace_id] // "other"),
		   held: (.attributes | to_entries | any(.key as $k | .value as $v |
			($keys | index($k)) != null or $id[$v] or ([$v | scan("[0-9a-fA-F]{32}") | ascii_downcase] | any($id[.]))))}]
		| group_by(.c) | map("\(.[0].c) \(length) \(map(select(.held)) | length)") | .[]'
}

# series_of DIR: "CPU WALL ASIDS TRACES": distinct series of linked CPU samples;
# of linked wall samples, distinct label sets (their state and wait reason
# aside); the series with the IDs as attributes would have been; trace IDs at the sink
series_of() {
	jq -s -r 'map(select(.trace_id != null)) as $t
		| [($t | map(select(.profile == "process_cpu") | .series) | unique | length),
		   ($t | map(select(.profile == "wall") | .attributes | del(.state, .wait_reason)) | unique | length),
		   ($t | map(select(.profile == "process_cpu") | [.series, .trace_id, .span_id]) | unique | length),
		   ($t | map(.trace_id) | unique | length)] | @tsv' "$1/sink/samples.jsonl"
}

# label_sets DIR: the distinct label sets of the requests, their IDs aside:
# the series their samples may make
label_sets() {
	jq -s 'map(.labels | del(.["trace id"], .["span id"], .["local root span id"], .trace_id, .span_id,
		.["otel.traceid"], .["otel.spanid"], .otel_traceid)) | unique | length' "$1/requests.jsonl"
}

declare -A cpu_series wall_sets want_sets
for run in 10 200; do
	d=$work/requests-$run
	if [ "$run" = 10 ]; then
		# straight to the sink, as to a Pyroscope server: the same path and body
		sink_start "$d/sink" || not_ok "requests $run: the sink did not start"
		how="straight to the sink"
		serve "$d" "$run" "http://127.0.0.1:$sink_port"
	else
		pipeline "requests $run" "$d"
		how="through the collector"
		serve "$d" "$run" "http://127.0.0.1:$cport"
	fi
	check_eq "requests $run ($how): ctxprof-go exits" 0 "$rc"
	check_eq "requests $run: the server answered every one" "$run" "$(wc -l <"$d/requests.jsonl")"
	compare "requests $run" cpu "$d" "$conv_pid"
	compare "requests $run" wall "$d" "$conv_pid"
	refused "requests $run" "$d"
	while read -r c linked held; do
		if [ "$linked" -gt 0 ] && [ "$held" = 0 ]; then
			ok "requests $run, $c: $linked samples linked to its requests, none with an ID as an attribute"
		else
			not_ok "requests $run, $c: $held of $linked samples linked to its requests hold an ID in an attribute"
		fi
	done < <(ids_held "$d")
	n=$(ids_held "$d" | grep -c -E '^(datadog|grafana|polar|underscore) ')
	check_eq "requests $run: samples of every convention" 4 "$n"
	read -r cpu_series[$run] wall_sets[$run] as_ids traces < <(series_of "$d")
	want_sets[$run]=$(label_sets "$d")
	echo "# requests $run: ${cpu_series[$run]} CPU series, ${wall_sets[$run]} wall label sets, for $traces trace IDs at the sink; with the IDs as attributes, $as_ids series"
	kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null
done
w=${want_sets[200]}
if [ "${want_sets[10]}" = "$w" ] && [ "${cpu_series[10]}" = "$w" ] && [ "${cpu_series[200]}" = "$w" ] &&
	[ "$traces" -ge 150 ]; then
	ok "series do not grow with requests: $w CPU series after 10 requests and after 200 ($traces trace IDs), one for each label set the requests had, their IDs aside (route, and Grafana's span_name)"
else
	not_ok "CPU series: ${cpu_series[10]} after 10 requests, ${cpu_series[200]} after 200 ($traces trace IDs); the requests' label sets without IDs: ${want_sets[10]} and $w"
fi
if [ "${wall_sets[10]}" -le "$w" ] && [ "${wall_sets[200]}" -le "$w" ] && [ "${wall_sets[200]}" -gt 0 ]; then
	ok "wall label sets do not grow with requests: ${wall_sets[10]} after 10, ${wall_sets[200]} after 200 (at most $w)"
else
	not_ok "wall label sets: ${wall_sets[10]} after 10 requests, ${wall_sets[200]} after 200; want at most $w"
fi
exec 7>&-
kill "$conv_pid" 2>/dev/null
done_testing
