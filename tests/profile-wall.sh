#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-wall.sh: --wall, every goroutine by trace ID: what each request was waiting on.
#
# Builds: testdata/waitkinds by Go 1.19 (map labels; save() keeps no frame
# pointer, so syscall stacks come from .gopclntab) and by the newest
# toolchain (slice labels), plain, by the newest as a PIE, and by both
# stripped (-s -w: runtime.g's members from the golayout table, the
# goroutine list from runtime.allgadd's code, the wait reasons from the
# binary's data). All run at once under one ctxprof-go --wall --wall-hz 97,
# with --pprof, for 10 s, while every target runs. In each, five
# goroutines, each under its own trace ID,
# alternate 4 ms of CPU with one kind of wait (time.Sleep, a channel
# answered late, a contended sync.Mutex, a TCP read from a peer that
# answers late, a blocking read(2)), and time both phases themselves with
# the monotonic clock. Per build and kind:
# - the share of the trace's looks that found it running or runnable is
#   within 0.10 of the CPU share the workload measured, and the share of
#   its wall samples within 0.15 (wall_kind_verdicts says why they differ);
# - the dominant wait reason is Go's own for that wait ("sleep", "chan
#   receive", "sync.Mutex.Lock" or before Go 1.20 "semacquire", "IO wait"),
#   the read(2) waits are in state "syscall", and their stacks run through
#   the workload's main.wait* function;
# - each goroutine is counted in at least 90% of the wall periods the
#   recording covered (a snapshot the machine was too busy to take is
#   counted by the next), and in no more than all of them.
# And: at most 1% of goroutines dropped as changed while read; the records
# fit the schema; go tool pprof -raw's wall values per trace ID equal the
# JSON's wall_ns sums, and -sample_index=wall -tagfocus selects one trace's;
# convert --folded-wall counts every wall sample, leaves naming the wait.
# Beside them, testdata/httpserver (newest, plain, no labels) serves four
# requests that each wait 6 s in main.handleWait, with a traceparent each:
# their wall samples carry the sent trace ID (trace_source traceparent),
# waiting in sleep, at least 100 each, and none carries an ID never sent.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "--wall"
mapfile -t all < <(go_toolchains)
newest=${all[-1]}
go=/usr/lib/go-$newest/bin/go

pids=()
declare -A name_of idx_of ver_of
n=0
for build in "1.19 plain" "$newest plain" "$newest pie" "1.19 stripped" "$newest stripped"; do
	read -r v variant <<<"$build"
	[[ " ${all[*]} " == *" $v "* ]] || continue
	bin=$(go_build "$v" "$variant" waitkinds) || { not_ok "go$v $variant waitkinds: build failed"; continue; }
	case $variant in
	stripped) want="true table code data" ;;
	*) want="true dwarf symtab symtab" ;;
	esac
	check_eq "check go$v $variant waitkinds: --wall supported, its facts from" "$want" \
		"$("$CTXPROF" check --json "$bin" | jq -r '.wall | "\(.supported) \(.sources.offsets) \(.sources.goroutines) \(.sources.wait_reasons)"')"
	# until SIGUSR1, after the run: every target lives through every snapshot
	"$bin" -d 600s -cpu 4ms -wait 16ms >"$work/kinds$n" 2>"$work/stderr$n" &
	pids+=($!)
	name_of[$!]="go$v $variant ($(go_version_of "$v" "$bin"))"
	idx_of[$!]=$n
	ver_of[$!]=$v
	n=$((n + 1))
done
[ "${#pids[@]}" -gt 0 ] || done_testing
# a plain net/http server whose requests wait, with a traceparent each and no labels
srv_bin=$(go_build "$newest" plain httpserver) || not_ok "go$newest httpserver: build failed"
httpserver_start "$srv_bin"
srv_addr=$srv_http

ctxprof_start "$work/err" "$work/out.jsonl" -p "$(IFS=,; echo "${pids[*]}"),$srv" --wall --wall-hz 97 \
	-i 3600 -d 10 --pprof "$work/wall.pb.gz" --metrics-addr 127.0.0.1:0
check_eq "ctxprof-go --wall starts with $((${#pids[@]} + 1)) targets" 0 "$?" || { cat "$work/err"; done_testing; }
# four requests that wait 6 s each, at once, each with a traceparent of its own
sent=()
for i in 1 2 3 4; do
	id=$(printf 'feed%028x' "$i")
	sent+=("$id")
	curl -sS --max-time 30 -H "traceparent: 00-$id-00f067aa0ba902b7-01" \
		"http://$srv_addr/wait?ms=6000" >"$work/wait$i" 2>&1 &
done
# /metrics halfway: --wall's looks and goroutine samples, apart from CPU samples
maddr=$(sed -n 's|^ctxprof-go: serving /metrics on http://\([^/]*\)/metrics$|\1|p' "$work/err")
sleep 4
page=$(curl -sS --max-time 10 "http://$maddr/metrics")
wait "$ctxprof"
check_eq "ctxprof-go --wall -d 10: exit status" 0 "$?"
read -r looks gsamples < <(sed -n 's/.* \([0-9]*\) goroutine samples in .* from \([0-9]*\) looks.*/\2 \1/p' "$work/err")
read -r mlooks msamples < <(awk '$1 == "ctxprof_wall_looks_total" { l = $2 }
	$1 == "ctxprof_wall_samples_total" { s = $2 } END { print l + 0, s + 0 }' <<<"$page")
if [ "$mlooks" -gt 0 ] && [ "$mlooks" -le "${looks:-0}" ] && [ "$msamples" -ge "$mlooks" ] &&
	[ "$msamples" -le "${gsamples:-0}" ]; then
	ok "/metrics halfway: $mlooks wall looks, $msamples goroutine samples (by the end: $looks, $gsamples)"
else
	not_ok "/metrics halfway: wall looks '$mlooks', samples '$msamples'; by the end: '${looks:-}', '${gsamples:-}'"
fi
kill -USR1 "${pids[@]}"
for pid in "${pids[@]}"; do
	wait "$pid"
	check_eq "${name_of[$pid]}: exit status" 0 "$?"
done

wall_line=$(grep '^ctxprof-go: wall:' "$work/err")
# the periods of 1/97 s from the first snapshot to the last, of every target at once
periods=$(jq -rn 'def ns(t): (t | sub("\\.[0-9]+Z$"; "Z") | fromdate) * 1000000 +
		(t | capture("\\.(?<f>[0-9]+)Z$").f | tonumber);
	[inputs | select(.origin == "wall") | ns(.start), ns(.end)] | (max - min) * 97 / 1000000 + 1.5 | floor' \
	"$work/out.jsonl")
drop_pct=$(sed -n 's/.*(\([0-9.]*\)%).*/\1/p' <<<"$wall_line")
if [ -n "$drop_pct" ] && awk -v p="$drop_pct" 'BEGIN { exit !(p <= 1) }'; then
	ok "goroutines dropped as changed while read: $drop_pct% (at most 1%): $wall_line"
else
	not_ok "dropped goroutines: '${drop_pct:-?}%', over 1% or not said: $(tr '\n' ' ' <"$work/err")"
fi
schema_verdict "--wall records" "$work/out.jsonl"

# per pid and trace: samples by state, the dominant wait reason and its stack's functions
jq -s -c "$WALL_TRACES_JQ" "$work/out.jsonl" >"$work/traces.jsonl"

for pid in "${pids[@]}"; do
	name=${name_of[$pid]}
	mutex="sync.Mutex.Lock"
	[ "${ver_of[$pid]}" = 1.19 ] && mutex=semacquire
	while read -r kind trace func share; do
		t=$(jq -c --argjson p "$pid" --arg t "$trace" 'select(.pid == $p and .trace_id == $t)' "$work/traces.jsonl")
		if [ -z "$t" ]; then
			not_ok "$name $kind: no wall records for trace $trace"
			continue
		fi
		wall_kind_verdicts "$name" "$kind" "$func" "$share" 0.10 "$mutex" "$t"
		total=$(jq -r .total <<<"$t")
		if [ "$total" -ge $((periods * 9 / 10)) ] && [ "$total" -le $((periods + 1)) ]; then
			ok "$name $kind: counted in $total of $periods periods"
		else
			not_ok "$name $kind: counted $total times in $periods periods"
		fi
	done < <(jq -r '"\(.kind) \(.trace_id) \(.wait_func) \(.cpu_share)"' "$work/kinds${idx_of[$pid]}")
done

# the traceparent source: requests that wait carry their trace ID while they wait
kill "$srv" 2>/dev/null
for id in "${sent[@]}"; do
	read -r n funcs <<<"$(jq -s -r --argjson p "$srv" --arg t "$id" '
		map(select(.origin == "wall" and .pid == $p and .trace_id == $t and .trace_source == "traceparent"
			and .wait_reason == "sleep")) |
		"\(map(.samples) | add // 0) \(any(.[].stacks[].frames[]; .func == "main.handleWait"))"' "$work/out.jsonl")"
	if [ "$n" -ge 100 ] && [ "$funcs" = true ]; then
		ok "httpserver request $id: $n wall samples waiting in sleep under its traceparent, in main.handleWait"
	else
		not_ok "httpserver request $id: $n wall samples waiting in sleep under its traceparent (need 100), main.handleWait: $funcs; its wall records: $(jq -s -c --argjson p "$srv" '[.[] | select(.origin == "wall" and .pid == $p) | {trace_id, trace_source, state, wait_reason, samples, f: [.stacks[0].frames[]?.func][0:4]}]' "$work/out.jsonl" | head -c 1500); curl: $(cat "$work"/wait* | tr '\n' ' '); ctxprof-go: $(grep -i "warning\|pid $srv" "$work/err" | tr '\n' ' ')"
	fi
done
check_eq "httpserver: wall records with a traceparent ID never sent" 0 \
	"$(jq -s --argjson p "$srv" --arg sent "${sent[*]}" '[.[] | select(.origin == "wall" and .pid == $p and .trace_id != null) |
		select(.trace_id as $t | $sent | split(" ") | index($t) | not)] | length' "$work/out.jsonl")"

# pprof: wall values per trace ID against the JSON, then one trace through -tagfocus
"$go" tool pprof -raw "$work/wall.pb.gz" >"$work/raw" 2>"$work/pprof.err" ||
	not_ok "go tool pprof -raw: $(head -n 3 "$work/pprof.err" | tr '\n' ' ')"
awk '
	/^ +[0-9]+ +[0-9]+ +[0-9]+: / { if (n) s[t] += n; n = $3; t = "null"; next }
	/(^| )trace_id:\[/ { t = $0; sub(/.*(^| )trace_id:\[/, "", t); sub(/\].*/, "", t) }
	/^Locations/ { if (n) s[t] += n; n = 0 }
	END { for (k in s) printf "%s %.0f\n", k, s[k] }' "$work/raw" | sort >"$work/raw.wall"
jq -s -r 'map(select(.origin == "wall")) | group_by(.trace_id) | .[] |
	"\(.[0].trace_id // "null") \(map(.wall_ns) | add)"' "$work/out.jsonl" | sort >"$work/json.wall"
if cmp -s "$work/raw.wall" "$work/json.wall" && [ "$(wc -l <"$work/json.wall")" -ge 6 ]; then
	ok "pprof wall nanoseconds per trace_id (go tool pprof -raw) equal the JSON's wall_ns sums ($(wc -l <"$work/json.wall") trace IDs, null included)"
else
	not_ok "pprof wall totals differ: pprof $(tr '\n' ' ' <"$work/raw.wall"), JSON $(tr '\n' ' ' <"$work/json.wall")"
fi
# convert makes the same profile from the JSON lines
"$CTXPROF" convert --pprof "$work/conv.pb.gz" "$work/out.jsonl" 2>"$work/conv.err" &&
	"$go" tool pprof -raw "$work/conv.pb.gz" >"$work/conv.raw" 2>>"$work/pprof.err"
# the live profile keeps nanoseconds of its start time, the JSON microseconds
if cmp -s <(sed '/^Time:/d' "$work/raw") <(sed '/^Time:/d' "$work/conv.raw"); then
	ok "convert --pprof of the JSON lines: the same samples and wall values as the live --pprof (go tool pprof -raw)"
else
	not_ok "convert --pprof differs from the live profile: $(diff "$work/raw" "$work/conv.raw" | head -n 4 | tr '\n' ' ') $(cat "$work/conv.err")"
fi
id=c4a0000000000000000000000000a002
top=$("$go" tool pprof -top -sample_index=wall -unit=ms -tagfocus="trace_id=$id" -tagfocus='wait_reason=chan receive' \
	"$work/wall.pb.gz" 2>/dev/null | awk '$NF == "main.waitChan" { print $NF }')
check_eq "go tool pprof -sample_index=wall -tagfocus=trace_id=$id, wait_reason=chan receive: main.waitChan in the top" \
	main.waitChan "$top"
# a running goroutine's wall sample with no CPU sample of its own near it
# has no stack: pprof shows it as [running]
run=$(jq -s '[.[] | select(.origin == "wall" and .state == "running") | (.wall_ns / .samples) as $p |
	.stacks[] | select(.frames == []) | .samples * $p] | add // 0 | round' "$work/out.jsonl")
top=$("$go" tool pprof -top -sample_index=wall -unit=ns "$work/wall.pb.gz" 2>/dev/null |
	awk '$NF == "[running]" { sub(/ns$/, "", $1); print $1 }')
check_eq "go tool pprof -top -sample_index=wall: [running] holds the wall time of running goroutines' samples without a stack (JSON)" \
	"${run}" "${top:-0}"
# a parked goroutine stopped in gopark's mcall(park_m): its leaf is a return
# address, and its line is the call's, as the toolchain's own source has it
for pid in "${pids[@]}"; do
	v=${ver_of[$pid]}
	want=$(awk '/^func gopark\(/ { f = 1 } f && /mcall\(park_m\)/ { print NR; exit }' "/usr/lib/go-$v/src/runtime/proc.go")
	got=$(jq -r --argjson p "$pid" 'select(.pid == $p and .origin == "wall" and .wait_reason == "sleep") |
		.stacks[] | select(.frames[0].func == "runtime.gopark") | .frames[0].line' "$work/out.jsonl" | sort | uniq -c | sort -rn | awk '{ print $2; exit }')
	check_eq "${name_of[$pid]}: a sleeping goroutine's leaf is runtime.gopark at mcall(park_m) (proc.go:$want)" "$want" "${got:-none}"
done

# folded: every wall sample, with the wait as the leaf
"$CTXPROF" convert --folded-wall "$work/out.jsonl" >"$work/wall.folded" 2>"$work/conv.err"
check_eq "convert --folded-wall exits" 0 "$?"
check_eq "convert --folded-wall: counts add up to the JSON's wall samples" \
	"$(jq -s 'map(select(.origin == "wall") | .samples) | add' "$work/out.jsonl")" \
	"$(awk '{ n += $NF } END { print n + 0 }' "$work/wall.folded")"
n=$(grep ';main.waitChan;.*;\[chan_receive\] [0-9]*$' "$work/wall.folded" | awk '{ n += $NF } END { print n + 0 }')
if [ "$n" -gt 0 ]; then
	ok "convert --folded-wall: $n samples of main.waitChan end in the leaf [chan_receive]"
else
	not_ok "convert --folded-wall: no stack through main.waitChan ends in [chan_receive]: $(grep waitChan "$work/wall.folded" | head -n 3 | tr '\n' ' ')"
fi

# a target that exits mid-run: its wall samples are written (JSON lines to
# -o, --folded-wall to stdout), and the run ends with it
bin=$(go_build "$newest" plain waitkinds)
"$bin" -d 600s >/dev/null 2>&1 &
t=$!
"$CTXPROF" -p "$t" --wall --folded-wall -o "$work/x.jsonl" >"$work/x.folded" 2>"$work/x.err" &
ctxprof=$!
for ((i = 0; i < 3000; i++)); do
	grep -q 'Ctrl-C to stop' "$work/x.err" 2>/dev/null || ! kill -0 "$ctxprof" 2>/dev/null && break
	sleep 0.1
done
sleep 2
kill -USR1 "$t"
wait "$ctxprof"
rc=$?
n=$(jq -s 'map(select(.origin == "wall") | .samples) | add // 0' "$work/x.jsonl" 2>/dev/null)
folded=$(awk '{ n += $NF } END { print n + 0 }' "$work/x.folded")
if [ "$rc" = 0 ] && grep -q "every target has exited" "$work/x.err" && [ "${n:-0}" -gt 0 ] &&
	[ "$folded" = "$n" ] && grep -q ';main.waitSleep;.*;\[sleep\] [0-9]*$' "$work/x.folded"; then
	ok "--wall, target exits mid-run: exit 0, $n wall samples in the JSON lines and in --folded-wall's stacks"
else
	not_ok "--wall, target exits mid-run: exit $rc, ${n:-no} wall samples, $folded folded; $(tr '\n' ' ' <"$work/x.err")"
fi

# a PIE that runs its own program again mid-run (SIGUSR2: exec of the same
# file, as servers that upgrade in place do): a new Go runtime at a new load
# address, whose goroutines are read there from then on
bin=$(go_build "$newest" pie waitkinds)
"$bin" -d 600s >/dev/null 2>&1 &
t=$!
ctxprof_start "$work/re.err" "$work/re.jsonl" -v -p "$t" --wall -i 1
sleep 2
before=$(awk '$1 ~ /^[0-9a-f]+-/ && / r-xp / { print $1; exit }' "/proc/$t/maps")
kill -USR2 "$t"
reexec_s=$(date +%s)
sleep 1
after=$(awk '$1 ~ /^[0-9a-f]+-/ && / r-xp / { print $1; exit }' "/proc/$t/maps")
sleep 4
kill -INT "$ctxprof"
wait "$ctxprof"
rc=$?
kill -USR1 "$t"
wait "$t"
# the sleep kind's wall samples in intervals that began a second after the exec
n=$(jq -s --argjson t0 "$((reexec_s + 2))" '[.[] | select(.origin == "wall" and
	.trace_id == "5ee9000000000000000000000000a001" and .wait_reason == "sleep" and
	(.start | sub("\\.[0-9]+Z$"; "Z") | fromdateiso8601) >= $t0) |
	.stacks[] | select(any(.frames[]; .func == "main.waitSleep")) | .samples] | add // 0' "$work/re.jsonl" 2>/dev/null)
if [ "$rc" = 0 ] && [ "$before" != "$after" ] && grep -q "ran its program again" "$work/re.err" &&
	[ "${n:-0}" -ge 20 ]; then
	ok "--wall, a PIE that execs itself (text at $before, then $after): $n sleep samples in main.waitSleep after the exec"
else
	not_ok "--wall, a PIE that execs itself: exit $rc, text at $before then $after, ${n:-no} sleep samples in main.waitSleep after; $(grep -v '^pid' "$work/re.err" | tr '\n' ' ' | head -c 1500)"
fi
# Frames around the exec: a record that spans it holds stacks of both
# programs, each named with the mappings of the moment it was first seen
# (before, the record's last moment named them all: up to 8% bare here)
read -r rb ra < <(jq -s -r '[.[].stacks[].frames[].func] | "\(map(select(startswith("0x"))) | length) \(length)"' "$work/re.jsonl")
if [ "${ra:-0}" -gt 0 ] && [ $((rb * 100)) -le "$ra" ]; then
	ok "--wall, a PIE that execs itself: $rb of $ra frames bare (at most 1%)"
else
	not_ok "--wall, a PIE that execs itself: ${rb:-?} of ${ra:-0} frames bare, more than 1%"
fi

done_testing
