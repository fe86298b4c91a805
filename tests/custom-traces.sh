#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# custom-traces.sh: the tail-call entry point (--pin), --uprobe on C and Go functions, and lost-event accounting.
#
# Builds testdata/custom: example_tailcall.bpf.o (clang, against the
# vmlinux.h of this build), its libbpf loader, and report_trace (gcc), which
# calls report_trace(0x1000 + i) for i in 0..4, or 0..N-1, and exits at once.
# 1. ctxprof-go --pin: the loader joins the pins and tail-calls
#    custom__generic from its own uprobe. For each of 3 runs of
#    report_trace, exactly 5 "custom" records with its pid, contexts 4096
#    to 4100, each stack starting with report_trace, main,
#    __libc_start_call_main (the last when this libc names it: see
#    libc_caller_of_main), although the process is gone microseconds after
#    its events. Pins are root-only, refused for a second live instance,
#    replaced when stale, refused outside bpffs, and gone after exit.
# 2. --uprobe on the C function: the same records and frames, origin
#    "uprobe".
# 3. --uprobe on main.burnDo of testdata/traced (oldest and newest toolchain:
#    map and slice labels; plain and stripped): every record has burnDo's
#    first argument (the -slice duration in ns) and traceDo's trace ID, with
#    main.jobDo.func1, its caller, as the second frame.
# 4. A burst of 100,000 calls: reported plus lost equals 100,000.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "custom traces"
pindir=/sys/fs/bpf/ctxprof-test-$$
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work" "$pindir"' EXIT

# build the example as a user would
ex=$work/ex
mkdir -p "$ex"
if ! clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -I"$OUTPUT" -c \
	"$TOP/testdata/custom/example_tailcall.bpf.c" -o "$ex/example_tailcall.bpf.o" ||
	! gcc -O2 -Wall "$TOP/testdata/custom/loader.c" -o "$ex/loader" -lbpf ||
	! gcc -O1 -g -fno-omit-frame-pointer "$TOP/testdata/custom/report_trace.c" -o "$ex/report_trace"; then
	not_ok "building testdata/custom failed"
	done_testing
fi
ok "testdata/custom builds: example_tailcall.bpf.o, loader, report_trace"

# libc_caller_of_main LIBC: prints __libc_start_call_main when some file the
# symbolizer reads names it. glibc 2.34 and later call main from it, but it
# is a local symbol: not in .dynsym, only in a .symtab, in .gnu_debugdata
# (MiniDebugInfo), or in the detached debug file found by build ID
# (Debian's libc6-dbg). With none of these nothing can name it.
libc_caller_of_main() {
	local libc=$1 id f
	id=$(readelf -nW "$libc" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
	for f in "$libc" ${id:+/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug}; do
		[ -r "$f" ] || continue
		if readelf -sW "$f" 2>/dev/null | awk '$4 == "FUNC" && $8 == "__libc_start_call_main" { found = 1 } END { exit !found }'; then
			echo __libc_start_call_main
			return
		fi
	done
	if readelf -SW "$libc" 2>/dev/null | grep -q '\.gnu_debugdata' &&
		objcopy --dump-section .gnu_debugdata="$work/debugdata.xz" "$libc" "$work/libc.tmp" 2>/dev/null &&
		xz -dc "$work/debugdata.xz" >"$work/debugdata" 2>/dev/null &&
		readelf -sW "$work/debugdata" | awk '$8 == "__libc_start_call_main" { found = 1 } END { exit !found }'; then
		echo __libc_start_call_main
	fi
}
libc=$(ldd "$ex/report_trace" | awk '$1 ~ /^libc\.so/ { print $3 }')
third=$(libc_caller_of_main "$libc")
if [ -n "$third" ]; then
	want_frames='["report_trace","main","__libc_start_call_main"]'
	ok "main's caller in $libc has a name here: $third (libc6-dbg or a symbol table)"
else
	want_frames='["report_trace","main"]'
	skip "third frame __libc_start_call_main" "$libc has no symbol table, MiniDebugInfo or installed debug file (libc6-dbg) naming it; requiring the first two frames"
fi

# run_report_trace: runs report_trace $RUNS times, one after the other, and
# keeps their pids in rps. Each process exits microseconds after its last
# event, so whether frames get names depends on a race that several runs
# lose more surely than one.
RUNS=3
run_report_trace() {
	local i
	rps=()
	for ((i = 0; i < RUNS; i++)); do
		"$ex/report_trace" >/dev/null &
		rps+=($!)
		wait $!
	done
}
# check_report_records WHAT ORIGIN JSONL: one verdict per run of report_trace:
# exactly 5 records of ORIGIN, contexts 4096 to 4100, one sample each, and
# every stack starting with want_frames
check_report_records() {
	local rp got
	for rp in "${rps[@]}"; do
		got=$(jq -s -c --argjson pid "$rp" --arg origin "$2" --argjson want "$want_frames" '
			[.[] | select(.pid == $pid and .origin == $origin)] |
			{n: length, contexts: (map(.context) | sort),
			 frames: (map([.stacks[0].frames[:($want | length)][].func]) | unique),
			 samples: (map(.stacks | map(.samples)) | unique)}' "$3")
		check_eq "$1 (pid $rp, exits at once)" \
			"{\"n\":5,\"contexts\":[4096,4097,4098,4099,4100],\"frames\":[$want_frames],\"samples\":[[1]]}" "$got"
	done
}

# the mount: with nothing on /sys/fs/bpf, --pin mounts it. The tests'
# own runs leave OBI's map there (the obi source pins it for OBI): only
# that is no one else's.
if mountpoint -q /sys/fs/bpf && [ -z "$(ls -A /sys/fs/bpf | grep -v -e '^maps.debug$' -e '^progs.debug$' -e '^otel$')" ] &&
	[ -z "$(ls -A /sys/fs/bpf/otel 2>/dev/null | grep -v -x traces_ctx_v1)" ]; then
	umount /sys/fs/bpf
fi
if mountpoint -q /sys/fs/bpf; then
	skip "--pin mounts bpffs on /sys/fs/bpf" "/sys/fs/bpf holds other pins here; not unmounting it"
	mounted_by_us=
else
	mounted_by_us=1
fi

# 1. the tail call
if ! ctxprof_start "$work/pin.err" "$work/pin.jsonl" --pin "$pindir"; then
	not_ok "ctxprof-go --pin $pindir did not start: $(tr '\n' ' ' <"$work/pin.err")"
	done_testing
fi
if [ -n "$mounted_by_us" ]; then
	if mountpoint -q /sys/fs/bpf && grep -q 'mounted bpffs' "$work/pin.err"; then
		ok "--pin mounted bpffs on /sys/fs/bpf, which had nothing mounted"
	else
		not_ok "--pin did not mount bpffs on /sys/fs/bpf"
	fi
fi
check_eq "pins are root-only files" "600 root 600 root" \
	"$(stat -c '%a %U' "$pindir/custom__generic" "$pindir/custom_context_map" | tr '\n' ' ' | sed 's/ $//')"
prog_id=$(bpftool prog show pinned "$pindir/custom__generic" -j | jq .id)

# a second instance must not take over, or touch, the live pins
"$CTXPROF" --pin "$pindir" -d 1 -o /dev/null 2>"$work/second.err"
rc=$?
if [ "$rc" -ne 0 ] && grep -q "pinned by a running ctxprof-go (pid $ctxprof)" "$work/second.err" &&
	[ "$(bpftool prog show pinned "$pindir/custom__generic" -j | jq .id)" = "$prog_id" ]; then
	ok "a second --pin on live pins is refused ($(head -n 1 "$work/second.err")), pins untouched"
else
	not_ok "a second --pin on live pins: exit $rc, $(tr '\n' ' ' <"$work/second.err")"
fi

"$ex/loader" "$pindir" "$ex/example_tailcall.bpf.o" "$ex/report_trace" >"$work/loader.out" 2>&1 &
lp=$!
# its BPF load, like ctxprof-go's, can take many seconds on a busy machine
for ((i = 0; i < 3000; i++)); do
	grep -qs ready "$work/loader.out" && break
	kill -0 "$lp" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q ready "$work/loader.out"; then
	not_ok "the example loader did not attach: $(tr '\n' ' ' <"$work/loader.out")"
else
	run_report_trace
	sleep 0.5
	kill -INT "$lp"
	wait "$lp"
	ctxprof_stop
	check_report_records "tail call: custom records of report_trace" custom "$work/pin.jsonl"
	schema_verdict "tail call: custom records" "$work/pin.jsonl"
	if [ ! -e "$pindir/custom__generic" ] && [ ! -e "$pindir/custom_context_map" ]; then
		ok "the pins are gone after exit"
	else
		not_ok "pins left behind in $pindir: $(ls "$pindir")"
	fi
fi

# stale pins, left by an instance that was killed, are replaced
ctxprof_start "$work/k.err" /dev/null --pin "$pindir"
kill -9 "$ctxprof"
wait "$ctxprof" 2>/dev/null
if [ -e "$pindir/custom__generic" ] && ctxprof_start "$work/stale.err" /dev/null --pin "$pindir" &&
	grep -q 'replaced the stale pin' "$work/stale.err"; then
	ok "pins of a killed instance are replaced: $(grep -m1 stale "$work/stale.err")"
else
	not_ok "stale pins: $(tr '\n' ' ' <"$work/stale.err" 2>/dev/null)"
fi
ctxprof_stop

"$CTXPROF" --pin "$work/not-bpffs" -d 1 -o /dev/null 2>"$work/nobpffs.err"
rc=$?
if [ "$rc" -ne 0 ] && grep -q 'not a directory on a BPF filesystem' "$work/nobpffs.err"; then
	ok "--pin outside bpffs is refused: $(head -n 1 "$work/nobpffs.err")"
else
	not_ok "--pin outside bpffs: exit $rc, $(tr '\n' ' ' <"$work/nobpffs.err")"
fi

# 2. --uprobe on the C function
if ctxprof_start "$work/c.err" "$work/c.jsonl" --uprobe "$ex/report_trace:report_trace"; then
	run_report_trace
	sleep 0.5
	ctxprof_stop
	check_report_records "--uprobe report_trace:report_trace (C, RDI)" uprobe "$work/c.jsonl"
else
	not_ok "ctxprof-go --uprobe on report_trace did not start: $(tr '\n' ' ' <"$work/c.err")"
fi

# 3. --uprobe on a Go function inside pprof.Do
declare -A c
while IFS== read -r k val; do c[$k]=$val; done < <(traced_constants)
first=$(go_toolchains | head -n 1)
last=$(go_toolchains | tail -n 1)
args=()
pids=()
declare -A name_of
for v in $(printf '%s\n' "$first" "$last" | sort -u); do
	for var in plain stripped; do
		bin=$(go_build "$v" "$var") || { not_ok "go$v $var: build failed"; continue; }
		args+=(--uprobe "$bin:main.burnDo")
		nice -n 10 "$bin" -d 600s -slice 3ms 2>/dev/null &
		pids+=($!)
		name_of[$!]="go$v $var"
	done
done
# enough OUT: 10 records for each target, the bound checked below
enough() {
	jq -s -e --argjson n "${#pids[@]}" 'group_by(.pid) | length == $n and all(.[]; length >= 10)' "$1" >/dev/null 2>&1
}
if ctxprof_start "$work/go.err" "$work/go.jsonl" "${args[@]}" -i 1; then
	samples_wait 3 120 enough "$work/go.jsonl"
	ctxprof_stop
	kill "${pids[@]}" 2>/dev/null
	for p in "${pids[@]}"; do
		got=$(jq -s -c --argjson pid "$p" '[.[] | select(.pid == $pid)] |
			{enough: (length >= 10), origin: (map(.origin) | unique), contexts: (map(.context) | unique),
			 traces: (map(.trace_id) | unique), leaf: (map(.stacks[0].frames[0].func) | unique),
			 caller: (map(.stacks[0].frames[1].func) | unique), goid: (map(.goid != null) | all)}' "$work/go.jsonl")
		check_eq "${name_of[$p]} --uprobe main.burnDo (Go, RAX)" \
			"{\"enough\":true,\"origin\":[\"uprobe\"],\"contexts\":[3000000],\"traces\":[\"${c[traceDo]}\"],\"leaf\":[\"main.burnDo\"],\"caller\":[\"main.jobDo.func1\"],\"goid\":true}" \
			"$got"
	done
	schema_verdict "--uprobe records of Go functions" "$work/go.jsonl"
else
	not_ok "ctxprof-go --uprobe on main.burnDo did not start: $(tr '\n' ' ' <"$work/go.err")"
fi

# 4. a burst: every event reported or counted as lost
if ctxprof_start "$work/burst.err" "$work/burst.jsonl" --uprobe "$ex/report_trace:report_trace"; then
	"$ex/report_trace" 100000 >/dev/null
	sleep 0.5
	ctxprof_stop
	line=$(grep 'custom-trace and uprobe events' "$work/burst.err")
	read -r seen reported lost unwritten < <(sed -n \
		's/.*: \([0-9]*\) custom-trace and uprobe events: \([0-9]*\) reported, \([0-9]*\) lost.*, \([0-9]*\) not written/\1 \2 \3 \4/p' \
		<<<"$line")
	records=$(wc -l <"$work/burst.jsonl")
	if [ "${seen:-0}" -eq 100000 ] && [ $((reported + lost)) -eq 100000 ] && [ "$records" -eq "$reported" ] &&
		[ "$unwritten" -eq 0 ]; then
		ok "100,000 calls in a burst: $reported records + $lost counted lost = 100000"
	else
		not_ok "burst of 100,000: $records records; statistics: ${line:-none}"
	fi
else
	not_ok "ctxprof-go --uprobe for the burst did not start"
fi

# errors name their cause
"$CTXPROF" --uprobe "$ex/report_trace:no_such_function" -d 1 -o /dev/null 2>"$work/e1.err"
rc=$?
check_eq "--uprobe on a missing symbol fails" "1 yes" "$rc $(grep -q 'no_such_function' "$work/e1.err" && echo yes)"
"$CTXPROF" --uprobe "/nonexistent:main.main" -d 1 -o /dev/null 2>"$work/e2.err"
rc=$?
check_eq "--uprobe on a missing binary fails" "1 yes" "$rc $(grep -q '/nonexistent' "$work/e2.err" && echo yes)"
done_testing
