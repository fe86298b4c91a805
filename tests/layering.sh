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
# the BPF skeleton counts as bpf/, the golayout tables as golayout/, the
# version string as cmd/util/).
#
# Within a folder, files may call each other, but never in a circle: the
# calls between the .c files of one folder (a name one file defines, not
# static, named in another) must run one way. Only cmd/record/sampler.c
# includes the BPF skeleton: the other modules take its programs and maps
# from struct sampler_bpf, and each part (cmd/record/part_X.c) only its
# own handle in it, env->bpf->X. No .c file is over 1,000 lines, and no
# function of cmd/ over 120.
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
		version_string.h) p=cmd/util/$inc ;;
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

# defines FILE: the functions FILE defines for other files (not static, not main)
defines() {
	awk '/^[a-z]/ && !/^(static|typedef|extern|enum|union)/ && !/^struct [a-z_0-9]+ \{/ &&
		!/;[[:space:]]*$/ && match($0, /[a-z_][a-z0-9_]*\(/) {
		name = substr($0, RSTART, RLENGTH - 1)
		if (name != "main")
			print name
	}' "$1" | sort -u
}

# names FILE: every identifier FILE's code names, comments and strings left out
names() {
	sed -e 's:"\([^"\\]\|\\.\)*"::g' -e 's://.*$::' -e 's:/\*.*\*/::g' \
		-e '/^[[:space:]]*\/\*/d' -e '/^[[:space:]]*\*/d' "$1" |
		grep -owE '[a-z_][a-z0-9_]*' | sort -u
}

# circles TREE: one line per folder whose files call each other in a circle, "DIR: F G ..."
circles() {
	local tree=$1 dir a b loop cache
	cache=$(mktemp -d)
	while IFS= read -r dir; do
		local -a files=()
		mapfile -t files < <(cd "$tree" && find "$dir" -maxdepth 1 -name '*.c' | sort)
		[ "${#files[@]}" -gt 1 ] || continue
		for a in "${files[@]}"; do
			names "$tree/$a" >"$cache/${a//\//_}.names"
			defines "$tree/$a" >"$cache/${a//\//_}.defines"
		done
		loop=$(for a in "${files[@]}"; do
			for b in "${files[@]}"; do
				[ "$a" != "$b" ] || continue
				if [ -n "$(comm -12 "$cache/${a//\//_}.names" "$cache/${b//\//_}.defines")" ]; then
					printf '%s %s\n' "$a" "$b"
				fi
			done
		done | tsort 2>&1 >/dev/null | sed -n 's/^tsort: \([^:]*\.c\)$/\1/p' | tr '\n' ' ')
		[ -z "$loop" ] || printf '%s: %s\n' "$dir" "${loop% }"
	done < <(cd "$tree" && find cmd offsets golayout bpf -type d | sort)
	rm -rf "$cache"
}

# sizes TREE: each .c file over 1,000 lines, and each function of cmd/
# over 120 (kernel style: a body opens with "{" alone on its line and
# closes with "}" at the line's start), as "FILE: N lines" and
# "FILE:LINE: N lines"
sizes() {
	(cd "$1" && find cmd offsets golayout -name '*.c' | sort | while read -r f; do
		n=$(wc -l <"$f")
		[ "$n" -le 1000 ] || printf '%s: %s lines\n' "$f" "$n"
	done
	find cmd -name '*.c' | sort | xargs awk '
		/^\{$/ { start = FNR; next }
		/^\}/ { if (start && FNR - start - 1 > 120) print FILENAME ":" start ": " FNR - start - 1 " lines"; start = 0 }')
}

# skel_users TREE: the files but the sampler's that include the BPF skeleton
skel_users() {
	(cd "$1" && grep -rlE --include='*.[ch]' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"ctxprof\.skel\.h"' \
		cmd offsets golayout | grep -vx 'cmd/record/sampler.c' | sort)
}

# foreign_handles TREE: each use, in a part's file (cmd/record/part_X.c),
# of a BPF handle not its own (another part's, or the sampler's whole
# struct), as "FILE:LINE: USE"
foreign_handles() {
	(cd "$1" && for f in cmd/record/part_*.c; do
		own=${f#cmd/record/part_}
		own=${own%.c}
		grep -noE 'env(->|\.)bpf->[a-z_]+|struct [a-z_]+_bpf\b' "$f" | while IFS=: read -r line use; do
			case $use in
			*"bpf->$own" | "struct ${own}_bpf") ;;
			*) printf '%s:%s: %s\n' "$f" "$line" "$use" ;;
			esac
		done
	done)
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
# and a circle of calls planted inside one folder
printf 'void plant_a(void)\n{\n\thashmap__new();\n}\n' >>"$plant/cmd/util/vec.c"
printf 'void plant_b(void)\n{\n\tvec__push(0);\n}\n' >>"$plant/cmd/util/hashmap.c"
found=$(circles "$plant")
if grep -qE '^cmd/util: .*(hashmap\.c.*vec\.c|vec\.c.*hashmap\.c)' <<<"$found" &&
	[ "$(grep -c . <<<"$found")" -eq 1 ]; then
	ok "the checker finds a planted circle of calls inside a folder: $found"
else
	not_ok "the checker misses a planted circle of calls in cmd/util (it found: $(tr '\n' ';' <<<"$found"))"
fi

# and the skeleton included outside the sampler
printf '#include "ctxprof.skel.h"\n' >>"$plant/cmd/record/target.c"
check_eq "the checker finds the skeleton included outside the sampler (planted)" cmd/record/target.c \
	"$(skel_users "$plant" | tr '\n' ' ' | sed 's/ $//')"

# and a part taking another part's maps
printf 'int plant_foreign(struct part_ctx *c)\n{\n\treturn c->env->bpf->labels.owners_fd;\n}\n' >>"$plant/cmd/record/part_spawn.c"
found=$(foreign_handles "$plant")
if grep -q '^cmd/record/part_spawn.c:[0-9]*: env->bpf->labels$' <<<"$found" && [ "$(grep -c . <<<"$found")" -eq 1 ]; then
	ok "the checker finds a part taking another part's BPF handle (planted): $found"
else
	not_ok "the checker misses a part taking another's BPF handle (it found: $(tr '\n' ';' <<<"$found"))"
fi

# then the tree itself
# a planted long file and a planted long function, found
{ printf 'void plant_long(void)\n{\n'; for i in $(seq 130); do printf '\t;\n'; done; printf '}\n'; } >>"$plant/cmd/record/parts.c"
for i in $(seq 1001); do printf '\n'; done >>"$plant/offsets/util.c"
found=$(sizes "$plant")
if grep -q '^cmd/record/parts.c:[0-9]*: 130 lines$' <<<"$found" && grep -q '^offsets/util.c: ' <<<"$found"; then
	ok "the checker finds a planted function over 120 lines and a planted file over 1,000"
else
	not_ok "the checker misses a planted long function or file (it found: $(tr '\n' ';' <<<"$found"))"
fi

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
found=$(skel_users "$tree")
if [ -z "$found" ]; then
	ok "only cmd/record/sampler.c includes the BPF skeleton; the others take its handles (struct sampler_bpf)"
else
	not_ok "the BPF skeleton is included outside the sampler: $(tr '\n' ' ' <<<"$found")"
fi
found=$(foreign_handles "$tree")
if [ -z "$found" ]; then
	ok "each part takes only its own BPF handle ($(cd "$tree" && ls cmd/record/part_*.c | wc -l) parts)"
else
	not_ok "a part takes a BPF handle not its own: $(tr '\n' ';' <<<"$found")"
fi
found=$(sizes "$tree")
if [ -z "$found" ]; then
	ok "no .c file over 1,000 lines, no function of cmd/ over 120"
else
	not_ok "too long: $(tr '\n' ';' <<<"$found")"
fi
found=$(circles "$tree")
if [ -z "$found" ]; then
	ok "no folder's files call each other in a circle"
else
	not_ok "files of one folder call each other in a circle: $(tr '\n' ';' <<<"$found")"
fi
done_testing
