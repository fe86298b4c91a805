#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-procctx.sh: services named as their SDK names them, from OTEP 4719 process contexts, and hostile contexts skipped.
#
# testdata/procctx publishes its resource as an SDK does (a memfd named
# OTEL_CTX, MADV_DONTFORK, the header's time written last), named in code:
# its environment has no OTEL_ variable. One recording at 1 s intervals,
# OTLP through the Collector to the sink, of three processes of every
# toolchain's newest build:
# 1. A publishes service.name checkout (version 1.2.3, an instance ID, an
#    integer, a boolean, a double and an array) and, 5 s in, an update
#    (checkout-2, 1.2.4): records and OTLP resources carry the first before
#    it and the update from the interval after it; the array is left out;
# 2. B publishes nothing: named by its executable, as before;
# 3. C publishes only 6 s after its start, after ctxprof-go started: found, named from the
#    interval after it.
# Then, under strace, the looks at a process without one back off after
# 10 s, and one published 14 s in is still found.
# Then the ASan/UBSan build with -v over one process of each hostile kind
# (another signature or version, a payload of 4 GiB, a payload address
# unmapped, an update forever in progress, bytes that are not protobuf,
# values nested 2,000 deep, a service.name that is not UTF-8, and a context
# rewritten every millisecond): each is skipped and said once, no sanitizer
# report, no attribute taken from it, and the rewritten one's service.name
# and service.version always read as a pair.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"
. "$(dirname "$0")/otlp-lib.sh"

e2e_setup "process contexts"
if ! otelcol_build; then
	skip "process contexts through the Collector" "$otelcol_why"
	done_testing
fi
v=$(go_toolchains | tail -n 1)
bin=$(go_build "$v" plain procctx) || { not_ok "go$v: building testdata/procctx failed"; done_testing; }
# its service is named in code only
# (run in the background, it execs: $! is the fixture)
run_fixture() { exec env -u OTEL_SERVICE_NAME -u OTEL_RESOURCE_ATTRIBUTES "$bin" "$@"; }

# secs_of: a record's ISO time, or a sink's nanoseconds, as seconds
ISO_JQ='def secs: capture("^(?<s>[^.]*)(\\.(?<f>[0-9]+))?Z$") as $c
	| ($c.s + "Z" | fromdate) + (if $c.f then "0." + $c.f | tonumber else 0 end);'

pipeline "process contexts" "$work/p"
run_fixture -d 14s -update-after 5s >"$work/a.out" &
a=$!
run_fixture -d 14s -no-publish >/dev/null &
b=$!
run_fixture -d 14s -publish-after 6s -service late-svc >"$work/c.out" &
c=$!
ctxprof_start "$work/p.err" "$work/p.jsonl" -p "$a,$b,$c" -i 1 -d 10 -v --otlp "http://127.0.0.1:$cport" ||
	not_ok "ctxprof-go did not start: $(tail -n 3 "$work/p.err")"
wait "$ctxprof"
check_eq "three publishers: exit status" 0 "$?"
published=$(sed -n 's/^published //p' "$work/a.out")
updated=$(sed -n 's/^updated //p' "$work/a.out")
late=$(sed -n 's/^published //p' "$work/c.out")
if [ -z "$published" ] || [ -z "$updated" ] || [ -z "$late" ]; then
	not_ok "the fixtures did not publish: $(cat "$work/a.out" "$work/c.out" | tr '\n' ' ')"
	done_testing
fi
grep 'process context' "$work/p.err" | sed 's/^/# /'

# names PID T: the service_name of PID's records that end more than 2 s
# before T ("before") and start more than 2 s after it ("after"): a record
# is named when it is written, at most an interval after its samples
names() {
	jq -r -s --argjson pid "$1" --argjson t "$2" "$ISO_JQ"'
		map(select(.pid == $pid)) |
		(map(select((.end | secs) < $t - 2)) | map(.service_name) | unique | join(",")) + " | " +
		(map(select((.start | secs) > $t + 2)) | map(.service_name) | unique | join(","))' "$work/p.jsonl"
}
check_eq "A's records: published, then the update from the interval after it" \
	"checkout | checkout-2" "$(names "$a" "$((updated / 1000000000))")"
check_eq "B's records, no context: its executable's name" "procctx" \
	"$(jq -r -s --argjson pid "$b" 'map(select(.pid == $pid) | .service_name) | unique | join(",")' "$work/p.jsonl")"
check_eq "C's records: published after ctxprof-go started, found" "procctx | late-svc" \
	"$(names "$c" "$((late / 1000000000))")"

# resources PID T: PID's resources at the sink before and after T, as names
# and versions, one line each side
resources() {
	jq -r -s --arg pid "$1" --argjson t "$2" '
		map(select(.resource["process.pid"] == $pid)) |
		def pairs: map(.resource | "\(.["service.name"])/\(.["service.version"] // "-")") | unique | join(",");
		(map(select(.time_max / 1e9 < $t - 2)) | pairs) + " | " + (map(select(.time_min / 1e9 > $t + 2)) | pairs)' \
		"$work/p/sink/samples.jsonl"
}
check_eq "A's OTLP resources: service.name and service.version, then the update's" \
	"checkout/1.2.3 | checkout-2/1.2.4" "$(resources "$a" "$((updated / 1000000000))")"
check_eq "A's OTLP resource: the rest of what it published, the array left out" \
	'{"ctxprof.test.bool":"true","ctxprof.test.double":"1.5","ctxprof.test.int":"42","deployment.environment.name":"test","service.instance.id":"6f1c2d3e-4b5a-4697-8879-0a1b2c3d4e5f","telemetry.sdk.language":"go"}' \
	"$(jq -s -c --arg pid "$a" 'map(select(.resource["process.pid"] == $pid) | .resource |
		with_entries(select(.key | test("^(ctxprof\\.test\\.|deployment\\.|service\\.instance|telemetry\\.)")))) | unique | .[]' \
		"$work/p/sink/samples.jsonl")"
check_eq "A's OTLP resource: still its own process.pid and executable" "procctx" \
	"$(jq -r -s --arg pid "$a" 'map(select(.resource["process.pid"] == $pid) | .resource["process.executable.name"]) | unique | join(",")' \
		"$work/p/sink/samples.jsonl")"
check_eq "B's OTLP resources: named by its executable, no version" "procctx/-" \
	"$(jq -r -s --arg pid "$b" 'map(select(.resource["process.pid"] == $pid) | .resource | "\(.["service.name"])/\(.["service.version"] // "-")") | unique | join(",")' \
		"$work/p/sink/samples.jsonl")"
check_eq "C's OTLP resources: its executable's name, then what it published" "procctx/- | late-svc/1.2.3" \
	"$(resources "$c" "$((late / 1000000000))")"
kill "$a" "$b" "$c" 2>/dev/null
wait "$a" "$b" "$c" 2>/dev/null

# The looks back off: E publishes nothing and F only 14 s in, past the
# first 10 s in which every interval looks. Counted in an strace of the
# run: E's maps are read each interval for 10 s, then a few times (gaps of
# 2, 4 and 8 s), not each interval; and F is found all the same.
run_fixture -d 30s -no-publish >/dev/null &
e=$!
run_fixture -d 30s -publish-after 14s -service later-svc >"$work/f.out" &
f=$!
printf '#!/bin/sh\nexec strace -f -ttt -qq -e trace=openat -o "%s" "%s" "$@"\n' "$work/strace.out" "$CTXPROF" >"$work/straced"
chmod +x "$work/straced"
CTXPROF=$work/straced ctxprof_start "$work/q.err" "$work/q.jsonl" -p "$e,$f" -i 0.25 -d 22 ||
	not_ok "ctxprof-go under strace did not start: $(tail -n 3 "$work/q.err")"
wait "$ctxprof"
check_eq "backing off: exit status" 0 "$?"
# LOOKS_AWK: the reads of /proc/PID/maps in the first 10 s after the first, and after 11 s
LOOKS_AWK='index($0, "\"/proc/" pid "/maps\"") && $0 !~ /ENOENT/ { t = $2 + 0; if (!t0) t0 = t;
	if (t - t0 <= 10) early++; else if (t - t0 > 11) late++ } END { print early + 0, late + 0 }'
read -r early late < <(awk -v pid="$e" "$LOOKS_AWK" "$work/strace.out")
if [ "$early" -ge 20 ] && [ "$late" -le 4 ]; then
	ok "backing off: E, no context: $early looks at its maps in 10 s at 0.25 s intervals, then $late in the next 11 s"
else
	not_ok "backing off: E, no context: $early looks at its maps in 10 s (want >= 20), then $late in the next 11 s (want <= 4)"
fi
check_eq "backing off: F, published 14 s in, found all the same" "later-svc" \
	"$(jq -r -s --argjson pid "$f" 'map(select(.pid == $pid) | .service_name) | unique | map(select(. != "procctx")) | join(",")' "$work/q.jsonl")"
kill "$e" "$f" 2>/dev/null
wait "$e" "$f" 2>/dev/null

# hostile contexts, each a process of its own, one recording
declare -A want=(
	[signature]="no OTEL_CTX signature at its start"
	[version]="version 3, where 2 is read"
	[size]="a payload of 4294967280 bytes (1 to 65536 are read)"
	[pointer]="its payload at 0x10 is unreadable"
	[inprogress]="an update was in progress in 3 looks"
	[garbage]="its payload is not protobuf, or nests deeper than 16"
	[deep]="its payload is not protobuf, or nests deeper than 16"
)
declare -A hpid=()
pids=()
for kind in signature version size pointer inprogress garbage deep utf8 churn; do
	run_fixture -d 12s -hostile "$kind" >/dev/null &
	hpid[$kind]=$!
	pids+=($!)
done
pipeline "hostile contexts" "$work/h"
CTXPROF=${CTXPROF_SAN:-$OUTPUT/san/ctxprof-go} ctxprof_start "$work/h.err" "$work/h.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -i 0.5 -d 5 -v \
	--otlp "http://127.0.0.1:$cport" || not_ok "the ASan/UBSan build did not start: $(tail -n 3 "$work/h.err")"
wait "$ctxprof"
check_eq "hostile contexts, ASan/UBSan build: exit status" 0 "$?"
check_eq "hostile contexts: sanitizer reports" "" \
	"$(grep -E 'ERROR: AddressSanitizer|runtime error:|LeakSanitizer' "$work/h.err" | head -n 3)"
for kind in "${!want[@]}"; do
	p=${hpid[$kind]}
	said=$(grep -cF "pid $p (procctx): process context skipped: ${want[$kind]}" "$work/h.err")
	named=$(jq -r -s --argjson pid "$p" 'map(select(.pid == $pid) | .service_name) | unique | join(",")' "$work/h.jsonl")
	res=$(jq -r -s --arg pid "$p" 'map(select(.resource["process.pid"] == $pid) | .resource | "\(.["service.name"])/\(.["service.version"] // "-")") | unique | join(",")' \
		"$work/h/sink/samples.jsonl")
	check_eq "$kind: skipped, said once with -v; records and resource named by the executable" \
		"1 procctx procctx/-" "$said $named $res"
done
p=${hpid[utf8]}
check_eq "utf8: a service.name that is not UTF-8 left out, the rest taken" "procctx procctx/9" \
	"$(jq -r -s --argjson pid "$p" 'map(select(.pid == $pid) | .service_name) | unique | join(",")' "$work/h.jsonl") $(
		jq -r -s --arg pid "$p" 'map(select(.resource["process.pid"] == $pid) | .resource | "\(.["service.name"])/\(.["service.version"] // "-")") | unique | join(",")' \
			"$work/h/sink/samples.jsonl")"
p=${hpid[churn]}
pairs=$(jq -r -s --arg pid "$p" 'map(select(.resource["process.pid"] == $pid) | .resource | "\(.["service.name"])/\(.["service.version"] // "-")") | unique | join(",")' \
	"$work/h/sink/samples.jsonl")
# before its first whole read, it is named by its executable
a24=aaaaaaaaaaaaaaaaaaaaaaaa b24=bbbbbbbbbbbbbbbbbbbbbbbb
if [[ ",$pairs," =~ ,churn-[ab]{24}/ ]] && [[ ",$pairs," =~ ^(,(churn-$a24/$a24|churn-$b24/$b24|procctx/-))+,$ ]]; then
	ok "churn: rewritten every millisecond, read only whole: $pairs"
else
	not_ok "churn: resources $pairs (want churn-a.../a... or churn-b.../b... only, at least one)"
fi
grep -F "pid $p (procctx): process context" "$work/h.err" | sort | uniq -c | sed 's/^/# /' | head -n 4
kill "${pids[@]}" 2>/dev/null
done_testing
