# SPDX-License-Identifier: GPL-2.0
# otlp-lib.sh: an OpenTelemetry Collector and an OTLP sink for the tests, built from Debian's collector sources.
# Sourced after lib.sh.
#
# make deps unpacks golang-opentelemetry-collector-dev (sid) and its Go
# dependencies into $OTELCOL_TREE/gocode, a private tree; otelcol_build
# builds testdata/otelcol (the otlp receiver, the debug and otlp_http
# exporters) and testdata/otlpsink against it in GOPATH mode, once.

OTELCOL_TREE=$OUTPUT/otelcol

# otelcol_build: sets $OTELCOL and $OTLPSINK; on failure returns 1 with the reason in $otelcol_why
otelcol_build() {
	local v go gopath prog out
	if [ ! -e "$OTELCOL_TREE/gocode/.ready" ]; then
		otelcol_why="no collector sources in $OTELCOL_TREE/gocode (make deps fetches them from sid)"
		return 1
	fi
	v=$(go_toolchains | tail -n 1)
	if [ -z "$v" ] || [ "${v#1.}" -lt 25 ]; then
		otelcol_why="the collector needs Go 1.25 or later; the newest installed is ${v:-none}"
		return 1
	fi
	go=/usr/lib/go-$v/bin/go
	gopath=$OTELCOL_TREE/gopath
	mkdir -p "$gopath/src/ctxprof.test" "$OTELCOL_TREE/bin"
	for prog in otelcol otlpsink; do
		ln -sfn "$TOP/testdata/$prog" "$gopath/src/ctxprof.test/$prog"
		out=$OTELCOL_TREE/bin/$prog
		if [ -x "$out" ] && [ -z "$(find "$TOP/testdata/$prog" "$OTELCOL_TREE/gocode/.ready" -newer "$out" | head -n 1)" ]; then
			continue
		fi
		echo "# building testdata/$prog with go$v against the collector's sources (once)" >&2
		if ! (cd "$gopath/src/ctxprof.test/$prog" &&
			GO111MODULE=off GOPATH="$gopath:$OTELCOL_TREE/gocode/usr/share/gocode" \
				"$go" build -o "$out" . >"$OTELCOL_TREE/build-$prog.log" 2>&1); then
			otelcol_why="building testdata/$prog failed: $(tail -n 3 "$OTELCOL_TREE/build-$prog.log" | tr '\n' ' ')"
			return 1
		fi
	done
	OTELCOL=$OTELCOL_TREE/bin/otelcol
	OTLPSINK=$OTELCOL_TREE/bin/otlpsink
}

# sink_start DIR [ARGS...]: the sink, writing into DIR; sets $sink_pid and $sink_port
sink_start() {
	local dir=$1 i
	shift
	mkdir -p "$dir"
	"$OTLPSINK" -out "$dir" "$@" >"$dir/sink.log" 2>&1 &
	sink_pid=$!
	for i in $(seq 100); do
		sink_port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/sink.log")
		[ -n "$sink_port" ] && return 0
		sleep 0.1
	done
	return 1
}

# collector_start DIR PORT SINK_URL [TLS_DIR]: the collector, receiving OTLP/HTTP on
# PORT (with TLS_DIR's server.pem and server.key, and client certificates of
# its ca.pem required, when given) and forwarding profiles to SINK_URL (with
# SINK_URL "-", to its debug exporter only); sets $collector_pid once it
# says it is ready. COLLECTOR_BODY_MAX, when set, is its receiver's
# max_request_body_size (bytes; 20 MiB by default).
collector_start() {
	local dir=$1 port=$2 sink=$3 tls=${4:-} i
	mkdir -p "$dir"
	{
		echo "receivers:"
		echo "  otlp:"
		echo "    protocols:"
		echo "      http:"
		echo "        endpoint: 127.0.0.1:$port"
		[ -z "${COLLECTOR_BODY_MAX:-}" ] || echo "        max_request_body_size: $COLLECTOR_BODY_MAX"
		if [ -n "$tls" ]; then
			echo "        tls:"
			echo "          cert_file: $tls/server.pem"
			echo "          key_file: $tls/server.key"
			echo "          client_ca_file: $tls/ca.pem"
		fi
		echo "exporters:"
		if [ "$sink" != - ]; then
			echo "  otlp_http:"
			echo "    endpoint: $sink"
			echo "    compression: none"
			# answered only once the sink has it: a collector killed loses nothing it took
			echo "    sending_queue:"
			echo "      enabled: false"
			echo "    retry_on_failure:"
			echo "      enabled: false"
		fi
		echo "  debug:"
		echo "    verbosity: basic"
		echo "service:"
		echo "  pipelines:"
		echo "    profiles:"
		echo "      receivers: [otlp]"
		echo "      exporters: [$([ "$sink" != - ] && echo "otlp_http, ")debug]"
		echo "  telemetry:"
		echo "    metrics:"
		echo "      level: none"
	} >"$dir/collector.yaml"
	"$OTELCOL" --config "$dir/collector.yaml" --feature-gates service.profilesSupport \
		>>"$dir/collector.log" 2>&1 &
	collector_pid=$!
	for i in $(seq 300); do
		grep -q 'Everything is ready' "$dir/collector.log" 2>/dev/null && return 0
		kill -0 "$collector_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# pipeline NAME DIR [TLS_DIR]: a sink in DIR/sink and a collector forwarding to
# it, on a free port, $cport
pipeline() {
	cport=$(free_port)
	sink_start "$2/sink" && collector_start "$2" "$cport" "http://127.0.0.1:$sink_port" ${3:+"$3"} ||
		not_ok "$1: the sink or the collector did not start: $(tail -n 3 "$2/collector.log" 2>/dev/null)"
}

# json_totals JSONL [TYPE]: {"trace or null": ns, ...} of the sampling records'
# cpu_ns (or, with TYPE wall, the wall records' wall_ns): what the sink must hold
json_totals() {
	local type=${2:-cpu}
	jq -s -S -c --arg t "$type" '
		map(select(.origin == (if $t == "wall" then "wall" else "sampling" end)))
		| group_by(.trace_id) | map({key: (.[0].trace_id // "null"),
		  value: (map(if $t == "wall" then .wall_ns else .cpu_ns end) | add)}) | from_entries' "$1"
}

# sink_totals SAMPLES_JSONL [TYPE]: the same from what the sink received, in
# nanoseconds as Pyroscope stores them (process_cpu: each sample the period
# times its count)
sink_totals() {
	local type=${2:-cpu}
	jq -s -S -c --arg p "$([ "$type" = cpu ] && echo process_cpu || echo "$type")" '
		map(select(.profile == $p)) | group_by(.trace_id) | map({key: (.[0].trace_id // "null"),
		  value: (map(.ns) | add)}) | from_entries' "$1"
}

# sink_refusals DIR: what the sink refused, as the format or Pyroscope would, one line each
sink_refusals() {
	jq -r '.refusal' "$1/refusals.jsonl" 2>/dev/null | sort | uniq -c | sed 's/^ *//'
}

# many_labels SAMPLES_JSONL PID: testdata/traced's twelve-label job (eleven
# k labels and its trace) at the sink, for PID: sets $nres (the resource
# attributes of PID, once described), $fit (the labels the budget of 25 leaves: 25 - $nres -
# 3), $want (the first $fit k labels by key, space-separated) and $got (the
# k labels its samples carry, one line a distinct set)
many_labels() {
	# the process as described: a request sent before --all described it has fewer
	# resource attributes, and its samples more labels in the same budget
	nres=$(jq -s --arg p "$2" 'map(select(.resource["process.pid"] == $p) | .resource | length) | max // 0' "$1")
	fit=$((25 - nres - 3))
	want=$(printf 'k%s\n' 0 1 2 3 4 5 6 7 8 9 10 | sort | head -n "$fit" | tr '\n' ' ' | sed 's/ $//')
	got=$(jq -r --arg p "$2" --argjson n "$nres" 'select(.resource["process.pid"] == $p and (.resource | length) == $n
		and .trace_id == "7e2c5a6f0f4d5e8a9b3c4d5e6f708192")
		| .attributes | keys | map(select(startswith("k"))) | join(" ")' "$1" | sort -u)
}
