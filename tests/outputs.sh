#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# outputs.sh: --pprof, -f/--folded and `ctxprof-go convert` against the JSON lines they come from.
#
# One run samples testdata/traced from the newest and oldest toolchain,
# plain and stripped, with --pprof and -f (JSON lines to -o), for 5 s and
# until every target has main.burnDo samples and all six trace IDs (null
# included) have records. Then:
# - the live pprof file and the one `convert` makes from the run's JSON lines
#   open in `go tool pprof` of every installed toolchain and have the same
#   samples (`-raw`, compared whole);
# - per trace_id, the sample counts in `-raw` equal the sums in the JSON;
# - -tagfocus=trace_id=X selects exactly X's samples, and pprof's top flat
#   function is the JSON's most frequent leaf;
# - the stripped builds' locations have Go names and file:line;
# - folded stacks, live and converted, are identical, and their counts are
#   the JSON's, per stack and in total;
# - `convert` on bad input (invalid JSON, a record missing a field, a
#   file that is only a cut line) exits non-zero, names the line, and
#   writes nothing; a last line cut off after whole ones is left out and
#   named, the rest converted (exit 0).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "pprof and folded output"
declare -A c
while IFS== read -r k v; do c[$k]=$v; done < <(traced_constants)

first=$(go_toolchains | head -n 1)
last=$(go_toolchains | tail -n 1)
pids=()
declare -A name_of
for v in $(printf '%s\n' "$first" "$last" | sort -u); do
	for var in plain stripped; do
		bin=$(go_build "$v" "$var") || { not_ok "go$v $var: build failed"; continue; }
		nice -n 10 "$bin" -d 600s 2>/dev/null &
		pids+=($!)
		name_of[$!]="go$v $var"
	done
done
# enough OUT: what the checks below look up: records of every target, with
# main.burnDo frames, and of the five trace IDs and null
enough() {
	jq -s -e --argjson n "${#pids[@]}" '
		(group_by(.pid) | length == $n and all(.[]; any(.[].stacks[].frames[]; .func == "main.burnDo"))) and
		([.[].trace_id] | unique | length >= 6)' "$1" >/dev/null 2>&1
}
if ctxprof_start "$work/err" "$work/live.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -F 999 -d 300 -i 2 \
	--pprof "$work/live.pb.gz" -f >"$work/live.folded"; then
	samples_wait 5 120 enough "$work/live.jsonl"
	echo "# sampled for $sampled s"
	ctxprof_stop
	rc=$?
else
	rc=$?
fi
check_eq "ctxprof-go --pprof -f -o exits" 0 "$rc"
kill "${pids[@]}" 2>/dev/null
total=$(jq -s 'map(.samples) | add' "$work/live.jsonl")
echo "# $total samples in $(wc -l <"$work/live.jsonl") records"

"$CTXPROF" convert --pprof "$work/conv.pb.gz" "$work/live.jsonl" 2>"$work/conv.err"
check_eq "convert --pprof on the run's JSON lines exits" 0 "$?"
"$CTXPROF" convert -f <"$work/live.jsonl" >"$work/conv.folded"
check_eq "convert -f on the run's JSON lines exits" 0 "$?"

# every toolchain's pprof reads both, and sees the same samples
for v in $(go_toolchains); do
	go=/usr/lib/go-$v/bin/go
	if "$go" tool pprof -raw "$work/live.pb.gz" >"$work/live.raw.$v" 2>"$work/pprof.err" &&
		"$go" tool pprof -raw "$work/conv.pb.gz" >"$work/conv.raw.$v" 2>>"$work/pprof.err"; then
		if cmp -s <(sed '/^Time:/d' "$work/live.raw.$v") <(sed '/^Time:/d' "$work/conv.raw.$v"); then
			ok "go$v tool pprof reads the live and the converted profile, with the same samples"
		else
			not_ok "go$v tool pprof: live and converted profiles differ: $(diff "$work/live.raw.$v" "$work/conv.raw.$v" | head -n 4 | tr '\n' ' ')"
		fi
	else
		not_ok "go$v tool pprof cannot read the profiles: $(head -n 3 "$work/pprof.err" | tr '\n' ' ')"
	fi
done

# per trace: -raw against the JSON
raw=$work/live.raw.$last
awk '
	/^ +[0-9]+( +[0-9]+)+: / { if (n) s[t] += n; n = $1; t = "null"; next }
	/(^| )trace_id:\[/ { t = $0; sub(/.*(^| )trace_id:\[/, "", t); sub(/\].*/, "", t) }
	/^Locations/ { if (n) s[t] += n; n = 0 }
	END { for (k in s) print k, s[k] }' "$raw" | sort >"$work/raw.counts"
jq -s -r 'group_by(.trace_id) | .[] | "\(.[0].trace_id // "null") \(map(.samples) | add)"' \
	"$work/live.jsonl" | sort >"$work/json.counts"
if cmp -s "$work/raw.counts" "$work/json.counts" && [ "$(wc -l <"$work/json.counts")" -ge 6 ]; then
	ok "sample counts per trace_id in go tool pprof -raw equal the JSON sums ($(wc -l <"$work/json.counts") trace IDs, null included)"
else
	not_ok "per-trace counts differ: pprof $(tr '\n' ' ' <"$work/raw.counts"), JSON $(tr '\n' ' ' <"$work/json.counts")"
fi

for t in traceDo traceSet traceMany; do
	id=${c[$t]}
	want=$(jq -s --arg t "$id" '[.[] | select(.trace_id == $t) | .samples] | add' "$work/live.jsonl")
	got=$("/usr/lib/go-$last/bin/go" tool pprof -raw -tagfocus="trace_id=$id" "$work/live.pb.gz" 2>/dev/null |
		awk '/^ +[0-9]+( +[0-9]+)+: / { n += $1 } END { print n + 0 }')
	# pprof's flat top against the JSON's leaf counts: ties are broken
	# differently (pprof by name), so the top name's count must be the max
	json_leaves=$(jq -s -c --arg t "$id" '[.[] | select(.trace_id == $t) | .stacks[] | {f: .frames[0].func, n: .samples}] |
		group_by(.f) | map({key: .[0].f, value: (map(.n) | add)}) | from_entries' "$work/live.jsonl")
	read -r pprof_flat pprof_top < <("/usr/lib/go-$last/bin/go" tool pprof -top -sample_index=samples -tagfocus="trace_id=$id" \
		"$work/live.pb.gz" 2>/dev/null | awk '/flat%/ { getline; print $1, $6; exit }')
	json_top=$(jq -r --arg f "$pprof_top" --argjson n "${pprof_flat:-0}" \
		'if .[$f] == $n and $n == ([.[]] | max) then $f else "\(to_entries | max_by(.value) | "\(.key) (\(.value)), pprof \($f) \($n)")" end' \
		<<<"$json_leaves")
	check_eq "-tagfocus=trace_id=$t: samples, and the top function" "$want $json_top" "$got $pprof_top"
done

# stripped builds: names and file:line from .gopclntab
for p in "${pids[@]}"; do
	case ${name_of[$p]} in *stripped) ;; *) continue ;; esac
	jq -c --argjson p "$p" 'select(.pid == $p)' "$work/live.jsonl" |
		"$CTXPROF" convert --pprof "$work/one.pb.gz" 2>/dev/null
	n=$("/usr/lib/go-$last/bin/go" tool pprof -raw "$work/one.pb.gz" 2>/dev/null |
		grep -c 'main\.burnDo ctxprof.test/traced/main.go:[0-9]')
	if [ "$n" -ge 1 ]; then
		ok "${name_of[$p]}: pprof locations name main.burnDo with its file:line"
	else
		not_ok "${name_of[$p]}: no named main.burnDo location with file:line in its pprof profile"
	fi
done

# folded: identical live and converted, and the JSON's counts
if cmp -s "$work/live.folded" "$work/conv.folded"; then
	ok "folded stacks from the live run and from convert are identical ($(wc -l <"$work/live.folded") stacks)"
else
	not_ok "live and converted folded stacks differ"
fi
jq -r '.comm as $c | .stacks[] | "\([$c] + ([.frames[].func] | reverse) | map(gsub("[; \n]"; "_")) | join(";")) \(.samples)"' \
	"$work/live.jsonl" | awk '{ n = $NF; $NF = ""; sub(/ $/, ""); s[$0] += n } END { for (k in s) print k, s[k] }' |
	sort >"$work/json.folded"
folded_total=$(awk '{ n += $NF } END { print n }' "$work/conv.folded")
if cmp -s <(sort "$work/conv.folded") "$work/json.folded" && [ "$folded_total" = "$total" ]; then
	ok "folded counts equal the JSON's per stack and in total ($total samples)"
else
	not_ok "folded counts differ from the JSON's: total $folded_total against $total"
fi
"$CTXPROF" convert --folded-trace-root "$work/live.jsonl" >"$work/root.folded"
n=$(grep -c "^${c[traceDo]};traced;" "$work/root.folded")
if [ "$n" -ge 1 ] && [ "$(awk '{ n += $NF } END { print n }' "$work/root.folded")" = "$total" ]; then
	ok "--folded-trace-root puts the trace ID first ($n stacks under traceDo), same total"
else
	not_ok "--folded-trace-root: $n stacks under traceDo"
fi

# bad input: the line number, non-zero, nothing written
head -n 2 "$work/live.jsonl" >"$work/bad1.jsonl"
echo '{"not json' >>"$work/bad1.jsonl"
head -n 1 "$work/live.jsonl" >>"$work/bad1.jsonl"
head -n 1 "$work/live.jsonl" | jq -c 'del(.stacks)' >"$work/bad2.jsonl"
{ head -n 2 "$work/live.jsonl"; head -n 1 "$work/live.jsonl" | head -c 100; } >"$work/bad3.jsonl"
for case in "bad1:3:invalid JSON on line 3" "bad2:1:a record without stacks"; do
	IFS=: read -r f line what <<<"$case"
	rm -f "$work/out.pb.gz"
	"$CTXPROF" convert --pprof "$work/out.pb.gz" "$work/$f.jsonl" 2>"$work/$f.err"
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "$f.jsonl:$line:" "$work/$f.err" && [ ! -e "$work/out.pb.gz" ]; then
		ok "convert, $what: exit $rc, $(head -n 1 "$work/$f.err" | sed "s|$work/||"), nothing written"
	else
		not_ok "convert, $what: exit $rc, $(tr '\n' ' ' <"$work/$f.err"), output $([ -e "$work/out.pb.gz" ] && echo written || echo none)"
	fi
done
# a last line cut off (a crash, kill -9, a full disk): the lines before it
# are converted, the cut one is named, and the exit is 0; a file that is
# only a cut line has nothing to convert
rm -f "$work/out.pb.gz"
"$CTXPROF" convert --pprof "$work/out.pb.gz" "$work/bad3.jsonl" 2>"$work/bad3.err"
rc=$?
if [ "$rc" = 0 ] && grep -q "bad3.jsonl:3: the last line is cut off (100 bytes, no newline): left out" "$work/bad3.err" &&
	grep -q "2 records in" "$work/bad3.err" && [ -s "$work/out.pb.gz" ]; then
	ok "convert, a last line cut off: exit 0, the 2 whole lines converted, $(head -n 1 "$work/bad3.err" | sed "s|$work/||")"
else
	not_ok "convert, a last line cut off: exit $rc, $(tr '\n' ' ' <"$work/bad3.err")"
fi
head -n 1 "$work/live.jsonl" | head -c 100 >"$work/bad4.jsonl"
rm -f "$work/out.pb.gz"
"$CTXPROF" convert --pprof "$work/out.pb.gz" "$work/bad4.jsonl" 2>"$work/bad4.err"
rc=$?
if [ "$rc" = 1 ] && grep -q "bad4.jsonl:1: the last line is cut off.*nothing written" "$work/bad4.err" && [ ! -e "$work/out.pb.gz" ]; then
	ok "convert, only a cut line: exit 1, nothing written"
else
	not_ok "convert, only a cut line: exit $rc, $(tr '\n' ' ' <"$work/bad4.err"), output $([ -e "$work/out.pb.gz" ] && echo written || echo none)"
fi
# records that break the schema: each refused by file, line and field, nothing written
first=$(head -n 1 "$work/live.jsonl")
while IFS='|' read -r what edit want; do
	{ head -n 1 "$work/live.jsonl"; jq -c "$edit" <<<"$first"; } >"$work/schema.jsonl"
	rm -f "$work/out.pb.gz"
	"$CTXPROF" convert --pprof "$work/out.pb.gz" "$work/schema.jsonl" 2>"$work/schema.err"
	rc=$?
	if [ "$rc" = 1 ] && grep -qF "schema.jsonl:2: $want" "$work/schema.err" && [ ! -e "$work/out.pb.gz" ]; then
		ok "convert, $what: exit 1, $(head -n 1 "$work/schema.err" | sed "s|$work/||")"
	else
		not_ok "convert, $what: exit $rc, $(tr '\n' ' ' <"$work/schema.err"), output $([ -e "$work/out.pb.gz" ] && echo written || echo none)"
	fi
done <<'CASES'
no trace_source|del(.trace_source)|"trace_source" missing
no origin|del(.origin)|"origin" missing
no mappings|del(.mappings)|"mappings" missing
negative samples|.samples = -3|"samples" missing or not an integer of at least 1
negative cpu_ns|.cpu_ns = -5|"cpu_ns" missing, negative
pid 0|.pid = 0|"pid" missing or not a process ID
a stack with 0 samples|.stacks[0].samples = 0|stack 0: "samples" missing or not an integer of at least 1
a number for comm|.comm = 5|"comm" missing or not a string
a number for a frame's file|.stacks[0].frames[0].file = 7|stack 0, frame 0: "file" is not a string
end before start|.end = "2001-01-01T00:00:00.000000Z"|"end" is before "start"
stacks not adding up to samples|.samples += 1|the stacks' samples add up to
truncated naming no label|.truncated = ["nope"]|"truncated" names "nope", which is no label
a trace ID that is not 32 hex digits|.trace_id = "xyz"|"trace_id" missing or neither 32 lowercase hex digits nor null
an unknown field|.colour = "red"|unknown field "colour"
CASES
done_testing
