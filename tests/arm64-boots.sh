#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arm64-boots.sh: the first -p of each of BOOTS boots of the emulated arm64 machine samples every target that ran.
#
# The emulated machine's kernel (Linux 6.1 under qemu TCG) in some boots
# never schedules in the per-thread cpu-clock events of the boot's first
# -p recording while their threads run (a WARN in event_function: the
# task's perf context not active), and the recording was empty with exit
# status 0. ctxprof-go now sees that a target's threads used CPU while its
# events counted nothing, warns naming it, and samples every CPU instead.
#
# Each boot (tests/arm64-vm-lib.sh) starts testdata/traced by the oldest
# and the newest toolchain, pure and cgo (-depth 24), and httpserver, and
# records them with -p -v at 199 Hz for 8 s once the server listens: the
# boot's first recording, nothing before it. Per boot: exit status 0, and every traced target has at least 100
# samples. Each boot's line says how many it had, whether ctxprof-go moved
# to every CPU, and the kernel's warnings. Outside make test: BOOTS
# (default 20) boots, each a whole boot and recording; the arm64 ctxprof-go comes
# from tests/arm64-build.sh, or A64=FILE names another (an older build).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/arm64-vm-lib.sh"

BOOTS=${BOOTS:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/stage
why=$(vm_stage "$stage" "${A64:-$OUTPUT/arm64/ctxprof-go}") || { not_ok "$why"; done_testing; }
vm_prepare || { not_ok "the arm64 kernel and busybox could not be fetched"; done_testing; }
newest=$(go_toolchains | tail -n 1)
bin=$(go_build "$newest" arm64 httpserver) || { not_ok "go$newest arm64 httpserver: build failed"; done_testing; }
cp "$bin" "$stage/t/httpserver"
cat >"$stage/test.sh" <<'EOF'
#!/bin/sh
# the boot's first -p: four traced builds and an idle httpserver
out=/out
pids=
for b in /t/traced-*; do
	$b -d 600s -depth 24 >/dev/null 2>&1 &
	echo "$! ${b#/t/}" >>$out/pids
	pids=$pids,$!
done
/t/httpserver >$out/srv.addr 2>/dev/null &
srv=$!
i=0
while [ $i -lt 600 ] && [ "$(grep -c . $out/srv.addr)" -lt 2 ]; do
	sleep 0.1
	i=$((i + 1))
done
ctxprof-go -v -p "${pids#,},$srv" -F 199 -d 8 -o $out/cpu.jsonl 2>$out/cpu.err
echo $? >$out/cpu.rc
dmesg >$out/dmesg
EOF

empty=0
for ((i = 1; i <= BOOTS; i++)); do
	res=$work/boot$i
	if ! vm_run "$stage" 600 "$res" 2>"$work/vm.err"; then
		not_ok "boot $i: the machine did not finish: $(tail -n 3 "$work/vm.err" "$res/console.log" 2>/dev/null | tr '\n' ' ')"
		continue
	fi
	check_eq "boot $i: ctxprof-go -p exit status" 0 "$(cat "$res/cpu.rc" 2>/dev/null)"
	fewest=
	while read -r p name; do
		n=$(jq -s --argjson p "$p" '[.[] | select(.pid == $p) | .stacks[].samples] | add // 0' "$res/cpu.jsonl")
		[ -z "$fewest" ] || [ "$n" -lt "${fewest%% *}" ] && fewest="$n $name"
	done <"$res/pids"
	moved=$(grep -c 'every CPU from now on' "$res/cpu.err")
	warns=$(grep -c 'WARNING' "$res/dmesg")
	[ "$moved" -gt 0 ] && empty=$((empty + 1))
	detail="$(grep -o '[0-9]* samples from [0-9]* targets' "$res/cpu.err"); moved to every CPU: $moved; kernel warnings: $warns"
	if [ "${fewest%% *}" -ge 100 ]; then
		ok "boot $i: every traced target sampled, the fewest $fewest ($detail)"
	else
		not_ok "boot $i: a traced target with ${fewest:-no} samples ($detail): $(grep -E 'warning' "$res/cpu.err" | head -n 3 | tr '\n' ' ')"
	fi
done
echo "# $BOOTS boots; in $empty the kernel ran no per-thread event and ctxprof-go moved to every CPU"
done_testing
