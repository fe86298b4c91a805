#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# check-bad-input.sh: `check` on files it cannot use: clear message, exit 1 or 2, never a crash.
#
# Runs every case with ./ctxprof-go and, when CTXPROF_SAN names it, with the
# ASan+UBSan build, where any sanitizer report fails the case. Inputs: a
# missing path, a directory, a text file, an empty file, /bin/ls, copies of
# testdata/traced (go$V plain, newest toolchain) truncated to 64 KiB and
# other sizes, with its build info overwritten, with a bit flipped in
# .gopclntab's header (refused with the reason, by check and addr2line),
# built for riscv64 (neither amd64 nor arm64), an amd64 build whose ELF
# header says arm64 (plain and stripped: refused, the build info says
# amd64); /bin/ls's cgo is false (it is no Go binary); usage errors,
# addr2line's too (each says what is wrong, then points at --help).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

v=$(go_toolchains | tail -n 1)
good=$(go_build "$v" plain) || { not_ok "build of testdata/traced with go$v"; done_testing; }

printf 'package main\nfunc main() {}\n' >"$work/text.go"
: >"$work/empty"
mkdir "$work/dir"
head -c 65536 "$good" >"$work/trunc-64k"
head -c 4096 "$good" >"$work/trunc-4k"
head -c $(( $(stat -c %s "$good") / 2 )) "$good" >"$work/trunc-half"
head -c 100 "$good" >"$work/trunc-100"

# build info overwritten: zeros over the whole section, and garbage after a kept magic
read -r bi_off bi_size < <(readelf -SW "$good" | sed 's/^ *\[ *[0-9]*\] *//' |
	awk '$1 == ".go.buildinfo" { print $4, $5 }')
bi_off=$((0x$bi_off))
bi_size=$((0x$bi_size))
cp "$good" "$work/buildinfo-zeroed"
dd if=/dev/zero of="$work/buildinfo-zeroed" bs=1 seek="$bi_off" count="$bi_size" conv=notrunc status=none
cp "$good" "$work/buildinfo-garbage"
head -c $((bi_size - 16)) /dev/urandom | tr '\0' '\377' |
	dd of="$work/buildinfo-garbage" bs=1 seek=$((bi_off + 16)) conv=notrunc status=none
printf '\377\377\377\377\377\377\377\377\377\377\377' |
	dd of="$work/buildinfo-garbage" bs=1 seek=$((bi_off + 32)) conv=notrunc status=none

# a bit flipped in .gopclntab's header: its instruction size (byte 6), the
# low byte of its function count (8), of its name, CU, file, pc and
# function table offsets (32, 40, 48, 56, 64)
read -r pc_off < <(readelf -SW "$good" | sed 's/^ *\[ *[0-9]*\] *//' |
	awk '$1 == ".gopclntab" { print $4 }')
pc_off=$((0x$pc_off))
for at in 6 8 32 40 48 56 64; do
	cp "$good" "$work/pclntab-flip$at"
	python3 -c 'import sys
p, at = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, "rb").read())
b[at] ^= 0x10
open(p, "wb").write(b)' "$work/pclntab-flip$at" $((pc_off + at))
done

# an amd64 binary whose ELF header says arm64 (e_machine, bytes 18-19), plain and stripped:
# its build info says GOARCH=amd64, and x86 code must not be read as arm64's
stripped=$(go_build "$v" stripped) || not_ok "build of testdata/traced stripped with go$v"
for b in "$good" "$stripped"; do
	cp "$b" "$work/machine-arm64-$(basename "$(dirname "$b")")"
	printf '\267\000' | dd of="$work/machine-arm64-$(basename "$(dirname "$b")")" bs=1 seek=18 conv=notrunc status=none
done

arm=$work/traced-riscv64
(cd "$TOP/testdata/traced" && CGO_ENABLED=0 GOARCH=riscv64 "/usr/lib/go-$v/bin/go" build -o "$arm" .) 2>/dev/null

# case NAME WANT_EXIT MESSAGE_REGEX ARGS...: runs check with each binary
case_() {
	local name=$1 want=$2 re=$3 bin out err rc json report
	shift 3
	for bin in "$CTXPROF" ${CTXPROF_SAN:+"$CTXPROF_SAN"}; do
		local tag=""
		[ "$bin" = "${CTXPROF_SAN:-}" ] && tag=" [asan+ubsan]"
		out=$("$bin" check "$@" 2>"$work/stderr")
		rc=$?
		err=$(cat "$work/stderr")
		if report=$(sanitizer_report "$work/stderr"); then
			not_ok "$name$tag: sanitizer report: $report"
			continue
		fi
		if [ "$rc" -ne "$want" ]; then
			not_ok "$name$tag: exit $rc, expected $want; stdout: $out; stderr: $err"
			continue
		fi
		if ! grep -qE "$re" <<<"$out$err"; then
			not_ok "$name$tag: message does not match /$re/: $out $err"
			continue
		fi
		# the same input as JSON: one valid object per path, same exit status
		json=$("$bin" check --json "$@" 2>/dev/null)
		rc=$?
		if [ $# -gt 0 ] && [ "${1:0:1}" != - ] &&
			{ [ "$rc" -ne "$want" ] || ! jq -e 'has("supported") and has("problems")' >/dev/null <<<"$json"; }; then
			not_ok "$name$tag: --json gave exit $rc or invalid JSON: $json"
			continue
		fi
		ok "$name$tag: exit $rc: $(head -c 160 <<<"$out$err" | tr '\n' ' ')"
	done
}

case_ "missing path" 2 "cannot open: No such file" "$work/does-not-exist"
case_ "directory" 2 "is a directory" "$work/dir"
case_ "text file" 1 "not an ELF file" "$work/text.go"
case_ "empty file" 1 "not an ELF file" "$work/empty"
case_ "non-Go ELF /bin/ls" 1 "not a Go binary" /bin/ls
case_ "Go binary truncated to 64 KiB" 1 "truncated ELF file" "$work/trunc-64k"
case_ "Go binary truncated to 4 KiB" 1 "truncated ELF file" "$work/trunc-4k"
case_ "Go binary truncated to half" 1 "truncated ELF file" "$work/trunc-half"
case_ "Go binary truncated to 100 bytes" 1 "truncated ELF file|not a valid ELF" "$work/trunc-100"
case_ "Go binary with build info zeroed" 1 "no Go build info" "$work/buildinfo-zeroed"
case_ "Go binary with build info garbage" 1 "cannot read the Go version" "$work/buildinfo-garbage"
if [ -x "$arm" ]; then
	case_ "riscv64 Go binary" 1 "architecture riscv64 is not supported \\(amd64 and arm64 only\\)" "$arm"
else
	not_ok "riscv64 Go binary: cross build with go$v failed"
fi
for b in plain stripped; do
	case_ "amd64 Go binary ($b) whose ELF header says arm64" 1 \
		"the ELF header says arm64, the Go build info GOARCH=amd64" "$work/machine-arm64-$b"
done
cgo=$("$CTXPROF" check --json /bin/ls 2>/dev/null | jq -r .cgo)
check_eq "check --json on a file that is not Go: cgo is no fact of it" false "$cgo"
case_ "supported and unsupported together" 1 "supported: go1" "$good" /bin/ls
case_ "readable and missing together" 2 "No such file" "$good" "$work/does-not-exist"
case_ "no arguments" 2 "no binary given"
case_ "unknown option" 2 "unrecognized option '--frobnicate'" --frobnicate "$good"
case_ "unknown option, then where the usage is" 2 "^ctxprof-go: Try 'ctxprof-go check --help'.$" -z "$good"
case_ "help" 0 "Examples:" --help

# addr2line's usage errors: what is wrong, then where the usage is
a2l_case() {
	local name=$1 want=$2 re=$3 bin rc err
	shift 3
	for bin in "$CTXPROF" ${CTXPROF_SAN:+"$CTXPROF_SAN"}; do
		err=$("$bin" addr2line "$@" 2>&1 </dev/null >/dev/null)
		rc=$?
		if [ "$rc" = "$want" ] && grep -qE -- "$re" <<<"$err" && grep -q "^ctxprof-go: Try 'ctxprof-go addr2line --help'.$" <<<"$err" &&
			! sanitizer_report /dev/stdin >/dev/null <<<"$err"; then
			ok "addr2line $name: exit $rc: $(head -n 1 <<<"$err")"
		else
			not_ok "addr2line $name: exit $rc (want $want): $err"
		fi
	done
}
# a function table that fails a check: check says why; addr2line answers nothing from it
for at in 6 8 32 40 48 56 64; do
	case_ ".gopclntab header, bit 4 of byte $at flipped" 0 \
		"cannot read Go's function table: function table fails a check: " "$work/pclntab-flip$at"
	out=$(echo 0x401000 | "$CTXPROF" addr2line "$work/pclntab-flip$at" 2>&1)
	rc=$?
	if [ "$rc" = 1 ] && [ "$(head -n 1 <<<"$out")" = "ctxprof-go: $work/pclntab-flip$at: no Go function table it can read" ] &&
		grep -q "^ctxprof-go: $work/pclntab-flip$at: cannot read Go's function table: function table fails a check: " <<<"$out" &&
		[ "$(wc -l <<<"$out")" = 2 ]; then
		ok "addr2line, .gopclntab byte $at flipped: exit 1, no answer: $(tail -n 1 <<<"$out")"
	else
		not_ok "addr2line, .gopclntab byte $at flipped: exit $rc: $out"
	fi
done
a2l_case "with no binary" 2 "^ctxprof-go: addr2line: no BINARY given$"
a2l_case "with options and no binary" 2 "^ctxprof-go: addr2line: no BINARY given$" -a -i
a2l_case "with an unknown option" 2 "^ctxprof-go: addr2line: unknown option '--frobnicate'$" --frobnicate "$good"
a2l_case "with two binaries" 2 "^ctxprof-go: addr2line: one BINARY: '/bin/ls' is a second$" "$good" /bin/ls
done_testing
