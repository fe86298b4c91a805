#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arm64-build.sh: make ARCH=arm64 on this x86 machine gives an arm64 ctxprof-go, whose reader and converter agree with the x86 build's under qemu-user.
#
# The tracked tree is copied, so that the cross build leaves this
# checkout's ./ctxprof-go alone; its objects, the arm64 sysroot and the
# arm64 kernel's BTF go to .output/arm64 (tests/arm64-sysroot.sh, once).
# Then, run by qemu-aarch64-static against the sysroot's libraries: --help;
# check --json on the oldest and newest toolchain's plain and stripped
# amd64 builds of testdata/traced, byte for byte the x86 build's answer;
# convert -f of testdata/records, the same lines. The reader on arm64 Go
# builds of every toolchain, pure and cgo, plain and stripped: supported,
# g in R28 without cgo and at runtime.tls_g's slot with it, offsets the
# amd64 build's (one golayout row serves both), and what stripped copies
# give from the code (runtime.load_g, runtime.allgadd) what the symbols
# say. --alloc's probe on arm64 builds of testdata/allocs (oldest and
# newest toolchain, plain and stripped): found, with the size argument the
# toolchain has, the same from both builds. The built binary is kept as
# $OUTPUT/arm64/ctxprof-go for the emulated machine (arm64-vm.sh):
# sampling needs an arm64 kernel. A plain make after it gives an x86
# ./ctxprof-go again.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

start=$SECONDS
for tool in aarch64-linux-gnu-gcc qemu-aarch64-static; do
	command -v "$tool" >/dev/null || { not_ok "$tool missing (make deps installs it)"; done_testing; }
done
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
(cd "$TOP" && git ls-files -z | tar --null -cf - -T -) | tar -xf - -C "$src"
arm=$OUTPUT/arm64
if make -C "$src" -j2 ARCH=arm64 OUTPUT="$(realpath -m "$arm")" >"$src/build.log" 2>&1; then
	ok "make ARCH=arm64: built in $((SECONDS - start)) s ($(grep -c '^  CC ' "$src/build.log") objects)"
else
	not_ok "make ARCH=arm64 failed: $(tail -n 5 "$src/build.log")"
	done_testing
fi
what=$(readelf -h "$src/ctxprof-go" 2>&1 | awk -F': *' '$1 ~ /Machine|Type/ { printf "%s%s", sep, $2; sep = ", " }')
if grep -q 'AArch64' <<<"$what"; then
	ok "./ctxprof-go is an arm64 program: $what"
	cp "$src/ctxprof-go" "$arm/ctxprof-go"
else
	not_ok "./ctxprof-go is not an arm64 program: $what"
fi
# the build follows ARCH: a plain make after make ARCH=arm64 links an x86
# ./ctxprof-go again (the objects of each are kept apart)
cp "$src/ctxprof-go" "$src/ctxprof-go.arm64"
if make -C "$src" -j2 >"$src/build-x86.log" 2>&1 &&
	readelf -h "$src/ctxprof-go" 2>/dev/null | grep -q 'Advanced Micro Devices X86-64'; then
	ok "make ARCH=arm64, then make: an x86 ./ctxprof-go again"
else
	not_ok "make after make ARCH=arm64: $(readelf -h "$src/ctxprof-go" 2>&1 | grep Machine; tail -n 3 "$src/build-x86.log")"
fi
cp "$src/ctxprof-go.arm64" "$src/ctxprof-go"
# the BPF programs read arm64's registers (user_pt_regs), from its own kernel's BTF
btf=$(bpftool btf dump file "$arm/ctxprof.bpf.o" 2>&1)
if grep -q "STRUCT 'user_pt_regs'" <<<"$btf" && ! grep -q "STRUCT 'pt_regs' size=168" <<<"$btf"; then
	ok "the BPF object reads arm64's registers (user_pt_regs, not x86's 168-byte pt_regs)"
else
	not_ok "the BPF object is not arm64's"
fi

a64() { qemu-aarch64-static -L "$arm/sysroot" "$src/ctxprof-go" "$@"; }
out=$(a64 --help 2>&1)
check_eq "--help under qemu-aarch64: exit status" 0 "$?"
grep -q '^Usage: ctxprof-go -p PID' <<<"$out" && ok "--help under qemu-aarch64: the usage" ||
	not_ok "--help under qemu-aarch64: $(head -n 3 <<<"$out")"

# the reader on arm64 Go programs of every toolchain: the same answer from
# both builds (oldest and newest toolchain; qemu-user is slow), and what it
# finds, with the x86 build, for every one
declare -A tls_src=([arm64]=register [arm64-stripped]=register [arm64-cgo]=tlsg [arm64-cgo-stripped]=load_g)
newest=$(go_toolchains | tail -n 1)
oldest=$(go_toolchains | head -n 1)
for v in $(go_toolchains); do
	x86=$("$CTXPROF" check --json "$(go_build "$v" plain)" 2>/dev/null | jq -c .offsets)
	for var in arm64 arm64-stripped arm64-cgo arm64-cgo-stripped; do
		bin=$(go_build "$v" "$var") || { not_ok "go$v $var: build failed"; continue; }
		json=$("$CTXPROF" check --json "$bin" 2>/dev/null)
		if [ "$v" = "$oldest" ] || [ "$v" = "$newest" ]; then
			check_eq "check --json go$v $var: the arm64 build's answer is the x86 one's" \
				"$json" "$(a64 check --json "$bin" 2>/dev/null)"
		fi
		got=$(jq -c '{arch, supported, problems, tls_source, wall: (.wall | .supported)}' <<<"$json")
		check_eq "check go$v $var: supported, g ${tls_src[$var]}" \
			"{\"arch\":\"arm64\",\"supported\":true,\"problems\":[],\"tls_source\":\"${tls_src[$var]}\",\"wall\":true}" "$got"
		case $var in
		arm64 | arm64-stripped) want=null ;;
		# runtime.tls_g first in the executable's block, after the 16-byte TCB
		*) want=16 ;;
		esac
		check_eq "check go$v $var: tls_g_offset" "$want" "$(jq -c .tls_g_offset <<<"$json")"
		# the runtime's structures are laid out as amd64's: one golayout row serves both
		check_eq "check go$v $var: offsets ($(jq -r .source <<<"$json")) are the amd64 build's" \
			"$x86" "$(jq -c .offsets <<<"$json")"
		case $var in
		arm64 | arm64-cgo)
			# its stripped copy, same addresses: what the code gives is what the symbols say
			strip=$src/stripped-$v-$var
			aarch64-linux-gnu-strip -o "$strip" "$bin"
			sj=$("$CTXPROF" check --json "$strip" 2>/dev/null)
			check_eq "check go$v $var, stripped copy: goroutine list and g's slot from the code, as the symbols give them" \
				"$(jq -c '[.wall.allgs, .wall.allglen, .tls_g_offset, .wall.goroutines_from]' <<<"$json" | sed 's/"symtab"/"code"/')" \
				"$(jq -c '[.wall.allgs, .wall.allglen, .tls_g_offset, .wall.goroutines_from]' <<<"$sj")"
			;;
		esac
	done
done
# --alloc's probe on testdata/allocs (oldest and newest toolchain, plain
# and stripped, as the emulated machine runs them): supported, the size in
# the argument the toolchain's mProf_Malloc has it (2 before Go 1.23, 3
# from it), the same alloc object from both builds
for v in $(printf '%s\n' "$oldest" "$newest" | sort -u); do
	size_arg=3
	[ "$(printf '%s\n' "$v" 1.23 | sort -V | head -n 1)" = 1.23 ] || size_arg=2
	for var in arm64 arm64-stripped; do
		bin=$(go_build "$v" "$var" allocs) || { not_ok "go$v $var allocs: build failed"; continue; }
		json=$("$CTXPROF" check --json "$bin" 2>/dev/null | jq -c .alloc)
		check_eq "check go$v $var allocs: the allocation probe, size in argument $size_arg" \
			"true $size_arg" "$(jq -r '"\(.supported) \(.size_arg)"' <<<"$json")"
		check_eq "check go$v $var allocs: the arm64 build's alloc object is the x86 one's" \
			"$json" "$(a64 check --json "$bin" 2>/dev/null | jq -c .alloc)"
	done
done
want=$("$CTXPROF" convert -f "$TOP/testdata/records/traced.jsonl" 2>&1)
got=$(a64 convert -f "$TOP/testdata/records/traced.jsonl" 2>&1)
if [ "$got" = "$want" ] && [ -n "$got" ]; then
	ok "convert -f of testdata/records: the same $(wc -l <<<"$got") folded stacks"
else
	not_ok "convert -f of testdata/records: the arm64 build gives $got, the x86 one $want"
fi
echo "# arm64 part: $((SECONDS - start)) s"
done_testing
