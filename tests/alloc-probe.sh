#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# alloc-probe.sh: `check --json`'s alloc object on testdata/memrate by every installed Go, amd64 and arm64, plain and stripped.
#
# Builds testdata/memrate/profiled (it references runtime.MemProfile) and
# testdata/memrate/unprofiled (it does not) with each toolchain, plain and
# stripped (-ldflags=-s -w), for amd64, as amd64 PIEs, and for arm64
# (cross-built, only read). Expected values come from outside ctxprof-go:
# - probe_offset: nm's runtime.mProf_Malloc, on the branch of its stack
#   check when `go tool objdump` shows one first, a small frame's or a
#   larger one's (Go 1.19 to 1.22's mProf_Malloc), as a file offset by
#   readelf's program headers;
# - size_arg: the position of `size` among mProf_Malloc's parameters in the
#   toolchain's own src/runtime/mprof.go, and 2 before Go 1.23, 3 from it;
# - rate_addr: nm's runtime.MemProfileRate; a stripped build's comes from
#   runtime.profilealloc's code and is held to its plain twin's nm, once
#   the two are seen to have the same .text bytes and the same sections at
#   the same addresses (-s -w drops symbols only);
# - memprofile_disabled: true for unprofiled, false for profiled, from the
#   symbol table; null when stripped;
# - the amd64 programs, run, print &runtime.MemProfileRate and its value:
#   the address check found, and 0 where the linker disabled profiling.
# With CTXPROF_SAN, the ASan+UBSan build must decode the stripped builds alike.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

start=$SECONDS

# file_offset BIN VADDR: the file offset of a link-time address, from readelf's PT_LOADs
file_offset() {
	local off va fsz
	while read -r off va fsz; do
		if (($2 >= va && $2 < va + fsz)); then
			echo $(($2 - va + off))
			return
		fi
	done < <(readelf -lW "$1" | awk '$1 == "LOAD" { print $2, $3, $5 }')
}

# sym BIN NAME: a symbol's address in decimal, as nm gives it
sym() {
	local a
	a=$(nm "$1" 2>/dev/null | awk -v n="$2" '$3 == n { print $1; exit }')
	[ -n "$a" ] && echo $((16#$a))
}

# probe_pc GO BIN ENTRY: where --alloc's probe goes in the function at
# ENTRY: the branch of `CMPQ SP, 0x10(R14); JBE` or of `LEAQ -N(SP), R12;
# CMPQ R12, 0x10(R14); JBE` (arm64: `MOVD 16(R28), R16; CMP R16, RSP;
# BLS` or `MOVD 16(R28), R16; SUB $N, RSP, R17; CMP R16, R17; BLS`) when
# the function opens with one, else the entry
probe_pc() {
	local at
	at=$("$1" tool objdump -s '^runtime\.mProf_Malloc$' "$2" 2>/dev/null | awk -F'\t+' '
		NR > 1 && NR <= 5 { addr[NR - 1] = $2; insn[NR - 1] = $4 }
		END {
			if (insn[1] ~ /^CMPQ SP, 0x10\(R14\)/ && insn[2] ~ /^JBE/)
				print addr[2]
			else if (insn[1] ~ /^LEAQ -?0x[0-9a-f]+\(SP\), R12/ &&
				 insn[2] ~ /^CMPQ (R12, 0x10\(R14\)|0x10\(R14\), R12)/ && insn[3] ~ /^JBE/)
				print addr[3]
			else if (insn[1] ~ /^MOVD 16\(R28\), R16/ && insn[2] ~ /^CMP R16, RSP/ && insn[3] ~ /^BLS/)
				print addr[3]
			else if (insn[1] ~ /^MOVD 16\(R28\), R16/ && insn[2] ~ /^SUB \$[0-9]+, RSP, R17/ &&
				 insn[3] ~ /^CMP R16, R17/ && insn[4] ~ /^BLS/)
				print addr[4]
		}')
	echo $((${at:-$3}))
}

# size_position V: where `size` stands among runtime.mProf_Malloc's parameters in Go V's source
size_position() {
	local src=/usr/lib/go-$1/src/runtime/mprof.go
	[ -r "$src" ] || return
	sed -n 's/^func mProf_Malloc(\(.*\)) {$/\1/p' "$src" | tr ',' '\n' |
		awk '{ n++ } $1 == "size" { print n; exit }'
}

# section BIN NAME: "address offset size" of a section, as readelf prints them
section() {
	readelf -SW "$1" | sed 's/^ *\[ *[0-9]*\]//' | awk -v n="$2" '$1 == n { print $3, $4, $5; exit }'
}

# text_bytes BIN: the bytes of .text
text_bytes() {
	local addr off size
	read -r addr off size < <(section "$1" .text)
	tail -c +$((16#$off + 1)) "$1" | head -c $((16#$size))
}

# same_layout PLAIN STRIPPED: -s -w kept the code and the data where they were
same_layout() {
	local s
	for s in .text .noptrdata .data .bss .noptrbss; do
		[ -n "$(section "$1" "$s")" ] && [ "$(section "$1" "$s")" = "$(section "$2" "$s")" ] || return 1
	done
	cmp -s <(text_bytes "$1") <(text_bytes "$2")
}

# moved_twin PLAIN STRIPPED ADDR: where ADDR of PLAIN lies in STRIPPED,
# when -s -w moved the data sections as a whole (as it does for some
# PIEs: a page less before them) and kept each one's size: the same place
# in the same section. Nothing when any data section differs in size.
moved_twin() {
	local s a o z a2 o2 z2 found=
	for s in .noptrdata .data .bss .noptrbss; do
		read -r a o z < <(section "$1" "$s")
		read -r a2 o2 z2 < <(section "$2" "$s")
		[ -n "$z" ] && [ "$z" = "${z2:-}" ] || return 1
		if [ $(($3 >= 16#$a && $3 < 16#$a + 16#$z)) = 1 ]; then
			found=$(printf '0x%x' $(($3 - 16#$a + 16#$a2)))
		fi
	done
	[ -n "$found" ] && echo "$found"
}

# alloc_of BIN [CTXPROF]: check --json's alloc as "supported probe_offset
# size_arg rate_addr rate_source memprofile_disabled", offsets and addresses in hex
alloc_of() {
	local sup off arg rate src dis
	read -r sup off arg rate src dis < <("${2:-$CTXPROF}" check --json "$1" | jq -r '.alloc |
		"\(.supported) \(.probe_offset) \(.size_arg) \(.rate_addr) \(.rate_source) \(.memprofile_disabled)"')
	[[ $off =~ ^[0-9]+$ ]] && off=$(printf '0x%x' "$off")
	[[ $rate =~ ^[0-9]+$ ]] && rate=$(printf '0x%x' "$rate")
	echo "$sup $off $arg $rate $src $dis"
}

versions=$(go_toolchains)
echo "# Go toolchains: ${versions//$'\n'/ }"
for v in $versions; do
	go=/usr/lib/go-$v/bin/go
	minor=${v#1.}
	want_arg=$([ "$minor" -lt 23 ] && echo 2 || echo 3)
	src_arg=$(size_position "$v")
	if [ -n "$src_arg" ]; then
		check_eq "go$v: size's position among mProf_Malloc's parameters (src/runtime/mprof.go)" \
			"$want_arg" "$src_arg"
	else
		skip "go$v: size's position in src/runtime/mprof.go" "no /usr/lib/go-$v/src/runtime/mprof.go"
	fi
	# each build as a plain variant and its stripped twin; PIEs' addresses are link-time too
	for builds in "plain stripped" "pie pie-stripped" "arm64 arm64-stripped"; do
		read -r plain_var strip_var <<<"$builds"
		for prog in profiled unprofiled; do
			name="go$v $plain_var $prog"
			plain=$(go_build "$v" "$plain_var" "memrate/$prog") || { not_ok "$name: build failed"; continue; }
			stripped=$(go_build "$v" "$strip_var" "memrate/$prog") || { not_ok "$name stripped: build failed"; continue; }
			entry=$(sym "$plain" runtime.mProf_Malloc)
			rate=$(sym "$plain" runtime.MemProfileRate)
			if [ -z "$entry" ] || [ -z "$rate" ]; then
				not_ok "$name: nm names no runtime.mProf_Malloc or runtime.MemProfileRate"
				continue
			fi
			want_off=$(printf '0x%x' "$(file_offset "$plain" "$(probe_pc "$go" "$plain" "$entry")")")
			rate=$(printf '0x%x' "$rate")
			disabled=$([ "$prog" = unprofiled ] && echo true || echo false)
			got=$(alloc_of "$plain")
			check_eq "$name: alloc's probe offset, size argument, rate address from the symtab, memprofile_disabled (nm, objdump, readelf)" \
				"true $want_off $want_arg $rate symtab $disabled" "$got"
			if same_layout "$plain" "$stripped"; then
				got=$(alloc_of "$stripped")
				check_eq "$name stripped: the same, the rate address from runtime.profilealloc's code (its plain twin's nm; same .text and sections)" \
					"true $want_off $want_arg $rate code null" "$got"
			elif moved=$(moved_twin "$plain" "$stripped" "$rate"); then
				got=$(alloc_of "$stripped")
				check_eq "$name stripped: the same, the rate address from runtime.profilealloc's code (its plain twin's nm, at its place in its section, which -s -w moved)" \
					"true $want_off $want_arg $moved code null" "$got"
			else
				not_ok "$name: the stripped build's sections differ from the plain one's in size: no twin to compare with"
				continue
			fi
			if [ -n "${CTXPROF_SAN:-}" ]; then
				check_eq "$name stripped: ASan/UBSan build agrees" "$got" "$(alloc_of "$stripped" "$CTXPROF_SAN" 2>&1)"
			fi
			# a non-PIE amd64 program prints link-time addresses
			[ "$plain_var" = plain ] || continue
			for bin in "$plain" "$stripped"; do
				read -r addr val < <(env -u GODEBUG "$bin")
				check_eq "$name $(basename "$(dirname "$(dirname "$bin")")"), run: where runtime.MemProfileRate is and what it holds" \
					"$rate $([ "$prog" = unprofiled ] && echo 0 || echo 524288)" "$addr $val"
			done
		done
	done
done
echo "# $((SECONDS - start)) s"
done_testing
