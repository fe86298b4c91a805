#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arm64-vm.sh: the arm64 ctxprof-go profiles arm64 Go programs in an emulated arm64 machine (Debian's kernel, qemu TCG).
#
# The machine: Debian bookworm's arm64 kernel (BTF built in) under
# qemu-system-aarch64 -M virt -cpu max with TCG, booted with a busybox
# initramfs that holds the arm64 ctxprof-go (tests/arm64-build.sh leaves
# it in .output/arm64), the libraries it needs from the arm64 sysroot, and
# arm64 builds of testdata programs (tests/arm64-vm-lib.sh). Inside,
# tests/arm64-vm-guest.sh runs, and the host judges what it wrote:
# - check on traced by the oldest and the newest toolchain, pure and cgo:
#   supported, arch arm64;
# - first, -p for 2 s on an idle httpserver (the guest kernel's first -p of
#   a boot: see arm64-vm-guest.sh): exit status 0;
# - the arm64 image's root (tests/image-arm64.sh leaves it in
#   .output/arm64/image-root.tar), its ctxprof-go chrooted in it, with its
#   own loader and libraries: check on the newest pure traced (supported),
#   and 5 s of -p on it with --otlp to a closed port (libcurl opens, from
#   the image, and says the connection was refused): exit status 1, nothing
#   delivered, said last; every burn function's samples carry their job's
#   trace ID;
# - in the -p recording, three /fan requests to Go 1.19's httpserver, each
#   starting goroutines that start goroutines: at least 90% of the
#   grandchildren's samples carry their request's trace ID (the
#   goroutine-start probe, found by its BL);
# - -p on all four at once and on httpserver (199 Hz; TCG is slow): every
#   burn function's samples carry their job's trace ID (0 wrong, at least
#   97% right), and their stacks reach runtime.goexit through the job's
#   callers and the 24 frames of main.deep it ran them under, made as its
#   stack grew and moved (frame pointers, g from R28 or, under cgo,
#   tpidr_el0; Go before 1.21 leaves stale frame pointers in moved stacks
#   on arm64, which the sampler steps over by frame sizes): 99% each;
# - --wall on the oldest traced: 99% of its off-CPU samples in
#   main.burnDo unwind the same way (user space's walk, by the same sizes);
# - otelroot (newest toolchain, Debian's OpenTelemetry Go SDK) starts 8
#   root spans once sampled: each has samples in main.spanWork under its
#   trace and span IDs, trace_source otel-sdk; no ID that no span had;
# - --uprobe on main.burnDo of both pure builds (Go's first argument, R0)
#   and on report_trace, a C program that exits right after its five
#   calls (x0): every record has the argument, traceDo's trace ID for
#   Go, and the caller next (from LR: the probe is at the entry);
# - services' checkout (newest toolchain), three requests under one trace,
#   each with a pprof.Do of another trace inside it (-nest): the label
#   probe takes one hit a pprof.Do (the BL in pprof.Do, second argument
#   R1), and 99% of each function's samples carry their trace: the
#   request's before, beside (main.keepOrder) and after the nested one,
#   the nested trace in it;
# - leafy (newest toolchain): samples in its frameless leaves (main.spinLeaf,
#   runtime.memclrNoHeapPointers) and in main.framedTick and framedWide,
#   which spend much of their time making a frame, show a true caller next in 99%: the
#   return address LR held, or the prologue stored, put back through
#   .gopclntab's SP deltas;
# - eight requests to httpserver, each with a traceparent of its own: each
#   has samples in main.handleBurn under its trace ID, trace_source
#   traceparent, and no sample carries an ID never sent;
# - clocky (newest toolchain), reading the clock in tight loops: 99% of
#   the samples in the vDSO carry a Go caller past the clock code (Go calls
#   the vDSO on g0's stack; Debian's arm64 vDSO signs its return
#   addresses), no frame is bare, none keeps a pointer-authentication code;
#   in every run, each frame in the vDSO is named by its symbols;
# - leafy under runtime/pprof's own profiler (SIGPROF at 1000 Hz): 99% of
#   the samples under __kernel_rt_sigreturn go on from the interrupted PC
#   to where ordinary stacks end, and in main.spinLeaf (frameless) have its
#   caller next, from the LR the signal frame holds; of those in the
#   handler's body, the share interrupted in main.spinLeaf is at least a
#   fifth of the other samples' share; in every program, 99% of the
#   samples in runtime.sigtramp have __kernel_rt_sigreturn next;
#   read with --wall at 97 Hz, 99% of its goroutine samples parked at a
#   function's stack-growth check have that function's caller next (in
#   gobuf.lr, not in a frame record; tests/parked-callers.py checks it
#   against go tool objdump);
# - --wall on waitkinds (newest toolchain): per kind of wait, Go's own wait
#   reason dominates (state syscall for read(2)), the stacks off the CPU
#   run through its main.wait* function, and the running share of its
#   looks is within 0.15 of the CPU share the workload measured (TCG's
#   timing is coarse), of its samples within 0.20;
# - bigframes (oldest and newest toolchain) at 199 Hz: at least 99% whole
#   of the samples under its 17 frames of 2 KiB (with all 17), in Duff's
#   device where the build calls it, in its write system calls, and of at
#   least 20 under runtime.morestack; no lone frame
#   (tests/profile-frames.sh's fourth part);
# - --alloc on allocs (oldest and newest toolchain, plain and stripped;
#   -rate 65536, 2 s): per function, the alloc records' objects and bytes
#   within 2% of the program's own runtime.MemProfile, every stack
#   starting at the function, its trace ID on them (none untraced), and
#   its trace's bytes within 2%; every sampled allocation the probes saw
#   counted (tests/profile-alloc.sh's verdicts).
# The boot and the run are timed.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"
. "$(dirname "$0")/arm64-vm-lib.sh"

start=$SECONDS
if ! command -v qemu-system-aarch64 >/dev/null; then
	not_ok "qemu-system-aarch64 missing (make deps installs qemu-system-arm)"
	done_testing
fi
work=$(mktemp -d)
# ARM64_VM_KEEP=DIR keeps what the guest sent back, for a look after the run
trap '[ -n "${ARM64_VM_KEEP:-}" ] && cp -r "$work/out/." "$ARM64_VM_KEEP/"; rm -rf "$work"' EXIT
stage=$work/stage
why=$(vm_stage "$stage" "$OUTPUT/arm64/ctxprof-go") || { not_ok "$why"; done_testing; }
# the arm64 image's root, which tests/image-arm64.sh exports
if [ -s "$OUTPUT/arm64/image-root.tar" ]; then
	cp "$OUTPUT/arm64/image-root.tar" "$stage/image.tar"
else
	not_ok "no arm64 image's root at $OUTPUT/arm64/image-root.tar (tests/image-arm64.sh exports it)"
fi
vm_prepare || { not_ok "the arm64 kernel and busybox could not be fetched"; done_testing; }
cp "$TOP/tests/arm64-vm-guest.sh" "$stage/test.sh"
oldest=$(go_toolchains | head -n 1)
newest=$(go_toolchains | tail -n 1)
for prog in httpserver otelroot leafy clocky waitkinds services; do
	bin=$(go_build "$newest" arm64 "$prog") || { not_ok "go$newest arm64 $prog: build failed"; continue; }
	cp "$bin" "$stage/t/$prog"
done
bin=$(go_build "$oldest" arm64 httpserver) && cp "$bin" "$stage/t/httpserver19" ||
	not_ok "go$oldest arm64 httpserver: build failed"
for v in $(printf '%s\n' "$oldest" "$newest" | sort -u); do
	bin=$(go_build "$v" arm64 bigframes) && cp "$bin" "$stage/t/bigframes-go$v" ||
		not_ok "go$v arm64 bigframes: build failed"
	# --alloc: testdata/allocs, plain and stripped
	for var in arm64 arm64-stripped; do
		name=allocs-go$v-plain
		[ "$var" = arm64 ] || name=allocs-go$v-stripped
		bin=$(go_build "$v" "$var" allocs) && cp "$bin" "$stage/t/$name" ||
			not_ok "go$v $var allocs: build failed"
	done
done
# a C program for --uprobe's C ABI, frame pointers kept as custom-traces.sh builds it
aarch64-linux-gnu-gcc --sysroot="$OUTPUT/arm64/sysroot" -O1 -g -fno-omit-frame-pointer \
	"$TOP/testdata/custom/report_trace.c" -o "$stage/t/report_trace" || not_ok "report_trace: arm64 build failed"

res=$work/out
vm_start=$SECONDS
if ! vm_run "$stage" 1200 "$res"; then
	not_ok "the arm64 machine did not run the tests: $(tail -n 5 "$res/console.log" 2>/dev/null | tr '\n' ' ')"
	done_testing
fi
echo "# the arm64 machine: $((SECONDS - vm_start)) s from qemu's start to power-off; in the guest: $(tr '\n' ';' <"$res/times" 2>/dev/null)"
check_eq "the guest is arm64" aarch64 "$(cat "$res/uname" 2>/dev/null)"
check_eq "the guest kernel has BTF" yes "$(cat "$res/btf" 2>/dev/null)"

# check, inside
for f in "$res"/check-traced-*.json; do
	[ -e "$f" ] || { not_ok "check wrote nothing"; break; }
	name=${f##*/check-}
	name=${name%.json}
	check_eq "check $name in the arm64 machine: exit status" 0 "$(cat "${f%.json}.rc")"
	check_eq "check $name in the arm64 machine" '{"arch":"arm64","supported":true,"problems":[]}' \
		"$(jq -c '{arch, supported, problems}' "$f" 2>&1)"
done

# the image's own ctxprof-go, chrooted in its root: its loader and
# libraries, libcurl's too (--otlp opens it at the start)
if [ -e "$stage/image.tar" ]; then
	check_eq "check in the arm64 image's root (chroot): exit status" 0 "$(cat "$res/image-check.rc" 2>/dev/null)"
	check_eq "check in the arm64 image's root" '{"arch":"arm64","supported":true,"problems":[]}' \
		"$(jq -c '{arch, supported, problems}' "$res/image-check.json" 2>&1)"
	# nothing serves the port: its samples are not delivered, which fails the run
	check_eq "-p --otlp in the arm64 image's root: exit status, nothing delivered" 1 "$(cat "$res/image.rc" 2>/dev/null)"
	check_eq "-p --otlp in the arm64 image's root: its last line, after libcurl's connection refused" \
		"ctxprof-go: failed to send OTLP profiles to http://127.0.0.1:9/v1development/profiles" \
		"$(tail -n 1 "$res/image.err" | cut -d: -f1-4)"
	check_eq "-p --otlp in the arm64 image's root: libcurl's own error said" yes \
		"$(grep -q "127.0.0.1:9/v1development/profiles: Failed to connect to 127.0.0.1 port 9" "$res/image.err" && echo yes)"
	sed 's/^/# image: /' "$res/image.err" 2>/dev/null | grep -v 'warning: failed to attach' | head -n 8
	check_eq "-p --otlp in the arm64 image's root: libcurl opened, from the image" \
		"ctxprof-go: sending OTLP profiles to http://127.0.0.1:9/v1development/profiles (gzip) every 10 s" \
		"$(grep 'sending OTLP profiles' "$res/image.err" 2>&1)"
	jq -c --argjson p "$(cat "$res/image.pid" 2>/dev/null || echo 0)" 'select(.pid == $p)' \
		"$res/image.jsonl" >"$work/image.jsonl" 2>/dev/null
	job_verdicts "arm64 image's ctxprof-go, traced" "$work/image.jsonl" 20
fi

# of records: the samples of stacks in main.burnDo, and those whole to runtime.goexit
DEEP_JQ='[.[].stacks[] | select(any(.frames[]; .func == "main.burnDo"))] |
	{all: (map(.samples) | add // 0),
	 whole: (map(select(.frames[-1].func == "runtime.goexit" and
		any(.frames[]; .func == "runtime/pprof.Do") and any(.frames[]; .func == "main.jobDo") and
		([.frames[] | select(.func == "main.deep")] | length) == 24)) | map(.samples) | add // 0)}'
# -p: the labelled jobs of every traced build
check_eq "ctxprof-go -p on an idle httpserver first (the guest kernel's first -p of a boot): exit status" 0 \
	"$(cat "$res/warm.rc" 2>/dev/null)"
check_eq "ctxprof-go -p (four traced builds and httpserver): exit status" 0 "$(cat "$res/cpu.rc" 2>/dev/null)"
sed 's/^/# /' "$res/cpu.err"
# a recording without samples: what the guest's kernel said, for the cause
if grep -q ' 0 samples from' "$res/cpu.err"; then
	echo "# -p took no sample; the guest's kernel log after boot:"
	awk '$2 + 0 > 3' "$res/dmesg.txt" 2>/dev/null | tail -n 40 | sed 's/^/# dmesg: /'
fi
# arm64's relocations (user_pt_regs, the vdso's address) from the cut of
# the guest's BTF; Linux 6.1 has no mmap of it, so this is the read path
if cut=$(grep -o 'CO-RE: [0-9]* of the kernel.s [0-9]* BTF types' "$res/cpu.err"); then
	ok "arm64 start-up: $cut"
else
	not_ok "arm64 start-up read all of the kernel's BTF: $(grep 'CO-RE' "$res/cpu.err")"
fi
if ! jq -e . "$res/cpu.jsonl" >/dev/null 2>&1; then
	not_ok "-p output is not valid JSON lines"
else
	ok "-p output: $(wc -l <"$res/cpu.jsonl") records, valid JSON lines"
	schema_verdict "arm64 -p records" "$res/cpu.jsonl"
fi
while read -r pid name; do
	case $name in go*) ;; *) continue ;; esac
	jq -c --argjson p "$pid" 'select(.pid == $p)' "$res/cpu.jsonl" >"$work/pid.jsonl"
	job_verdicts "arm64 $name" "$work/pid.jsonl" 20
	# unwound to the goroutine's start, through the job's own callers and
	# the 24 frames of main.deep made while the stack grew and moved. Go
	# before 1.21 leaves the saved frame pointers of a moved stack
	# pointing into the old one on arm64 (runtime/stack.go's "TODO what
	# about arm64 frame pointer adjustment?"): the sampler follows those
	# frames by their sizes from .gopclntab instead
	read -r all whole <<<"$(jq -s -r "$DEEP_JQ"' | "\(.all) \(.whole)"' "$work/pid.jsonl")"
	part_verdict "arm64 $name" "${whole:-0}" "${all:-0}" 100 \
		"samples in main.burnDo unwind through runtime/pprof.Do, main.jobDo and 24 frames of main.deep to runtime.goexit" \
		"$(jq -c '.stacks[] | select(any(.frames[]; .func == "main.burnDo")) | [.frames[].func] | .[-4:]' "$work/pid.jsonl" | sort | uniq -c | sort -rn | head -n 2 | tr -s ' \n' ' ')"
done <"$res/pids"

# --wall on Go 1.19 or 1.20: the waiting workers' stacks, from user space's walk
if [ -e "$res/walldeep.rc" ]; then
	check_eq "ctxprof-go --wall on the oldest traced: exit status" 0 "$(cat "$res/walldeep.rc")"
	read -r all whole <<<"$(jq -s -r 'map(select(.origin == "wall" and .state != "running"))'" | $DEEP_JQ"' | "\(.all) \(.whole)"' "$res/walldeep.jsonl")"
	part_verdict "arm64 --wall, oldest traced" "${whole:-0}" "${all:-0}" 100 \
		"goroutine samples off the CPU in main.burnDo unwind through main.jobDo and 24 frames of main.deep to runtime.goexit" ""
fi

# the traceparent source
srv=$(awk '$2 == "httpserver" { print $1 }' "$res/pids")
check_eq "eight requests to httpserver: wget's exit statuses" "0 0 0 0 0 0 0 0" "$(tr '\n' ' ' <"$res/wget.rc" 2>/dev/null | sed 's/ $//')"
while read -r id; do
	n=$(jq -s --argjson p "${srv:-0}" --arg t "$id" '[.[] | select(.pid == $p and .trace_id == $t and
		.trace_source == "traceparent" and .span_id == "00f067aa0ba902b7") | .stacks[] |
		select(any(.frames[]; .func == "main.handleBurn")) | .samples] | add // 0' "$res/cpu.jsonl")
	if [ "$n" -gt 0 ]; then
		ok "httpserver request $id: $n samples in main.handleBurn under its traceparent"
	else
		not_ok "httpserver request $id: no samples in main.handleBurn under its traceparent; its records: $(jq -s -c --argjson p "${srv:-0}" '[.[] | select(.pid == $p) | {trace_id, trace_source, samples}]' "$res/cpu.jsonl" | head -c 800)"
	fi
done <"$res/sent"
check_eq "httpserver: samples with a trace ID never sent" 0 \
	"$(jq -s --argjson p "${srv:-0}" --rawfile sent "$res/sent" '[.[] | select(.pid == $p and .trace_id != null) |
		select(.trace_id as $t | $sent | split("\n") | index($t) | not) | .samples] | add // 0' "$res/cpu.jsonl")"

# Go 1.19: the goroutines a request starts, and theirs, by the goroutine-start probe (BL)
srv19=$(awk '$2 == "httpserver19" { print $1 }' "$res/pids")
check_eq "three /fan requests to Go $oldest's httpserver: wget's exit statuses" "0 0 0" \
	"$(tr '\n' ' ' <"$res/fan.rc" 2>/dev/null | sed 's/ $//')"
read -r total traced ids < <(jq -s -r --argjson p "${srv19:-0}" --rawfile sent "$res/sent19" '
	($sent | split("\n") | map(select(. != ""))) as $s |
	[.[] | select(.pid == $p) | .trace_id as $t | .stacks[] |
	 select(any(.frames[]; .func == "main.fanGrandchildBurn")) | {n: .samples, t: $t}] |
	"\(map(.n) | add // 0) \(map(select(.t as $x | $s | index($x))) | map(.n) | add // 0) \(map(select(.t as $x | $s | index($x)) | .t) | unique | length)"' \
	"$res/cpu.jsonl" 2>/dev/null)
if [ "${total:-0}" -ge 50 ] && [ $((${traced:-0} * 100)) -ge $((total * 90)) ] && [ "${ids:-0}" = 3 ]; then
	ok "Go $oldest httpserver: main.fanGrandchildBurn samples with their request's trace ID: $traced of $total, all 3 requests"
else
	not_ok "Go $oldest httpserver: main.fanGrandchildBurn samples with their request's trace ID: ${traced:-0} of ${total:-0}, ${ids:-0} of 3 requests (need 90% of at least 50, all 3); $(grep -e 'probes for' -e 'goroutine-start' "$res/cpu.err" | tr '\n' ' ')"
	# the others, as they came: which IDs, and where their stacks end
	jq -c --argjson p "${srv19:-0}" --rawfile sent "$res/sent19" '
		($sent | split("\n") | map(select(. != ""))) as $s | select(.pid == $p) |
		select(.trace_id as $t | $s | index($t) | not) | {trace_id, inherited_trace_id} + (.stacks[] |
		select(any(.frames[]; .func == "main.fanGrandchildBurn")) | {samples, outer: [.frames[].func] | .[-3:]})' \
		"$res/cpu.jsonl" 2>&1 | head -n 20 | sed 's/^/# /'
fi

# the otel-sdk source: the SDK's span arguments, read from R0 and on
check_eq "otelroot: exit status" 0 "$(cat "$res/spans.rc" 2>/dev/null)"
check_eq "ctxprof-go -p otelroot: ends with it, exit status" 0 "$(cat "$res/otel.rc" 2>/dev/null)"
ot=$(awk '$2 == "otelroot" { print $1 }' "$res/pids")
started=$(jq -R -s 'split("\n") | map(select(length > 0) | split(" ") | {key: .[0], value: .[1]}) | from_entries' "$res/spans" 2>/dev/null)
check_eq "otelroot: root spans with samples in main.spanWork under their own trace and span IDs (otel-sdk), of 8; samples with an ID no span had" \
	"8 0" "$(jq -s -r --argjson s "${started:-{\}}" --argjson pid "${ot:-0}" '
	[.[] | select(.pid == $pid) as $r | $r.stacks[] |
	 {t: $r.trace_id, sp: $r.span_id, src: $r.trace_source,
	  fn: ([.frames[].func | select(. == "main.spanWork")] | first)}] |
	"\(map(select(.fn != null and .t != null and .src == "otel-sdk" and $s[.t] == .sp) | .t) | unique | length) \(map(select(.t != null and ($s[.t] == null))) | length)"' "$res/otel.jsonl")"

# --uprobe: the context from R0, for Go's ABI and C's
check_eq "ctxprof-go --uprobe: exit status" 0 "$(cat "$res/uprobe.rc" 2>/dev/null)"
traceDo=$(traced_constants | sed -n 's/^traceDo=//p')
while read -r pid name; do
	case $name in up-*) ;; *) continue ;; esac
	got=$(jq -s -c --argjson pid "$pid" '[.[] | select(.pid == $pid)] |
		{enough: (length >= 5), origin: (map(.origin) | unique), contexts: (map(.context) | unique),
		 traces: (map(.trace_id) | unique), leaf: (map(.stacks[0].frames[0].func) | unique),
		 caller: (map(.stacks[0].frames[1].func) | unique)}' "$res/uprobe.jsonl")
	check_eq "arm64 ${name#up-} --uprobe main.burnDo (Go, R0): context, trace ID, and the caller from LR" \
		"{\"enough\":true,\"origin\":[\"uprobe\"],\"contexts\":[3000000],\"traces\":[\"$traceDo\"],\"leaf\":[\"main.burnDo\"],\"caller\":[\"main.jobDo.func1\"]}" \
		"$got"
done <"$res/pids"
rt=$(awk '$2 == "report_trace" { print $1 }' "$res/pids")
check_eq "arm64 report_trace --uprobe (C, x0), a process that exits right after its calls" \
	'{"n":5,"contexts":[4096,4097,4098,4099,4100],"frames":[["report_trace","main"]]}' \
	"$(jq -s -c --argjson pid "${rt:-0}" '[.[] | select(.pid == $pid and .origin == "uprobe")] |
		{n: length, contexts: (map(.context) | sort), frames: (map([.stacks[0].frames[:2][].func]) | unique)}' "$res/uprobe.jsonl")"

# frameless leaves: the caller LR held, put back
check_eq "ctxprof-go -p leafy: exit status" 0 "$(cat "$res/leaves.rc" 2>/dev/null)"
lf=$(awk '$2 == "leafy" { print $1 }' "$res/pids")
# functions whose code calls runtime.memclrNoHeapPointers directly, and the other leaves' callers
{
	aarch64-linux-gnu-objdump -d --no-show-raw-insn "$stage/t/leafy" | awk '
		/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn) }
		/\tbl\t.*<runtime\.memclrNoHeapPointers>/ { print fn }' | sort -u
	printf '%s\n' main.workKilo main.workTicks
} >"$work/truth"
jq -s -r --argjson pid "${lf:-0}" "$LEAF_JQ" "$res/leaves.jsonl" >"$work/pairs"
leaf_verdicts "arm64 leafy" "$work/pairs" "$work/truth"

# signal frames: under __kernel_rt_sigreturn, the interrupted code's own
# stack, from its exact PC, to where the walk ends the other samples'
# stacks (runtime.goexit, runtime.mstart, ...) or Go's traceback does
# (ROOTS: runtime.morestack in the scheduler, once curg is dropped,
# which a walk through morestack makes rare elsewhere); the frameless leaf there as
# often as the CPU is in it, with its caller next (the LR it held)
check_eq "ctxprof-go -p leafy under its own profiler's signals: exit status" 0 "$(cat "$res/signals.rc" 2>/dev/null)"
sl=$(awk '$2 == "sigleafy" { print $1 }' "$res/pids")
IFS='|' read -r all whole leafed called leaf_sig leaf_cpu example < <(jq -s -r --argjson pid "${sl:-0}" '
	[.[] | select(.pid == $pid) | .stacks[] | {n: .samples, f: [.frames[].func]}] as $s |
	[$s[] | select(any(.f[]; . == "__kernel_rt_sigreturn") | not)] as $plain |
	($plain | map(.f[-1]) + '"$ROOTS"' | unique) as $ends |
	[$s[] | (.f | index("__kernel_rt_sigreturn")) as $k | select($k != null) |
	 {n, c: .f[$k + 1:], entry: ($k == 1 and .f[0] == "runtime.sigtramp")}] as $sig |
	($sig | map(select((.c | length) > 0 and (.c[0] | test("^0x") | not) and
		(.c[-1] as $e | $ends | index($e))))) as $good |
	($sig | map(select(.c[0] == "main.spinLeaf"))) as $leaf |
	def n: map(.n) | add // 0;
	def share(s): ((s | map(select(.c[0] == "main.spinLeaf")) | n) * 100 / ((s | n) + 0.001) | floor);
	"\($sig | n)|\($good | n)|\($leaf | n)|\($leaf | map(select(.c[1] == "main.workKilo")) | n)|\(share($sig | map(select(.entry | not))))|\(share($plain | map({n, c: .f})))|\($sig - $good | max_by(.n) // {c: []} | .c[0:5] | join(" < "))"' \
	"$res/signals.jsonl")
part_verdict "arm64 leafy, signal frames" "$whole" "$all" 30 \
	"samples under __kernel_rt_sigreturn go on from the interrupted PC to where other stacks end" "$example"
part_verdict "arm64 leafy, signal frames in main.spinLeaf" "$called" "$leafed" 10 \
	"have its caller main.workKilo next (the LR it held)" ""
# a handler's leaf: in runtime.sigtramp, at its first instruction (a
# tick while the kernel sets up the frame lands there too, LR not yet
# set) and while its prologue moves SP before it points FP at a record of
# its own, its caller is the trampoline, and the walk goes on from the
# interrupted PC (read by FP, the kernel's record gave the interrupted LR
# instead: a caller twice, or the leaf lost)
IFS='|' read -r tramp tramp_ok example < <(cat "$res"/*.jsonl | jq -s -r '
	[.[] | select(.origin == "sampling") | .stacks[] | select(.frames[0].func == "runtime.sigtramp") |
	 {n: .samples, f: [.frames[] | "\(.func)@\(.addr)"]}] as $s |
	($s | map(select(.f[1] // "" | startswith("__kernel_rt_sigreturn@")))) as $ok |
	def n: map(.n) | add // 0;
	"\($s | n)|\($ok | n)|\($s - $ok | max_by(.n) // {f: []} | .f[0:4] | join(" < "))"')
part_verdict "arm64 signal handlers" "$tramp_ok" "$tramp" 20 \
	"samples in runtime.sigtramp, every program's, have __kernel_rt_sigreturn next" "$example"
# Ticks at the handler's first instruction are left out: the timer that
# fired while the kernel delivered the signal fires there, and most such
# signals woke a thread asleep in futex.
# A reading that lost the interrupted PC gives none; TCG on a busy host
# moves the share a lot (14% against 50% in one run of twenty).
if [ "${leaf_cpu:-0}" -gt 0 ] && [ $((${leaf_sig:-0} * 5)) -ge "$leaf_cpu" ]; then
	ok "arm64 leafy, signal frames: interrupted in main.spinLeaf (frameless) in $leaf_sig% of those in the handler's body, $leaf_cpu% of the other samples"
else
	not_ok "arm64 leafy, signal frames: interrupted in main.spinLeaf (frameless) in ${leaf_sig:-?}% of those in the handler's body, ${leaf_cpu:-?}% of the other samples (a fifth needed)"
fi

# the clock, in the vDSO: its Go caller, and no frame left unnamed
check_eq "ctxprof-go -p clocky: exit status" 0 "$(cat "$res/clock.rc" 2>/dev/null)"
ck=$(awk '$2 == "clocky" { print $1 }' "$res/pids")
IFS='|' read -r all called bare signed example < <(jq -s -r --argjson pid "${ck:-0}" \
	--arg re "$CLOCK_RE" "$HEX_JQ $VDSO_JQ"'
	[.[] | select(.pid == $pid)] as $r |
	[$r[] | .mappings as $m | .stacks[] | select(.frames[0] | in_vdso($m)) |
	 { n: .samples, f: [.frames[].func],
	   called: ([.frames[] | select(in_vdso($m) | not) | .func | select(test($re) | not)] | length > 0) }] as $s |
	"\($s | map(.n) | add // 0)|\($s | map(select(.called) | .n) | add // 0)|\([$r[].stacks[].frames[] | select(.func | test("^0x"))] | length)|\([$r[].stacks[].frames[] | select((.addr // "0x0" | hex) >= 281474976710656)] | length)|\($s | map(select(.called | not)) | max_by(.n) // {f: []} | .f[0:6] | join(" < "))"' \
	"$res/clock.jsonl")
part_verdict "arm64 clocky" "$called" "$all" 100 "samples in the vDSO carry the Go caller of the clock" "$example"
check_eq "arm64 clocky: bare frames" 0 "${bare:-?}"
check_eq "arm64 clocky: frames still signed (bits above 48)" 0 "${signed:-?}"
# the vDSO has no CFI on arm64: every frame in it, the signal trampoline's
# too (a handler returns to its first instruction), named by its symbols
unnamed=$(cat "$res"/*.jsonl | jq -r '.stacks[]?.frames[].func | select(startswith("[vdso]+"))' | sort | uniq -c | sort -rn | head -n 3 | tr -s ' \n' ' ')
named=$(cat "$res"/*.jsonl | jq -r '.stacks[]?.frames[].func | select(startswith("__kernel_"))' | wc -l)
if [ -z "$unnamed" ] && [ "$named" -gt 0 ]; then
	ok "arm64: $named frames in the vDSO, every one named by its symbols"
else
	not_ok "arm64: frames in the vDSO that no symbol names:${unnamed:- none}; $named named"
fi

# --wall at the stack-growth check: the caller from gobuf.lr
check_eq "ctxprof-go --wall -p clocky: exit status" 0 "$(cat "$res/clockwall.rc" 2>/dev/null)"
"/usr/lib/go-$newest/bin/go" tool objdump "$stage/t/clocky" >"$work/clocky.objdump" || not_ok "go tool objdump on the arm64 clocky failed"
IFS='|' read -r parked called example < <(python3 "$TOP/tests/parked-callers.py" "$work/clocky.objdump" \
	"$res/clockwall.jsonl" "${ck:-0}")
part_verdict "arm64 clocky --wall" "$called" "$parked" 30 \
	"samples parked at a function's stack-growth check have its caller next" "$example"

# deep large frames, Duff's device, system calls
check_eq "ctxprof-go -p bigframes: exit status" 0 "$(cat "$res/big.rc" 2>/dev/null)"
for b in "$stage"/t/bigframes-*; do
	name=${b##*/}
	p=$(awk -v n="$name" '$2 == n { print $1 }' "$res/pids")
	bigframes_verdicts "arm64 $name" "$res/big.jsonl" "${p:-0}" "$(calls_duff aarch64-linux-gnu-objdump "$b")" 50 20
done

# --wall
check_eq "ctxprof-go --wall on waitkinds: exit status" 0 "$(cat "$res/wall.rc" 2>/dev/null)"
check_eq "waitkinds: exit status" 0 "$(cat "$res/kinds.rc" 2>/dev/null)"
sed 's/^/# /' "$res/wall.err"
wk=$(awk '$2 == "waitkinds" { print $1 }' "$res/pids")
jq -s -c "$WALL_TRACES_JQ" "$res/wall.jsonl" >"$work/traces.jsonl"
while read -r kind trace func share; do
	t=$(jq -c --argjson p "${wk:-0}" --arg t "$trace" 'select(.pid == $p and .trace_id == $t)' "$work/traces.jsonl")
	total=$(jq -r '.total // 0' <<<"${t:-null}")
	if [ "$total" -lt 50 ]; then
		not_ok "arm64 --wall $kind: only $total wall samples; $t"
		continue
	fi
	# TCG's timing is coarse: 0.15 where the host's test allows 0.10
	wall_kind_verdicts "arm64 --wall" "$kind" "$func" "$share" 0.15 sync.Mutex.Lock "$t"
done < <(jq -r '"\(.kind) \(.trace_id) \(.wait_func) \(.cpu_share)"' "$res/kinds" 2>/dev/null)
[ -s "$res/kinds" ] || not_ok "waitkinds reported nothing: $(head -c 300 "$res/kinds.err" 2>/dev/null)"
# pprof.Do's set alone: a request's set outlives the nested one
check_eq "ctxprof-go -p services: exit status" 0 "$(cat "$res/nest.rc" 2>/dev/null)"
check_eq "arm64 services: -v says one hit a pprof.Do" 1 \
	"$(grep -c "label sets followed (pprof.Do's set, one hit a request)" "$res/nest.err" 2>/dev/null)"
nest=4bf92f3577b34da6a3ce929d0e0e4736
for fn in main.priceCart main.keepOrder main.nestedWork main.packOrder; do
	want=$nest
	[ "$fn" = main.nestedWork ] && want=${nest:16}${nest:0:16}
	read -r right total < <(jq -s -r --arg f "$fn" --arg t "$want" '
		[.[] | select(.origin == "sampling") as $r | $r.stacks[] |
		 select(any(.frames[]; .func == $f)) | {t: $r.trace_id, n: .samples}] |
		"\(map(select(.t == $t)) | map(.n) | add // 0) \(map(.n) | add // 0)"' "$res/nest.jsonl" 2>/dev/null)
	part_verdict "arm64 services, nested pprof.Do" "${right:-0}" "${total:-0}" 20 \
		"$fn's samples carry trace $want" ""
done

# --alloc: each program's own runtime.MemProfile, per function
check_eq "ctxprof-go -p --alloc on allocs: exit status" 0 "$(cat "$res/alloc.rc" 2>/dev/null)"
grep -i 'alloc\|warning' "$res/alloc.err" 2>/dev/null | sed 's/^/# /'
schema_verdict "arm64 alloc records" "$res/alloc.jsonl"
alloc_lost_verdict "arm64 --alloc" "$res/alloc.err"
for b in "$stage"/t/allocs-*; do
	name=${b##*/}
	p=$(awk -v n="$name" '$2 == n { print $1 }' "$res/pids")
	alloc_verdicts "arm64 $name" "${p:-0}" "$res/$name.truth.json" "$res/alloc.jsonl"
done
echo "# arm64 machine test: $((SECONDS - start)) s in all"
done_testing
