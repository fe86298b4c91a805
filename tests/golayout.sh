#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# golayout.sh: the committed golayout table matches what `make golayout` extracts here.
#
# Regenerates the table from every installed toolchain (testdata/traced,
# plain build, DWARF) into a temporary file and compares each verified row
# with the committed one, ignoring the toolchain's patch release.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if ! bash "$TOP/golayout/generate.sh" "$tmp" 2>/dev/null; then
	not_ok "golayout/generate.sh failed"
	done_testing
fi
strip_patch() { awk -F'\t' -v OFS='\t' -v go="$1" '$1 == go { $3 = ""; print }' "$2"; }
for v in $(go_toolchains); do
	want=$(strip_patch "$v" "$tmp")
	got=$(strip_patch "$v" "$TOP/golayout/golayout.tsv")
	if [ -z "$got" ]; then
		not_ok "golayout row for Go $v: missing; run 'make golayout' and commit"
	elif [ "$want" = "$got" ]; then
		ok "golayout row for Go $v matches the extractor: $(tr '\t' ' ' <<<"$got")"
	else
		not_ok "golayout row for Go $v differs from the extractor: table '$got', extracted '$want'"
	fi
done
# rows for versions without a toolchain here must say they were not verified
while IFS=$'\t' read -r go verified _; do
	[[ $go =~ ^[0-9]+\.[0-9]+$ ]] || continue
	[ -x "/usr/lib/go-$go/bin/go" ] && continue
	check_eq "golayout row for Go $go (no toolchain here) is marked" reference "$verified"
done <"$TOP/golayout/golayout.tsv"
done_testing
