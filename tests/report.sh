#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# report.sh: --html, convert --html and convert --speedscope, looked at in Debian's headless Chromium as a person would.
#
# testdata/waitkinds (newest toolchain) runs five goroutines under known
# trace IDs, each burning CPU in main.burn and then waiting its own way;
# ctxprof-go records it with --wall and --html, JSON lines beside. Then:
# - the records carry each sample's time and goroutine (times_us, goids,
#   weights), as the schema says;
# - the live page and the page `convert --html` makes from the JSON lines
#   load in Chromium with no console error and no request but their own
#   file; the table lists every trace ID with the records' CPU and wall
#   time (within 1%); a label filters; each trace's CPU and wall flame
#   graphs give each named function and each wait the width of its
#   samples; its timeline holds every timed sample, in its goroutine's lane,
#   and hovering one shows its time and leaf; a click zooms; the search
#   reports the function's share; the whole run gives each trace its share
#   (tests/browser/report-check.js); the live page also in Debian's
#   firefox-esr: it loads clean and draws a trace;
# - a page of 620 traces lists them all, states its rule (the 500 costliest
#   in full), says why a trace past it has no flame graph, and keeps the
#   others' samples in the whole run as "other traces";
# - hostile labels (quotes, </script>, <img onerror>, U+2028, control
#   characters, a 1 MiB value; and a live run of testdata/hostile: invalid
#   UTF-8, NUL) are shown as their text and run nothing;
# - the speedscope file validates against the schema speedscope's npm
#   package ships, holds the records' time per profile, and opens in
#   speedscope itself with every profile named as expected;
# - every file is mode 0600; screenshots of each view are in .output/report/.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"
. "$(dirname "$0")/browser-lib.sh"

e2e_setup "report page and speedscope"
if ! why=$(browser_setup); then
	not_ok "the browser tests cannot run: $why"
	done_testing
fi
shots=$OUTPUT/report
mkdir -p "$shots"
rm -f "$shots"/*.png
check=$TOP/tests/browser/report-check.js

last=$(go_toolchains | tail -n 1)
bin=$(go_build "$last" plain waitkinds) || { not_ok "go$last: waitkinds build failed"; done_testing; }
"$bin" -d 600s >"$work/kinds.out" 2>"$work/kinds.err" &
wk=$!
# every kind's trace with CPU and wall samples, and a timeline long enough to draw
enough() {
	jq -s -e '[.[] | select(.trace_id != null)] | (map(select(.origin == "sampling").trace_id) | unique | length >= 5)
		and (map(select(.origin == "wall").trace_id) | unique | length >= 5)' "$1" >/dev/null 2>&1
}
if ctxprof_start "$work/err" "$work/live.jsonl" -p "$wk" --wall -F 199 -d 120 -i 2 --html "$work/live.html"; then
	samples_wait 4 60 enough "$work/live.jsonl"
	ctxprof_stop
	rc=$?
else
	rc=$?
fi
check_eq "ctxprof-go -p waitkinds --wall --html exits" 0 "$rc"
grep -q "wrote the report $work/live.html" "$work/err" && ok "ctxprof-go says it wrote the report" ||
	not_ok "no 'wrote the report' line: $(tail -n 2 "$work/err" | tr '\n' ' ')"
kill -USR1 "$wk" 2>/dev/null
wait "$wk"
echo "# $(jq -s 'map(.samples) | add' "$work/live.jsonl") samples in $(wc -l <"$work/live.jsonl") records"

# the records carry their samples' times, and the schema allows them
schema_verdict "records with times_us, goids and weights" "$work/live.jsonl"
timed=$(jq -s '[.[] | select(.origin == "sampling") | .stacks[] | (.times_us | length) == .samples and (.goids | length) == .samples] | all' "$work/live.jsonl")
check_eq "every CPU stack has one time and one goid a sample" true "$timed"
weighed=$(jq -s '[.[] | select(.origin == "wall") | .stacks[] | ((.weights | add) // 0) == .samples and (.times_us | length) == (.weights | length)] | all' "$work/live.jsonl")
check_eq "every wall stack's looks weigh its samples" true "$weighed"
lanes=$(jq -s -r --arg t 0e70000000000000000000000000a004 '[.[] | select(.trace_id == $t) | .stacks[].goids[]] | unique | length' "$work/live.jsonl")
check_eq "the net kind's samples are of one goroutine" 1 "$lanes"

"$CTXPROF" convert --html "$work/conv.html" "$work/live.jsonl" 2>"$work/conv.err"
check_eq "convert --html exits" 0 "$?"
"$CTXPROF" convert --speedscope "$work/profile.speedscope.json" "$work/live.jsonl" 2>"$work/ss.err"
check_eq "convert --speedscope exits" 0 "$?"
for f in live.html conv.html profile.speedscope.json; do
	check_eq "$f is private" 600 "$(stat -c %a "$work/$f" 2>/dev/null)"
done
# every known trace ID of the workload is a trace of the page
for id in $(grep -o '"[0-9a-f]\{32\}"' "$TOP/testdata/waitkinds/main.go" | tr -d '"'); do
	grep -q "\"$id\"" "$work/live.html" && ok "the page holds waitkinds' trace $id" || not_ok "the page lacks trace $id"
done

browser_verdicts "live page" node "$check" page "$work/live.html" "$work/live.jsonl" "$shots" live
browser_verdicts "converted page" node "$check" page "$work/conv.html" "$work/live.jsonl" "$shots" convert
browser_verdicts "Firefox" node "$check" firefox "$work/live.html" "$work/live.jsonl" "$shots"

# hostile labels, made into a record of the run: the page must show them as text
python3 - "$work/live.jsonl" "$work/hostile.jsonl" "$work/hostile.json" <<'EOF'
import json, sys
src, out, expect = sys.argv[1:4]
r = next(json.loads(l) for l in open(src) if '"origin":"sampling"' in l and '"trace_id":"' in l)
r["labels"] = {
    "otel.traceid": r["trace_id"],
    "quotes": "\"double\" 'single' `back` \\backslash",
    "script": "</script><script>window.__pwned=1</script>",
    "img": "<img src=x onerror=\"window.__pwned=2\">",
    "comment": "<!-- --><![CDATA[ ]]>",
    "lines": "a\u2028b\u2029c\r\nd",
    "ctl": "\u0001\u0007\u001f\u007f",
    "</script>": "a key that ends a script",
    # the longest string convert takes: 1 MiB less one byte
    "big": "<" + "x" * (1048575 - 2) + ">",
}
r["truncated"] = []
# the service column shows service_name, else comm: both hostile
r["comm"] = r["service_name"] = "</script><b>x"
open(out, "w").write(json.dumps(r, ensure_ascii=False) + "\n")
json.dump([{"trace": r["trace_id"], "labels": r["labels"], "comm": r["comm"]}], open(expect, "w"))
EOF
"$CTXPROF" convert --html "$work/hostile.html" "$work/hostile.jsonl" 2>"$work/hostile.err"
check_eq "convert --html of hostile labels exits" 0 "$?"
browser_verdicts "hostile page" node "$check" hostile "$work/hostile.html" "$work/hostile.json" "$shots" hostile

# the same from a live run of testdata/hostile: invalid UTF-8, NUL and
# control characters as the target holds them, a 1 MB value read cut
hbin=$(go_build "$last" plain hostile) || not_ok "go$last: hostile build failed"
"$hbin" -d 600s 2>/dev/null &
hp=$!
hostile_enough() {
	jq -s -e '[.[].trace_id] | unique | length >= 5' "$1" >/dev/null 2>&1
}
if ctxprof_start "$work/herr" "$work/hlive.jsonl" -p "$hp" -F 199 -d 120 -i 1 --html "$work/hlive.html"; then
	samples_wait 2 60 hostile_enough "$work/hlive.jsonl"
	ctxprof_stop
	rc=$?
else
	rc=$?
fi
check_eq "ctxprof-go -p hostile --html exits" 0 "$rc"
kill "$hp" 2>/dev/null
jq -s -c '[group_by(.trace_id)[] | .[0] | select(.trace_id == "2cf7651916cd43dd8448eb211c80319c" or .trace_id == "3df7651916cd43dd8448eb211c80319c"
	or .trace_id == "1bf7651916cd43dd8448eb211c80319c") | {trace: .trace_id, labels, comm}]' "$work/hlive.jsonl" >"$work/hlive.json"
check_eq "the hostile run has the invalid UTF-8, quotes and huge traces" 3 "$(jq length "$work/hlive.json")"
browser_verdicts "live hostile page" node "$check" hostile "$work/hlive.html" "$work/hlive.json" "$shots" hostile-live

# more traces than a page holds in full: 620 of equal cost, from one record
python3 - "$work/live.jsonl" "$work/many.jsonl" "$work/many.json" <<'EOF'
import json, sys
src, out, expect = sys.argv[1:4]
r = next(json.loads(l) for l in open(src) if '"origin":"sampling"' in l and '"trace_id":"' in l)
with open(out, "w") as f:
    for i in range(620):
        r["trace_id"] = "%032x" % (0xc0ffee << 64 | i)
        r["labels"] = {"otel.traceid": r["trace_id"]}
        r["truncated"] = []
        f.write(json.dumps(r) + "\n")
# equal cost, equal start: the first 500 to come are in full
json.dump({"total": 620, "full": 500, "full_id": "%032x" % (0xc0ffee << 64 | 499),
           "cut_id": "%032x" % (0xc0ffee << 64 | 500)}, open(expect, "w"))
EOF
"$CTXPROF" convert --html "$work/many.html" "$work/many.jsonl" 2>"$work/many.err"
check_eq "convert --html of 620 traces exits" 0 "$?"
browser_verdicts "cut page" node "$check" cut "$work/many.html" "$work/many.json" "$shots"

# speedscope: its own schema, the records' time in each profile, and speedscope itself
browser_verdicts "speedscope file" python3 "$TOP/tests/speedscope-check.py" "$SPEEDSCOPE_DIR/file-format-schema.json" \
	"$work/profile.speedscope.json" "$work/live.jsonl" "$work/names.json" 100
browser_verdicts "speedscope" node "$check" speedscope "$work/profile.speedscope.json" "$work/names.json" \
	"$SPEEDSCOPE_DIR/index.html" "$shots"

n=$(find "$shots" -name '*.png' | wc -l)
[ "$n" -ge 10 ] && ok "$n screenshots in $shots" || not_ok "only $n screenshots in $shots"
done_testing
