#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# alloc-views.sh: --alloc's records in every view a person looks at: the lines at exit, the report page, speedscope, folded stacks.
#
# testdata/allocs (newest toolchain, plain) at -rate 65536 allocates for
# 3 s under four trace IDs, each in a function of its own (main.allocSmall
# for ...01, alloc1K ...02, alloc64K ...03, allocChild ...04), and
# untraced in main.allocUntraced. One `ctxprof-go -p PID --alloc --html
# live.html --folded-alloc -o rec.jsonl` records it and ends when it
# exits. What each view must show is computed from the JSON lines (jq,
# and tests/browser/report-check.js reading them on its own), and which
# function allocates for which trace from the program's own truth:
# - the lines at exit: a heading for the traces by allocated bytes, of the
#   four traces, then their lines in the order of the records' alloc_bytes,
#   each with its MB (to 0.01 MB) and its allocating function as the top
#   allocator; every line at most 80 columns;
# - folded stacks: the live --folded-alloc and convert --folded-alloc are
#   identical, their counts add up to the records' alloc_bytes, and with
#   --folded-trace-root each trace's lines to its records' bytes; -f
#   without it leaves allocations out; --folded-alloc without --alloc, and
#   with --folded-wall, is refused;
# - the live page and convert --html's, in headless Chromium: the table's
#   allocated bytes per trace are the records' (and sort both ways), a
#   click on a trace draws its allocation flame graph naming its
#   allocating function at its share of the bytes (objects on hover), its
#   timeline holds its CPU samples only, and the whole run's allocated
#   bytes give each trace its share; no console error, no request;
# - convert --speedscope: valid against speedscope's schema, an allocation
#   profile per trace in bytes adding up to the records', each sample's
#   leaf its allocating function; it opens in speedscope with every
#   profile named as written.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"
. "$(dirname "$0")/browser-lib.sh"

e2e_setup "allocations in the summary, the page, speedscope and folded stacks"
shots=$OUTPUT/alloc-views
mkdir -p "$shots"
rm -f "$shots"/*.png
v=$(go_toolchains | tail -n 1)
bin=$(go_build "$v" plain allocs) || { not_ok "go$v allocs: build failed"; done_testing; }

# refused before anything runs: one folded set, and allocations only with --alloc
"$CTXPROF" -p $$ --folded-alloc -d 1 >/dev/null 2>"$work/refused.err"
rc=$?
check_eq "--folded-alloc without --alloc is refused" "2 ctxprof-go: --folded-alloc needs --alloc: it writes alloc records only" \
	"$rc $(head -n 1 "$work/refused.err")"
"$CTXPROF" convert --folded-wall --folded-alloc </dev/null >/dev/null 2>"$work/refused.err"
rc=$?
check_eq "convert --folded-wall --folded-alloc is refused" 2 "$rc"

"$bin" -rate 65536 -d 3s -start "$work/go" -out "$work/truth.json" >"$work/ready" 2>&1 &
target=$!
wait_line "$work/ready" '^ready' 100 || not_ok "go$v allocs: not ready"
ctxprof_start "$work/err" "$work/rec.jsonl" -p "$target" --alloc -i 3600 --html "$work/live.html" \
	--folded-alloc >"$work/live.folded"
check_eq "ctxprof-go -p allocs --alloc --html --folded-alloc starts" 0 "$?" || { cat "$work/err"; done_testing; }
touch "$work/go"
wait "$ctxprof"
check_eq "ctxprof-go exits 0 once its target has" 0 "$?" || cat "$work/err"
wait "$target" 2>/dev/null
schema_verdict "alloc records" "$work/rec.jsonl"
echo "# $(jq -s 'map(select(.origin == "alloc")) | "\(length) alloc records, \(map(.alloc_bytes) | add) bytes"' -r "$work/rec.jsonl")"

# --- the lines at exit ---
sed -n '/costliest/,$p' "$work/err" | sed 's/^/# /'
# the records' traces by bytes, most first: "TRACE MB"
jq -s -r 'map(select(.origin == "alloc" and .trace_id != null)) | group_by(.trace_id) |
	map({t: .[0].trace_id, b: (map(.alloc_bytes) | add)}) | sort_by(-.b) | .[] | "\(.t) \(.b / 1e6)"' \
	"$work/rec.jsonl" >"$work/by_bytes"
lines=$(sed -n '/the costliest traces by allocated bytes/,$p' "$work/err" | grep -E '^ctxprof-go: [0-9a-f]{32} ')
check_eq "the allocation heading, of the records' traces" 1 \
	"$(grep -c "^ctxprof-go: the costliest traces by allocated bytes, of $(grep -c . "$work/by_bytes"), top allocator:$" "$work/err")"
check_eq "its lines name the traces in the order of the records' bytes" "$(awk '{ print $1 }' "$work/by_bytes" | tr '\n' ' ')" \
	"$(awk '{ print $2 }' <<<"$lines" | tr '\n' ' ')"
check_eq "each line's MB are its records' alloc_bytes" "" "$(paste -d ' ' "$work/by_bytes" <(awk '{ print $3 }' <<<"$lines") |
	while read -r t want got; do
		awk -v a="${got%MB}" -v b="$want" 'BEGIN { exit !(a - b < 0.006 && b - a < 0.006) }' || echo "$t: $got, records $want MB"
	done)"
check_eq "each line's top allocator is its trace's allocating function (the program's truth)" "" \
	"$(awk '{ print $2, $4 }' <<<"$lines" | while read -r t f; do
		want=$(jq -r --arg t "$t" '.functions | to_entries[] | select(.value.trace_id == $t) | .key' "$work/truth.json")
		[ "$f" = "$want" ] || echo "$t: $f, truth $want"
	done)"
check_eq "the lines at exit are at most 80 columns" "" "$(sed -n '/costliest/,$p' "$work/err" | awk 'length > 80')"

# --- folded stacks ---
"$CTXPROF" convert --folded-alloc "$work/rec.jsonl" >"$work/conv.folded"
check_eq "convert --folded-alloc exits" 0 "$?"
if cmp -s "$work/live.folded" "$work/conv.folded"; then
	ok "folded stacks of allocations from the live run and from convert are identical ($(grep -c . "$work/live.folded") stacks)"
else
	not_ok "live and converted --folded-alloc differ: $(diff "$work/live.folded" "$work/conv.folded" | head -n 4 | tr '\n' ' ')"
fi
want=$(jq -s 'map(select(.origin == "alloc") | .alloc_bytes) | add' "$work/rec.jsonl")
check_eq "--folded-alloc counts add up to the records' alloc_bytes" "$want" \
	"$(awk '{ n += $NF } END { printf "%d", n }' "$work/live.folded")"
"$CTXPROF" convert --folded-alloc --folded-trace-root "$work/rec.jsonl" >"$work/root.folded"
check_eq "--folded-alloc --folded-trace-root: each trace's lines add up to its records' bytes" \
	"$(jq -s -r 'map(select(.origin == "alloc")) | group_by(.trace_id) | .[] | "\(.[0].trace_id // "no-trace") \(map(.alloc_bytes) | add)"' \
		"$work/rec.jsonl" | sort | tr '\n' ' ')" \
	"$(awk '{ split($1, f, ";"); s[f[1]] += $NF } END { for (t in s) printf "%s %d\n", t, s[t] }' "$work/root.folded" | sort | tr '\n' ' ')"
# or one of main's closures, which make the few objects of setup (the
# child's WaitGroup, closure and goroutine) and are sampled now and then
check_eq "--folded-alloc: each traced stack's leaf is an allocating function of the program" "" \
	"$(grep -v '^no-trace;' "$work/root.folded" | awk '{ n = split($1, f, ";"); print f[1], f[n] }' | while read -r t leaf; do
		want=$(jq -r --arg t "$t" '.functions | to_entries[] | select(.value.trace_id == $t) | .key' "$work/truth.json")
		[ "$leaf" = "$want" ] || [[ $leaf == main.main.func* ]] || echo "$t: $leaf"
	done | sort -u | tr '\n' ' ')"
"$CTXPROF" convert -f "$work/rec.jsonl" >"$work/cpu.folded"
check_eq "convert -f leaves allocations out: its counts are the CPU samples" \
	"$(jq -s 'map(select(.origin == "sampling") | .samples) | add // 0' "$work/rec.jsonl")" \
	"$(awk '{ n += $NF } END { printf "%d", n }' "$work/cpu.folded")"

# --- the report page and speedscope, in headless Chromium ---
"$CTXPROF" convert --html "$work/conv.html" "$work/rec.jsonl" 2>"$work/conv.err"
check_eq "convert --html exits" 0 "$?"
"$CTXPROF" convert --speedscope "$work/alloc.speedscope.json" "$work/rec.jsonl" 2>"$work/ss.err"
check_eq "convert --speedscope exits" 0 "$?"
if ! why=$(browser_setup); then
	not_ok "the browser checks cannot run: $why"
	done_testing
fi
check=$TOP/tests/browser/report-check.js
browser_verdicts "live page" node "$check" alloc "$work/live.html" "$work/rec.jsonl" "$shots" live
browser_verdicts "converted page" node "$check" alloc "$work/conv.html" "$work/rec.jsonl" "$shots" convert
browser_verdicts "speedscope file" python3 "$TOP/tests/speedscope-check.py" "$SPEEDSCOPE_DIR/file-format-schema.json" \
	"$work/alloc.speedscope.json" "$work/rec.jsonl" "$work/names.json" 100
check_eq "the speedscope file has an allocation profile for each of the four traces" 4 \
	"$(jq '[.[] | select(test("^a110c0{26}[1-4] · allocated bytes$"))] | length' "$work/names.json")"
browser_verdicts "speedscope" node "$check" speedscope "$work/alloc.speedscope.json" "$work/names.json" \
	"$SPEEDSCOPE_DIR/index.html" "$shots"
done_testing
