#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh: runs every test script and unit test, then prints "N passed, N failed, N skipped".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

export CTXPROF_SAN=${CTXPROF_SAN:-$OUTPUT/san/ctxprof-go}
# leaks are bugs too; abort on the first sanitizer report
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

log=$(mktemp)
out=$(mktemp)
times=$(mktemp)
lanes=$(mktemp -d)
trap 'rm -rf "$log" "$out" "$times" "$lanes"' EXIT

# judge NAME OUT RC SECS: the verdict lines of one test program's output
# OUT, kept. It fails, with a verdict of its own, when it exited (RC)
# non-zero without having said why in a failed verdict, or when its plan
# ("1..N", at the end) is missing or does not count the verdicts it
# printed: a script that died half-way.
judge() {
	local name=$1 out=$2 rc=$3 verdicts plan failed
	printf '%d\t%s\n' "$4" "$name" >>"$times"
	grep -E '^(not )?ok( |$)' "$out" >>"$log"
	verdicts=$(grep -cE '^(not )?ok( |$)' "$out")
	failed=$(grep -c '^not ok' "$out")
	plan=$(grep -E '^1\.\.[0-9]+$' "$out" | tail -n 1)
	if [ -z "$plan" ]; then
		echo "not ok - $name: no plan (1..N) after $verdicts verdicts; exit status $rc" | tee -a "$log"
	elif [ "${plan#1..}" -ne "$verdicts" ]; then
		echo "not ok - $name: plan $plan, but $verdicts verdicts printed; exit status $rc" | tee -a "$log"
	elif [ "$rc" -ne 0 ] && ! { [ "$rc" -eq 1 ] && [ "$failed" -gt 0 ]; }; then
		echo "not ok - $name: exited with status $rc after $verdicts verdicts, $failed failed" | tee -a "$log"
	fi
}

# run NAME CMD...: one test program, its output shown as it comes, then judged.
run() {
	local name=$1 rc start=$SECONDS
	printf '# %s\n' "$name"
	shift
	"$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	judge "$name" "$out" "$rc" $((SECONDS - start))
}

# lane TESTS: test programs that measure no time, run one after another
# beside other lanes; TESTS is a file of "NAME<tab>COMMAND" lines. Each
# one's output and exit status are kept for settle.
lane() {
	local list=$1 name cmd start i=0
	while IFS=$'\t' read -r name cmd; do
		start=$SECONDS
		bash -c "$cmd" >"$list.$i.out" 2>&1
		printf '%s %d\n' $? $((SECONDS - start)) >"$list.$i.rc"
		i=$((i + 1))
	done <"$list"
}

# settle LIST...: waits for the lanes, then shows and judges each test of
# each LIST in order, as run would have.
settle() {
	local list name cmd rc secs i
	wait
	for list in "$@"; do
		i=0
		while IFS=$'\t' read -r name cmd; do
			printf '# %s\n' "$name"
			cat "$list.$i.out"
			read -r rc secs <"$list.$i.rc"
			judge "$name" "$list.$i.out" "$rc" "$secs"
			i=$((i + 1))
		done <"$list"
	done
}

# The checks that read files and build, and time nothing, run in two lanes
# side by side before any program is profiled: a profiled host must not
# have builds running beside it (--all would take them for targets).
# Tests that use the arm64 sysroot share a lane: the first fetches it;
# the arm64 image's root, exported there, is for the arm64 machine's test.
unit=$(go_build "$(go_toolchains | tail -n 1)" plain)
{
	for t in "$OUTPUT"/tests/* "$OUTPUT"/san/tests/*; do
		[ -x "$t" ] || continue
		case $t in
		"$OUTPUT"/san/*) printf 'unit (asan+ubsan): %s\t' "$(basename "$t")" ;;
		*) printf 'unit: %s\t' "$(basename "$t")" ;;
		esac
		printf 'GO_TEST_BINARY=%q %q\n' "$unit" "$t"
	done
	printf '%s\tbash %q\n' \
		"layering: every #include runs one way, and no folder's calls run in a circle" "$TOP/tests/layering.sh" \
		"docs: man page, README and the other documents against --help, the schema and check --json" "$TOP/tests/docs.sh" \
		"check: bad input" "$TOP/tests/check-bad-input.sh" \
		"golayout table" "$TOP/tests/golayout.sh" \
		"build: make without the build's packages names them (a fresh Debian in a chroot)" "$TOP/tests/build-deps.sh"
} >"$lanes/a"
printf '%s\tbash %q\n' \
	"check: testdata matrix" "$TOP/tests/check-matrix.sh" \
	"check: where allocations are probed and their sampling rate read, every toolchain" "$TOP/tests/alloc-probe.sh" \
	"check: Debian's Go binaries" "$TOP/tests/check-debian.sh" \
	"pclntab: agreement with go tool addr2line" "$TOP/tests/pclntab-addr2line.sh" \
	"arm64: make ARCH=arm64 on this machine, the result under qemu-user" "$TOP/tests/arm64-build.sh" \
	"package: make deb (amd64, arm64), lintian, installed and purged in a fresh Debian 12" "$TOP/tests/deb.sh" \
	"arm64: make image ARCH=arm64, an image of Debian's arm64 packages holding all it loads" "$TOP/tests/image-arm64.sh" \
	>"$lanes/b"
lane "$lanes/a" &
lane "$lanes/b" &
settle "$lanes/a" "$lanes/b"

run "profile: every toolchain at once" bash "$TOP/tests/profile-e2e.sh"
run "profile: lifecycle" bash "$TOP/tests/profile-lifecycle.sh"
run "profile: errors" bash "$TOP/tests/profile-errors.sh"
run "profile: OpenTelemetry SDK server" bash "$TOP/tests/profile-otel.sh"
run "profile: stripped gofmt" bash "$TOP/tests/profile-stripped.sh"
run "profile: frameless leaves and their callers" bash "$TOP/tests/profile-leaves.sh"
run "profile: clock reads in the vDSO and probed instructions keep their callers" bash "$TOP/tests/profile-frames.sh"
run "profile: -p follows threads made late and an exec, and no other process's ticks" bash "$TOP/tests/profile-threads.sh"
run "profile: binaries on ext4, btrfs, overlayfs, tmpfs" bash "$TOP/tests/profile-filesystems.sh"
run "profile: trace-ID label conventions of four tracers" bash "$TOP/tests/profile-conventions.sh"
run "profile: trace IDs from the traceparent of net/http and grpc-go requests, no labels" bash "$TOP/tests/profile-traceparent.sh"
run "profile: a request's trace ID on its goroutines and theirs (Go 1.19 and newest)" bash "$TOP/tests/profile-fanout.sh"
run "profile: a request counts only while it lives; two services, one request" bash "$TOP/tests/profile-lifetime.sh"
run "profile: trace IDs from spans the OpenTelemetry Go SDK records, no labels" bash "$TOP/tests/profile-otel-sdk.sh"
run "profile: trace IDs from OBI's traces_ctx_v1, either start order" bash "$TOP/tests/profile-obi.sh"
run "profile: the costliest traces at exit, --quiet" bash "$TOP/tests/profile-summary.sh"
run "every jq recipe shown to users, on a --wall recording" bash "$TOP/tests/recipes.sh"
run "--all: Go processes that start during the run" bash "$TOP/tests/profile-all.sh"
run "containers: container_id, pod_uid, ns_pid, --cgroup" bash "$TOP/tests/profile-containers.sh"
run "custom traces: --pin, tail calls, --uprobe" bash "$TOP/tests/custom-traces.sh"
run "uprobe events and samples colliding" bash "$TOP/tests/uprobe-collide.sh"
run "wall clock: every goroutine by trace ID (--wall)" bash "$TOP/tests/profile-wall.sh"
run "wall clock on more goroutines than a snapshot reads (30,000, a CPU hog on every core)" bash "$TOP/tests/wall-many.sh"
run "wall clock on Debian's own stripped Go programs (caddy of three suites)" bash "$TOP/tests/wall-debian.sh"
run "whole stacks and trace IDs on Debian's Go servers (caddy, node-exporter)" bash "$TOP/tests/servers-debian.sh"
run "outputs: pprof, folded, convert" bash "$TOP/tests/outputs.sh"
run "output errors: full devices, closed pipes" bash "$TOP/tests/output-errors.sh"
run "output files: private (0600), --append, SIGHUP rotation" bash "$TOP/tests/output-files.sh"
run "report page and speedscope, seen in headless Chromium" bash "$TOP/tests/report.sh"
run "OTLP profiles through an OpenTelemetry Collector" bash "$TOP/tests/otlp.sh"
run "OTLP allocation profiles (--alloc) as Pyroscope files them, per trace" bash "$TOP/tests/otlp-alloc.sh"
run "process contexts (OTEP 4719): services as their SDK names them; hostile contexts" bash "$TOP/tests/profile-procctx.sh"
run "the agent's image under podman, as deploy/kubernetes's DaemonSet runs it" bash "$TOP/tests/container.sh"
run "hostile input: broken binaries, records and flags under ASan+UBSan" bash "$TOP/tests/hostile-input.sh"
run "hostile labels" bash "$TOP/tests/hostile-labels.sh"
run "label sets of every shape, every toolchain, read by the sampler and --wall alike" bash "$TOP/tests/golabels.sh"
run "label sets switching under a busy GC" bash "$TOP/tests/profile-labelswitch.sh"
run "--alloc: each request's allocations, as the program's own runtime.MemProfile counts them" bash "$TOP/tests/profile-alloc.sh"
run "--alloc in every view: the lines at exit, the report page, speedscope, folded stacks" bash "$TOP/tests/alloc-views.sh"
run "capacity: 200 targets, small rings" bash "$TOP/tests/capacity.sh"
run "arm64: profiling arm64 Go programs in an emulated arm64 machine (qemu TCG)" bash "$TOP/tests/arm64-vm.sh"
run "install: binary, man page, systemd unit" bash "$TOP/tests/install.sh"

failed=$(grep -c '^not ok' "$log")
skipped=$(grep -c '^ok .*# SKIP' "$log")
passed=$(( $(grep -c '^ok' "$log") - skipped ))
echo
echo "Go toolchains tested: $(go_toolchains | tr '\n' ' ')"
if [ "$failed" -gt 0 ]; then
	echo "Failures:"
	grep '^not ok' "$log"
fi
echo "The ten slowest test files (seconds; $SECONDS in all):"
sort -rn "$times" | head -n 10 | awk -F '\t' '{ printf "%6d  %s\n", $1, $2 }'
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
