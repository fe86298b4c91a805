#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# pclntab-addr2line.sh: the .gopclntab reader agrees with each toolchain's own `go tool addr2line`.
#
# Binaries: testdata/traced from every installed toolchain in all five
# variants (plain, stripped, pie, cgo, cgo-stripped), and Debian's stripped
# gofmt and go of every toolchain. Addresses: 3000 spread evenly over .text,
# so they land at every kind of place (function starts, middles, padding).
# `ctxprof-go addr2line` and the toolchain's `go tool addr2line` must print
# the same function and file:line for every one.
#
# Two cases need another reference, and the test says which it used:
# - stripped testdata builds are compared with addr2line on their unstripped
#   twin (same link, same addresses). Without runtime.text, addr2line takes
#   the .text section's start as Go's text start; with external linking
#   (cgo) C code comes first, and every answer it gives is shifted.
# - where a toolchain's addr2line cannot read its own build at all (go1.19
#   on -buildmode=pie: "?" for every address), the newest toolchain's
#   addr2line is the reference.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

N=${N:-3000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

agree() { # agree NAME VERSION BINARY [REFERENCE_BINARY]
	local name=$1 v=$2 bin=$3 ref=${4:-$3} text start size diffs newest
	text=$(readelf -SW "$bin" | sed 's/^ *\[ *[0-9]*\] *//' | awk '$1 == ".text" { print $3, $5 }')
	if [ -z "$text" ]; then
		not_ok "$name: no .text section"
		return
	fi
	read -r start size <<<"$text"
	awk -v s=$((0x$start)) -v z=$((0x$size)) -v n="$N" \
		'BEGIN { for (i = 0; i < n; i++) printf "0x%x\n", s + int(i * z / n) }' >"$work/addrs"
	"$CTXPROF" addr2line "$bin" <"$work/addrs" >"$work/ours" 2>"$work/err"
	"/usr/lib/go-$v/bin/go" tool addr2line "$ref" <"$work/addrs" >"$work/theirs" 2>/dev/null
	if [ ! -s "$work/theirs" ]; then
		not_ok "$name: go tool addr2line printed nothing"
		return
	fi
	if ! grep -qv '^?' "$work/theirs"; then
		newest=$(go_toolchains | tail -n 1)
		echo "# $name: go$v tool addr2line reads nothing from it; go$newest's is the reference"
		v=$newest
		"/usr/lib/go-$v/bin/go" tool addr2line "$ref" <"$work/addrs" >"$work/theirs" 2>/dev/null
	fi
	diffs=$(paste -d'\t' - - <"$work/ours" | paste -d'\t' - <(paste -d'\t' - - <"$work/theirs") |
		paste -d'\t' "$work/addrs" - | awk -F'\t' '$2 != $4 || $3 != $5' | tee "$work/diff" | wc -l)
	[ "$ref" = "$bin" ] || name="$name (reference: its unstripped twin)"
	if [ "$diffs" -eq 0 ]; then
		ok "$name: $N addresses, function and file:line agree with go$v tool addr2line"
	else
		not_ok "$name: $diffs of $N addresses differ from go$v tool addr2line, e.g. $(head -n 2 "$work/diff" | tr '\t\n' ' ')"
	fi
}

for v in $(go_toolchains); do
	for var in $GO_VARIANTS; do
		bin=$(go_build "$v" "$var") || { not_ok "go$v $var: build failed"; continue; }
		case $var in
		stripped) agree "go$v $var testdata/traced" "$v" "$bin" "$(go_build "$v" plain)" ;;
		cgo-stripped) agree "go$v $var testdata/traced" "$v" "$bin" "$(go_build "$v" cgo)" ;;
		*) agree "go$v $var testdata/traced" "$v" "$bin" ;;
		esac
	done
	for b in gofmt go; do
		agree "Debian's stripped /usr/lib/go-$v/bin/$b" "$v" "/usr/lib/go-$v/bin/$b"
	done
done
