#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# golayout.sh: the committed golayout tables (layouts, module members, wait reasons) match what `make golayout` extracts here.
#
# Regenerates the table from every installed toolchain (testdata/traced,
# plain build, DWARF) into a temporary file and compares it with the
# committed one, row by row:
# - a version with a toolchain here: the committed row is marked here and
#   equals the extracted one, ignoring the toolchain's patch release;
# - a row marked here whose toolchain is missing: it was verified on a
#   machine that had it, so it is skipped, naming that toolchain, once the
#   regenerated table is seen to keep it as it is;
# - a row marked reference (no toolchain here): it equals the row that
#   ../shared/golayout-reference.tsv gives, when that file is present.
# The verified column says where a row was checked, not what this machine
# has: a missing toolchain is a skip, never a failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

table=$TOP/golayout/golayout.tsv
reference=$TOP/../shared/golayout-reference.tsv
tmp=$(mktemp)
tmpm=$(mktemp)
tmpr=$(mktemp)
trap 'rm -f "$tmp" "$tmpm" "$tmpr"' EXIT
if ! bash "$TOP/golayout/generate.sh" "$tmp" "$tmpm" "$tmpr" 2>"$tmpm.err"; then
	not_ok "golayout/generate.sh failed: $(tail -n 3 "$tmpm.err")"
	rm -f "$tmpm.err"
	done_testing
fi
rm -f "$tmpm.err"
row() { awk -F'\t' -v go="$1" '$1 == go' "$2"; }
strip_patch() { awk -F'\t' -v OFS='\t' '{ $3 = ""; print }' <<<"$1"; }
shown() { tr '\t' ' ' <<<"$1"; }
declare -A installed
for v in $(go_toolchains); do
	installed[$v]=1
done

for go in $(cat "$table" "$tmp" | awk -F'\t' '$1 ~ /^[0-9]+\.[0-9]+$/ { print $1 }' |
	sort -u -t. -k1,1n -k2,2n); do
	got=$(row "$go" "$table")
	want=$(row "$go" "$tmp")
	verified=$(cut -f2 <<<"$got")
	toolchain=$(cut -f3 <<<"$got")
	if [ -z "$got" ]; then
		not_ok "golayout row for Go $go: missing; run 'make golayout' and commit"
	elif [ -n "${installed[$go]:-}" ]; then
		if [ "$(strip_patch "$want")" = "$(strip_patch "$got")" ]; then
			ok "golayout row for Go $go matches the extractor: $(shown "$got")"
		elif [ "$verified" != here ]; then
			not_ok "golayout row for Go $go is marked '$verified', but go$go is installed: run 'make golayout' and commit"
		else
			not_ok "golayout row for Go $go differs from the extractor: table '$(shown "$got")', extracted '$(shown "$want")'"
		fi
	elif [ "$verified" = here ]; then
		if [ "$want" = "$got" ]; then
			skip "golayout row for Go $go, verified by $toolchain" \
				"no go$go toolchain here to extract it again; make golayout keeps it"
		else
			not_ok "golayout row for Go $go (verified by $toolchain; no toolchain here): make golayout would change it to '$(shown "$want")'"
		fi
	elif [ "$verified" = reference ]; then
		if [ ! -r "$reference" ]; then
			skip "golayout row for Go $go (reference)" "no $reference to compare it with"
		elif [ "$want" = "$got" ]; then
			ok "golayout row for Go $go (reference, no toolchain here) is the one golayout-reference.tsv gives: $(shown "$got")"
		else
			not_ok "golayout row for Go $go (reference): table '$(shown "$got")', golayout-reference.tsv gives '$(shown "$want")'"
		fi
	else
		not_ok "golayout row for Go $go: verified is '$verified', neither here nor reference"
	fi
done
# modules.tsv: module, version, member, offset as extracted again (the
# toolchain column may name another patch release)
members() { grep -v '^#' "$1" | cut -f1,2,5,6; }
if [ "$(members "$tmpm")" = "$(members "$TOP/golayout/modules.tsv")" ]; then
	ok "golayout/modules.tsv matches the extractor: $(grep -vc '^#\|^module' "$tmpm") members of $(grep -v '^#\|^module' "$tmpm" | cut -f1,2 | sort -u | tr '\t\n' '@ ')"
else
	not_ok "golayout/modules.tsv differs from the extractor: $(diff <(members "$TOP/golayout/modules.tsv") <(members "$tmpm") | head -n 5 | tr '\n' ' ')"
fi
# waitreasons.tsv: each installed release's names, as extracted again
reasons() { grep -v '^#' "$1"; }
if [ "$(reasons "$tmpr")" = "$(reasons "$TOP/golayout/waitreasons.tsv")" ]; then
	ok "golayout/waitreasons.tsv matches the extractor: $(grep -c '^[0-9]' "$tmpr") names of wait reasons, Go $(grep '^[0-9]' "$tmpr" | cut -f1 | sort -uV | paste -sd' ')"
else
	not_ok "golayout/waitreasons.tsv differs from the extractor: $(diff <(reasons "$TOP/golayout/waitreasons.tsv") <(reasons "$tmpr") | head -n 5 | tr '\n' ' ')"
fi
done_testing
