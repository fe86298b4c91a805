#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# layering.sh: the source tree's arrows run one way; every #include is resolved and checked.
#
# Layers, top first (a file may include its own folder and any layer below):
#   cmd/ (entry, subcommands) > cmd/record/ > cmd/symbols/, cmd/output/
#   > cmd/util/ > offsets/ > golayout/ > bpf/
# cmd/symbols/ and cmd/output/ are side by side: neither includes the other.
# A quoted include resolves as the compiler resolves it: beside the file,
# then from the top of the tree (-iquote .), then from .output/ (generated:
# the BPF skeleton counts as bpf/, the golayout tables as golayout/).
#
# Usage: layering.sh [TREE]   (default: this checkout). The script first
# checks a copy of the tree with one bad include of each kind planted in it,
# so that a checker that finds nothing cannot pass.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# rank DIR: how high a folder stands; empty for a folder outside the layers
rank() {
	case $1 in
	cmd) echo 7 ;;
	cmd/record) echo 6 ;;
	cmd/symbols | cmd/output) echo 5 ;;
	cmd/util) echo 4 ;;
	offsets) echo 3 ;;
	golayout) echo 2 ;;
	bpf | proto) echo 1 ;;
	esac
}

# resolve TREE FILE INC: the path, from TREE's top, of the file that
# `#include "INC"` in FILE names; "?" when nothing does
resolve() {
	local tree=$1 file=$2 inc=$3 dir p
	dir=$(dirname "$file")
	if [ -e "$tree/$dir/$inc" ]; then
		p=$(realpath -m --relative-to="$tree" "$tree/$dir/$inc")
	elif [ -e "$tree/$inc" ]; then
		p=$inc
	else
		case $inc in
		*.skel.h) p=bpf/$inc ;;
		golayout_*.inc) p=golayout/$inc ;;
		vmlinux.h) p=bpf/$inc ;;
		opentelemetry/proto/*.pb-c.h) p=proto/${inc##*/} ;;
		*) p="?" ;;
		esac
	fi
	printf '%s\n' "$p"
}

# violations TREE: one line per include that breaks the layering, "FILE: INC -> WHAT (why)"
violations() {
	local tree=$1 file inc target from to rf rt
	while IFS= read -r file; do
		from=$(dirname "$file")
		rf=$(rank "$from")
		[ -n "$rf" ] || continue
		while IFS= read -r inc; do
			target=$(resolve "$tree" "$file" "$inc")
			if [ "$target" = "?" ]; then
				printf '%s: "%s" names no file in the tree\n' "$file" "$inc"
				continue
			fi
			to=$(dirname "$target")
			rt=$(rank "$to")
			if [ -z "$rt" ]; then
				printf '%s: "%s" -> %s (outside the layers)\n' "$file" "$inc" "$target"
			elif [ "$to" != "$from" ] && [ "$rt" -ge "$rf" ]; then
				printf '%s: "%s" -> %s (%s may not include %s)\n' "$file" "$inc" "$target" \
					"$from/" "$to/"
			fi
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$tree/$file")
	done < <(cd "$tree" && find cmd offsets golayout bpf -name '*.[ch]' | sort)
}

tree=${1:-$TOP}

# the checker first: a tree with each kind of bad include planted must fail on each
plant=$(mktemp -d)
trap 'rm -rf "$plant"' EXIT
cp -r "$tree/cmd" "$tree/offsets" "$tree/golayout" "$tree/bpf" "$plant"
printf '#include "cmd/profile.h"\n' >>"$plant/cmd/record/wall.c"
printf '#include "cmd/record/session.h"\n' >>"$plant/cmd/output/pprof.c"
printf '#include "../symbols/symbolizer.h"\n' >>"$plant/cmd/output/folded.h"
printf '#include "../cmd/util/hashmap.h"\n' >>"$plant/offsets/util.h"
printf '#include "cmd/util/nosuch.h"\n' >>"$plant/cmd/util/hashmap.c"
found=$(violations "$plant")
for want in 'cmd/record/wall.c: "cmd/profile.h"' 'cmd/output/pprof.c: "cmd/record/session.h"' \
	'cmd/output/folded.h: "../symbols/symbolizer.h"' 'offsets/util.h: "../cmd/util/hashmap.h"' \
	'cmd/util/hashmap.c: "cmd/util/nosuch.h"'; do
	if grep -qF "$want" <<<"$found"; then
		ok "the checker finds a planted bad include: $want"
	else
		not_ok "the checker misses a planted bad include: $want (it found: $(tr '\n' ';' <<<"$found"))"
	fi
done
extra=$(grep -c . <<<"$found")
check_eq "the planted tree breaks the layering in exactly the 5 planted places" 5 "$extra"

# then the tree itself
n=$(cd "$tree" && find cmd offsets golayout bpf -name '*.[ch]' | wc -l)
incs=$(cd "$tree" && find cmd offsets golayout bpf -name '*.[ch]' -exec grep -h '^#include "' {} + | wc -l)
found=$(violations "$tree")
for rule in "cmd/record/ cmd/symbols/ cmd/output/ cmd/util/ include no front end (cmd/*.h)" \
	"cmd/output/ includes nothing of cmd/record/" \
	"no folder includes one above it, and every quoted include names a file"; do
	case $rule in
	"cmd/record/ "*) bad=$(grep -E '^cmd/[a-z]+/[^:]*: .* -> cmd/[^/]+$|^cmd/[a-z]+/[^:]*: .* -> cmd/[^/ ]+ ' <<<"$found") ;;
	"cmd/output/ "*) bad=$(grep -E '^cmd/output/[^:]*: .* -> cmd/record/' <<<"$found") ;;
	*) bad=$found ;;
	esac
	if [ -z "$bad" ]; then
		ok "$rule ($n files, $incs quoted includes)"
	else
		not_ok "$rule: $(tr '\n' ';' <<<"$bad")"
	fi
done
done_testing
