#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# container.sh: the agent's image run as deploy/kubernetes's DaemonSet says, under Debian's podman, profiles a Go service in a container of its own.
#
# make image; then four containers, all on the host's network:
# - a Go service: testdata/traced (newest Go, plain) alone in an image,
#   in its own PID namespace;
# - a zero-code one: testdata/httpserver (newest Go, plain), no labels,
#   whose requests carry a traceparent (the trace sources' uprobes, as
#   tracefs uprobe events: the manifest mounts the host's tracefs);
# - on the host, testdata/lockedthreads, whose thread OBI's map (made
#   here as OBI makes it, unless there) says works for a trace;
# - the Collector (testdata/otelcol, built from Debian's sources as
#   tests/otlp.sh builds it) with its libraries in an image, forwarding to
#   testdata/otlpsink on the host;
# - the agent: the image with the DaemonSet's pod template read from
#   deploy/kubernetes/ctxprof-go.yaml by tests/pod-podman.py (hostPID, the
#   security context, capabilities, the seccomp profile, read-only mounts,
#   env with the node's name), not privileged; only OTLP's endpoint is this
#   test's Collector.
# Checks: make image twice leaves no image untagged (the first one's is
# removed); the image holds no shell, compiler or package manager, and its
# size is printed; its own command, run with the pod's grants but no OTLP
# endpoint, warns that the records go nowhere (the agent, with one, does
# not); the agent's container is not privileged and has exactly
# the manifest's capabilities; every trace ID of the service arrives at the
# sink, each sample of them with the service container's container.id and
# the node's name; so does every trace ID sent to the zero-code service,
# under its container.id; so does the trace OBI keeps for a thread of
# testdata/lockedthreads on the host, in traces_ctx_v1 pinned in the
# host's bpffs (the manifest mounts it); /metrics, read twice around the sink's count with no
# send between, says the samples the sink has; podman stop (the manifest's
# grace period) ends the agent with exit status 0 and delivers its last
# interval: the sink then has every sample the agent's statistics line says
# it sent, none dropped.
# podman runs with runc and cgroupfs, with rlimits no higher than the
# current ones (crun cannot start containers on these hosts: cgroup v1,
# no CAP_SYS_RESOURCE for root).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"
. "$(dirname "$0")/otlp-lib.sh"
. "$(dirname "$0")/../deploy/rootfs.sh"

e2e_setup "the agent's image under podman, as the DaemonSet runs it"
for tool in podman runc; do
	command -v "$tool" >/dev/null || { not_ok "$tool missing (make test installs it)"; done_testing; }
done
if ! otelcol_build; then
	not_ok "the collector and the sink: $otelcol_why"
	done_testing
fi
POD=(podman --runtime runc --cgroup-manager=cgroupfs)
RUN=("${POD[@]}" run -d --network host --ulimit nofile=10000:10000 --ulimit nproc=4096:4096)
names=()
cleanup_containers() {
	# --ignore: without it podman 4.3 leaves the rest once one is gone
	[ ${#names[@]} -eq 0 ] || "${POD[@]}" rm -f -t 0 --ignore "${names[@]}" >/dev/null 2>&1
}
trap 'cleanup_containers; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
tag=$$

# mini_image NAME FILE...: an image of FILEs at their paths, with the libraries they load
mini_image() {
	local name=$1 root=$work/$1 f
	shift
	mkdir -p "$root/tmp"
	chmod 1777 "$root/tmp"
	for f in "$@"; do
		mkdir -p "$root$(dirname "$f")"
		cp "$f" "$root$f"
	done
	rootfs_libs "$root" "$@" >/dev/null &&
		tar --numeric-owner --owner=0 --group=0 -C "$root" -cf "$work/$name.tar" . &&
		"${POD[@]}" import --quiet "$work/$name.tar" "localhost/ctxprof-test-$name:$tag" >/dev/null
}

# --- the image ---
# dangling: the untagged images podman has
dangling() { "${POD[@]}" images --filter dangling=true --format '{{.Id}}' --no-trunc | sort -u; }
before=$(dangling)
if out=$(make -C "$TOP" --no-print-directory image 2>&1); then
	ok "make image: $(tail -n 1 <<<"$out")"
else
	not_ok "make image failed: $(tail -n 5 <<<"$out")"
	done_testing
fi
# a second make image: the image the first one made is removed, not left untagged
first=$("${POD[@]}" image inspect --format '{{.Id}}' localhost/ctxprof-go:latest)
if out=$(make -C "$TOP" --no-print-directory image 2>&1); then
	second=$("${POD[@]}" image inspect --format '{{.Id}}' localhost/ctxprof-go:latest)
	left=$(comm -13 <(echo "$before") <(dangling) | tr '\n' ' ')
	if [ "$first" != "$second" ] && ! "${POD[@]}" image exists "$first" && [ -z "$left" ]; then
		ok "make image twice: a new image (${second:0:12}), the first (${first:0:12}) removed, no image left dangling"
	else
		not_ok "make image twice: ${first:0:12}, then ${second:0:12}; the first still there: $("${POD[@]}" image exists "$first" && echo yes || echo no); dangling since: ${left:-none}"
	fi
else
	not_ok "make image, a second time, failed: $(tail -n 5 <<<"$out")"
fi
files=$("${POD[@]}" run --rm --ulimit nofile=10000:10000 --ulimit nproc=4096:4096 --entrypoint /usr/bin/ctxprof-go \
	localhost/ctxprof-go:latest --version 2>&1)
check_eq "the image runs ctxprof-go --version, the build's" "$("$CTXPROF" --version)" "$files"
cid=$("${POD[@]}" create localhost/ctxprof-go:latest)
listing=$("${POD[@]}" export "$cid" | tar -t)
"${POD[@]}" rm "$cid" >/dev/null
found=$(grep -E '(^|/)(sh|bash|dash|busybox|apt|apt-get|dpkg|gcc|cc|clang|ld|go)$' <<<"$listing" | tr '\n' ' ')
check_eq "the image holds no shell, package manager or compiler" "" "$found"
check_eq "the image's default command: the agent" \
	'["/usr/bin/ctxprof-go"] ["--all","--metrics-addr",":9464","-o","/dev/null"]' \
	"$("${POD[@]}" image inspect --format '{{json .Config.Entrypoint}} {{json .Config.Cmd}}' localhost/ctxprof-go:latest)"
echo "# the image: $("${POD[@]}" image inspect --format '{{.Size}}' localhost/ctxprof-go:latest) bytes, $(wc -l <<<"$listing") entries"

# --- the service, the Collector, the sink ---
last=$(go_toolchains | tail -n 1)
svc_bin=$(go_build "$last" plain) || { not_ok "go$last traced: build failed"; done_testing; }
mini_image svc "$svc_bin" || { not_ok "the service's image"; done_testing; }
mini_image col "$OTELCOL" || { not_ok "the collector's image"; done_testing; }
sink_start "$work/sink" || { not_ok "the sink did not start"; done_testing; }
cport=$(free_port)
collector_config() {
	cat <<EOF
receivers: {otlp: {protocols: {http: {endpoint: "127.0.0.1:$cport"}}}}
exporters:
  otlp_http: {endpoint: "http://127.0.0.1:$sink_port", compression: none, sending_queue: {enabled: false}, retry_on_failure: {enabled: false}}
service:
  pipelines: {profiles: {receivers: [otlp], exporters: [otlp_http]}}
  telemetry: {metrics: {level: none}}
EOF
}
collector_config >"$work/collector.yaml"
names+=(ctxprof-test-col-$tag ctxprof-test-svc-$tag ctxprof-test-agent-$tag)
"${RUN[@]}" --name "ctxprof-test-col-$tag" -v "$work/collector.yaml:/conf.yaml:ro" \
	"localhost/ctxprof-test-col:$tag" "$OTELCOL" --config /conf.yaml --feature-gates service.profilesSupport >/dev/null ||
	not_ok "the collector's container did not start"
for _ in $(seq 300); do
	"${POD[@]}" logs "ctxprof-test-col-$tag" 2>&1 | grep -q 'Everything is ready' && break
	sleep 0.1
done
svc_id=$("${RUN[@]}" --name "ctxprof-test-svc-$tag" "localhost/ctxprof-test-svc:$tag" "$svc_bin" -d 600s)
# the zero-code service: no labels, a traceparent on each request
zc_bin=$(go_build "$last" plain httpserver) || { not_ok "go$last httpserver: build failed"; done_testing; }
mini_image zc "$zc_bin" || { not_ok "the zero-code service's image"; done_testing; }
names+=(ctxprof-test-zc-$tag)
zc_id=$("${RUN[@]}" --name "ctxprof-test-zc-$tag" "localhost/ctxprof-test-zc:$tag" "$zc_bin" -burn 50ms)
zc_port=
for _ in $(seq 100); do
	zc_port=$("${POD[@]}" logs "$zc_id" 2>/dev/null | awk '$1 == "http" { print $2 }')
	[ -n "$zc_port" ] && break
	sleep 0.1
done
# the manifest mounts the host's tracefs: it must be there
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
svc_pid=$("${POD[@]}" inspect --format '{{.State.Pid}}' "$svc_id")
check_eq "the service runs in a PID namespace of its own" 1 \
	"$(awk '/^NSpid:/ { print $NF }' "/proc/$svc_pid/status" 2>/dev/null)"

# OBI on the host: its traces_ctx_v1 in the host's bpffs, which the
# manifest mounts (made and pinned here as OBI does, unless it is there);
# a thread of testdata/lockedthreads, on the host, works for OBI_TRACE
OBI_TRACE=0b100000000000000000000000c0de01 OBI_SPAN=0b10000000c0de01
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
obi_map=/sys/fs/bpf/otel/traces_ctx_v1
made_obi=
if [ ! -e "$obi_map" ]; then
	mkdir -p -m 1700 /sys/fs/bpf/otel && made_obi=1
	bpftool map create "$obi_map" type lru_hash key 8 value 24 entries 16384 name traces_ctx_v1 ||
		not_ok "bpftool could not pin OBI's map at $obi_map"
fi
lt_bin=$(go_build "$last" plain lockedthreads) || not_ok "go$last lockedthreads: build failed"
"$lt_bin" -d 600s >"$work/tids" 2>/dev/null &
lt_pid=$!
wait_line "$work/tids" '^unlabeled [0-9]+$' 100
lt_key=$(pid_tgid_key "$lt_pid" "$(sed -n 's/^unlabeled //p' "$work/tids")")
obi_done() {
	# shellcheck disable=SC2086
	bpftool map delete pinned "$obi_map" key hex $lt_key 2>/dev/null
	[ -z "$made_obi" ] || rm -rf /sys/fs/bpf/otel
}
trap 'obi_done; cleanup_containers; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
# shellcheck disable=SC2046,SC2086
bpftool map update pinned "$obi_map" key hex $lt_key value hex $(sed 's/../& /g' <<<"$OBI_TRACE$OBI_SPAN") ||
	not_ok "bpftool could not write OBI's entry"

# --- the agent, as the DaemonSet's pod template says ---
node=$(hostname)
mapfile -t args < <(python3 "$TOP/tests/pod-podman.py" "$TOP/deploy/kubernetes/ctxprof-go.yaml" agent "$node" \
	"$TOP/deploy/kubernetes" "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$cport")
[ ${#args[@]} -gt 2 ] || { not_ok "the DaemonSet's pod template could not be read"; done_testing; }
grace=${args[0]}

# the image's own command (-o /dev/null) with the pod's grants and no
# OTLP endpoint keeps no record: it says so. In a network of its own, its
# :9464 is not the agent's.
bare=()
for ((i = 1; i < ${#args[@]}; i++)); do
	case ${args[i]} in
	localhost/ctxprof-go:latest) break ;;
	OTEL_EXPORTER_OTLP_ENDPOINT=*) unset 'bare[-1]' ;;
	*) bare+=("${args[i]}") ;;
	esac
done
names+=(ctxprof-test-bare-$tag)
if bare_id=$("${POD[@]}" run -d --ulimit nofile=10000:10000 --ulimit nproc=4096:4096 --name "ctxprof-test-bare-$tag" \
	"${bare[@]}" localhost/ctxprof-go:latest); then
	for _ in $(seq 600); do
		"${POD[@]}" logs "$bare_id" 2>&1 | grep -q 'Ctrl-C to stop' && break
		"${POD[@]}" inspect --format '{{.State.Running}}' "$bare_id" | grep -q true || break
		sleep 0.1
	done
	check_eq "the image's command with no OTLP endpoint: a warning that the records go nowhere" \
		"ctxprof-go: warning: the records go nowhere: -o /dev/null, and no OTLP endpoint (give --otlp URL or set OTEL_EXPORTER_OTLP_ENDPOINT); /metrics serves counts, not records" \
		"$("${POD[@]}" logs "$bare_id" 2>&1 | grep 'records go nowhere')"
	"${POD[@]}" rm -f -t 0 "$bare_id" >/dev/null 2>&1
else
	not_ok "the image's command, with no OTLP endpoint, did not start"
fi
echo "# podman run ${args[*]:1}"
agent=$("${RUN[@]}" --name "ctxprof-test-agent-$tag" "${args[@]:1}") || { not_ok "the agent did not start"; done_testing; }
for _ in $(seq 600); do
	"${POD[@]}" logs "$agent" 2>&1 | grep -q 'Ctrl-C to stop' && break
	"${POD[@]}" inspect --format '{{.State.Running}}' "$agent" | grep -q true || break
	sleep 0.1
done
"${POD[@]}" logs "$agent" 2>&1 | sed 's/^/# agent: /' | head -n 5
check_eq "the agent, with its OTLP endpoint: no warning that the records go nowhere" 0 \
	"$("${POD[@]}" logs "$agent" 2>&1 | grep -c 'records go nowhere')"
check_eq "the agent's container is not privileged" false "$("${POD[@]}" inspect --format '{{.HostConfig.Privileged}}' "$agent")"
check_eq "the agent's capabilities are the manifest's" "CAP_BPF CAP_CHECKPOINT_RESTORE CAP_DAC_READ_SEARCH CAP_PERFMON CAP_SYS_NICE CAP_SYS_PTRACE" \
	"$("${POD[@]}" inspect --format '{{range .EffectiveCaps}}{{.}} {{end}}' "$agent" | tr ' ' '\n' | grep . | sort | tr '\n' ' ' | sed 's/ $//')"
traces=$(sed -n 's/^\t[A-Za-z]* *= "\([0-9a-f]\{32\}\)"$/\1/p' "$TOP/testdata/traced/main.go" | sort -u)
# requests to the zero-code service, each under a trace ID of its own
zc_traces=$(for i in 1 2 3 4 5; do printf 'c0de%028x\n' "$i"; done)
for t in $zc_traces; do
	curl -sS --max-time 30 -o /dev/null -H "traceparent: 00-$t-00f067aa0ba902b7-01" "http://$zc_port/work" ||
		not_ok "a request to the zero-code service failed"
done
# svc_traces: the service's trace IDs at the sink
svc_traces() {
	jq -r --arg c "$svc_id" 'select(.resource["container.id"] == $c) | .trace_id // empty' \
		"$work/sink/samples.jsonl" 2>/dev/null | sort -u
}
for _ in $(seq 60); do
	[ "$(svc_traces | grep -cFx -f <(echo "$traces"))" -eq "$(wc -l <<<"$traces")" ] && break
	sleep 1
done
check_eq "every trace ID of the service arrives, under its container.id" "$(tr '\n' ' ' <<<"$traces")" \
	"$(svc_traces | grep -Fx -f <(echo "$traces") | tr '\n' ' ')"
# zc_got: the zero-code service's trace IDs at the sink
zc_got() {
	jq -r --arg c "$zc_id" 'select(.resource["container.id"] == $c) | .trace_id // empty' \
		"$work/sink/samples.jsonl" 2>/dev/null | sort -u
}
for _ in $(seq 30); do
	[ "$(zc_got | grep -cFx -f <(echo "$zc_traces"))" -eq 5 ] && break
	sleep 1
done
check_eq "every trace ID of the zero-code service (traceparent, no labels) arrives, under its container.id" \
	"$(tr '\n' ' ' <<<"$zc_traces")" "$(zc_got | grep -Fx -f <(echo "$zc_traces") | tr '\n' ' ')"
# obi_got: the trace IDs at the sink of testdata/lockedthreads on the host
obi_got() {
	jq -r --arg p "$lt_pid" 'select((.resource["process.pid"] | tostring) == $p) | .trace_id // empty' \
		"$work/sink/samples.jsonl" 2>/dev/null | sort -u
}
for _ in $(seq 30); do
	obi_got | grep -qFx "$OBI_TRACE" && break
	sleep 1
done
check_eq "OBI's trace ID for a thread, from its map in the host's bpffs, arrives: the obi source in the pod" \
	"$OBI_TRACE" "$(obi_got | grep -Fx "$OBI_TRACE")"
check_eq "the service's samples carry the node's name (the downward API's, through OTEL_RESOURCE_ATTRIBUTES)" "$node" \
	"$(jq -r --arg c "$svc_id" 'select(.resource["container.id"] == $c) | .resource["k8s.node.name"]' "$work/sink/samples.jsonl" | sort -u | tr '\n' ' ' | sed 's/ $//')"

# /metrics against the sink: two reads with nothing queued or in flight
# and no request sent between them
period=$((1000000000 / 99))
sink_samples() { jq -s --argjson p "$period" '[.[] | select(.profile == "process_cpu") | .ns / $p] | add // 0 | round' "$work/sink/samples.jsonl"; }
# page: the samples sent, when no request is queued or in flight (the
# sink may hold one the collector has not yet answered for)
page() {
	curl -s "http://127.0.0.1:9464/metrics" | awk '$1 == "ctxprof_otlp_samples_sent_total" { sent = $2 }
		$1 == "ctxprof_otlp_requests_queued" { queued = $2 } END { if (queued == "0") print sent }'
}
same=
for _ in $(seq 10); do
	a=$(page)
	s=$(sink_samples)
	b=$(page)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		same="$a $s"
		break
	fi
	sleep 1
done
if [ -n "$same" ] && [ "${same% *}" = "${same#* }" ] && [ "${same% *}" -gt 0 ]; then
	ok "/metrics: ${same% *} samples sent, the sink has ${same#* }"
else
	not_ok "/metrics against the sink: samples sent and at the sink: ${same:-never steady}"
fi

# podman stop: SIGTERM, the last interval sent within the grace period
"${POD[@]}" stop -t "$grace" "$agent" >/dev/null
check_eq "podman stop -t $grace: the agent's exit status" 0 "$("${POD[@]}" inspect --format '{{.State.ExitCode}}' "$agent")"
"${POD[@]}" logs "$agent" >"$work/agent.log" 2>&1
line=$(grep -E '^ctxprof-go: otlp: [0-9]+ requests? sent' "$work/agent.log" | tail -n 1)
echo "# $line"
if [[ $line =~ \(([0-9]+)\ samples,.*\ 0\ dropped ]] && [ "$(sink_samples)" = "${BASH_REMATCH[1]}" ]; then
	ok "podman stop: every sample the agent sent is at the sink (${BASH_REMATCH[1]}), none dropped"
else
	not_ok "podman stop: the agent says '$line', the sink has $(sink_samples)"
fi
kill "$sink_pid" 2>/dev/null
"${POD[@]}" rmi -f "localhost/ctxprof-test-svc:$tag" "localhost/ctxprof-test-col:$tag" \
	"localhost/ctxprof-test-zc:$tag" >/dev/null 2>&1
done_testing
