#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-fanout.sh: a request's trace ID on the goroutines it starts and on theirs, by traceparent alone, on Go 1.19 and later.
#
# testdata/httpserver's /fan, built by Go 1.19 (plain and stripped) and by
# the newest toolchain (plain), all sampled at once at 999 Hz with the
# default trace sources. Each server gets 8 requests, four at a time, each
# with a traceparent of its own: a request starts 3 goroutines that burn
# 15 ms of CPU each in main.fanChildBurn, and each of those starts 2 that
# burn as long in main.fanGrandchildBurn (about 15 samples a goroutine).
# Go 1.19 keeps no g.parentGoid: the probe where goroutines start hands
# each one its starter's context. Per server:
# - Go 1.19: at least 90% of the samples in main.fanChildBurn and of those
#   in main.fanGrandchildBurn carry a trace ID sent, and every sent ID has
#   samples in both;
# - newest: the same for main.fanChildBurn (g.parentGoid, one level), and
#   no probe hit at goroutine starts (the -v line says parentGoid);
# - no sample carries a trace ID that was never sent to that server;
# - Go 1.19: -v says the goroutine-start probe's share paid for the 8
#   request probe hits too (one a request);
# - the statistics at exit say why the newest build's share is low (its
#   grandchildren: g.parentGoid reaches one level), and nothing for the
#   Go 1.19 builds; then, for 3 requests with no traceparent to a Go 1.19
#   build, that they came without one.
# - --max-goroutine-starts 5 on the plain Go 1.19 build, 8 requests of 9
#   goroutine starts each: the probe rests past its budget, the statistics
#   say how many starts it saw and about how many it missed, and no sample
#   carries a trace ID never sent; a target that exits meanwhile: what its
#   probe saw and missed is still said at the end and on /metrics;
#   --max-goroutine-starts 0: no probe (-v says so), no child sample
#   traced, the hint says why, and the probe's table of 32,768 slots
#   (the probe on) is one slot.
# - 300 requests of 48 header fields to the plain Go 1.19 build, each
#   starting 2 goroutines: every sample of theirs has a trace ID, where a
#   sample that read the header while the goroutine-start probe read it
#   left the first child without one.
# - 20 requests of 98 header fields each to the plain Go 1.19 build and to
#   the newest: every sample of their children has its trace ID; 20 of 800
#   fields to Go 1.19: the hint says they had more fields than are read,
#   and /metrics counts them apart from requests without a traceparent.
# - a child of 2.5 s of CPU on the plain Go 1.19 build, while 200 requests
#   start 200 goroutines each (more than the probe's table of 32,768 has
#   slots): at least 95% of its samples carry its trace ID.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "trace IDs on a request's goroutines and theirs"
command -v curl >/dev/null || { not_ok "curl is missing (make deps installs it)"; done_testing; }
mapfile -t all < <(go_toolchains)
newest=${all[-1]}

declare -A name_of port_of ids_of
pids=()
n=0
for spec in "1.19 plain" "1.19 stripped" "$newest plain"; do
	read -r v variant <<<"$spec"
	bin=$(go_build "$v" "$variant" httpserver) || { not_ok "go$v $variant: build failed"; continue; }
	"$bin" >"$work/srv$n" 2>&1 &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		grep -q '^http ' "$work/srv$n" && break
		sleep 0.1
	done
	port=$(awk '$1 == "http" { print $2 }' "$work/srv$n")
	[ -n "$port" ] || { not_ok "go$v $variant httpserver did not start"; kill "$pid"; continue; }
	pids+=("$pid")
	name_of[$pid]="go$v $variant"
	port_of[$pid]=$port
	n=$((n + 1))
done
[ "${#pids[@]}" -gt 0 ] || done_testing
list=$(IFS=,; echo "${pids[*]}")
if ! ctxprof_start "$work/err" "$work/out.jsonl" -v -p "$list" -F 999; then
	not_ok "ctxprof-go did not start: $(tr '\n' ' ' <"$work/err" | head -c 1000)"
	kill "${pids[@]}"
	done_testing
fi
curls=()
for pid in "${pids[@]}"; do
	ids=()
	for r in $(seq 8); do
		ids+=("$(printf 'fa0%02d%02d%025x' "$r" "$((${#curls[@]} % 97))" "$((RANDOM * 65536 + RANDOM))")")
	done
	ids_of[$pid]="${ids[*]}"
	printf '%s\n' "${ids[@]}" |
		xargs -P 4 -I{} curl -sS --max-time 60 -o /dev/null -w '%{http_code}\n' \
			-H "traceparent: 00-{}-00f067aa0ba902b7-01" \
			"http://${port_of[$pid]}/fan?kids=3&grandkids=2&ms=15" >"$work/codes$pid" 2>&1 &
	curls+=($!)
done
wait "${curls[@]}"
ctxprof_stop
check_eq "ctxprof-go exits" 0 "$?"
# the goroutine-start probe's share pays for the request probe's hits too
for pid in "${pids[@]}"; do
	[[ ${name_of[$pid]} == go1.19* ]] || continue
	check_eq "${name_of[$pid]}: -v: the goroutine-start probe's share paid for its 8 requests' probe hits" 8 \
		"$(grep -F "pid $pid (" "$work/err" |
			sed -n 's/.*goroutine-start probe saw [0-9]* starts and paid for \([0-9]*\) request probe hits, at.*/\1/p')"
done
# requests with no traceparent: the statistics say that is why
p0=${pids[0]}
if ctxprof_start "$work/bare.err" "$work/bare.jsonl" -p "$p0" -F 999; then
	check_eq "${name_of[$p0]}, the goroutine-start probe on: slots of its table" 32768 \
		"$(map_entries "$ctxprof" spawn_slots)"
	for i in 1 2 3; do
		curl -sS -o /dev/null --max-time 60 "http://${port_of[$p0]}/fan?kids=2&grandkids=1&ms=30"
	done
	ctxprof_stop
	check_eq "${name_of[$p0]}, 3 requests without a traceparent: the statistics' hint" \
		"3 requests came without a traceparent header" \
		"$(grep -F '% of its ' "$work/bare.err" | sed 's/.*with a trace ID: //')"
else
	not_ok "ctxprof-go -p ${name_of[$p0]} did not start: $(tr '\n' ' ' <"$work/bare.err" | head -c 500)"
fi
# a budget of goroutine starts: past it the probe rests, and says how many it did not see
if ctxprof_start "$work/cap.err" "$work/cap.jsonl" -p "$p0" -F 999 --max-goroutine-starts 5; then
	cap_ids=()
	for r in $(seq 8); do
		cap_ids+=("$(printf 'ca9%03d%026x' "$r" "$((RANDOM * 65536 + RANDOM))")")
	done
	printf '%s\n' "${cap_ids[@]}" |
		xargs -P 4 -I{} curl -sS --max-time 60 -o /dev/null -H "traceparent: 00-{}-00f067aa0ba902b7-01" \
			"http://${port_of[$p0]}/fan?kids=3&grandkids=2&ms=15"
	ctxprof_stop
	rested=$(grep -F "pid $p0 (" "$work/cap.err" | grep -F 'goroutine-start probe saw')
	echo "# ${name_of[$p0]}, --max-goroutine-starts 5: $rested"
	if [[ $rested =~ saw\ ([0-9]+)\ goroutine\ starts\ and\ rested.*past\ --max-goroutine-starts\ 5\ a\ second.*about\ ([0-9]+),\ carry ]] &&
		[ "${BASH_REMATCH[1]}" -ge 5 ] && [ "${BASH_REMATCH[2]}" -ge 10 ]; then
		ok "${name_of[$p0]}, 8 requests of 9 goroutine starts each, --max-goroutine-starts 5: the probe saw ${BASH_REMATCH[1]}, rested, and says about ${BASH_REMATCH[2]} started meanwhile"
	else
		not_ok "${name_of[$p0]}, --max-goroutine-starts 5: no statistics line on the probe resting with 5 or more seen and 10 or more missed: $(grep -F 'ctxprof-go:' "$work/cap.err" | head -n 5 | tr '\n' ' ')"
	fi
	sent=$(printf '%s\n' "${cap_ids[@]}" | jq -R . | jq -s -c .)
	check_eq "${name_of[$p0]}, --max-goroutine-starts 5: trace IDs on samples that were never sent" "" \
		"$(jq -r -s --argjson sent "$sent" '[.[] | .trace_id | select(. != null and ($sent | index(.)) == null)] | unique | join(" ")' "$work/cap.jsonl")"
else
	not_ok "ctxprof-go --max-goroutine-starts 5 did not start: $(tr '\n' ' ' <"$work/cap.err" | head -c 500)"
fi
# a target that exits while ctxprof-go goes on: what its probe saw and
# missed stays counted, on /metrics and in the statistics at the end
bin19=$(go_build 1.19 plain httpserver)
"$bin19" >"$work/gone.srv" 2>&1 &
gone=$!
for ((i = 0; i < 100; i++)); do grep -q '^http ' "$work/gone.srv" && break; sleep 0.1; done
gport=$(awk '$1 == "http" { print $2 }' "$work/gone.srv")
if ctxprof_start "$work/gone.err" "$work/gone.jsonl" -p "$p0,$gone" -F 999 --max-goroutine-starts 5 \
	--metrics-addr 127.0.0.1:0; then
	addr=$(sed -n 's|^ctxprof-go: serving /metrics on http://\([^/]*\)/metrics$|\1|p' "$work/gone.err")
	gcurls=()
	for r in 1 2 3 4; do
		curl -sS -o /dev/null --max-time 60 -H "traceparent: 00-90e0000$r$(printf '%025x' "$RANDOM")-00f067aa0ba902b7-01" \
			"http://$gport/fan?kids=3&grandkids=2&ms=15" &
		gcurls+=($!)
	done
	wait "${gcurls[@]}"
	kill "$gone"
	wait "$gone" 2>/dev/null
	# the loop reaps it within a second
	sleep 2
	page=$(curl -sS "http://$addr/metrics")
	seen=$(awk '$1 == "ctxprof_goroutine_starts_seen_total" { print $2 }' <<<"$page")
	missed=$(awk '$1 == "ctxprof_goroutine_starts_missed_total" { print $2 }' <<<"$page")
	check_eq "without --alloc, /metrics has no allocation counters" "" \
		"$(grep '^ctxprof_alloc_' <<<"$page")"
	ctxprof_stop
	said=$(grep -F 'goroutine-start probes of 1 processes gone' "$work/gone.err")
	if [[ $said =~ saw\ ([0-9]+)\ starts\ and\ missed\ about\ ([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge 5 ] &&
		[ "${BASH_REMATCH[2]}" -ge 10 ] && [ "${seen:-0}" -ge "${BASH_REMATCH[1]}" ] &&
		[ "${missed:-0}" -ge 10 ]; then
		ok "a target gone, 4 requests of 9 goroutine starts, --max-goroutine-starts 5: its probe's ${BASH_REMATCH[1]} starts seen and about ${BASH_REMATCH[2]} missed still said; /metrics: $seen seen, $missed missed"
	else
		not_ok "a target gone: its probe's starts not said after it: '${said}'; /metrics seen '${seen}', missed '${missed}'"
	fi
else
	not_ok "ctxprof-go with a target to exit did not start: $(tr '\n' ' ' <"$work/gone.err" | head -c 500)"
	kill "$gone"
fi
# no goroutine-start probe at all: the children carry nothing, and the hint says why
if ctxprof_start "$work/off.err" "$work/off.jsonl" -v -p "$p0" -F 999 --max-goroutine-starts 0; then
	# its table of slots would hold kernel memory for nothing
	check_eq "${name_of[$p0]}, --max-goroutine-starts 0: slots of the goroutine-start table" 1 \
		"$(map_entries "$ctxprof" spawn_slots)"
	for i in 1 2 3; do
		curl -sS -o /dev/null --max-time 60 -H "traceparent: 00-0ff0000$i$(printf '%025x' "$RANDOM")-00f067aa0ba902b7-01" \
			"http://${port_of[$p0]}/fan?kids=2&grandkids=1&ms=30"
	done
	ctxprof_stop
	check_eq "${name_of[$p0]}, --max-goroutine-starts 0: main.fanChildBurn samples with a trace ID" 0 \
		"$(jq -s '[.[] | select(.trace_id != null) | .stacks[] | select(any(.frames[]; .func == "main.fanChildBurn")) | .samples] | add // 0' "$work/off.jsonl")"
	check_eq "${name_of[$p0]}, --max-goroutine-starts 0: the statistics' hint" \
		"the goroutines its handlers start carry none: no g.parentGoid, and --max-goroutine-starts 0 leaves out the goroutine-start probe" \
		"$(grep -F '% of its ' "$work/off.err" | sed 's/.*with a trace ID: //')"
	check_eq "${name_of[$p0]}, --max-goroutine-starts 0: -v says no probe at goroutine starts" \
		"goroutines they start: none (--max-goroutine-starts 0)" "$(grep -o 'goroutines they start: [^)]*)' "$work/off.err")"
else
	not_ok "ctxprof-go --max-goroutine-starts 0 did not start: $(tr '\n' ' ' <"$work/off.err" | head -c 500)"
fi
# a sample that lands while the goroutine-start probe reads the request's
# header, and reads it too: the first child still gets the trace ID. 45
# more header fields of the traceparent's length make the read long
if ctxprof_start "$work/race.err" "$work/race.jsonl" -p "$p0" -F 999; then
	pad=()
	for i in $(seq 10 54); do pad+=(-H "X-Pad-000$i: v"); done
	for r in $(seq 300); do
		curl -sS -o /dev/null --max-time 60 "${pad[@]}" -H "traceparent: 00-$(printf 'ace%029x' "$r")-00f067aa0ba902b7-01" \
			"http://${port_of[$p0]}/fan?kids=2&grandkids=0&ms=3"
	done
	ctxprof_stop
	read -r total bare < <(jq -s -r '[.[] | (.trace_id != null) as $t | .stacks[] |
		select(any(.frames[]; .func == "main.fanChildBurn")) | {n: .samples, $t}] |
		"\(map(.n) | add // 0) \(map(select(.t | not) | .n) | add // 0)"' "$work/race.jsonl")
	if [ "${total:-0}" -ge 300 ] && [ "${bare:-1}" = 0 ]; then
		ok "${name_of[$p0]}, 300 requests of 48 header fields, 2 children each: all $total main.fanChildBurn samples with a trace ID"
	else
		not_ok "${name_of[$p0]}, 300 requests of 48 header fields: ${bare:-?} of ${total:-?} main.fanChildBurn samples without a trace ID (need none, of at least 300)"
	fi
else
	not_ok "ctxprof-go -p ${name_of[$p0]} did not start: $(tr '\n' ' ' <"$work/race.err" | head -c 500)"
fi
# header_fields N: curl's arguments for N fields, 2 of them curl's own
header_fields() {
	local i
	for ((i = 3; i < $1; i++)); do printf -- '-H\nX-Field-%04d: v\n' "$i"; done
}
# 98 header fields: read whole, in Go 1.19's map (16 buckets) as in the newest's
mapfile -t f98 < <(header_fields 98)
newp=${pids[-1]}
if ctxprof_start "$work/wide.err" "$work/wide.jsonl" -p "$p0,$newp" -F 999; then
	for pid in "$p0" "$newp"; do
		for r in $(seq 20); do
			curl -sS -o /dev/null --max-time 60 "${f98[@]}" \
				-H "traceparent: 00-$(printf 'f98%05d%024x' "$pid" "$r")-00f067aa0ba902b7-01" \
				"http://${port_of[$pid]}/fan?kids=2&grandkids=0&ms=5"
		done
	done
	ctxprof_stop
	for pid in "$p0" "$newp"; do
		read -r total traced < <(jq -s -r --argjson p "$pid" --arg pre "$(printf 'f98%05d' "$pid")" '
			[.[] | select(.pid == $p) | (.trace_id // "" | startswith($pre)) as $t | .stacks[] |
			 select(any(.frames[]; .func == "main.fanChildBurn")) | {n: .samples, $t}] |
			"\(map(.n) | add // 0) \(map(select(.t) | .n) | add // 0)"' "$work/wide.jsonl")
		if [ "${total:-0}" -ge 50 ] && [ "$traced" = "$total" ]; then
			ok "${name_of[$pid]}, 20 requests of 98 header fields: all $total main.fanChildBurn samples with their trace ID"
		else
			not_ok "${name_of[$pid]}, 20 requests of 98 header fields: ${traced:-?} of ${total:-?} main.fanChildBurn samples with their trace ID (need all, of at least 50)"
		fi
	done
else
	not_ok "ctxprof-go -p ${name_of[$p0]},${name_of[$newp]} did not start: $(tr '\n' ' ' <"$work/wide.err" | head -c 500)"
fi
# 800: more than are read; the statistics and /metrics say so, not that none came
mapfile -t f800 < <(header_fields 800)
if ctxprof_start "$work/cut.err" "$work/cut.jsonl" -p "$p0" -F 999 --metrics-addr 127.0.0.1:0; then
	addr=$(sed -n 's|^ctxprof-go: serving /metrics on http://\([^/]*\)/metrics$|\1|p' "$work/cut.err")
	for r in $(seq 20); do
		curl -sS -o /dev/null --max-time 60 "${f800[@]}" \
			-H "traceparent: 00-$(printf 'f16%029x' "$r")-00f067aa0ba902b7-01" \
			"http://${port_of[$p0]}/fan?kids=2&grandkids=0&ms=5"
	done
	# /metrics is made anew each second
	sleep 2
	page=$(curl -sS "http://$addr/metrics")
	ctxprof_stop
	hint=$(grep -F '% of its ' "$work/cut.err" | sed 's/.*with a trace ID: //')
	some=$(awk '$1 == "ctxprof_requests_without_traceparent_total{fields=\"some\"}" { print $2 }' <<<"$page")
	all=$(awk '$1 == "ctxprof_requests_without_traceparent_total{fields=\"all\"}" { print $2 }' <<<"$page")
	if [[ $hint =~ ^([0-9]+)\ requests\ came\ with\ more\ than\ 104\ header\ fields\ and\ no\ traceparent\ among\ those\ read$ ]] &&
		[ "${BASH_REMATCH[1]}" -ge 10 ] && [ "${some:-0}" -ge 10 ] && [ "$all" = 0 ]; then
		ok "${name_of[$p0]}, 20 requests of 800 header fields: the hint says ${BASH_REMATCH[1]} had more than are read; /metrics: $some with some fields read, $all with all"
	else
		not_ok "${name_of[$p0]}, 20 requests of 800 header fields: the hint '$hint'; /metrics fields=some '${some}', fields=all '${all}' (need 10 or more cut, none bare)"
	fi
else
	not_ok "ctxprof-go -p ${name_of[$p0]} did not start: $(tr '\n' ' ' <"$work/cut.err" | head -c 500)"
fi
# a child that outlives more traced starts than the probe's table has
# slots: the first sample that saw it kept its context, which the starts
# after it then overwrite in the table
if ctxprof_start "$work/long.err" "$work/long.jsonl" -v -p "$p0" -F 999 --goroutine-start-share 100; then
	long=$(printf 'b0b%029x' "$RANDOM")
	curl -sS -o /dev/null --max-time 60 -H "traceparent: 00-$long-00f067aa0ba902b7-01" \
		"http://${port_of[$p0]}/fan?kids=1&grandkids=0&ms=2500" &
	clients=($!)
	sleep 0.5
	for w in 1 2 3 4; do
		for r in $(seq 50); do
			curl -sS -o /dev/null --max-time 60 -H "traceparent: 00-$(printf 'f100d%03d%024x' "$w" "$r")-00f067aa0ba902b7-01" \
				"http://${port_of[$p0]}/fan?kids=200&grandkids=0&loops=1"
		done &
		clients+=($!)
	done
	wait "${clients[@]}"
	ctxprof_stop
	starts=$(grep -o 'goroutine-start probe saw [0-9]* starts' "$work/long.err" | head -1 | grep -o '[0-9]*')
	read -r total traced < <(jq -s -r --arg id "$long" '[.[] | (.trace_id == $id) as $t | .stacks[] |
		select(any(.frames[]; .func == "main.fanChildBurn")) | {n: .samples, $t}] |
		"\(map(.n) | add // 0) \(map(select(.t) | .n) | add // 0)"' "$work/long.jsonl")
	if [ "${starts:-0}" -ge 40000 ] && [ "${total:-0}" -ge 1000 ] && [ $((traced * 100)) -ge $((total * 95)) ]; then
		ok "${name_of[$p0]}, a child of 2.5 s among ${starts} goroutine starts: $traced of $total main.fanChildBurn samples with its trace ID"
	else
		not_ok "${name_of[$p0]}, a child of 2.5 s among ${starts:-?} goroutine starts (need 40000): ${traced:-?} of ${total:-?} main.fanChildBurn samples with its trace ID (need 95% of at least 1000)"
	fi
else
	not_ok "ctxprof-go -p ${name_of[$p0]} --goroutine-start-share 100 did not start: $(tr '\n' ' ' <"$work/long.err" | head -c 500)"
fi
kill "${pids[@]}"

for pid in "${pids[@]}"; do
	name=${name_of[$pid]}
	check_eq "$name: the 8 requests answer" "8" "$(grep -c '^200$' "$work/codes$pid")"
	sent=$(tr ' ' '\n' <<<"${ids_of[$pid]}" | jq -R . | jq -s -c .)
	stats=$(jq -s -c --argjson pid "$pid" --argjson sent "$sent" '
		def sent($x): $x != null and ($sent | index($x)) != null;
		[.[] | select(.origin == "sampling" and .pid == $pid) | .trace_id as $t | .stacks[] |
		 {n: .samples, t: $t, f: [.frames[].func]}] as $s |
		def in_fn($fn): [$s[] | select(.f | index($fn))];
		def share($fn): in_fn($fn) | {total: (map(.n) | add // 0),
			traced: (map(select(sent(.t))) | map(.n) | add // 0),
			ids: (map(select(sent(.t)) | .t) | unique | length)};
		{child: share("main.fanChildBurn"), grandchild: share("main.fanGrandchildBurn"),
		 unsent: ([$s[] | .t | select(. != null and (sent(.) | not))] | unique | join(" "))}' \
		"$work/out.jsonl")
	echo "# $name: $stats"
	get() { jq -r ".$1" <<<"$stats"; }
	kinds=(child)
	[[ $name == go1.19* ]] && kinds+=(grandchild)
	for k in "${kinds[@]}"; do
		fn=main.fanChildBurn
		[ "$k" = grandchild ] && fn=main.fanGrandchildBurn
		total=$(get "$k.total")
		traced=$(get "$k.traced")
		if [ "$total" -ge 100 ] && [ $((traced * 100)) -ge $((total * 90)) ]; then
			ok "$name: $fn samples with their request's trace ID: $traced of $total (>= 90%)"
		else
			not_ok "$name: $fn samples with their request's trace ID: $traced of $total (need 90% of at least 100)"
		fi
		check_eq "$name: trace IDs sent with samples in $fn" 8 "$(get "$k.ids")"
	done
	check_eq "$name: trace IDs on samples that were never sent" "" "$(get unsent)"
done
# the statistics name the cause where a target's share is low: the newest
# build's grandchildren (two thirds of its work) carry none
for pid in "${pids[@]}"; do
	hint=$(grep -F "pid $pid (" "$work/err" | grep -F '% of its ' | sed 's/.*with a trace ID: //')
	want=
	[[ ${name_of[$pid]} == go1.19* ]] ||
		want="on Go 1.21 and later the goroutines its handlers start carry their request (g.parentGoid), not the goroutines those start"
	check_eq "${name_of[$pid]}: the statistics' hint on why samples lack a trace ID" "$want" "$hint"
done
how=$(grep -o 'goroutines they start: [^)]*' "$work/err" | sort | uniq -c | awk '{ $1 = $1 "x" } 1' | paste -sd';')
check_eq "the goroutine-start probe on the two Go 1.19 builds, g.parentGoid on the newest" \
	"2x goroutines they start: at their start;1x goroutines they start: by g.parentGoid, one level" "$how"
done_testing
