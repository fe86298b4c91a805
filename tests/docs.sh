#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# docs.sh: the man page and the markdown documents agree with the program: options, record fields, check keys, links, make targets.
#
# First, needing no program: HACKING.md has no sentence about what the
# code used to do and no table row wider than 160 characters, and no
# comment of the C sources carries a time measured on one machine (the
# checker is first run on a copy with one violation of each kind planted,
# so that a checker that finds nothing cannot pass; see style_violations).
# Then reads the --help texts of ./ctxprof-go (main, check, addr2line,
# convert) and checks against the documents:
# - every option line of a --help text ("  -p, --pid PID", "      --pprof
#   FILE") is an option entry (the tag line of a .TP) of the man page's
#   OPTIONS section, in the subsection of its subcommand (check, addr2line,
#   convert; any other for the main program), short and long form in one
#   entry;
# - the other way round: every option an entry of OPTIONS names is in the
#   --help text of its subsection's command;
# - every property of cmd/output/record.schema.json, at every level, is an
#   entry of the page's OUTPUT/Records subsection;
# - every top-level key that `check --json` prints for real Go builds
#   (testdata/traced, and testdata/httpserver for the net/http members when
#   it builds, by the newest and the oldest installed toolchain; with no
#   toolchain, ./ctxprof-go itself) is an entry of OUTPUT/"check output", and every
#   nested key it printed is named in the page;
# - mandoc -Tlint and groff -ww say nothing about the page;
# - README.md has at most 350 lines;
# - every relative link of README.md, HACKING.md, tests/README.md and
#   tests/bench/README.md ([..](path), [..](path#anchor), [..](#anchor))
#   points at a file that exists and, for an anchor into a markdown file,
#   at a heading that makes it (GitHub's rule: lower case; letters, digits,
#   spaces, '-' and '_' kept; spaces become '-'; a repeated one gets -1, -2);
# - every target that `make help` lists is named in README.md.
# Needs no root.
#
# Usage: docs.sh [TREE]   (default: this checkout). The documents, the
# schema and the Makefile are read from TREE, the program is $CTXPROF:
# point TREE at a copy with one fault planted to see a check fail.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tree=$(cd "${1:-$TOP}" && pwd)
page=$tree/cmd/ctxprof-go.8
schema=$tree/cmd/output/record.schema.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- 0: HACKING.md in the present tense with tables that fit; no machine's timings in comments ---
# style_violations TREE: one line per violation, "KIND FILE:LINE: what", KIND one of
# - history: HACKING.md tells what the code used to do. The phrases are
#   few and narrow, so that present-tense prose never matches: "used to"
#   unless after a form of "be" or "get" ("is used to read" describes),
#   "until this/now/then", "no longer", "we changed/sent/...",
#   "previously", "before this/the change/fix", "an earlier/old build",
#   "was fixed/changed/replaced/...", "it once said", "not done yet", and a
#   date (YYYY-MM-DD). A phrase broken across two lines is found too.
#   Fenced code blocks are left out.
# - row: a HACKING.md table row longer than 160 characters, wider than a
#   screen (a module per row or a nested list fits).
# - timing: a comment in the C sources (cmd, offsets, golayout, bpf) with
#   a time in ns, µs, us or ms, or naming the paravirtualised or test
#   machine or a tests/bench.sh step: figures of one machine belong in
#   tests/bench/README.md beside their command. Allowed: a line that names
#   a budget, timeout, deadline or limit (a time the code enforces), and
#   "Go duration" (the syntax -d and -i take, "500ms").
style_violations() {
	(cd "$1" && find cmd offsets golayout bpf -name '*.[ch]' | LC_ALL=C sort |
		xargs perl -CSD -Mutf8 -e "$STYLE_PL" HACKING.md)
}
# shellcheck disable=SC2016 # perl's $, not the shell's
STYLE_PL='
use strict;
use warnings;
my @history = (
	qr/(?<!\bis )(?<!\bare )(?<!\bbe )(?<!\bbeen )(?<!\bwas )(?<!\bwere )(?<!\bget )(?<!\bgets )\bused to\b/i,
	qr/\buntil (?:this|now|then|recently)\b/i,
	qr/\bno longer\b/i,
	qr/\bwe (?:changed|sent|used|had|moved|replaced|switched)\b/i,
	qr/\bpreviously\b/i,
	qr/\bbefore (?:this|the) (?:change|fix|cut|rewrite)\b/i,
	qr/\b(?:an|the) (?:earlier|early|old|previous) (?:build|version|code)\b/i,
	qr/\b(?:was|were) (?:fixed|changed|replaced|rewritten|removed)\b/i,
	qr/\bit once (?:said|was|took)\b/i,
	qr/\bnot done yet\b/i,
	qr/\b20\d\d-[01]\d-[0-3]\d\b/,
);
my $time = qr/(?<![\w.])\d[\d.,]*\s?(?:ns|[µμ]s|us|ms)\b/;
my $machine = qr/\bparavirtuali[sz]ed\b|\btest machine\b|\bbench\.sh,?\s+\d+[a-z]?\b/i;
my $allow = qr/\b(?:budget|timeout|deadline|limit)s?\b|\bGo duration/i;

my $doc = shift @ARGV;
open my $fh, "<", $doc or die "$doc: $!\n";
my @prose = <$fh>;
close $fh;
chomp @prose;
my $fence = 0;
for (@prose) {
	if (/^\s*```/) { $fence = !$fence; $_ = ""; next }
	$_ = "" if $fence;
}
for my $i (0 .. $#prose) {
	(my $t = $prose[$i]) =~ s/\s+$//;
	next if $t eq "";
	printf "row %s:%d: %d characters\n", $doc, $i + 1, length($t)
		if $t =~ /^\s*\|/ && length($t) > 160;
	(my $next = $i < $#prose ? $prose[$i + 1] : "") =~ s/^\s+//;
	my $joined = "$t $next";
	for my $re (@history) {
		while ($joined =~ /$re/g) {
			printf "history %s:%d: %s\n", $doc, $i + 1, $& if $-[0] < length($t);
		}
	}
}

for my $f (@ARGV) {
	open my $src, "<", $f or die "$f: $!\n";
	my $in = 0;
	while (my $line = <$src>) {
		chomp $line;
		my ($c, $rest) = ("", $line);
		while (length $rest) {
			if ($in) {
				if ($rest =~ s{^(.*?)\*/}{}) { $c .= "$1 "; $in = 0 }
				else { $c .= $rest; $rest = "" }
			} elsif ($rest =~ s{^(?:[^"\x27/]+|/(?![*/])|"(?:[^"\\]|\\.)*"|\x27(?:[^\x27\\]|\\.)*\x27)+}{}) {
				next;
			} elsif ($rest =~ s{^/\*}{}) {
				$in = 1;
			} elsif ($rest =~ s{^//(.*)}{}) {
				$c .= $1;
			} else {
				$rest = substr($rest, 1);
			}
		}
		next unless ($c =~ $time || $c =~ $machine) && $c !~ $allow;
		$c =~ s/^[\s*]+|\s+$//g;
		print "timing $f:$.: $c\n";
	}
	close $src;
}
'

# the checker first: a copy with one violation of each kind planted, and
# two sentences of the allowed kind beside them, must give exactly the four
mkdir -p "$tmp/plant"
cp -r "$tree/HACKING.md" "$tree/cmd" "$tree/offsets" "$tree/golayout" "$tree/bpf" "$tmp/plant"
style_violations "$tree" >"$tmp/style.tree"
{
	echo
	echo "The sampler used"
	echo "to read every label. The map is used to read the labels it finds."
	# shellcheck disable=SC2016 # markdown's backquotes
	printf '| `planted/` | %s |\n' "$(printf 'a row too long to fit a screen %.0s' 1 2 3 4 5 6)"
} >>"$tmp/plant/HACKING.md"
hl=$(($(wc -l <"$tmp/plant/HACKING.md") - 2))
rl=$((hl + 2))
printf '/* the lookup took 12 µs here */\nstatic int planted_budget; /* a 20 ms budget per round */\n' >>"$tmp/plant/cmd/util/vec.c"
tl=$(($(wc -l <"$tmp/plant/cmd/util/vec.c") - 1))
printf '/*\n * as on the paravirtualised test machine\n */\n' >>"$tmp/plant/bpf/work.bpf.h"
ml=$(($(wc -l <"$tmp/plant/bpf/work.bpf.h") - 1))
style_violations "$tmp/plant" >"$tmp/style.plant"
planted=$(grep -vxF -f "$tmp/style.tree" "$tmp/style.plant")
for want in "history HACKING.md:$hl: used to" "row HACKING.md:$rl: " "timing cmd/util/vec.c:$tl: the lookup took 12 µs here" \
	"timing bpf/work.bpf.h:$ml: as on the paravirtualised test machine"; do
	if grep -qF "$want" <<<"$planted"; then
		ok "style checker finds a planted violation: ${want%%:*}"
	else
		not_ok "style checker misses a planted violation: $want (it found: $(tr '\n' ';' <<<"$planted"))"
	fi
done
check_eq "style checker: the planted copy has exactly the 4 planted violations more (\"is used to read\" and a 20 ms budget are allowed)" \
	4 "$(grep -c . <<<"$planted")"

# then the tree itself
found=$(cat "$tmp/style.tree")
nc=$(cd "$tree" && find cmd offsets golayout bpf -name '*.[ch]' | wc -l)
for kind in history row timing; do
	bad=$(grep "^$kind " <<<"$found" | sed "s/^$kind //")
	case $kind in
	history) what="HACKING.md tells what the code does, not what it used to do" ;;
	row) what="every table row of HACKING.md fits 160 characters" ;;
	timing) what="no comment of the C sources ($nc files) carries one machine's timing or a bench step" ;;
	esac
	if [ -z "$bad" ]; then
		ok "$what"
	else
		not_ok "$what: $(tr '\n' ';' <<<"$bad")"
	fi
done

if [ ! -x "$CTXPROF" ] || [ ! -r "$page" ]; then
	not_ok "docs: need $CTXPROF (make) and $page"
	done_testing
fi

# --- the man page, as data: one line per .TP entry, "SECTION<TAB>SUBSECTION<TAB>TAG" ---
# roff escapes undone: \- is -, font changes and \& \% vanish, \(aq \(dq are quotes
roff_plain() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' -e 's/\\%//g' \
		-e "s/\\\\(aq/'/g" -e 's/\\(dq/"/g' -e 's/\\(->/->/g' -e 's/\\(mc/u/g' \
		-e 's/\\(bu/*/g' -e 's/\\ / /g' "$@"
}
roff_plain "$page" | awk '
	/^\.\\"/ { next }
	/^\.SH / { sh = substr($0, 5); gsub(/"/, "", sh); ss = ""; next }
	/^\.SS / { ss = substr($0, 5); gsub(/"/, "", ss); next }
	/^\.TP/ { tag = 1; next }
	tag { tag = 0; line = $0; sub(/^\.[A-Z]+ */, "", line); printf "%s\t%s\t%s\n", sh, ss, line }
' >"$tmp/entries"
roff_plain "$page" | grep -v '^\.\\"' >"$tmp/page.txt"

# words NAME...: the words of stdin (letters, digits, _ . -), trailing dots cut, one a line
words() { tr -c 'A-Za-z0-9_.\n-' '\n' | sed -e 's/\.*$//' -e '/^$/d'; }
# options: the options of stdin's words (-x, --long), one a line
options() { grep -oE '(^|[^A-Za-z0-9-])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[^-]//'; }

# --- 1 and 2: --help against OPTIONS ---
# help_options CMD: one line per option line of its --help: "-p --pid", "--pprof"
help_options() {
	# shellcheck disable=SC2086 # no subcommand is no argument
	"$CTXPROF" $1 --help 2>/dev/null |
		sed -nE 's/^ {2,6}(-[A-Za-z0-9])(, (--[a-z][a-z0-9-]*))?([ =].*)?$/\1 \3/p; s/^ {2,6}(--[a-z][a-z0-9-]*)([ =].*)?$/\1/p' |
		sed 's/ *$//'
}
# entries_of CMD: the option entries of CMD's subsections, one entry's options a line
entries_of() {
	awk -F '\t' -v cmd="$1" '$1 == "OPTIONS" {
		sub_cmd = ($2 == "check" || $2 == "addr2line" || $2 == "convert") ? $2 : "main"
		if (sub_cmd == cmd) print $3
	}' "$tmp/entries" | while IFS= read -r tag; do
		printf '%s\n' "$(options <<<"$tag" | tr '\n' ' ' | sed 's/ *$//')"
	done | sed '/^$/d'
}

counts="" missing="" extra="" total=0 nentries=0
for cmd in main check addr2line convert; do
	arg=$cmd
	[ "$cmd" = main ] && arg=""
	help_options "$arg" >"$tmp/help.$cmd"
	entries_of "$cmd" >"$tmp/man.$cmd"
	n=$(grep -c . "$tmp/help.$cmd")
	counts+="${cmd} $n, "
	total=$((total + n))
	[ "$n" -gt 0 ] || missing+="($cmd: its --help lists no option) "
	# each option line's forms, all in one entry of the right subsection
	while read -r -a forms; do
		found=0
		while read -r -a entry; do
			all=1
			for f in "${forms[@]}"; do
				[[ " ${entry[*]} " == *" $f "* ]] || all=0
			done
			[ "$all" = 1 ] && found=1 && break
		done <"$tmp/man.$cmd"
		[ "$found" = 1 ] || missing+="$cmd: ${forms[*]}; "
	done <"$tmp/help.$cmd"
	# the other way round: each option an entry names is in that command's --help
	tr ' ' '\n' <"$tmp/man.$cmd" | sed '/^$/d' | sort -u >"$tmp/man-opts.$cmd"
	tr ' ' '\n' <"$tmp/help.$cmd" | sed '/^$/d' | sort -u >"$tmp/help-opts.$cmd"
	nentries=$((nentries + $(grep -c . "$tmp/man.$cmd")))
	for o in $(comm -23 "$tmp/man-opts.$cmd" "$tmp/help-opts.$cmd"); do
		extra+="$cmd: $o; "
	done
done
counts=${counts%, }
if [ -z "$missing" ] && [ "$total" -ge 20 ]; then
	ok "man page: all $total option lines of the --help texts ($counts) are option entries of OPTIONS, in their command's subsection"
else
	not_ok "man page: option lines of --help ($counts) that are no entry of OPTIONS in their command's subsection: ${missing:-none}"
fi
nman=$(cat "$tmp"/man-opts.* | grep -c .)
if [ -z "$extra" ] && [ "$nentries" -ge 20 ]; then
	ok "--help in step: all $nman options of the page's $nentries option entries are in their command's --help"
else
	not_ok "--help in step: options the page's OPTIONS documents that no --help of their command lists: ${extra:-none} ($nentries entries)"
fi

# --- 3: every property of the record schema is an entry of OUTPUT/Records ---
props=$(jq -r '[.. | objects | .properties? // empty | keys[]] | unique[]' "$schema" 2>/dev/null)
awk -F '\t' '$1 == "OUTPUT" && $2 == "Records" { print $3 }' "$tmp/entries" | words | sort -u >"$tmp/record-tags"
nprops=$(grep -c . <<<"$props")
absent=$(grep -vxF -f "$tmp/record-tags" <<<"$props" | tr '\n' ' ')
if [ -n "$props" ] && [ "$nprops" -ge 20 ] && [ -z "$absent" ]; then
	ok "man page: all $nprops property names of record.schema.json (every level) are entries of OUTPUT/Records"
else
	not_ok "man page: record.schema.json properties ($nprops) that are no entry of OUTPUT/Records: ${absent:-none}"
fi

# --- 4: every check --json key, from a real run ---
bins=() what=()
newest=$(go_toolchains | tail -n 1)
oldest=$(go_toolchains | head -n 1)
if [ -n "$newest" ]; then
	for v in $(printf '%s\n' "$newest" "$oldest" | sort -u); do
		b=$(go_build "$v" plain 2>/dev/null) && bins+=("$b") && what+=("traced go$v")
	done
	# net/http's header map: hmap before Go 1.24, swiss from it
	for v in $(printf '%s\n' "$newest" "$oldest" | sort -u); do
		b=$(go_build "$v" plain httpserver 2>/dev/null) && bins+=("$b") && what+=("httpserver go$v")
	done
fi
if [ "${#bins[@]}" -eq 0 ]; then
	bins=("$CTXPROF")
	what=("ctxprof-go itself (no Go toolchain built testdata/traced)")
fi
: >"$tmp/check.json"
for b in "${bins[@]}"; do
	"$CTXPROF" check --json "$b" >>"$tmp/check.json" 2>/dev/null
done
top=$(jq -r 'keys_unsorted[]' "$tmp/check.json" 2>/dev/null | sort -u)
nested=$(jq -r '[.offsets // {}, .wall.offsets // {}, (.trace_sources // {} | .[]), .wall // {},
	.alloc // {}, (.module_members // [] | .[])] | map(keys[]) | .[]' "$tmp/check.json" 2>/dev/null |
	sort -u)
nested+=$'\n'$(jq -r '.trace_sources // {} | keys[]' "$tmp/check.json" 2>/dev/null)
nested=$(sed '/^$/d' <<<"$nested" | sort -u)
awk -F '\t' '$1 == "OUTPUT" && $2 == "check output" { print $3 }' "$tmp/entries" | words | sort -u >"$tmp/check-tags"
words <"$tmp/page.txt" | sort -u >"$tmp/page-words"
ntop=$(grep -c . <<<"$top")
nnested=$(grep -c . <<<"$nested")
absent=$(grep -vxF -f "$tmp/check-tags" <<<"$top" | tr '\n' ' ')
if [ -n "$top" ] && [ "$ntop" -ge 15 ] && [ -z "$absent" ]; then
	ok "man page: all $ntop top-level keys of check --json (${what[*]}) are entries of OUTPUT/check output"
else
	not_ok "man page: check --json keys ($ntop, from ${what[*]}) that are no entry of OUTPUT/check output: ${absent:-none}"
fi
absent=$(grep -vxF -f "$tmp/page-words" <<<"$nested" | tr '\n' ' ')
if [ -n "$nested" ] && [ -z "$absent" ]; then
	ok "man page: all $nnested nested keys of those check --json objects (offsets, trace_sources, wall, alloc, module_members) are named in it"
else
	not_ok "man page: nested check --json keys ($nnested) not named in the page: ${absent:-none}"
fi

# --- 5: the page renders without a word from either formatter ---
if command -v mandoc >/dev/null; then
	warn=$(mandoc -Tlint "$page" 2>&1)
	if [ -z "$warn" ]; then
		ok "man page: mandoc -Tlint, nothing ($(wc -l <"$page") lines of roff)"
	else
		not_ok "man page: mandoc -Tlint: $(head -n 5 <<<"$warn" | tr '\n' ' ')"
	fi
else
	skip "man page: mandoc -Tlint" "mandoc is not installed (make deps installs it)"
fi
warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
if [ -z "$warn" ]; then
	ok "man page: groff -man -Tutf8 -ww -z, nothing"
else
	not_ok "man page: groff -ww: $(head -n 5 <<<"$warn" | tr '\n' ' ')"
fi

# --- 6: README's length, and every relative link of the documents ---
lines=$(wc -l <"$tree/README.md")
if [ "$lines" -le 350 ]; then
	ok "README.md: $lines lines (at most 350)"
else
	not_ok "README.md: $lines lines, more than 350"
fi

# prose MD: the file without fenced code blocks and inline code spans
prose() { awk '/^ *```/ { fence = !fence; next } !fence' "$1" | sed 's/`[^`]*`//g'; }
# anchors MD: the anchors its headings make, GitHub style
anchors() {
	awk '/^ *```/ { fence = !fence; next } !fence && /^#+ / { sub(/^#+ +/, ""); sub(/ +#* *$/, ""); print }' "$1" |
		LC_ALL=C tr '[:upper:]' '[:lower:]' | LC_ALL=C sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g' |
		awk '{ n = seen[$0]++; print n ? $0 "-" n : $0 }'
}
nlinks=0 nanchors=0 nexternal=0 broken=""
for doc in README.md HACKING.md tests/README.md tests/bench/README.md; do
	if [ ! -r "$tree/$doc" ]; then
		broken+="$doc: missing; "
		continue
	fi
	dir=$(dirname "$tree/$doc")
	while IFS= read -r target; do
		case $target in
		http://* | https://* | mailto:*) nexternal=$((nexternal + 1)); continue ;;
		esac
		nlinks=$((nlinks + 1))
		path=${target%%#*}
		anchor=""
		[[ $target == *"#"* ]] && anchor=${target#*#}
		if [ -z "$path" ]; then
			file=$tree/$doc
		else
			file=$dir/$path
		fi
		if [ ! -e "$file" ]; then
			broken+="$doc: ($target) no such file; "
			continue
		fi
		if [ -n "$anchor" ]; then
			nanchors=$((nanchors + 1))
			if [[ $file != *.md ]]; then
				broken+="$doc: ($target) an anchor into a file that is not markdown; "
			elif ! anchors "$file" | grep -qxF -- "$anchor"; then
				broken+="$doc: ($target) no heading makes #$anchor; "
			fi
		fi
	done < <(prose "$tree/$doc" | grep -oE '\]\([^) ]+\)' | sed -e 's/^](//' -e 's/)$//')
done
if [ -z "$broken" ] && [ "$nlinks" -ge 10 ]; then
	ok "links: all $nlinks relative links of README.md, HACKING.md, tests/README.md, tests/bench/README.md resolve ($nanchors with an anchor; $nexternal external, not followed)"
else
	not_ok "links: of $nlinks relative links, broken: ${broken:-none}"
fi

# --- 7: every make target of `make help` is in the README ---
targets=$(make -s -C "$tree" --no-print-directory help 2>/dev/null | sed -nE 's/^make( ([a-z][a-z0-9-]*))? .*/\2/p')
ntargets=$(grep -c '' <<<"$targets")
absent=""
while IFS= read -r t; do
	if [ -z "$t" ]; then
		grep -qE '`make`|^make( |$)' "$tree/README.md" || absent+="make; "
	else
		grep -qE "make $t([^a-z0-9-]|\$)" "$tree/README.md" || absent+="make $t; "
	fi
done <<<"$targets"
if [ "$ntargets" -ge 5 ] && [ -z "$absent" ]; then
	ok "README.md: all $ntargets targets of make help are named ($(sed 's/^$/(default)/' <<<"$targets" | tr '\n' ' ' | sed 's/ $//'))"
else
	not_ok "README.md: targets of make help ($ntargets) it does not name: ${absent:-none}"
fi

done_testing
