#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# otlp.sh: --otlp through a real OpenTelemetry Collector (0.152, built from Debian's sources) to a sink that decodes with pdata.
#
# Targets: testdata/traced built by the oldest toolchain (labels in a map)
# and the newest (labels in a slice), plain, busy for the whole test, one of
# them with OTEL_SERVICE_NAME set. The collector receives OTLP/HTTP and
# forwards to testdata/otlpsink, which decodes each request with the
# collector's own pdata and writes one JSON line per sample, its link and
# stack resolved. Cases:
# 1. CPU: per trace ID, the CPU time the sink received equals the JSON lines
#    of the same run, for each target; every sample carries the time it was
#    taken; resource attributes are the target's.
# 2. Wall: with --wall, the same for wall time, state and wait_reason
#    arrive as attributes, and wall samples carry their snapshots' times.
# 3. Collector restart: the collector is killed mid-run and started again
#    3 s later; the per-trace totals, CPU and wall, still match, and
#    retries are counted.
# 4. No collector: exit 0, the JSON lines whole, every request and sample
#    counted as dropped.
# 5. Permanent errors: a sink answering 400, and a wrong path at the
#    collector (404): one clear message, no retry, requests counted. A
#    partial success is said once and its rejected profiles counted.
# 6. TLS: a self-signed CA, the collector's TLS receiver requiring a client
#    certificate (mTLS); without the CA the certificate is refused, once.
# 7. gzip and headers, straight to the sink: it sees Content-Encoding gzip
#    and the OTEL_EXPORTER_OTLP_HEADERS, and decodes the same totals.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"
. "$(dirname "$0")/otlp-lib.sh"

e2e_setup "OTLP profiles through a collector"
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

# compare NAME TYPE DIR: per target and per trace ID, the sink's totals against the JSON lines
compare() {
	local name=$1 type=$2 dir=$3 pid want got i
	for pid in $map_pid $slice_pid; do
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

# --- 1. CPU through the collector ---
d=$work/cpu
pipeline cpu "$d"
OTEL_RESOURCE_ATTRIBUTES="k8s.node.name=node-7,deployment.environment=test%20lab" \
	record "$d" 4 --otlp "http://127.0.0.1:$cport"
check_eq "cpu: ctxprof-go --otlp exits" 0 "$rc"
echo "# $(stats_line "$d/err")"
compare "cpu" cpu "$d"
# every CPU sample's own time, within its records' span
for pid in $map_pid $slice_pid; do
	want=$(pid_records "$d/out.jsonl" "$pid" | jq -s 'map(select(.origin == "sampling") | .samples) | add')
	got=$(pid_samples "$d/sink/samples.jsonl" "$pid" | jq -s 'map(select(.type == "cpu") | .timestamps) | add')
	read -r lo hi < <(pid_records "$d/out.jsonl" "$pid" |
		jq -s -r '[(map(.start | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) | min),
			   (map(.end | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) | max) + 1] | @tsv')
	out=$(pid_samples "$d/sink/samples.jsonl" "$pid" | jq -s --argjson lo "$lo" --argjson hi "$hi" \
		'map(select(.type == "cpu" and (.time_min / 1e9 < $lo or .time_max / 1e9 > $hi))) | length')
	if [ "$got" = "$want" ] && [ "$out" = 0 ]; then
		ok "cpu, pid $pid: every sample carries its time ($got timestamps for $got samples), all within the records' span"
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
	and .attributes.trace_source == "label" and (.frames | any(startswith("main.burnDo "))))) | length' "$d/sink/samples.jsonl")
if [ "$n" -gt 0 ]; then
	ok "cpu: main.burnDo's samples are linked to its trace and span, with trace_source label ($n samples)"
else
	not_ok "cpu: no sample of main.burnDo linked to 4bf92f35.../00f067aa..."
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
n=$(jq -s 'map(select(.type == "wall" and .attributes.state != null)) | length' "$d/sink/samples.jsonl")
m=$(jq -s 'map(select(.type == "wall" and .attributes.state == "waiting" and .attributes.wait_reason != null)) | length' "$d/sink/samples.jsonl")
if [ "$n" -gt 0 ] && [ "$m" -gt 0 ]; then
	ok "wall: every wall sample has its state ($n), the waiting ones their wait_reason ($m)"
else
	not_ok "wall: wall samples with a state: $n, waiting with a wait_reason: $m"
fi
# a goroutine's sample times are its snapshots' (none for a run a snapshot missed)
for pid in $map_pid $slice_pid; do
	want=$(pid_records "$d/out.jsonl" "$pid" | jq -s 'map(select(.origin == "wall") | .samples) | add')
	got=$(pid_samples "$d/sink/samples.jsonl" "$pid" | jq -s 'map(select(.type == "wall") | .timestamps) | add')
	if [ "$want" -gt 0 ] && [ $((100 * got)) -ge $((99 * want)) ] && [ "$got" -le "$want" ]; then
		ok "wall, pid $pid: $got of $want wall samples carry the time of their snapshot (at least 99%)"
	else
		not_ok "wall, pid $pid: $got timestamps for $want wall samples"
	fi
done
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
	[[ $(stats_line "$d/err") =~ [1-9][0-9]*\ retries,\ 0\ dropped ]]; then
	ok "restart: the outage and the recovery are said once each; retries counted, nothing dropped"
else
	not_ok "restart: stderr: $(grep 'otlp' "$d/err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null

# --- 4. no collector at all ---
d=$work/absent
mkdir -p "$d"
cport=$(free_port)
"$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 3 --otlp "http://127.0.0.1:$cport" -o "$d/out.jsonl" 2>"$d/err"
check_eq "absent: exit status with no collector for the whole run" 0 "$?"
check_eq "absent: the JSON lines hold every sample" same "$(records_hold_stats "$d/out.jsonl" "$d/err")"
total=$(jq -s 'map(.samples) | add' "$d/out.jsonl")
if [[ $(stats_line "$d/err") =~ \ 0\ requests\ sent.*\ ([0-9]+)\ dropped\ \(([0-9]+)\ samples\) ]] &&
	[ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" = "$total" ]; then
	ok "absent: every request dropped and counted, with all $total samples: $(stats_line "$d/err")"
else
	not_ok "absent: statistics: $(stats_line "$d/err") (the records hold $total samples)"
fi

# --- 5. permanent errors ---
d=$work/refused
sink_start "$d/sink" -status 400 || not_ok "refused: the sink did not start"
"$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 3 --otlp "http://127.0.0.1:$sink_port" -o "$d/out.jsonl" 2>"$d/err"
check_eq "refused: exit status when the collector answers 400" 0 "$?"
said=$(grep -c 'refused a request, not retried' "$d/err")
line=$(grep -m1 'refused a request' "$d/err")
hits=$(wc -l <"$d/sink/headers.jsonl")
if [ "$said" = 1 ] && [[ $line == *"HTTP 400"*"the sink was told to answer so"* ]] &&
	[[ $(stats_line "$d/err") =~ \ 0\ retries,\ ${hits}\ dropped ]]; then
	ok "refused: one message with the collector's own ('$line'); $hits requests, each tried once"
else
	not_ok "refused: said $said times, $hits requests reached the sink; stderr: $(grep otlp "$d/err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" 2>/dev/null
d=$work/partial
sink_start "$d/sink" -reject 2 || not_ok "partial success: the sink did not start"
"$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 3 --otlp "http://127.0.0.1:$sink_port" -o "$d/out.jsonl" 2>"$d/err"
check_eq "partial success: exit status" 0 "$?"
hits=$(wc -l <"$d/sink/headers.jsonl")
if [ "$(grep -c 'took a request in part' "$d/err")" = 1 ] &&
	grep -q 'the sink was told to reject some' "$d/err" &&
	[[ $(stats_line "$d/err") =~ \ ${hits}\ requests\ sent.*\ $((2 * hits))\ profiles\ rejected ]]; then
	ok "partial success: said once with the collector's message; $((2 * hits)) rejected profiles counted over $hits requests"
else
	not_ok "partial success: $hits requests; stderr: $(grep otlp "$d/err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" 2>/dev/null
d=$work/wrongpath
pipeline "wrong path" "$d"
"$CTXPROF" -p "$map_pid" -F 499 -i 1 -d 2 --otlp "http://127.0.0.1:$cport/not/here" -o "$d/out.jsonl" 2>"$d/err"
check_eq "wrong path: exit status" 0 "$?"
if [ "$(grep -c 'refused a request, not retried' "$d/err")" = 1 ] && grep -q 'HTTP 404' "$d/err" &&
	[[ $(stats_line "$d/err") =~ \ 0\ retries ]]; then
	ok "wrong path: $(grep -m1 'refused a request' "$d/err")"
else
	not_ok "wrong path: $(grep otlp "$d/err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null

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
if [ "$(grep -c 'refused a request, not retried' "$d/noca.err")" = 1 ] &&
	grep -qi 'certificate' "$d/noca.err"; then
	ok "tls: without the CA, the collector's certificate is refused, said once: $(grep -m1 'refused' "$d/noca.err" | cut -c1-160)"
else
	not_ok "tls: without the CA: $(grep otlp "$d/noca.err" | tr '\n' ' ')"
fi
kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null

# --- 7. gzip and headers, straight to the sink ---
d=$work/gzip
sink_start "$d/sink" || not_ok "gzip: the sink did not start"
OTEL_EXPORTER_OTLP_COMPRESSION=gzip OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer%20s3cr3t, x-scope-orgid=tenant-7" \
	record "$d" 3 --otlp "http://127.0.0.1:$sink_port"
check_eq "gzip: ctxprof-go exits" 0 "$rc"
compare "gzip" cpu "$d"
h=$(head -n 1 "$d/sink/headers.jsonl")
check_eq "gzip: the request's Content-Encoding" gzip "$(jq -r '."content-encoding"' <<<"$h")"
check_eq "headers: OTEL_EXPORTER_OTLP_HEADERS arrive, percent-decoded" "Bearer s3cr3t|tenant-7" \
	"$(jq -r '.authorization + "|" + ."x-scope-orgid"' <<<"$h")"
check_eq "headers: the path" /v1development/profiles "$(jq -r .path <<<"$h")"
check_eq "headers: Content-Type" application/x-protobuf "$(jq -r '."content-type"' <<<"$h")"
kill "${sink_pid:-}" 2>/dev/null

kill "$map_pid" "$slice_pid" 2>/dev/null
done_testing
