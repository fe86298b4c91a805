#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# arm64-vm-guest.sh: what tests/arm64-vm.sh runs inside the emulated arm64 machine (busybox sh); results go to /out.
#
# /t holds the arm64 Go programs: traced-* (check, then -p), httpserver
# and httpserver19 (the traceparent source, Go 1.19's goroutine-start
# probe), otelroot (the otel-sdk source), report_trace (a C program, for
# --uprobe), leafy (frameless leaves), clocky (the vDSO), bigframes-*
# (deep frames, Duff's device, system calls), waitkinds (--wall),
# services (a request's lifetime, nested pprof.Do) and allocs-* (--alloc,
# against their own runtime.MemProfile); /image.tar, when there, is the
# arm64 image's root, whose own ctxprof-go runs chrooted in it. Each step
# leaves its output, stderr and exit status in /out; the host judges them.
out=/out
uname -m >$out/uname
[ -e /sys/kernel/btf/vmlinux ] && echo yes >$out/btf

# started: FILE, until ctxprof-go says it is sampling (or exits)
started() {
	i=0
	while [ $i -lt 600 ] && ! grep -q 'Ctrl-C to stop' "$1" 2>/dev/null; do
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
}

t0=$(cut -d' ' -f1 /proc/uptime)
for b in /t/traced-*; do
	ctxprof-go check --json "$b" >"$out/check-${b#/t/}.json" 2>&1
	echo $? >"$out/check-${b#/t/}.rc"
done
echo "check $t0 $(cut -d' ' -f1 /proc/uptime)" >>$out/times

# The emulated machine's kernel (Linux 6.1 under qemu TCG) once in 12 to
# 20 boots never schedules in the per-thread events of the boot's first -p
# recording while their threads run (a WARN in event_function: the task's
# perf context not active), then can lock up closing them. ctxprof-go
# then warns and samples every CPU instead (tests/README.md), but the
# lock-up would end the run. A first -p on an idle process takes that
# turn: idle threads are never running when their events are installed
# or closed. 0 faults in 80 boots so with it; 3 in 56 first recordings
# without.
/t/httpserver >/dev/null 2>&1 &
warm=$!
sleep 1
ctxprof-go -p $warm -F 199 -d 2 -o /dev/null 2>$out/warm.err
echo $? >$out/warm.rc
kill $warm

# the arm64 image's root (tests/image-arm64.sh exports it), chrooted:
# its own loader, libraries and CA bundle, the machine's /proc, /sys,
# tracefs and /dev, as a container with hostPID sees them; the target
# runs outside it. check, then -p for 5 s with --otlp to a port no one
# serves: libcurl and what it loads come from the image too.
if [ -f /image.tar ]; then
	t0=$(cut -d' ' -f1 /proc/uptime)
	mkdir -p /image && tar -xf /image.tar -C /image
	mkdir -p /image/proc /image/sys /image/dev
	mount -t proc proc /image/proc
	mount -t sysfs sysfs /image/sys
	mount -t tracefs tracefs /image/sys/kernel/tracing
	mount -t bpf bpf /image/sys/fs/bpf
	mount -t devtmpfs devtmpfs /image/dev
	# the newest toolchain's: the glob's last
	for b in /t/traced-*pure; do :; done
	cp "$b" /image/tmp/traced
	chroot /image /usr/bin/ctxprof-go check --json /tmp/traced >$out/image-check.json 2>&1
	echo $? >$out/image-check.rc
	"$b" -d 600s >/dev/null 2>&1 &
	echo $! >$out/image.pid
	chroot /image /usr/bin/ctxprof-go -p $! -F 199 -d 5 --otlp http://127.0.0.1:9 \
		-o /tmp/image.jsonl 2>$out/image.err
	echo $? >$out/image.rc
	kill "$(cat $out/image.pid)"
	cp /image/tmp/image.jsonl $out/image.jsonl
	umount /image/dev /image/sys/fs/bpf /image/sys/kernel/tracing /image/sys /image/proc
	echo "image $t0 $(cut -d' ' -f1 /proc/uptime)" >>$out/times
fi

# -p: every traced build at once, its jobs under 24 frames made as the
# stack grew (moved), and the HTTP server with requests that each carry a
# traceparent of their own
pids=
for b in /t/traced-*; do
	"$b" -d 600s -depth 24 >/dev/null 2>&1 &
	echo "$! ${b#/t/traced-}" >>$out/pids
	pids=$pids,$!
done
# serve NAME: starts /t/NAME, pid in $served (listed in pids), and sets
# $served_addr to its HTTP address once it has printed both its addresses
serve() {
	# the file first: the loop below may look before the background job opens it
	: >$out/$1.addr
	/t/$1 >$out/$1.addr 2>$out/$1.err &
	served=$!
	echo "$served $1" >>$out/pids
	i=0
	while [ $i -lt 600 ] && [ "$(grep -c . $out/$1.addr)" -lt 2 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	served_addr=$(awk '$1 == "http" { print $2 }' $out/$1.addr)
}
serve httpserver
srv=$served addr=$served_addr
# Go 1.19's: the goroutines its requests start, and theirs (the goroutine-start probe)
serve httpserver19
srv19=$served addr19=$served_addr
t0=$(cut -d' ' -f1 /proc/uptime)
ctxprof-go -v -p "${pids#,},$srv,$srv19" -F 199 -d "${CPU_SECONDS:-30}" -o $out/cpu.jsonl 2>$out/cpu.err &
cp=$!
if started $out/cpu.err $cp; then
	for i in 1 2 3 4 5 6 7 8; do
		id=$(printf 'a64%029x' "$i")
		echo "$id" >>$out/sent
		wget -q -O $out/req$i --header "traceparent: 00-$id-00f067aa0ba902b7-01" \
			"http://$addr/work" 2>>$out/wget.err
		echo $? >>$out/wget.rc
	done
	for i in 1 2 3; do
		id=$(printf 'a65%029x' "$i")
		echo "$id" >>$out/sent19
		wget -q -O $out/fan$i --header "traceparent: 00-$id-00f067aa0ba902b7-01" \
			"http://$addr19/fan?kids=2&grandkids=2&ms=60" 2>>$out/wget.err
		echo $? >>$out/fan.rc
	done
fi
wait $cp
echo $? >$out/cpu.rc
echo "cpu $t0 $(cut -d' ' -f1 /proc/uptime)" >>$out/times
for p in $(echo "${pids#,}" | tr , ' ') $srv $srv19; do
	kill "$p" 2>/dev/null
done

# the otel-sdk source: spans the program starts itself, once sampled
/t/otelroot -signal -spans 8 -workers 4 -burn 20ms >$out/spans 2>$out/spans.err &
ot=$!
echo "$ot otelroot" >>$out/pids
t0=$(cut -d' ' -f1 /proc/uptime)
ctxprof-go -p $ot -F 199 -o $out/otel.jsonl 2>$out/otel.err &
cp=$!
# a ctxprof-go that did not start would leave otelroot waiting for ever
if started $out/otel.err $cp; then kill -USR1 $ot; else kill $ot; fi
wait $ot
echo $? >$out/spans.rc
# ctxprof-go ends with its last target
wait $cp
echo $? >$out/otel.rc
echo "otel $t0 $(cut -d' ' -f1 /proc/uptime)" >>$out/times

# --uprobe: Go's first argument in R0 (main.burnDo of the pure builds),
# C's in x0 (report_trace, which exits right after its five calls)
ups=
up_args=
for b in /t/traced-*pure; do
	"$b" -d 600s -slice 3ms >/dev/null 2>&1 &
	echo "$! up-${b#/t/traced-}" >>$out/pids
	ups="$ups $!"
	up_args="$up_args --uprobe $b:main.burnDo"
done
t0=$(cut -d' ' -f1 /proc/uptime)
# shellcheck disable=SC2086
ctxprof-go $up_args --uprobe /t/report_trace:report_trace -d "${UPROBE_SECONDS:-6}" \
	-o $out/uprobe.jsonl 2>$out/uprobe.err &
cp=$!
if started $out/uprobe.err $cp; then
	/t/report_trace >/dev/null &
	echo "$! report_trace" >>$out/pids
fi
wait $cp
echo $? >$out/uprobe.rc
echo "uprobe $t0 $(cut -d' ' -f1 /proc/uptime)" >>$out/times
# shellcheck disable=SC2086
kill $ups

# timed STEP ARGS...: ctxprof-go ARGS, its records in $out/STEP.jsonl, its
# stderr and exit status beside them, the step's times in $out/times
timed() {
	step=$1
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	ctxprof-go "$@" -o $out/$step.jsonl 2>$out/$step.err
	echo $? >$out/$step.rc
	echo "$step $t0 $(cut -d' ' -f1 /proc/uptime)" >>$out/times
}

# label sets seen at pprof.Do's call alone, a pprof.Do nested in each request
/t/services -role checkout -burn 200ms -nest 1500ms -litter=false >$out/nest.addr 2>&1 &
co=$!
echo "$co services" >>$out/pids
i=0
while [ $i -lt 300 ] && ! grep -q '^http://' $out/nest.addr; do
	sleep 0.1
	i=$((i + 1))
done
t0=$(cut -d' ' -f1 /proc/uptime)
ctxprof-go -p $co -F 199 -v -o $out/nest.jsonl 2>$out/nest.err &
cp=$!
if started $out/nest.err $cp; then
	/t/services -role client -target "$(head -n 1 $out/nest.addr)" -n 3 \
		-traces 4bf92f3577b34da6a3ce929d0e0e4736 >/dev/null 2>&1
fi
kill -INT $cp
wait $cp
echo $? >$out/nest.rc
echo "nest $t0 $(cut -d' ' -f1 /proc/uptime)" >>$out/times
kill $co

# frameless leaves: their callers come back from LR (the leaf repair)
/t/leafy -d 600s -workers 1 >/dev/null 2>&1 &
lf=$!
echo "$lf leafy" >>$out/pids
timed leaves -p $lf -F 199 -d "${LEAF_SECONDS:-8}"
kill $lf

# signal frames: runtime/pprof's own profiler at 1000 Hz, whose handler
# (SIGPROF) returns through the vDSO's __kernel_rt_sigreturn; the framed
# leaves left out, which TCG runs slowly and which would leave the
# frameless main.spinLeaf few signals
/t/leafy -d 600s -workers 2 -ticks=false -cpuprofile /tmp/leafy.prof -rate 1000 >/dev/null 2>&1 &
lf=$!
echo "$lf sigleafy" >>$out/pids
timed signals -p $lf -F 199 -d "${SIGNAL_SECONDS:-10}"
kill $lf

# the clock: Go calls the vDSO on g0's stack, and the vDSO signs its return addresses
/t/clocky -d 600s >/dev/null 2>&1 &
ck=$!
echo "$ck clocky" >>$out/pids
timed clock -p $ck -F 199 -d "${CLOCK_SECONDS:-10}"
# --wall: goroutines parked at the stack-growth check keep their caller in gobuf.lr
timed clockwall -p $ck --wall --wall-hz 97 -d "${CLOCK_SECONDS:-10}"
kill $ck

# deep large frames, Duff's device, system calls
bps=
for b in /t/bigframes-*; do
	$b -d 600s >/dev/null 2>&1 &
	echo "$! ${b#/t/}" >>$out/pids
	bps=${bps:+$bps,}$!
done
timed big -p $bps -F 199 -d "${BIG_SECONDS:-8}"
kill ${bps//,/ }

# --wall on the oldest toolchain's traced, whose four workers take turns
# on the machine's CPUs: the stacks of those waiting, under frames made as
# their stack grew, come from user space's walk
for b in /t/traced-go1.19*pure /t/traced-go1.20*pure; do
	[ -x "$b" ] || continue
	"$b" -d 600s -depth 24 >/dev/null 2>&1 &
	dp=$!
	echo "$dp walldeep" >>$out/pids
	timed walldeep -p $dp --wall --wall-hz 97 -d "${WALL_SECONDS:-12}"
	kill $dp
	break
done

# --wall: goroutines that alternate CPU with five kinds of wait
/t/waitkinds -d 600s -cpu 4ms -wait 16ms >$out/kinds 2>$out/kinds.err &
wk=$!
echo "$wk waitkinds" >>$out/pids
timed wall -p $wk --wall --wall-hz 97 -d "${WALL_SECONDS:-12}"
kill -USR1 $wk
wait $wk
echo $? >$out/kinds.rc

# --alloc: testdata/allocs of each toolchain, plain and stripped, each
# waiting for /tmp/allocs.go, then allocating for 2 s and writing what its
# own runtime.MemProfile counted; ctxprof-go ends when they have exited
apids=
for b in /t/allocs-*; do
	n=${b#/t/}
	: >"$out/$n.ready"
	"$b" -rate 65536 -d 2s -start /tmp/allocs.go -out "$out/$n.truth.json" >"$out/$n.ready" 2>&1 &
	echo "$! $n" >>$out/pids
	apids="$apids $!"
done
for b in /t/allocs-*; do
	i=0
	while [ $i -lt 300 ] && ! grep -q '^ready' "$out/${b#/t/}.ready"; do
		sleep 0.1
		i=$((i + 1))
	done
done
t0=$(cut -d' ' -f1 /proc/uptime)
# shellcheck disable=SC2086 # the pids as words, then joined by commas
ctxprof-go -p "$(echo $apids | tr ' ' ,)" --alloc -i 3600 -o $out/alloc.jsonl 2>$out/alloc.err &
cp=$!
started $out/alloc.err $cp
# the programs go on whether it started or not, and end by themselves
touch /tmp/allocs.go
wait $cp
echo $? >$out/alloc.rc
# shellcheck disable=SC2086 # the list is words
wait $apids
echo "alloc $t0 $(cut -d' ' -f1 /proc/uptime)" >>$out/times
