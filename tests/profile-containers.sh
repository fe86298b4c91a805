#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-containers.sh: Go processes in containers made by hand: container_id, pod_uid, ns_pid, and --cgroup.
#
# Build: testdata/traced by the newest installed toolchain, pure Go, so that
# the container's root needs nothing but the binary. Two containers, as a
# runtime makes them: each target runs in its own PID and mount namespaces,
# chrooted into an overlayfs root that only its mount namespace has, in a
# cgroup v2 directory named as Docker's systemd driver names it
# (system.slice/docker-<64 hex>.scope) or as the kubelet and containerd name
# a pod's container (kubepods.slice/.../kubepods-besteffort-pod<uid>.slice/
# cri-containerd-<64 hex>.scope). Two runs at once: --all, where each
# target must be attributed as in profile-e2e.sh and carry its container's
# ID, its pod's UID (null for Docker's) and ns_pid 1; and --all --cgroup of
# the Docker container, whose records must all be that target's. The --all
# run also sends OTLP through a collector (tests/otlp.sh's): each
# container's resource carries its container.id, k8s.pod.uid and
# process.vpid, and its per-trace CPU equals the JSON lines; with five
# OTEL_RESOURCE_ATTRIBUTES beside those, the pod's samples stay within 25
# attributes, its twelve-label job keeping the first labels by key that
# fit, and the rest are counted on the statistics line.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"
. "$(dirname "$0")/otlp-lib.sh"

e2e_setup "containers: container_id, pod_uid, ns_pid and --cgroup"
if ! why=$(private_mounts_why); then
	skip "containers: container_id, pod_uid, ns_pid and --cgroup" "$why"
	done_testing
fi
mounts=() # innermost last
cgroups=()
containers=() # their first processes: killing one ends its PID namespace
cleanup() {
	local i
	# unshare --fork blocks SIGTERM while it waits for its child
	kill -KILL "${containers[@]}" 2>/dev/null
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	for ((i = ${#cgroups[@]} - 1; i >= 0; i--)); do
		rmdir "${cgroups[i]}" 2>/dev/null
	done
	unmount_all
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

v=$(go_toolchains | tail -n 1)
if [ -z "$v" ]; then
	not_ok "no Go toolchain installed (make deps installs them)"
	done_testing
fi
bin=$(go_build "$v" plain) || { not_ok "build go$v plain"; done_testing; }
echo "# testdata/traced built by go$v, plain"

# the cgroup v2 hierarchy: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a
# hybrid host; mounted here when the machine has none
cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -z "$cg" ]; then
	mkdir "$work/cgroup2"
	if ! why=$(mount -t cgroup2 none "$work/cgroup2" 2>&1); then
		skip "containers" "no cgroup v2 hierarchy, and mounting one failed: $why"
		done_testing
	fi
	mounts+=("$work/cgroup2")
	cg=$work/cgroup2
fi
echo "# cgroup v2 hierarchy at $cg"

# the layers of both containers' roots, on a tmpfs of their own: overlayfs
# takes any upper file system but another overlay, which / may be
mkdir "$work/layers"
if ! why=$(mount -t tmpfs -o size=64m ctxprof-layers "$work/layers" 2>&1); then
	not_ok "tmpfs for the layers: $why"
	done_testing
fi
mounts+=("$work/layers")
mkdir "$work/layers/image"
cp "$bin" "$work/layers/image/traced"

hex64() { od -An -N32 -tx1 /dev/urandom | tr -d ' \n'; }
docker_id=$(hex64)
k8s_id=$(hex64)
pod=$(cat /proc/sys/kernel/random/uuid)
docker_cg=$cg/ctxprof-test.slice/docker-$docker_id.scope
pod_cg=$cg/ctxprof-kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${pod//-/_}.slice
k8s_cg=$pod_cg/cri-containerd-$k8s_id.scope
for d in "$cg/ctxprof-test.slice" "$docker_cg" "$cg/ctxprof-kubepods.slice" \
	"$cg/ctxprof-kubepods.slice/kubepods-besteffort.slice" "$pod_cg" "$k8s_cg"; do
	if ! why=$(mkdir "$d" 2>&1); then
		not_ok "cgroup $d: $why"
		done_testing
	fi
	cgroups+=("$d")
done

# start_container NAME CGROUP: the target, PID 1 of its own PID namespace,
# in a mount namespace where its overlayfs root exists, in CGROUP from before
# its exec, as a runtime does it. Sets $cpid to the target's host pid.
start_container() {
	local name=$1 dir=$work/layers/$1 pid t
	mkdir -p "$dir/upper" "$dir/work" "$work/$name-root"
	# the shell moves itself into the cgroup, then becomes unshare; the
	# mount propagates nowhere: the host keeps an empty directory
	nice -n 10 sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$2" \
		unshare --pid --fork --mount --propagation private sh -c \
		'mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4" || exit
		 root=$4; shift 4; exec chroot "$root" /traced "$@"' sh \
		"$work/layers/image" "$dir/upper" "$dir/work" "$work/$name-root" \
		-d 300s -workers 4 >/dev/null 2>"$work/$name.err" &
	# unshare forks the namespace's first process; it runs traced in the end
	for ((t = 0; t < 100; t++)); do
		for pid in $(pgrep -P $! 2>/dev/null); do
			if [ "$(cat /proc/$pid/comm 2>/dev/null)" = traced ]; then
				cpid=$pid
				containers+=("$pid")
				return 0
			fi
		done
		sleep 0.1
	done
	return 1
}

# the --all run's OTLP goes through a collector
otlp=()
if otelcol_build; then
	pipeline "containers, OTLP" "$work/otlp"
	otlp=(--otlp "http://127.0.0.1:$cport")
else
	not_ok "containers, OTLP: $otelcol_why"
fi

# both ctxprof-go runs start before the containers, as an agent would be
# five resource attributes, as a Kubernetes agent sets them: the label budget is then at its tightest
OTEL_RESOURCE_ATTRIBUTES="k8s.namespace.name=shop,k8s.pod.name=checkout-7d9,k8s.container.name=app,k8s.node.name=node-7,k8s.deployment.name=checkout" \
	ctxprof_start "$work/all.err" "$work/all.jsonl" --all -F 999 -i 1 -d 300 "${otlp[@]}" ||
	{ not_ok "ctxprof-go --all did not start: $(tr '\n' ' ' <"$work/all.err")"; done_testing; }
all_pid=$ctxprof
ctxprof_start "$work/one.err" "$work/one.jsonl" --all --cgroup "$docker_cg" -F 999 -i 1 -d 300 ||
	{ not_ok "ctxprof-go --all --cgroup did not start: $(tr '\n' ' ' <"$work/one.err")"; done_testing; }
one_pid=$ctxprof

if ! start_container docker "$docker_cg"; then
	not_ok "Docker-style container did not start: $(tr '\n' ' ' <"$work/docker.err")"
	done_testing
fi
docker_pid=$cpid
if ! start_container k8s "$k8s_cg"; then
	not_ok "Kubernetes-style container did not start: $(tr '\n' ' ' <"$work/k8s.err")"
	done_testing
fi
k8s_pid=$cpid
for pid in "$docker_pid" "$k8s_pid"; do
	echo "# pid $pid: $(grep NSpid /proc/$pid/status | tr '\t' ' '), cgroup $(sed -n 's/^0:://p' /proc/$pid/cgroup)," \
		"executable $(readlink /proc/$pid/exe) (on the host, that directory is empty: $(ls -A "$work/docker-root" | wc -l) entries)"
done

# each run until it has what its checks need
enough_all() { jobs_enough 20 2 "$1"; }
enough_one() { jobs_enough 20 1 "$1"; }
ctxprof=$all_pid
samples_wait 5 120 enough_all "$work/all.jsonl"
ctxprof=$one_pid
samples_wait 0 60 enough_one "$work/one.jsonl"
kill -KILL "${containers[@]}"
for ctxprof in "$all_pid" "$one_pid"; do
	ctxprof_stop
	rc=$?
	check_eq "ctxprof-go $([ "$ctxprof" = "$one_pid" ] && echo "--all --cgroup" || echo --all) exits" 0 "$rc"
done
sed 's/^/# --all: /' "$work/all.err"
sed 's/^/# --cgroup: /' "$work/one.err"

for f in all one; do
	if ! jq -e . "$work/$f.jsonl" >/dev/null; then
		not_ok "$f: output is not valid JSON lines"
		done_testing
	fi
done
schema_verdict "records with container_id, pod_uid and ns_pid" "$work/all.jsonl"

# fields_of JSONL PID: the distinct container_id, pod_uid and ns_pid of PID's records
fields_of() {
	jq -s -r --argjson pid "$2" 'map(select(.pid == $pid)) | map("\(.container_id) \(.pod_uid) \(.ns_pid)") |
		unique | join(", ")' "$1"
}
jq -c --argjson pid "$docker_pid" 'select(.pid == $pid)' "$work/all.jsonl" >"$work/p.jsonl"
job_verdicts "--all: Docker-style container (pid $docker_pid)" "$work/p.jsonl" 20
check_eq "--all: Docker-style container's container_id, pod_uid, ns_pid" \
	"$docker_id null 1" "$(fields_of "$work/all.jsonl" "$docker_pid")"
jq -c --argjson pid "$k8s_pid" 'select(.pid == $pid)' "$work/all.jsonl" >"$work/p.jsonl"
job_verdicts "--all: Kubernetes-style container (pid $k8s_pid)" "$work/p.jsonl" 20
check_eq "--all: Kubernetes-style container's container_id, pod_uid, ns_pid" \
	"$k8s_id $pod 1" "$(fields_of "$work/all.jsonl" "$k8s_pid")"
# the host's own processes are no container's
n=$(jq -s --argjson a "$docker_pid" --argjson b "$k8s_pid" \
	'map(select(.pid != $a and .pid != $b and (.container_id != null or .ns_pid != null))) | length' "$work/all.jsonl")
check_eq "--all: records of other processes with a container_id or ns_pid" 0 "$n"

# resource_of PID: container.id pod_uid vpid of PID's resource at the sink
resource_of() {
	jq -s -r --arg p "$1" 'map(select(.resource["process.pid"] == $p) | .resource
		| "\(."container.id" // "null") \(."k8s.pod.uid" // "null") \(."process.vpid" // "null")") | unique | join(", ")' \
		"$work/otlp/sink/samples.jsonl"
}
if [ "${#otlp[@]}" -gt 0 ]; then
	for pid in "$docker_pid" "$k8s_pid"; do
		want=$(json_totals <(jq -c --argjson p "$pid" 'select(.pid == $p)' "$work/all.jsonl"))
		for i in $(seq 60); do
			got=$(sink_totals <(jq -c --arg p "$pid" 'select(.resource["process.pid"] == $p)' "$work/otlp/sink/samples.jsonl"))
			[ "$got" = "$want" ] && break
			sleep 0.5
		done
		if [ "$got" = "$want" ] && [ "$want" != "{}" ]; then
			ok "OTLP: container pid $pid: per trace ID, the CPU the collector passed on equals the JSON lines"
		else
			not_ok "OTLP: container pid $pid: JSON lines $want, sink $got"
		fi
	done
	check_eq "OTLP: the Docker-style container's resource: container.id, k8s.pod.uid, process.vpid" \
		"$docker_id null 1" "$(resource_of "$docker_pid")"
	check_eq "OTLP: the Kubernetes-style container's resource: container.id, k8s.pod.uid, process.vpid" \
		"$k8s_id $pod 1" "$(resource_of "$k8s_pid")"
	# the budget, with container.id, k8s.pod.uid and five OTEL_RESOURCE_ATTRIBUTES
	read -r most over < <(jq -s -r --arg p "$k8s_pid" 'map(select(.resource["process.pid"] == $p))
		| [(map((.resource | length) + (.attributes | length)) | max),
		   (map(select((.resource | length) + (.attributes | length) > 25)) | length)] | @tsv' \
		"$work/otlp/sink/samples.jsonl")
	many_labels "$work/otlp/sink/samples.jsonl" "$k8s_pid"
	if [ "$over" = 0 ] && [ "$nres" = 16 ] && [ "$got" = "$want" ] &&
		grep -q "samples sent without some of their labels, past the budget of 25 attributes a series: 'k" "$work/all.err"; then
		ok "OTLP: the pod's process: 16 resource attributes (container.id, k8s.pod.uid, five of OTEL_RESOURCE_ATTRIBUTES among them), at most $most attributes a sample of 25; the twelve-label job keeps $want, the rest counted"
	else
		not_ok "OTLP: the pod's process: $nres resource attributes, $over samples over 25 (at most $most); the twelve-label job's labels '$got' (want '$want'); $(grep '^ctxprof-go: otlp:' "$work/all.err")"
	fi
	kill "${sink_pid:-}" "${collector_pid:-}" 2>/dev/null
fi

jq -c --argjson pid "$docker_pid" 'select(.pid == $pid)' "$work/one.jsonl" >"$work/p.jsonl"
job_verdicts "--cgroup: Docker-style container (pid $docker_pid)" "$work/p.jsonl" 20
others=$(jq -s -r --argjson pid "$docker_pid" \
	'map(select(.pid != $pid)) | "\(length) records (pids: \(map(.pid) | unique | join(" ")))"' "$work/one.jsonl")
check_eq "--cgroup of the Docker-style container: records of any other process" "0 records (pids: )" "$others"
done_testing
