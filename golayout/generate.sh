#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# generate.sh: rebuilds golayout.tsv from every installed Go toolchain plus the reference rows.
#
# Usage: golayout/generate.sh OUT.tsv
# Each installed toolchain builds testdata/traced and testdata/httpserver;
# ctxprof-go's own extractor (check --json, reading DWARF) gives that
# version's row, marked verified=here.
# Versions without a toolchain here keep their row from the current table
# when it is marked here: the column says a toolchain verified it, on
# whichever machine ran this last, and an unverified row must not replace
# it. The others take their reference row from
# ../shared/golayout-reference.tsv when present, else from the current table.
set -euo pipefail
. "$(dirname "$0")/../tests/lib.sh"

out=${1:?usage: generate.sh OUT.tsv [MODULES_OUT.tsv [REASONS_OUT.tsv]]}
modules_out=${2:-}
reasons_out=${3:-}
current=$TOP/golayout/golayout.tsv
reference=$TOP/../shared/golayout-reference.tsv
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

header="go	verified	toolchain	labels	g_m	m_curg	g_labels	g_goid	hmap_count	hmap_B	hmap_buckets	bucket_size	bucket_tophash	bucket_keys	bucket_values	bucket_overflow	label_list	label_size	label_key	label_value	hmap_flags	hmap_oldbuckets	md_gofunc	g_parentGoid	headers	Request_Header	hh_B	hh_flags	hh_buckets	hh_oldbuckets	hb_size	hb_tophash	hb_keys	hb_values	hb_overflow	sm_dir_ptr	sm_dir_len	st_groups	st_mask	sg_size	sg_ctrl	sg_slots	ss_size	ss_key	ss_elem	g_atomicstatus	g_waitreason	g_sched	gobuf_sp	gobuf_pc	gobuf_bp	g_syscallsp	g_syscallpc	gobuf_lr"
# runtime.g's scheduling members (--wall), as check --json names them
wall_keys=(g.atomicstatus g.waitreason g.sched gobuf.sp gobuf.pc gobuf.bp g.syscallsp g.syscallpc gobuf.lr)
ncols=$(wc -w <<<"$header")
# the net/http columns, as check --json names them
http_keys=(Header.hmap.B Header.hmap.flags Header.hmap.buckets Header.hmap.oldbuckets
	Header.bucket.size Header.bucket.tophash Header.bucket.keys Header.bucket.values
	Header.bucket.overflow Header.map.dirPtr Header.map.dirLen Header.table.groups
	Header.table.lengthMask Header.group.size Header.group.ctrl Header.group.slots
	Header.slot.size Header.slot.key Header.slot.elem)

# runtime.moduledata's gofunc for the reference rows, from the struct in
# each release's runtime/symtab.go: none before 1.18 (funcdata were
# pointers), 304 when 1.18 added rodata and gofunc, 320 once 1.20 put
# covctrs and ecovctrs before them; 1.25 lies between two releases
# measured here at 320.
declare -A md_gofunc_reference=([1.17]=- [1.18]=304 [1.20]=320 [1.25]=320)

declare -A rows reasons
for v in $(go_toolchains); do
	echo "golayout: extracting Go $v" >&2
	bin=$(go_build "$v" plain)
	row=$("$CTXPROF" check --json "$bin" | jq -r --arg v "$v" '
		if .source != "dwarf" then error("\(.path): offsets not from DWARF: \(.problems + .warnings)") else . end |
		.offsets as $o | def n(k): ($o[k] // "-") | tostring;
		[$v, "here", .go_version, .labels_layout,
		 n("g.m"), n("m.curg"), n("g.labels"), n("g.goid"),
		 n("hmap.count"), n("hmap.B"), n("hmap.buckets"), n("bucket.size"), n("bucket.tophash"),
		 n("bucket.keys"), n("bucket.values"), n("bucket.overflow"),
		 n("labelMap.list"), n("label.size"), n("label.key"), n("label.value"),
		 n("hmap.flags"), n("hmap.oldbuckets"), n("moduledata.gofunc"), n("g.parentGoid")] | @tsv')
	# net/http's request headers, from a program that serves HTTP
	bin=$(go_build "$v" plain httpserver)
	row+=$'\t'$("$CTXPROF" check --json "$bin" | jq -r --arg keys "${http_keys[*]}" '
		if .source != "dwarf" or .header_map == null then
			error("\(.path): no net/http header layout from DWARF: \(.trace_sources.traceparent.reason)")
		else . end |
		.offsets as $o | def n(k): ($o[k] // "-") | tostring;
		[.header_map, n("http.Request.Header")] + [$keys | split(" ")[] | n(.)] | @tsv')
	# --wall: runtime.g's scheduling members and the names of wait reasons
	bin=$(go_build "$v" plain)
	row+=$'\t'$("$CTXPROF" check --json "$bin" | jq -r --arg keys "${wall_keys[*]}" '
		if .wall.offsets == null then error("\(.path): no runtime.g scheduling members from DWARF: \(.wall.reason)") else . end |
		.wall.offsets as $o | [$keys | split(" ")[] | $o[.] | tostring] | @tsv')
	reasons[$v]=$("$CTXPROF" check --json "$bin" | jq -r --arg v "$v" '
		.wall.wait_reason_names | to_entries[] | [$v, (.key | tostring), .value] | @tsv')
	rows[$v]=$row
done

# Rows verified by a toolchain that is not installed here: kept as they are.
if [ -r "$current" ]; then
	while IFS=$'\t' read -r go verified rest; do
		[[ $go =~ ^[0-9]+\.[0-9]+$ ]] && [ "$verified" = here ] || continue
		[ -n "${rows[$go]:-}" ] || rows[$go]="$go	$verified	$rest"
	done <"$current"
fi
# a row from before the table had a column is widened with '-': never measured
for go in "${!rows[@]}"; do
	while [ "$(awk -F'\t' '{ print NF }' <<<"${rows[$go]}")" -lt "$ncols" ]; do
		rows[$go]+=$'\t-'
	done
done

# Reference rows: the shared file's columns, widened with the facts every Go
# release shares (tophash first in a bucket; hmap.flags at 8 and oldbuckets
# right after buckets; labels as 32-byte {key, value}).
if [ -r "$reference" ]; then
	while IFS=$'\t' read -r go gm curg labels goid layout count B buckets bsize keys values overflow; do
		[[ $go =~ ^[0-9]+\.[0-9]+$ ]] || continue
		[ -n "${rows[$go]:-}" ] && continue
		if [ "$layout" = map ]; then
			rows[$go]=$(printf '%s\t' "$go" reference - map "$gm" "$curg" "$labels" "$goid" \
				"$count" "$B" "$buckets" "$bsize" 0 "$keys" "$values" "$overflow" - - - - \
				8 $((buckets + 8)) "${md_gofunc_reference[$go]:--}")
		else
			rows[$go]=$(printf '%s\t' "$go" reference - slice "$gm" "$curg" "$labels" "$goid" \
				- - - - - - - - 0 32 0 16 - - "${md_gofunc_reference[$go]:--}")
		fi
		# the reference has no g.parentGoid, no net/http layout and no
		# scheduling members: unknown, never guessed
		rows[$go]+=$(printf '%s\t' - - - "${http_keys[@]/*/-}" "${wall_keys[@]/*/-}")
		rows[$go]=${rows[$go]%$'\t'}
	done <"$reference"
else
	echo "golayout: $reference not found; keeping the current reference rows" >&2
fi
if [ -r "$current" ]; then
	while IFS=$'\t' read -r go rest; do
		[[ $go =~ ^[0-9]+\.[0-9]+$ ]] || continue
		[ -n "${rows[$go]:-}" ] || rows[$go]="$go	$rest"
	done <"$current"
fi
for go in "${!rows[@]}"; do
	while [ "$(awk -F'\t' '{ print NF }' <<<"${rows[$go]}")" -lt "$ncols" ]; do
		rows[$go]+=$'\t-'
	done
done

{
	echo "# golayout.tsv: Go runtime layouts (linux/amd64; linux/arm64 lays out alike) for binaries without DWARF."
	echo "# Regenerated by 'make golayout' (golayout/generate.sh); edit that, not this file."
	echo "# verified=here: extracted by ctxprof-go's DWARF reader from testdata/traced (and, for"
	echo "#   net/http's request headers, testdata/httpserver) built"
	echo "#   by the named toolchain, on the machine that last ran 'make golayout' with it."
	echo "#   verified=reference: from public offset tables (shared/golayout-reference.tsv),"
	echo "#   never checked against a toolchain; DWARF always wins."
	echo "# Offsets in bytes; '-' marks members the version's labels or header map layout does"
	echo "#   not use, or that no toolchain here has measured (never guessed)."
	echo "$header"
	for go in "${!rows[@]}"; do
		printf '%s\n' "${rows[$go]}"
	done | sort -t. -k1,1n -k2,2n
} >"$tmp"
awk -f "$TOP/golayout/tsvlib.awk" -f "$TOP/golayout/tsv2c.awk" "$tmp" >/dev/null
cp "$tmp" "$out"
echo "golayout: wrote $out ($(grep -c '^[0-9]' "$out") rows)" >&2

# waitreasons.tsv: each release's names of wait reasons, by index, for
# stripped binaries whose own array cannot be found; rows of releases not
# installed here, measured on a machine that had them, are kept
if [ -n "$reasons_out" ]; then
	current_reasons=$TOP/golayout/waitreasons.tsv
	{
		echo "# waitreasons.tsv: runtime.waitReasonStrings of each Go release (linux/amd64 and linux/arm64), by index."
		echo "# Regenerated by 'make golayout' (golayout/generate.sh) from binaries built here; edit that."
		printf 'go\tindex\treason\n'
		{
			for v in "${!reasons[@]}"; do
				printf '%s\n' "${reasons[$v]}"
			done
			if [ -r "$current_reasons" ]; then
				awk -F'\t' -v have=" ${!reasons[*]} " '$1 ~ /^[0-9]+\.[0-9]+$/ && index(have, " " $1 " ") == 0' \
					"$current_reasons"
			fi
		} | sort -t$'\t' -k1,1V -k2,2n
	} >"$tmp"
	awk -f "$TOP/golayout/tsvlib.awk" -f "$TOP/golayout/reasons2c.awk" "$tmp" >/dev/null
	cp "$tmp" "$reasons_out"
	echo "golayout: wrote $reasons_out ($(grep -c '^[0-9]' "$reasons_out") rows)" >&2
fi
[ -n "$modules_out" ] || exit 0

# modules.tsv: the members the grpc-go and otel-sdk sources read, from
# testdata/grpcserver and testdata/otelroot built as modules (go_vendor_tree:
# each module at its Debian package's version) by the newest toolchain,
# which builds them both. Rows of other versions, measured on a machine that
# had them, are kept.
current_modules=$TOP/golayout/modules.tsv
v=$(go_toolchains | tail -n 1)
{
	for prog in grpcserver otelroot; do
		echo "golayout: extracting module layouts from $prog (go$v)" >&2
		bin=$(go_build "$v" mod "$prog")
		"$CTXPROF" check --json "$bin" | jq -r '
			if .source != "dwarf" then error("\(.path): offsets not from DWARF") else . end |
			.go_version as $tc | .module_members[] |
			if .version == null then error("\(.package): no module version in the build info") else . end |
			[.module, .version, "here", $tc, .member, (.offset | tostring)] | @tsv'
	done
	# earlier rows of module versions not measured now
	if [ -r "$current_modules" ]; then
		awk -F'\t' '$1 != "module" && $0 !~ /^#/ && NF == 6' "$current_modules"
	fi
} | awk -F'\t' '!seen[$1 "\t" $2 "\t" $5]++' | sort -t$'\t' -k1,1 -k2,2V -k5,5 >"$tmp"
{
	sed -n '/^#/p' "$current_modules"
	printf 'module\tversion\tverified\ttoolchain\tmember\toffset\n'
	cat "$tmp"
} >"$tmp.mod"
awk -f "$TOP/golayout/tsvlib.awk" -f "$TOP/golayout/modules2c.awk" "$tmp.mod" >/dev/null
cp "$tmp.mod" "$modules_out"
rm -f "$tmp.mod"
echo "golayout: wrote $modules_out ($(grep -vc '^#\|^module' "$modules_out") rows)" >&2
