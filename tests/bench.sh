#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench.sh: `make bench`: ctxprof-go against pahole, bpftrace and perf, each pair in the same run.
#
# 1. check: `ctxprof-go check` against `pahole -C runtime.g` on cmd/compile,
#    built once by the newest toolchain (about 35 MB, compressed DWARF);
#    median wall time of RUNS runs each. Must be <= 0.5.
# 2. BPF cost per sample (kernel.bpf_stats_enabled): ctxprof-go's program
#    against a bpftrace one-liner doing the same walk (fixed Go 1.24 offsets,
#    first label, ustack), both sampling testdata/traced (go1.24) at 999 Hz
#    at the same time. Must be <= 1.0. Then ctxprof-go with and without
#    --no-leaf-repair at once: the words at SP cost at most 20% more.
#    2c. The same on testdata/labelswitch (label sets of 1 to 12 labels
#    changing every 3 ms) in both labels layouts (go1.21 map, go1.24
#    slice): must be <= 0.7, aim 0.5.
# 2e. Where a sample's BPF time goes: with and without the trace-context
#    lookups (--trace-sources label), the leaf words of 2b, and the floor
#    (bpftrace's profile probe that only counts); the rest is the walk.
#    2f. The obi source: OBI's map present, with an entry for every thread
#    of the target, against absent (--trace-sources without obi).
# 2d. Ticks of processes that are not targets (an idle Go target, two busy
#    shell loops): under -p the sampler's runs against its samples (no
#    other process's tick may run it), under --all its time per run, most
#    of them the loops' ticks turned away (bar 150 ns), and that against
#    an empty bpftrace probe's, alone, taking turns.
# 3. Slowdown of testdata/cpubench (go1.24, fixed work on every CPU) under
#    ctxprof-go -F 999 and under perf record -F 999 -g, from paired runs.
# 4. ctxprof-go's own CPU time while sampling a busy target at 99 and 999 Hz.
# 5. Start-up, median of 5 runs each, taking turns: from starting
#    `ctxprof-go -p PID` (one go1.24 testdata/traced) to its "Ctrl-C to
#    stop" line, against bpftrace from its start to its BEGIN probe's
#    output for a 99 Hz profile one-liner (bpftrace 0.17 runs BEGIN after
#    enabling the profile perf events: that is when its sampling is on).
#    Ratio must be <= 0.5. Then 200 targets (testdata/traced, one worker
#    each, niced, as in tests/capacity.sh), start to "Ctrl-C to stop":
#    stopped (SIGSTOP) <= 1 s; running, <= 1 s scaled by bpftrace's start
#    in this run over the 107 ms of the issue's machine. Lines are
#    time-stamped by the shell as they arrive on a pipe ($EPOCHREALTIME,
#    no fork per line).
# 6. --all: start-up with 200 Go processes of 10 distinct binaries (<= 2 s,
#    scaled as in 5),
#    the time from a new process's exec to its first sample, and the share
#    of its CPU time in its first 2 s that was sampled (>= 0.8).
# 7. The traceparent source (testdata/httpserver, newest Go): probe hits
#    per request and per goroutine start (bpf_stats run counts), a bare
#    uprobe's cost (a C loop under bpftrace's empty uprobe), the rate of a
#    small handler at saturation (testdata/httpload, 8 connections, every
#    request with a traceparent) without probes, with empty bpftrace
#    uprobes at the functions ctxprof-go probes (what those hits cost
#    bare there) and with ctxprof-go, with the server's CPU time per
#    request in each (its threads' schedstat: the traps and programs run on
#    them), the CPU time to start 1,000,000 goroutines with and without,
#    and on_sample's BPF time
#    per sample while requests are traced against bpftrace's from 2.
#    Bounds: <= 1 hit per request (its bare cost: an empty bpftrace uprobe
#    at the handler's entry); 0 per goroutine start and <= 2% slower;
#    the overhead per request <= 1.2x its hits' bare cost; per sample <= 1.0.
# 7b. Go 1.19's goroutine-start probe: testdata/httpserver (go1.19) /fan
#    at 1,000 requests a second, 10 goroutines each (10,000 a second, about
#    40 us of work each), the server's CPU without ctxprof-go, with it but
#    without the probe, with the probe's default budget (2% of the CPU)
#    and without a budget: with the budget the probe costs <= 2% of the
#    server's CPU, and the share of child samples it catches is printed;
#    without, the extra CPU per hit must be <= 1.2x a bare uprobe hit (the
#    C loop of 7).
# 8. --wall (tests/bench/wall.sh) on 10,000, 100,000 and 1,000,000 parked
#    goroutines, a third under trace IDs: ctxprof-go's CPU over whole 30 s
#    runs (<= 5% of a core at 10,000 and 100,000), the worker's rate beside
#    them (>= 0.99 of unprofiled), every trace's wall_ns against the time
#    covered (all within 10%); at 10,000, g windows read three ways.
# 9. --otlp through a collector (tests/bench/otlp.sh): ctxprof-go's own CPU
#    with and without at 999 Hz, bytes sent per sample beside the JSON lines
#    and the gzip pprof of the same run, bytes a sample before and after
#    OTLP took Pyroscope's shape (the build of 68d3d5c against this one,
#    taking turns), one export of 10,000 records.
# 10. The report page and speedscope (tests/bench/report.sh): --all for 60 s
#    over 200 targets (traced and labelswitch), then with --wall: convert
#    --html and --speedscope times (<= 2 s for the CPU minute's page), sizes,
#    bytes a sample that sample times add, and the page in headless Chromium:
#    drawn, and a click on the costliest trace answered (each <= 1 s).
# 11. convert (tests/bench/convert.sh): ms per MiB of records heavy in
#    labels, stacks or long strings, at about 8 and 32 MiB: linear (the
#    larger at most 1.5 times the smaller per MiB).
# 12. The agent as deploy/kubernetes's DaemonSet runs it (tests/bench/agent.sh):
#    200 and 400 Go processes, --all -i 10 --otlp --metrics-addr for 60 s: its CPU
#    to start and then as a share of a core, and its peak RSS, from which
#    the manifest's requests and limits come. No sample may be lost.
# 13. A request's lifetime (tests/bench/lifetime.sh): a server at 1,000
#    requests a second, each in pprof.Do, under the build before requests
#    had a lifetime and under this one, with -p and with --wall: this
#    build's extra CPU (server and ctxprof-go) <= 1% of a core in each.
# 14. Start-up with 200 busy targets (tests/bench/startup.sh), this build
#    against the last before the rings were read while targets are added:
#    time to ready, CPU by then, samples lost (none allowed), time to exit.
# 15. The traceparent source a request (tests/bench/requests.sh), Go 1.19,
#    1.22 and the newest, this build against the one before it took one
#    hit a request, and this build's sampler alone: the server's CPU a
#    request without and with each, probe hits and BPF ns a request
#    (goals: the source within 2% of the server's CPU over the sampler
#    alone, 1,000 ns on the newest Go; one hit a request there).
# 16. --alloc (tests/bench/alloc.sh): a sampled allocation's price on
#    testdata/allocs (newest Go, -rate 512, about 16,000 a second), the
#    target's CPU a second under ctxprof-go -p --alloc against an empty
#    bpftrace uprobe at the same file offset, each against its load
#    without, taking turns: <= 6x the bare hit, <= 1.3x the bare hit plus
#    alloc_sample's BPF time. Then 1 GB/s at Go's default rate, without
#    and with ctxprof-go -p --alloc: the target's CPU, the sampled
#    allocations a second, the probe's share by its parts (<= 3%), and
#    the probe never resting.
# The timing figures are noisy on shared machines: compare within one run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

RUNS=${RUNS:-11}
v=$(go_toolchains | tail -n 1)
bin=$OUTPUT/bench/compile-go$v
if [ ! -x "$bin" ]; then
	echo "bench: building cmd/compile with go$v (about a minute, once)" >&2
	mkdir -p "$(dirname "$bin")"
	(cd "/usr/lib/go-$v/src" && "/usr/lib/go-$v/bin/go" build -o "$bin" cmd/compile)
fi

now() { date +%s%N; }
# median_of: the median of the numbers on stdin, one a line ("none" for none)
median_of() { sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "none") }'; }
median_ms() { # median_ms CMD...: median wall time in ms over RUNS runs
	local i t0 t1
	for ((i = 0; i < RUNS; i++)); do
		t0=$(now)
		"$@" >/dev/null 2>&1
		t1=$(now)
		echo $(( (t1 - t0) / 1000 ))
	done | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f\n", a[int((NR + 1) / 2)] / 1000 }'
}

# into a file: a grep -q that stops reading would fail pahole under pipefail
pahole -C runtime.g "$bin" >"$OUTPUT/bench/pahole.out" 2>/dev/null || true
grep -q 'struct runtime.g {' "$OUTPUT/bench/pahole.out" ||
	{ echo "bench: pahole cannot read runtime.g from $bin" >&2; exit 1; }
"$CTXPROF" check "$bin" >/dev/null || true

size=$(stat -c %s "$bin")
check_ms=$(median_ms "$CTXPROF" check "$bin")
pahole_ms=$(median_ms pahole -C runtime.g "$bin")
ratio=$(awk -v a="$check_ms" -v b="$pahole_ms" 'BEGIN { printf "%.3f", a / b }')
printf 'binary:   %s (go%s cmd/compile, %.1f MB, DWARF compressed)\n' "$bin" "$v" "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')"
printf 'check:    %8.1f ms  (median of %d, ctxprof-go check)\n' "$check_ms" "$RUNS"
printf 'pahole:   %8.1f ms  (median of %d, pahole -C runtime.g)\n' "$pahole_ms" "$RUNS"
printf 'ratio:    %8.3f     (check / pahole; must be <= 0.5, aim 0.1)\n' "$ratio"
status=0
awk -v r="$ratio" 'BEGIN { exit !(r <= 0.5) }' || status=1

# symbolizing the same addresses: .gopclntab reader against go tool addr2line,
# in address order (as a sorted stack set or nm output gives them) and shuffled
addrs=$OUTPUT/bench/addrs
read -r start size < <(readelf -SW "$bin" | sed 's/^ *\[ *[0-9]*\] *//' | awk '$1 == ".text" { print $3, $5 }')
awk -v s=$((0x$start)) -v z=$((0x$size)) 'BEGIN { for (i = 0; i < 100000; i++) printf "0x%x\n", s + int(i * z / 100000) }' >"$addrs"
shuf --random-source=<(yes) "$addrs" >"$addrs.shuffled"
RUNS=5
printf '\nsymbolizing 100000 addresses of the same binary, median of %d:\n' "$RUNS"
printf '%-9s %12s %12s %16s %9s\n' order ctxprof-go "(with -i)" "go tool addr2line" speed-up
for order in sorted shuffled; do
	f=$addrs
	[ "$order" = sorted ] || f=$addrs.shuffled
	ours_ms=$(median_ms sh -c "'$CTXPROF' addr2line '$bin' < '$f'")
	inl_ms=$(median_ms sh -c "'$CTXPROF' addr2line -i '$bin' < '$f'")
	theirs_ms=$(median_ms sh -c "/usr/lib/go-$v/bin/go tool addr2line '$bin' < '$f'")
	printf '%-9s %9.1f ms %9.1f ms %13.1f ms %8.1fx\n' "$order" "$ours_ms" "$inl_ms" "$theirs_ms" \
		"$(awk -v a="$ours_ms" -v b="$theirs_ms" 'BEGIN { print b / a }')"
done
echo "(aim >= 10x; -i also expands inlined calls, which go tool addr2line does not)"

if [ "$(id -u)" != 0 ] || [ ! -r /sys/kernel/btf/vmlinux ]; then
	echo "bench: sampling figures need root and kernel BTF; skipped" >&2
	exit $status
fi
work=$(mktemp -d)
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	sysctl -qw kernel.bpf_stats_enabled="$old_stats"
	# with no job left, kill has nothing to do and fails: not the bench's verdict
	kill $(jobs -p) 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# 2. BPF run time per sample, ctxprof-go beside bpftrace
traced=$(go_build 1.24 plain)
"$traced" -d 60s -workers 2 2>/dev/null &
tp=$!
sleep 0.5
cat >"$work/walk.bt" <<BT
profile:hz:999 /pid == $tp/ {
	\$g = *(uint64 *)uptr(curtask->thread.fsbase - 8);
	\$m = *(uint64 *)uptr(\$g + 48);
	\$curg = *(uint64 *)uptr(\$m + 192);
	\$labels = *(uint64 *)uptr(\$curg + 352);
	\$first = *(uint64 *)uptr(\$labels);
	@[str(uptr(*(uint64 *)uptr(\$first + 16)), *(uint64 *)uptr(\$first + 24)), ustack] = count();
}
BT
sysctl -qw kernel.bpf_stats_enabled=1
per_run() { jq -r --arg re "$1" '[.[] | select(.name | test($re)) | select((.run_cnt // 0) > 0)] |
	max_by(.run_cnt) // {run_time_ns: 0, run_cnt: 1} | "\(.run_time_ns / .run_cnt) \(.run_cnt)"' "$work/progs.json"; }
ROUNDS=${ROUNDS:-3}
printf '\nBPF cost per sample, go1.24 testdata/traced at 999 Hz, both tools at once, %d rounds:\n' "$ROUNDS"
for ((r = 1; r <= ROUNDS; r++)); do
	# both sample for 5 s once both are on: start-up varies with the machine's load
	bpftrace "$work/walk.bt" >"$work/bt.out" 2>&1 &
	bp=$!
	until grep -qs Attaching "$work/bt.out" || ! kill -0 "$bp" 2>/dev/null; do sleep 0.1; done
	ctxprof_start "$work/c.err" /dev/null -p "$tp" -F 999 2>/dev/null || { status=1; break; }
	sleep 5
	bpftool prog show -j >"$work/progs.json"
	ctxprof_stop || true
	kill -INT "$bp" 2>/dev/null || true
	wait "$bp" 2>/dev/null || true
	read -r ours ours_n < <(per_run '^on_sample$')
	read -r theirs theirs_n < <(per_run '^profile|^999$')
	printf 'round %d: ctxprof-go %6.0f ns (%d runs), bpftrace %6.0f ns (%d runs), ratio %.2f\n' \
		"$r" "$ours" "$ours_n" "$theirs" "$theirs_n" "$(awk -v a="$ours" -v b="$theirs" 'BEGIN { print a / b }')"
	echo "$ours $theirs" >>"$work/rounds"
done
bpf_ratio=$(awk '{ print $1 / $2 }' "$work/rounds" | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }')
printf 'median ratio: %s  (ctxprof-go: all labels, trace ID, user stack, ring buffer;\n' "$bpf_ratio"
printf '              bpftrace: same walk, first label, ustack, map count; must be <= 1.0, aim 0.5)\n'
awk -v r="$bpf_ratio" 'BEGIN { exit !(r <= 1.0) }' || status=1

# 2b. what putting back a frameless leaf's caller costs in BPF: two
# ctxprof-go, with and without it, sampling the same target at once. The
# one whose timer fires first after the target ran takes the cold cache
# misses, so each round runs both orders and sums them.
kill "$tp" 2>/dev/null || true
"$traced" -d 120s -workers 2 2>/dev/null &
tp=$!
sleep 0.5
on_sample_ids() { bpftool prog show -j | jq -r '.[] | select(.name == "on_sample") | .id' | sort -n; }
per_id() { jq -r --argjson id "$1" '.[] | select(.id == $id) | "\(.run_time_ns) \(.run_cnt)"' "$work/progs.json"; }
# pair_means: "WITH WITHOUT" of two pairs taken in both orders ($work/pair:
# with, without, without, with), nanoseconds a run
pair_means() {
	awk '{ t[NR] = $1; n[NR] = $2 } END {
		printf "%f %f\n", (t[1] + t[4]) / (n[1] + n[4]), (t[2] + t[3]) / (n[2] + n[3]) }' "$work/pair"
}
pair() { # pair FIRST_OPTS SECOND_OPTS: "TIME_NS RUNS" of each, first line first
	local a b first
	ctxprof_start "$work/a.err" /dev/null -p "$tp" -F 999 $1 2>/dev/null || return 1
	first=$ctxprof
	a=$(on_sample_ids | tail -n 1)
	ctxprof_start "$work/b.err" /dev/null -p "$tp" -F 999 $2 2>/dev/null || return 1
	b=$(on_sample_ids | tail -n 1)
	sleep 4
	bpftool prog show -j >"$work/progs.json"
	ctxprof_stop || true
	ctxprof=$first
	ctxprof_stop || true
	if [ -z "$a" ] || [ -z "$b" ] || [ "$a" = "$b" ]; then
		echo "bench: a ctxprof-go did not start" >&2
		return 1
	fi
	per_id "$a"
	per_id "$b"
}
printf '\nleaf-caller repair, BPF cost per sample, both at once, %d rounds of both orders:\n' "$ROUNDS"
for ((r = 1; r <= ROUNDS; r++)); do
	{ pair "" --no-leaf-repair && pair --no-leaf-repair ""; } >"$work/pair" || { status=1; break; }
	# lines: with, without, without, with
	read -r with without < <(pair_means)
	printf 'round %d: with %6.0f ns, without (--no-leaf-repair) %6.0f ns, %+.1f%%\n' "$r" "$with" "$without" \
		"$(awk -v a="$with" -v b="$without" 'BEGIN { print 100 * (a / b - 1) }')"
	echo "$with $without" >>"$work/repair"
done
repair=$(awk '{ print 100 * ($1 / $2 - 1) }' "$work/repair" | sort -n | awk '{ a[NR] = $1 } END { printf "%+.1f", a[int((NR + 1) / 2)] }')
printf 'median: %s%%  (must be at most +20%%)\n' "$repair"
awk -v r="$repair" 'BEGIN { exit !(r <= 20) }' || status=1

# 2e. where a sample's nanoseconds go, one knob at a time as in 2b: the
# lookups of the traceparent and otel-sdk sources (--trace-sources label
# leaves them out), the leaf words (2b), and the floor: what any program
# run by the same cpu-clock event costs here, bpftrace's that only counts
# (its pid filter and a per-CPU map update). The rest is the walk to the
# labels, the labels, the stack and the event sent.
printf '\nwhere the BPF time of a sample goes, %d rounds:\n' "$ROUNDS"
: >"$work/sources"
: >"$work/floor"
printf 'profile:hz:999 /pid == %d/ { @ = count(); }\n' "$tp" >"$work/floor.bt"
for ((r = 1; r <= ROUNDS; r++)); do
	# the floor's probe runs all through the round's two pairs
	bpftrace "$work/floor.bt" >"$work/bt.out" 2>&1 &
	bp=$!
	until grep -qs Attaching "$work/bt.out" || ! kill -0 "$bp" 2>/dev/null; do sleep 0.1; done
	{ pair "" "--trace-sources label" && pair "--trace-sources label" ""; } >"$work/pair" || { status=1; break; }
	while kill -INT "$bp" 2>/dev/null; do sleep 0.3; done
	wait "$bp" 2>/dev/null || true
	read -r with without < <(pair_means)
	echo "$with $without" >>"$work/sources"
	read -r floor _ < <(per_run '^profile|^999$')
	echo "$floor" >>"$work/floor"
	printf 'round %d: all sources %6.0f ns, labels only %6.0f ns; an empty profile probe %6.0f ns\n' \
		"$r" "$with" "$without" "$floor"
done
total=$(awk '{ print $1 }' "$work/sources" | median_of)
contexts=$(awk '{ print $1 - $2 }' "$work/sources" | median_of)
leaf=$(awk '{ print $1 - $2 }' "$work/repair" | median_of)
floor=$(median_of <"$work/floor")
# awk, not printf: a round that never ran leaves "none", which awk reads as 0
awk -v t="$total" -v f="$floor" -v c="$contexts" -v l="$leaf" 'BEGIN {
	printf "medians: a sample %.0f ns = the floor %.0f + trace contexts (traceparent, otel-sdk) %.0f + leaf words %.0f\n", t, f, c, l
	printf "         + the walk to the labels, the labels, the stack and the event %.0f ns\n", t - f - c - l }'
echo "         (a difference within a few percent of the whole is below what one machine's rounds resolve)"

# 2f. the obi source: OBI's map present (pinned; entries for every thread
# of the target, as OBI writes them while it traces, so that each sample
# finds one) against absent (--trace-sources without obi), as in 2b
printf '\nthe obi source, OBI map present with an entry for every thread, against absent, %d rounds:\n' "$ROUNDS"
obi_map=/sys/fs/bpf/otel/traces_ctx_v1
: >"$work/obi"
if mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf; then
	for ((r = 1; r <= ROUNDS; r++)); do
		{ pair "" "--trace-sources label,traceparent,otel-sdk" &&
			pair "--trace-sources label,traceparent,otel-sdk" ""; } >"$work/pair" || { status=1; break; }
		# the map exists once a run with obi started: the next rounds find every thread in it
		for t in /proc/"$tp"/task/*; do
			# shellcheck disable=SC2046
			bpftool map update pinned "$obi_map" key hex $(pid_tgid_key "$tp" "${t##*/}") \
				value hex $(printf '%02x ' $(seq 1 24)) 2>/dev/null || true
		done
		read -r with without < <(pair_means)
		printf 'round %d: map present %6.0f ns, absent %6.0f ns, %+.1f%%\n' "$r" "$with" "$without" \
			"$(awk -v a="$with" -v b="$without" 'BEGIN { print 100 * (a / b - 1) }')"
		echo "$with $without" >>"$work/obi"
	done
	printf 'median: %+.1f%% (round 1 may find no entries: the map is made in it)\n' \
		"$(awk '{ print 100 * ($1 / $2 - 1) }' "$work/obi" | median_of)"
else
	echo "no bpffs at /sys/fs/bpf, and none could be mounted: not measured"
fi
kill "$tp" 2>/dev/null || true

# 2c. the same comparison on label sets that change every few ms (1 to 12
# labels, a fresh trace ID per request: testdata/labelswitch), in both
# labels layouts: go1.21 (a map) and go1.24 (a slice). bpftrace reads one
# label: the first slot of the first bucket, or the first slice element.
bt_one_label() { # bt_one_label PID LAYOUT G_LABELS: the bpftrace program
	local first
	if [ "$2" = map ]; then
		first='$hmap = *(uint64 *)uptr($labels); $b = *(uint64 *)uptr($hmap + 16);
	@[str(uptr(*(uint64 *)uptr($b + 136)), *(uint64 *)uptr($b + 144)), ustack] = count();'
	else
		first='$first = *(uint64 *)uptr($labels);
	@[str(uptr(*(uint64 *)uptr($first + 16)), *(uint64 *)uptr($first + 24)), ustack] = count();'
	fi
	cat <<BT
profile:hz:999 /pid == $1/ {
	\$g = *(uint64 *)uptr(curtask->thread.fsbase - 8);
	\$m = *(uint64 *)uptr(\$g + 48);
	\$curg = *(uint64 *)uptr(\$m + 192);
	\$labels = *(uint64 *)uptr(\$curg + $3);
	$first
}
BT
}
printf '\nBPF cost per sample on label sets switching every 3 ms (testdata/labelswitch), 999 Hz, %d rounds:\n' "$ROUNDS"
for spec in "1.21 map" "1.24 slice"; do
	read -r lv layout <<<"$spec"
	lbin=$(go_build "$lv" plain labelswitch)
	glabels=$("$CTXPROF" check --json "$lbin" | jq '.offsets["g.labels"]')
	"$lbin" -d 600s -workers 2 2>/dev/null &
	tp=$!
	sleep 0.5
	bt_one_label "$tp" "$layout" "$glabels" >"$work/one.bt"
	: >"$work/lrounds"
	for ((r = 1; r <= ROUNDS; r++)); do
		bpftrace "$work/one.bt" >"$work/bt.out" 2>&1 &
		bp=$!
		until grep -qs Attaching "$work/bt.out" || ! kill -0 "$bp" 2>/dev/null; do sleep 0.1; done
		ctxprof_start "$work/c.err" /dev/null -p "$tp" -F 999 2>/dev/null || { status=1; break; }
		sleep 5
		bpftool prog show -j >"$work/progs.json"
		ctxprof_stop || true
		while kill -INT "$bp" 2>/dev/null; do sleep 0.3; done
		wait "$bp" 2>/dev/null || true
		read -r ours ours_n < <(per_run '^on_sample$')
		read -r theirs theirs_n < <(per_run '^profile|^999$')
		printf 'go%s (%s labels) round %d: ctxprof-go %6.0f ns (%d runs), bpftrace %6.0f ns (%d runs), ratio %.2f\n' \
			"$lv" "$layout" "$r" "$ours" "$ours_n" "$theirs" "$theirs_n" \
			"$(awk -v a="$ours" -v b="$theirs" 'BEGIN { print a / b }')"
		echo "$ours $theirs" >>"$work/lrounds"
	done
	kill "$tp" 2>/dev/null || true
	lratio=$(awk '{ print $1 / $2 }' "$work/lrounds" | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] }')
	printf 'go%s (%s labels) median ratio: %s  (must be <= 0.7, aim 0.5)\n' "$lv" "$layout" "$lratio"
	awk -v r="$lratio" 'BEGIN { exit !(r <= 0.7) }' || status=1
done

# 2d. Ticks of processes that are not targets: an idle Go target
# (testdata/threads waiting) with two busy shell loops beside it. Under -p
# the sampler's events follow the target's threads, so the loops' ticks
# never run it: runs less samples must be 0 (a few for a race at the end).
# Under --all, every CPU's event runs it and the loops' ticks are turned
# away first thing: their cost is the program's time per run.
idle=$(go_build "$(go_toolchains | tail -n 1)" plain threads)
"$idle" -wait 600s 2>/dev/null &
ip=$!
for _ in 1 2; do
	(while :; do :; done) &
	loops+=($!)
done
sleep 0.5
sampler_stats() { jq -r '[.[] | select(.name == "on_sample")] | max_by(.run_cnt // 0) // {} |
	"\(.run_time_ns // 0) \(.run_cnt // 0)"' "$work/progs.json"; }
printf '\nTicks of other processes (an idle go target, two busy shell loops), 5 s at 99 Hz:\n'
for mode in "-p $ip" "--all"; do
	ctxprof_start "$work/f.err" /dev/null $mode -F 99 2>/dev/null || { status=1; break; }
	sleep 5
	bpftool prog show -j >"$work/progs.json"
	ctxprof_stop || true
	read -r ns runs < <(sampler_stats)
	taken=$(sed -n 's/^ctxprof-go: \([0-9]*\) samples\{0,1\} from.*/\1/p' "$work/f.err")
	printf '%-6s %6d runs of the sampler, %4d samples of targets, %6.0f ns a run\n' \
		"${mode%% *}" "$runs" "${taken:-0}" "$(awk -v t="$ns" -v n="$runs" 'BEGIN { print n ? t / n : 0 }')"
	if [ "$mode" != --all ] && [ "$runs" -gt $((${taken:-0} + 5)) ]; then
		echo "bench: under -p, other processes' ticks ran the sampler" >&2
		status=1
	fi
done
printf '(-p: no tick of another process is taken; --all: each costs the time a run takes, bar 150 ns)\n'
# what a run costs here at all: bpftrace's probe that turns every tick
# away on its pid, alone beside the same loops, taking turns with --all
printf 'profile:hz:99 /pid == 1/ { @ = count(); }\n' >"$work/empty.bt"
: >"$work/foreign"
for ((r = 1; r <= ROUNDS; r++)); do
	ctxprof_start "$work/f.err" /dev/null --all -F 99 2>/dev/null || { status=1; break; }
	sleep 5
	bpftool prog show -j >"$work/progs.json"
	ctxprof_stop || true
	read -r ns runs < <(sampler_stats)
	bpftrace "$work/empty.bt" >"$work/bt.out" 2>&1 &
	bp=$!
	until grep -qs Attaching "$work/bt.out" || ! kill -0 "$bp" 2>/dev/null; do sleep 0.1; done
	sleep 5
	bpftool prog show -j >"$work/progs.json"
	while kill -INT "$bp" 2>/dev/null; do sleep 0.3; done
	wait "$bp" 2>/dev/null || true
	read -r empty _ < <(per_run '^profile|^99$')
	ours=$(awk -v t="$ns" -v n="$runs" 'BEGIN { print n ? t / n : 0 }')
	printf 'round %d: --all %6.0f ns a run, the empty probe %6.0f ns: %+.0f ns\n' "$r" "$ours" "$empty" \
		"$(awk -v a="$ours" -v b="$empty" 'BEGIN { print a - b }')"
	echo "$ours $empty" >>"$work/foreign"
done
awk -v d="$(awk '{ print $1 - $2 }' "$work/foreign" | median_of)" 'BEGIN {
	printf "median: --all'"'"'s filter costs %+.0f ns a foreign tick over a program that does nothing\n", d }'
kill "$ip" "${loops[@]}" 2>/dev/null || true
wait "$ip" "${loops[@]}" 2>/dev/null || true

# 3. slowdown of a CPU-bound Go program, paired runs
bench=$(go_build 1.24 plain cpubench)
PAIRS=${PAIRS:-5}
run_plain() { "$bench" -iters 600 -delay 0.5s; }
run_ctxprof() {
	"$bench" -iters 600 -delay 0.5s >"$work/t" &
	local b=$!
	"$CTXPROF" -p "$b" -F 999 -o /dev/null 2>/dev/null &
	wait "$b" || true
	wait
	cat "$work/t"
}
run_perf() {
	"$bench" -iters 600 -delay 0.5s >"$work/t" &
	local b=$!
	perf record -q -F 999 -g -o "$work/perf.data" -p "$b" >/dev/null 2>&1 &
	wait "$b" || true
	wait
	cat "$work/t"
}
for ((i = 0; i < PAIRS; i++)); do
	echo "base $(run_plain)"
	echo "ctxprof $(run_ctxprof)"
	echo "base $(run_plain)"
	echo "perf $(run_perf)"
done >"$work/pairs"
median() { awk -v k="$1" '$1 == k { print $2 }' "$work/pairs" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
base=$(median base)
withc=$(median ctxprof)
withp=$(median perf)
printf '\nSlowdown of testdata/cpubench (go1.24, every CPU busy), medians of %d paired runs:\n' "$PAIRS"
printf 'alone:                 %6.3f s\n' "$base"
printf 'ctxprof-go -F 999:     %6.3f s  (%+.1f%%)\n' "$withc" "$(awk -v a="$withc" -v b="$base" 'BEGIN { print 100 * (a / b - 1) }')"
printf 'perf record -F 999 -g: %6.3f s  (%+.1f%%)\n' "$withp" "$(awk -v a="$withp" -v b="$base" 'BEGIN { print 100 * (a / b - 1) }')"

# 4. ctxprof-go's own CPU while sampling a busy target
"$traced" -d 60s -workers 2 2>/dev/null &
tp=$!
sleep 0.5
printf '\nctxprof-go CPU use while sampling a busy go1.24 target (start-up, then per second):\n'
cpu_of() { # cpu_of HZ SECONDS: user+sys seconds of one recording
	local TIMEFORMAT='%U %S' t
	t=$({ time "$CTXPROF" -p "$tp" -F "$1" -d "$2" -o /dev/null 2>/dev/null; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, a, " "); print a[1] + a[2] }'
}
for hz in 99 999; do
	short=$(cpu_of "$hz" 1)
	long=$(cpu_of "$hz" 11)
	awk -v hz="$hz" -v s="$short" -v l="$long" 'BEGIN {
		printf "%4d Hz: %.2f s for a 1 s run; each further second %.1f ms (%.2f%% of one CPU)\n",
			hz, s, (l - s) * 100, (l - s) * 10 }'
done
kill "$tp" 2>/dev/null || true

# 5. start-up: until sampling is on
usec() { local t=${1//[.,]/}; echo $((10#$t)); }
# ready_ms PATTERN CMD...: starts CMD with stdout and stderr on a pipe, and
# prints the ms from the start to the arrival of the first line that
# contains PATTERN ("none" if none came). Then stops CMD with SIGTERM, which
# both tools take as Ctrl-C, every 200 ms until it is gone: bpftrace 0.17
# notices the signal only when it interrupts its epoll_wait, and misses
# one that lands while it prints.
ready_ms() {
	local pat=$1 fifo=$work/ready.fifo t0 t1= line pid
	shift
	rm -f "$fifo"
	mkfifo "$fifo"
	t0=$EPOCHREALTIME
	"$@" >"$fifo" 2>&1 &
	pid=$!
	while IFS= read -r line; do
		if [ -z "$t1" ] && [[ $line == *"$pat"* ]]; then
			t1=$EPOCHREALTIME
			# its CPU time by then (user + system, in ticks): the work, apart from the wait for a CPU
			awk '{ print $14 + $15 }' "/proc/$pid/stat" >"$work/ready.ticks" 2>/dev/null || true
			(while kill -TERM "$pid" 2>/dev/null; do sleep 0.2; done) &
		fi
	done <"$fifo"
	wait "$pid" 2>/dev/null || true
	if [ -n "$t1" ]; then
		awk -v a="$(usec "$t0")" -v b="$(usec "$t1")" 'BEGIN { printf "%.1f\n", (b - a) / 1000 }'
	else
		echo none
	fi
}

"$traced" -d 600s -workers 2 2>/dev/null &
tp=$!
sleep 0.5
STARTS=${STARTS:-5}
printf '
start-up until sampling is on, one go1.24 target, %d runs each, taking turns:
' "$STARTS"
: >"$work/start.ours"
: >"$work/start.bt"
for ((i = 1; i <= STARTS; i++)); do
	ours=$(ready_ms 'Ctrl-C to stop' "$CTXPROF" -p "$tp" -d 30 -o /dev/null)
	theirs=$(ready_ms ready bpftrace -e "profile:hz:99 /pid == $tp/ { @[ustack] = count(); } BEGIN { printf(\"ready\\n\"); }")
	printf 'run %d: ctxprof-go %s ms, bpftrace %s ms\n' "$i" "$ours" "$theirs"
	[ "$ours" = none ] || echo "$ours" >>"$work/start.ours"
	[ "$theirs" = none ] || echo "$theirs" >>"$work/start.bt"
done
kill "$tp" 2>/dev/null || true
ours=$(median_of <"$work/start.ours")
theirs=$(median_of <"$work/start.bt")
if [ "$ours" = none ] || [ "$theirs" = none ] || [ "$(wc -l <"$work/start.ours")" -ne "$STARTS" ]; then
	echo "bench: a start-up run never reached its ready line" >&2
	start_ratio=none
	status=1
else
	start_ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.2f", a / b }')
	awk -v r="$start_ratio" 'BEGIN { exit !(r <= 0.5) }' || status=1
fi
printf 'ctxprof-go -p PID to "Ctrl-C to stop":  %8s ms (median of %d)\n' "$ours" "$STARTS"
printf 'bpftrace to its BEGIN output:           %8s ms (median of %d; profile:hz:99 /pid == PID/ { @[ustack] = count(); })\n' "$theirs" "$STARTS"
printf 'ratio: %s  (must be <= 0.5)\n' "$start_ratio"

# scaled TARGET_MS: a bound in ms set where bpftrace started in 107 ms (the
# issue's machine), scaled by its start-up in this run: machines here differ
# by ten times in what a start costs (process creation, page faults, BPF)
scaled() { awk -v ms="$1" -v bt="$theirs" 'BEGIN { printf "%.0f", bt == "none" ? ms : ms * bt / 107 }'; }
# cpu_ms: ctxprof-go's CPU time (user + system) by its ready line, in ms
cpu_ms() { awk -v t="$(cat "$work/ready.ticks" 2>/dev/null)" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f", t * 1000 / hz }'; }

# 200 targets at once: stopped first (SIGSTOP), where ctxprof-go has the
# CPUs to itself: the issue's 1 s. Then running, niced: 200 spinning
# processes leave it about 5% of the machine, so there the time is its CPU
# time over that share; bound by the issue's 1 s scaled to this machine.
N=${N:-200}
pids=()
for ((i = 0; i < N; i++)); do
	nice -n 10 "$traced" -d 600s -workers 1 2>/dev/null &
	pids+=($!)
done
sleep 1
kill -STOP "${pids[@]}"
many_idle=$(ready_ms 'Ctrl-C to stop' "$CTXPROF" -p "$(IFS=,; echo "${pids[*]}")" -d 60 -o /dev/null)
idle_cpu=$(cpu_ms)
kill -CONT "${pids[@]}"
sleep 1
many=$(ready_ms 'Ctrl-C to stop' "$CTXPROF" -p "$(IFS=,; echo "${pids[*]}")" -d 60 -o /dev/null)
many_cpu=$(cpu_ms)
kill "${pids[@]}" 2>/dev/null || true
wait "${pids[@]}" 2>/dev/null || true
busy_bound=$(scaled 1000)
if [ "$many" = none ] || [ "$many_idle" = none ]; then
	echo "bench: ctxprof-go with $N targets never said it was sampling" >&2
	status=1
else
	awk -v t="$many_idle" 'BEGIN { exit !(t <= 1000) }' || status=1
	awk -v t="$many" -v b="$busy_bound" 'BEGIN { exit !(t <= b) }' || status=1
fi
printf '%d targets (testdata/traced go1.24, one worker each, niced), start to "Ctrl-C to stop":\n' "$N"
printf '  stopped: %s ms, %s ms of it on a CPU (must be <= 1000)\n' "$many_idle" "$idle_cpu"
printf '  running: %s ms, %s ms of it on a CPU, the rest waiting beside %d busy processes (must be <= %s: 1000 x bpftrace %s / 107 ms)\n' \
	"$many" "$many_cpu" "$N" "$busy_bound" "$theirs"

# 6. --all: 200 processes of 10 distinct binaries found and recording, and
# how soon a process started later is sampled
mapfile -t tc < <(go_toolchains)
kinds=()
for v in "${tc[@]}"; do kinds+=("$(go_build "$v" plain)"); done
for v in "${tc[@]}"; do
	[ "${#kinds[@]}" -ge 10 ] && break
	kinds+=("$(go_build "$v" stripped)")
done
pids=()
for ((i = 0; i < N; i++)); do
	nice -n 10 "${kinds[i % ${#kinds[@]}]}" -d 600s -workers 1 2>/dev/null &
	pids+=($!)
done
sleep 1
many_all=$(ready_ms 'Ctrl-C to stop' "$CTXPROF" --all -d 60 -o /dev/null)
all_cpu=$(cpu_ms)
kill "${pids[@]}" 2>/dev/null || true
wait "${pids[@]}" 2>/dev/null || true
all_bound=$(scaled 2000)
printf '\n--all with %d Go processes of %d distinct binaries running, start to "Ctrl-C to stop" (all added): %s ms, %s ms of it on a CPU (must be <= %s: 2000 x bpftrace %s / 107 ms)\n' \
	"$N" "${#kinds[@]}" "$many_all" "$all_cpu" "$all_bound" "$theirs"
if [ "$many_all" = none ]; then
	status=1
else
	awk -v t="$many_all" -v b="$all_bound" 'BEGIN { exit !(t <= b) }' || status=1
fi

# from exec to first sample: a process started after ctxprof-go --all is
# ready, living 2 s; its records' "start" (the first sample's time) against
# the moment just before its exec, median of 5. And the share of its CPU
# time (user + sys, from the shell's rusage of the child it waited for)
# that its samples account for: samples x period / CPU time, >= 0.8.
: >"$work/latency"
: >"$work/captured"
TIMEFORMAT='%3U %3S'
for ((i = 1; i <= 5; i++)); do
	ctxprof_start "$work/l.err" "$work/l.jsonl" --all -F 999 -i 1 2>/dev/null || { status=1; break; }
	t0=$EPOCHREALTIME
	read -r user sys < <({ time { "$traced" -d 2s -workers 1 >/dev/null 2>&1 & echo $! >"$work/lp"; wait; }; } 2>&1)
	lp=$(cat "$work/lp")
	ctxprof_stop || true
	read -r first cpu_ns < <(jq -s -r --argjson p "$lp" 'map(select(.pid == $p)) |
		"\(map(.start) | min // "none") \(map(.cpu_ns) | add // 0)"' "$work/l.jsonl")
	if [ "$first" = none ]; then
		echo "bench: a process started after --all was never sampled" >&2
		status=1
		continue
	fi
	# RFC 3339 with microseconds, UTC
	first_us=$(date -u -d "${first%Z}" +%s%6N 2>/dev/null)
	awk -v a="$(usec "$t0")" -v b="$first_us" 'BEGIN { printf "%.1f\n", (b - a) / 1000 }' >>"$work/latency"
	awk -v n="$cpu_ns" -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f\n", n / 1e9 / (u + s) }' >>"$work/captured"
done
captured=$(median_of <"$work/captured")
printf 'from exec to the first sample of a process started under --all: %s ms (median of 5; runs: %s)\n' \
	"$(median_of <"$work/latency")" "$(tr '\n' ' ' <"$work/latency")"
printf 'share of its CPU time (2 s of life) in its samples: %s (median of 5; runs: %s; must be >= 0.8)\n' \
	"$captured" "$(tr '\n' ' ' <"$work/captured")"
awk -v c="${captured:-0}" 'BEGIN { exit !(c >= 0.8) }' || status=1

# 7. the traceparent source's cost
newest=$(go_toolchains | tail -n 1)
printf '\ntraceparent source (go%s testdata/httpserver, 8 connections of testdata/httpload):\n' "$newest"
srv_bin=$(go_build "$newest" plain httpserver)
load_bin=$(go_build "$newest" plain httpload)
"$srv_bin" >"$work/srv.out" 2>&1 &
srv=$!
for _ in $(seq 100); do grep -q '^http ' "$work/srv.out" && break; sleep 0.1; done
port=$(awk '$1 == "http" { print $2 }' "$work/srv.out")
# a bare uprobe: a C call in a loop, with and without an empty bpftrace uprobe on it
cat >"$work/loop.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
__attribute__((noinline)) int hit(int x) { __asm__ volatile(""); return x + 1; }
int main(int argc, char **argv)
{
	long n = atol(argv[1]), i;
	struct timespec a, b;
	int x = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		x = hit(x);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.4f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n / 1000 + x * 0.0);
	return 0;
}
C
gcc -O2 -o "$work/loop" "$work/loop.c"
bare0=$("$work/loop" 2000000)
bpftrace -e "uprobe:$work/loop:hit { }" >"$work/bt.out" 2>&1 &
bp=$!
until grep -qs Attaching "$work/bt.out" || ! kill -0 "$bp" 2>/dev/null; do sleep 0.1; done
# bpftrace says "Attaching" before the probe is on: measure until it is
for _ in $(seq 50); do
	bare1=$("$work/loop" 200000)
	awk -v a="$bare0" -v b="$bare1" 'BEGIN { exit !(b > 100 * a) }' && break
	sleep 0.2
done
kill -INT "$bp" 2>/dev/null || true
wait "$bp" 2>/dev/null || true
bare_us=$(awk -v a="$bare0" -v b="$bare1" 'BEGIN { printf "%.2f", b - a }')
printf 'a bare uprobe hit: %s us (a C call: %s us bare, %s us under an empty bpftrace uprobe)\n' \
	"$bare_us" "$bare0" "$bare1"
http_runs() { bpftool prog show -j | jq -r '[.[] | select(.name == "http_request") | .run_cnt // 0] | add // 0'; }
sample_stats() { bpftool prog show -j | jq -r '[.[] | select(.name == "on_sample")] | first // {} | "\(.run_time_ns // 0) \(.run_cnt // 0)"'; }
# what the same hit costs bare: an empty bpftrace uprobe at the function an
# HTTP/1.1 request hits (its entry, which the kernel steps out of line;
# ctxprof-go's is on the branch after it, which it emulates)
cat >"$work/bare.bt" <<BT
uprobe:$srv_bin:"net/http.serverHandler.ServeHTTP" /pid == $srv/ { }
BT
# the server's CPU time, in ns, over all its threads: the probes' traps and
# programs run on them, so their cost shows here, whatever the rate does
srv_cpu() { cat /proc/"$srv"/task/*/schedstat | awk '{ t += $1 } END { printf "%.0f", t }'; }
# rate: "REQUESTS RATE SERVER_CPU_NS_PER_REQUEST" of a 5 s run
rate() {
	local c0 c1 n r
	c0=$(srv_cpu)
	read -r _ n _ _ _ r < <("$load_bin" -url "http://$port/small" -c 8 -d 5s) || return 1
	c1=$(srv_cpu)
	echo "$n $r $(((c1 - c0) / n))"
}
: >"$work/rps"
# the rates swing between runs here: more rounds than elsewhere, medians
ROUNDS7=${ROUNDS7:-5}
for ((r = 1; r <= ROUNDS7; r++)); do
	read -r _ rps0 cpu0 < <(rate) || { status=1; break; }
	bpftrace "$work/bare.bt" >"$work/bt.out" 2>&1 &
	bp=$!
	until grep -qs Attaching "$work/bt.out" || ! kill -0 "$bp" 2>/dev/null; do sleep 0.1; done
	read -r _ rps_bare cpu_bare < <(rate) || { status=1; break; }
	kill -INT "$bp" 2>/dev/null || true
	wait "$bp" 2>/dev/null || true
	ctxprof_start "$work/t.err" /dev/null -p "$srv" 2>/dev/null || { status=1; break; }
	h0=$(http_runs)
	read -r st0 sn0 < <(sample_stats)
	read -r n1 rps1 cpu1 < <(rate) || { status=1; break; }
	h1=$(http_runs)
	read -r st1 sn1 < <(sample_stats)
	read -r ht hn < <(bpftool prog show -j | jq -r '[.[] | select(.name == "http_request")][0] | "\(.run_time_ns // 0) \(.run_cnt // 0)"')
	ctxprof_stop || true
	hits=$(awk -v h="$((h1 - h0))" -v n="$n1" 'BEGIN { printf "%.3f", h / n }')
	over=$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { printf "%.2f", (b - a) / 1000 }')
	over_bare=$(awk -v a="$cpu0" -v b="$cpu_bare" 'BEGIN { printf "%.2f", (b - a) / 1000 }')
	per_sample=$(awk -v t="$((st1 - st0))" -v n="$((sn1 - sn0))" 'BEGIN { printf "%.0f", n ? t / n : 0 }')
	per_hit=$(awk -v t="$ht" -v n="$hn" 'BEGIN { printf "%.0f", n ? t / n : 0 }')
	printf 'round %d: req/s %s without, %s with empty uprobes, %s with ctxprof-go; server CPU per request %.1f us, %.1f us, %.1f us: %s probe hits per request, %s us more bare, %s us more with ctxprof-go (BPF %s ns per hit); on_sample %s ns per sample\n' \
		"$r" "$rps0" "$rps_bare" "$rps1" "$(awk -v c="$cpu0" 'BEGIN { print c / 1000 }')" \
		"$(awk -v c="$cpu_bare" 'BEGIN { print c / 1000 }')" "$(awk -v c="$cpu1" 'BEGIN { print c / 1000 }')" \
		"$hits" "$over_bare" "$over" "$per_hit" "$per_sample"
	echo "$hits $over $per_sample $over_bare $per_hit" >>"$work/rps"
done
hits=$(cut -d' ' -f1 "$work/rps" | median_of)
over=$(cut -d' ' -f2 "$work/rps" | median_of)
per_sample=$(cut -d' ' -f3 "$work/rps" | median_of)
over_bare=$(cut -d' ' -f4 "$work/rps" | median_of)
per_hit=$(cut -d' ' -f5 "$work/rps" | median_of)
over_ratio=$(awk -v o="$over" -v b="$over_bare" 'BEGIN { printf "%.2f", o / b }')
printf 'probe hits per request: %s (must be <= 1)\n' "$hits"
printf 'overhead per request (server CPU): %s us, against %s us for the same hits bare (empty uprobes there): %s x (must be <= 1.2); %s us for them from the C loop; BPF %s ns per hit\n' \
	"$over" "$over_bare" "$over_ratio" "$(awk -v h="$hits" -v b="$bare_us" 'BEGIN { printf "%.1f", h * b }')" "$per_hit"
awk -v h="$hits" 'BEGIN { exit !(h <= 1.05) }' || status=1
awk -v r="$over_ratio" 'BEGIN { exit !(r <= 1.2) }' || status=1
theirs_med=$(cut -d' ' -f2 "$work/rounds" | median_of)
sample_ratio=$(awk -v a="$per_sample" -v b="$theirs_med" 'BEGIN { printf "%.2f", a / b }')
printf 'BPF time per sample while requests are traced: %s ns, %s of bpftrace'"'"'s walk in 2 (must be <= 1.0)\n' \
	"$per_sample" "$sample_ratio"
awk -v r="$sample_ratio" 'BEGIN { exit !(r <= 1.0) }' || status=1
# 1,000,000 goroutines, taking turns without and with: the server's CPU
# time for them (the wall time swings with the scheduler here)
: >"$work/spawn"
spawn_cpu() {
	local c0 c1
	c0=$(srv_cpu)
	curl -sS "http://$port/spawn?n=1000000" >/dev/null || return 1
	c1=$(srv_cpu)
	echo $((c1 - c0))
}
spawn_cpu >/dev/null
for ((r = 1; r <= 7; r++)); do
	without=$(spawn_cpu)
	ctxprof_start "$work/t.err" /dev/null -p "$srv" 2>/dev/null || { status=1; break; }
	h0=$(http_runs)
	with=$(spawn_cpu)
	h1=$(http_runs)
	ctxprof_stop || true
	# the /spawn request itself is 2 hits
	echo "$without $with $((h1 - h0 - 2))" >>"$work/spawn"
	printf 'round %d: 1,000,000 goroutines in %d ms of CPU without, %d ms with; probe hits beyond the request: %d\n' \
		"$r" $((without / 1000000)) $((with / 1000000)) $((h1 - h0 - 2))
done
spawn_without=$(cut -d' ' -f1 "$work/spawn" | median_of)
spawn_with=$(cut -d' ' -f2 "$work/spawn" | median_of)
spawn_hits=$(cut -d' ' -f3 "$work/spawn" | sort -n | tail -n 1)
spawn_ratio=$(awk -v a="$spawn_without" -v b="$spawn_with" 'BEGIN { printf "%.3f", b / a }')
printf 'goroutine starts: %s probe hits per 1,000,000; %s ms of CPU with against %s ms without, ratio %s (must be 0 hits, <= 1.02)\n' \
	"$spawn_hits" $((spawn_with / 1000000)) $((spawn_without / 1000000)) "$spawn_ratio"
[ "$spawn_hits" = 0 ] || status=1
awk -v r="$spawn_ratio" 'BEGIN { exit !(r <= 1.02) }' || status=1
kill "$srv" 2>/dev/null || true

# 7b. Go 1.19 has no g.parentGoid: a probe where goroutines start hands a
# request's context on, within a budget: a share of the server's CPU
# (--goroutine-start-share, default 2%) at the price of a hit; past it
# the probe rests until its period (0.1 s) is over. A server that starts 10,000 goroutines a second:
# testdata/httpserver (go1.19) /fan, each request starting 10 goroutines
# that run 20,000 rounds of xorshift (about 40 us of work each), at 1,000
# requests a second from 8 connections, 10 s a load, every request under
# a traceparent. Per round, four loads in turns (the order rotates): no
# ctxprof-go; ctxprof-go without the probe (--max-goroutine-starts 0: the
# request probes alone); with the default budget; with no budget to speak
# of (--goroutine-start-share 100). The probe's cost is each against the second: without a
# budget, the extra CPU per hit <= 1.2x a bare uprobe hit (the C loop of
# 7); with it, its hits at that cost <= 2% of the server's CPU (the
# difference of the two loads is printed too). With the budget, the
# share of main.fanChildBurn samples that carry a trace ID is what the
# probe catches, and the statistics line's count of starts it saw and
# missed says the same.
printf '\ngoroutine starts on Go 1.19 (testdata/httpserver /fan, 10,000 goroutines a second):\n'
srv_bin=$(go_build 1.19 plain httpserver)
"$srv_bin" >"$work/srv19.out" 2>&1 &
srv=$!
for _ in $(seq 100); do grep -q '^http ' "$work/srv19.out" && break; sleep 0.1; done
port=$(awk '$1 == "http" { print $2 }' "$work/srv19.out")
fan_cpu() {
	local c0
	c0=$(srv_cpu)
	"$load_bin" -url "http://$port/fan?kids=10&grandkids=0&loops=20000" -c 8 -rate 1000 -d 10s >/dev/null ||
		return 1
	echo $(($(srv_cpu) - c0))
}
# fan_load KIND: the server's CPU over one load, ctxprof-go attached as KIND says
# (none, off, budget, unbudgeted); with ctxprof-go, the probe's hits and
# ctxprof-go's own CPU in ms after it
fan_load() {
	local kind=$1 cpu h0 h1 own0 own1
	local -a args=()
	case $kind in
	none) fan_cpu; return ;;
	off) args=(--max-goroutine-starts 0) ;;
	unbudgeted) args=(--goroutine-start-share 100) ;;
	esac
	ctxprof_start "$work/fan-$kind.err" "$work/fan-$kind.jsonl" -p "$srv" "${args[@]}" 2>/dev/null || return 1
	h0=$(bpftool prog show -j | jq -r '[.[] | select(.name == "http_request")][0].run_cnt // 0')
	own0=$(awk '{ print $14 + $15 }' /proc/"$ctxprof"/stat)
	cpu=$(fan_cpu) || return 1
	own1=$(awk '{ print $14 + $15 }' /proc/"$ctxprof"/stat)
	h1=$(bpftool prog show -j | jq -r '[.[] | select(.name == "http_request")][0].run_cnt // 0')
	ctxprof_stop || return 1
	echo "$cpu $((h1 - h0)) $(((own1 - own0) * 10))"
}
fan_cpu >/dev/null
: >"$work/fan"
kinds=(none off budget unbudgeted)
sysctl -qw kernel.bpf_stats_enabled=1
for ((r = 1; r <= ${ROUNDS7:-5}; r++)); do
	declare -A fan_of=()
	for ((k = 0; k < 4; k++)); do
		kind=${kinds[$(((k + r) % 4))]}
		fan_of[$kind]=$(fan_load "$kind") || { status=1; break 2; }
	done
	read -r c_none _ <<<"${fan_of[none]}"
	read -r c_off h_off o_off <<<"${fan_of[off]}"
	read -r c_bud h_bud o_bud <<<"${fan_of[budget]}"
	read -r c_unb h_unb o_unb <<<"${fan_of[unbudgeted]}"
	shares=$(jq -s -r '[.[] | select(.origin == "sampling") | .trace_id as $t | .stacks[] |
		select(any(.frames[]; .func == "main.fanChildBurn")) | {n: .samples, t: ($t != null)}] |
		"\(map(select(.t)) | map(.n) | add // 0) \(map(.n) | add // 0)"' "$work/fan-budget.jsonl")
	read -r traced total <<<"$shares"
	said=$(grep -o 'saw [0-9]* goroutine starts.*about [0-9]*' "$work/fan-budget.err" |
		awk '{ print $2, $NF }')
	echo "$c_none $c_off $c_bud $c_unb $h_off $h_bud $h_unb $traced $total ${said:-0 0} $o_off $o_bud $o_unb" >>"$work/fan"
	printf 'round %d: server CPU %d ms without ctxprof-go, %d ms without the probe, %d ms with its budget (%s%%, %d probe hits), %d ms without a budget (%s%%, %d hits); with the budget %d of %d main.fanChildBurn samples traced, the probe saw %s starts and missed about %s; ctxprof-go %d, %d and %d ms\n' \
		"$r" $((c_none / 1000000)) $((c_off / 1000000)) $((c_bud / 1000000)) \
		"$(awk -v a="$c_off" -v b="$c_bud" 'BEGIN { printf "%+.1f", 100 * (b - a) / a }')" "$((h_bud - h_off))" \
		$((c_unb / 1000000)) "$(awk -v a="$c_off" -v b="$c_unb" 'BEGIN { printf "%+.1f", 100 * (b - a) / a }')" \
		"$((h_unb - h_off))" "$traced" "$total" ${said:-0 0} "$o_off" "$o_bud" "$o_unb"
done
sysctl -qw kernel.bpf_stats_enabled=0
kill "$srv" 2>/dev/null || true
col() { cut -d' ' -f"$1" "$work/fan" | median_of; }
# each round's share against its own loads, then the median
pct() { awk -v a="$1" -v b="$2" '{ printf "%.2f\n", 100 * ($b - $a) / $a }' "$work/fan" | median_of; }
fan_budget_pct=$(pct 2 3)
fan_unbudgeted_pct=$(pct 2 4)
fan_request_pct=$(pct 1 2)
unb_hits=$(awk '{ print $7 - $5 }' "$work/fan" | median_of)
# a hit's price from the sums of every round: a round's difference of two
# loads swings by a few percent of the server's CPU either way, as much as
# the probe costs, so a median of per-round prices is as noisy as one round
per_start=$(awk '{ d += $4 - $2; h += $7 - $5 } END { printf "%.2f", (h > 0 ? d / 1000 / h : 0) }' "$work/fan")
per_start_ratio=$(awk -v p="$per_start" -v b="$bare_us" 'BEGIN { printf "%.2f", p / b }')
# the budget's share as its hits times what a hit costs (the rounds without
# a budget): steadier than the difference of two loads, which swings by a
# few percent either way from round to round
budget_hits=$(awk '{ print $6 - $5 }' "$work/fan" | median_of)
fan_budget_derived=$(awk -v h="$budget_hits" -v p="$per_start" -v c="$(col 2)" \
	'BEGIN { printf "%.2f", 100 * h * p * 1000 / c }')
caught=$(awk '{ printf "%.1f\n", $9 ? 100 * $8 / $9 : 0 }' "$work/fan" | median_of)
seen=$(awk '{ printf "%.1f\n", $10 + $11 ? 100 * $10 / ($10 + $11) : 0 }' "$work/fan" | median_of)
printf 'ctxprof-go'"'"'s own CPU a 10 s load: %s ms without the probe, %s ms with its budget, %s ms without a budget\n' \
	"$(col 12)" "$(col 13)" "$(col 14)"
printf 'goroutine-start probe, its budget of 2%% of the server'"'"'s CPU: %s hits a load at %s us each, %s%% of the server'"'"'s CPU (must be <= 2); measured against the request probes alone, %s%% (median of rounds); it caught %s%% of the children'"'"'s samples and saw %s%% of the starts by its own count. Without a budget: %s%% (%s hits a load), %s us a hit, %s x a bare uprobe hit here (%s us; must be <= 1.2). The request probes alone: %s%% over no ctxprof-go\n' \
	"$budget_hits" "$per_start" "$fan_budget_derived" "$fan_budget_pct" "$caught" "$seen" "$fan_unbudgeted_pct" "$unb_hits" "$per_start" "$per_start_ratio" \
	"$bare_us" "$fan_request_pct"
awk -v r="$fan_budget_derived" 'BEGIN { exit !(r <= 2) }' || status=1
awk -v r="$per_start_ratio" 'BEGIN { exit !(r <= 1.2) }' || status=1

# 8. --wall: its own script, which also runs alone
bash "$TOP/tests/bench/wall.sh" || status=1

# 9. --otlp: its own script, which also runs alone
bash "$TOP/tests/bench/otlp.sh" || status=1

# 10. the report page and speedscope: its own script, which also runs alone
bash "$TOP/tests/bench/report.sh" || status=1

# 11. convert's time per MiB: its own script, which also runs alone
bash "$TOP/tests/bench/convert.sh" || status=1

# 12. the agent as the DaemonSet runs it: its own script, which also runs alone
N=200 bash "$TOP/tests/bench/agent.sh" || status=1
N=400 bash "$TOP/tests/bench/agent.sh" || status=1

# 13. a request's lifetime: its own script, which also runs alone
bash "$TOP/tests/bench/lifetime.sh" || status=1

# 14. start-up with 200 busy targets against the build before: its own script, which also runs alone
bash "$TOP/tests/bench/startup.sh" || status=1

# 15. the traceparent source a request, per Go release: its own script, which also runs alone
bash "$TOP/tests/bench/requests.sh" || status=1

# 16. --alloc's price a sampled allocation and at 1 GB/s: its own script, which also runs alone
bash "$TOP/tests/bench/alloc.sh" || status=1
exit $status
