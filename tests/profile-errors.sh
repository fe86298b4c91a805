#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-errors.sh: ctxprof-go --pid refuses what it cannot do, with a message and a non-zero exit.
#
# Cases: no root (uid 65534), root without CAP_BPF/CAP_PERFMON, a PID that
# does not exist, a kernel thread, a process that is not Go (sleep), a Go build whose version
# is not in the golayout table (testdata/traced, newest Go, stripped, with its
# build info patched to go1.99; --all passes it over, counted on
# /metrics), a target that has exited but is not yet
# reaped (a zombie), --uprobe on a directory, a text file, a
# truncated ELF file and a missing symbol, two outputs on stdout ("-"), and
# usage errors: each names what is wrong
# (an empty item of a list, convert's missing or second format or input)
# and then points at --help. A thread ID is taken for its process, said so.
# Options that would eat each other (--html -d 3, -p PID PID) are refused
# naming both; Go durations (-d 1500ms -i 500ms), quoted PIDs, a dashed
# value written with =, and --otlp's full endpoint are taken. Records that
# reach only /dev/null (-o, or stdout) with no OTLP endpoint are warned of
# at the start; with --pprof FILE, --otlp or OTEL_EXPORTER_OTLP_ENDPOINT
# they are not.
# Messages as a user reads them: every stderr line starts "ctxprof-go: "
# (getopt's too, whatever path ran it), -d's range, -d and a positional
# duration that disagree, -f with --wall pointing at --folded-wall, SIGUSR1's
# statistics "so far", and --help's intro and --uprobe-abi text.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "recording errors"
v=$(go_toolchains | tail -n 1)
bin=$(go_build "$v" plain) || { not_ok "build go$v plain"; done_testing; }
"$bin" -d 600s 2>/dev/null &
go_pid=$!
sleep 600 &
sleep_pid=$!

# refuses NAME WANT_EXIT REGEX CMD...: exit status and message
refuses() {
	local name=$1 want=$2 re=$3 out rc
	shift 3
	out=$("$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -qE -- "$re" <<<"$out"; then
		ok "$name: exit $rc: $(head -n 1 <<<"$out")"
	else
		not_ok "$name: exit $rc (want $want), message: $out"
	fi
}

refuses "not root" 1 "needs root.*missing: CAP_BPF, CAP_PERFMON" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CTXPROF" -p "$go_pid" -d 1
refuses "root without CAP_BPF and CAP_PERFMON" 1 "missing: CAP_BPF, CAP_PERFMON \(" \
	setpriv --bounding-set=-bpf,-perfmon,-sys_admin "$CTXPROF" -p "$go_pid" -d 1
refuses "--uprobe, not root" 1 "needs root.*missing: CAP_BPF, CAP_PERFMON" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$CTXPROF" --uprobe "$(go_build "$v" plain):main.burnDo" -d 1
# check reads files only: no privileges needed
bin_check=$(go_build "$v" stripped)
got=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CTXPROF" check --json "$bin_check" 2>&1 | jq -r .supported)
check_eq "check as uid 65534 (no capabilities)" true "$got"
refuses "PID not found" 1 "pid 999999999: no such process|invalid PID" "$CTXPROF" -p 999999999 -d 1
refuses "PID that exited" 1 "no such process" "$CTXPROF" -p "$(sh -c 'echo $$')" -d 1
# a kernel thread runs no program: said so, not that its executable is missing
kthread=$(pgrep -x kthreadd | head -n 1)
if [ -n "$kthread" ]; then
	refuses "a kernel thread (kthreadd)" 1 "^ctxprof-go: pid $kthread \(kthreadd\): a kernel thread, which runs no program$" \
		"$CTXPROF" -p "$kthread" -d 1
else
	skip "a kernel thread" "no kthreadd in this PID namespace"
fi
refuses "not a Go program (sleep)" 1 "pid $sleep_pid \(sleep, .*not a Go binary" \
	"$CTXPROF" -p "$sleep_pid" -d 1

# a stripped build claiming a Go release the table does not cover
stripped=$(go_build "$v" stripped)
cp "$stripped" "$work/go199"
read -r off size < <(readelf -SW "$work/go199" | sed 's/^ *\[ *[0-9]*\] *//' |
	awk '$1 == ".go.buildinfo" { print $4, $5 }')
off=$((0x$off))
size=$((0x$size))
ver=$(go_version_of "$v" "$stripped")
at=$(grep -obUa -- "$ver" "$work/go199" | awk -F: -v lo="$off" -v hi="$((off + size))" '$1 >= lo && $1 < hi { print $1; exit }')
if [ -n "$at" ]; then
	printf 'go1.99' | dd of="$work/go199" bs=1 seek="$at" conv=notrunc status=none
	"$work/go199" -d 600s 2>/dev/null &
	p=$!
	refuses "unsupported Go version (go1.99 build info, stripped)" 1 \
		"unsupported Go build: .*Go 1.99 .*not in the golayout table, which covers 1.17 to" \
		"$CTXPROF" -p "$p" -d 1
	# --all passes it over, once said, and /metrics counts it
	"$CTXPROF" --all -d 30 -o /dev/null --metrics-addr 127.0.0.1:0 2>"$work/all.err" &
	all=$!
	wait_line "$work/all.err" 'Ctrl-C to stop' 300
	maddr=$(sed -n 's|^ctxprof-go: serving /metrics on http://\([^/]*\)/metrics$|\1|p' "$work/all.err")
	unsupported=$(curl -sS --max-time 10 "http://$maddr/metrics" |
		awk '$1 == "ctxprof_processes_unsupported_total" { print $2 }')
	kill -INT "$all"
	wait "$all"
	if [ "${unsupported:-0}" -ge 1 ] && [ "$(grep -c "^ctxprof-go: pid $p (.*): unsupported Go build: .*Go 1.99" "$work/all.err")" = 1 ]; then
		ok "--all: the go1.99 build said once and counted on /metrics ($unsupported)"
	else
		not_ok "--all: the go1.99 build: /metrics '${unsupported:-}'; $(tr '\n' '|' <"$work/all.err" | head -c 600)"
	fi
	kill "$p"
else
	not_ok "could not find $ver in the build info of $stripped"
fi

# a thread ID (as top -H shows it) means its process: said, and profiled
tid=$(ls "/proc/$go_pid/task" | grep -vx "$go_pid" | head -n 1)
out=$("$CTXPROF" -p "$tid" -d 1 2>"$work/tid.err")
rc=$?
if [ "$rc" = 0 ] && grep -q "^ctxprof-go: $tid is a thread of process $go_pid (traced): profiling the process$" "$work/tid.err" &&
	[ "$(jq -s -r 'map(.pid) | unique | join(",")' <<<"$out")" = "$go_pid" ]; then
	ok "-p a thread ID: exit 0, $(head -n 1 "$work/tid.err"), its records are the process's"
else
	not_ok "-p a thread ID ($tid of $go_pid): exit $rc, $(tr '\n' ' ' <"$work/tid.err")"
fi
# "-" is stdout, for one output
"$CTXPROF" -p "$go_pid" -d 1 -o /dev/null --pprof - 2>/dev/null >"$work/dash.pb.gz"
check_eq "--pprof - writes the profile to stdout (gzip)" "1f8b" "$(head -c 2 "$work/dash.pb.gz" | xxd -p)"
refuses "--pprof - beside the records on stdout" 2 "^ctxprof-go: --pprof - and the records \(give -o FILE for them\) would both go to stdout$" \
	"$CTXPROF" -p "$go_pid" -d 1 --pprof -
refuses "--html - beside -f" 2 "^ctxprof-go: --html - and the folded stacks of -f would both go to stdout$" \
	"$CTXPROF" -p "$go_pid" -d 1 -f --html -
refuses "no -p" 2 "no target: give -p PID" "$CTXPROF" -d 1
refuses "bad frequency" 2 "invalid frequency" "$CTXPROF" -p "$go_pid" -F 0
refuses "bad PID" 2 "invalid PID 'abc'" "$CTXPROF" -p abc
refuses "bad duration" 2 "invalid duration" "$CTXPROF" -p "$go_pid" -d -3
refuses "--all with -p" 2 "--all and -p exclude each other" "$CTXPROF" --all -p "$go_pid" -d 1
refuses "--cgroup that is not a cgroup v2 directory" 1 "--cgroup /tmp: not a directory of a cgroup v2 file system" \
	"$CTXPROF" --all --cgroup /tmp -d 1
refuses "--cgroup that does not exist" 1 "--cgroup /nonexistent: No such file or directory" \
	"$CTXPROF" --all --cgroup /nonexistent -d 1
refuses "too many trace keys" 2 "at most 4 --trace-key" "$CTXPROF" -p "$go_pid" \
	--trace-key a --trace-key b --trace-key c --trace-key d --trace-key e
refuses "unknown trace source" 2 "--trace-sources: 'label,zipkin' is not a list of label, traceparent, otel-sdk and obi" \
	"$CTXPROF" -p "$go_pid" --trace-sources label,zipkin
refuses "empty trace sources" 2 "--trace-sources: '' is not a list" "$CTXPROF" -p "$go_pid" --trace-sources ''
refuses "--wall-hz 0" 2 "invalid --wall-hz '0' \\(1 to 1000\\)" "$CTXPROF" -p "$go_pid" --wall --wall-hz 0
refuses "--max-goroutine-starts -1" 2 "invalid --max-goroutine-starts '-1' \\(0 to 1000000 a second\\)" \
	"$CTXPROF" -p "$go_pid" --max-goroutine-starts -1
refuses "--goroutine-start-share 150" 2 "invalid --goroutine-start-share '150' \\(0 to 100, a percentage\\)" \
	"$CTXPROF" -p "$go_pid" --goroutine-start-share 150
refuses "--folded-wall without --wall" 2 "--folded-wall needs --wall" "$CTXPROF" -p "$go_pid" --folded-wall
refuses "--wall with no target" 2 "--wall samples the goroutines of targets: give -p PID or --all" \
	"$CTXPROF" --wall --uprobe /bin/true:main
refuses "--otlp with no target" 2 "--otlp sends the profiles of targets: give -p PID or --all" \
	"$CTXPROF" --otlp http://127.0.0.1:4318 --uprobe /bin/true:main
refuses "--otlp-queue without --otlp" 2 "--otlp-queue sizes the queue of --otlp" \
	"$CTXPROF" -p "$go_pid" --otlp-queue 4
refuses "--otlp-queue 0" 2 "invalid --otlp-queue '0' \\(1 to 4096 requests\\)" \
	"$CTXPROF" -p "$go_pid" --otlp http://127.0.0.1:4318 --otlp-queue 0
refuses "--otlp without a scheme" 2 "^ctxprof-go: --otlp: invalid URL 'collector:4318': not an http:// or https:// URL$" \
	"$CTXPROF" -p "$go_pid" --otlp collector:4318
refuses "OTEL_EXPORTER_OTLP_PROTOCOL=grpc" 2 "^ctxprof-go: OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc': ctxprof-go speaks http/protobuf only$" \
	env OTEL_EXPORTER_OTLP_PROTOCOL=grpc "$CTXPROF" -p "$go_pid" --otlp http://127.0.0.1:4318
refuses "a bad OTEL_EXPORTER_OTLP_HEADERS" 2 "^ctxprof-go: OTEL_EXPORTER_OTLP_HEADERS: 'tokenonly' is not key=value$" \
	env OTEL_EXPORTER_OTLP_HEADERS=tokenonly "$CTXPROF" -p "$go_pid" --otlp http://127.0.0.1:4318
refuses "--otlp-labels without --otlp" 2 "--otlp-labels chooses what --otlp sends: give --otlp URL or OTEL_EXPORTER_OTLP_ENDPOINT" \
	"$CTXPROF" -p "$go_pid" --otlp-labels route
refuses "--otlp-labels naming a trace key" 2 "--otlp-labels: 'otel.traceid' holds trace or span IDs, which every sample carries in its link" \
	"$CTXPROF" -p "$go_pid" --otlp http://127.0.0.1:4318 --otlp-labels route,otel.traceid
refuses "--otlp-labels naming a --trace-key key" 2 "--otlp-labels: 'request_id' holds trace or span IDs" \
	"$CTXPROF" -p "$go_pid" --otlp http://127.0.0.1:4318 --trace-key request_id --otlp-labels request_id
refuses "--otlp-labels naming a key twice" 2 "--otlp-labels: 'route' is named twice" \
	"$CTXPROF" -p "$go_pid" --otlp http://127.0.0.1:4318 --otlp-labels route,tenant,route
refuses "--otlp-labels given twice" 2 "--otlp-labels is given once, with every label in its list" \
	"$CTXPROF" -p "$go_pid" --otlp http://127.0.0.1:4318 --otlp-labels route --otlp-labels tenant
# empty list items are refused, not skipped; usage errors name what is wrong, then point at --help
refuses "an empty PID in the list" 2 "-p '$go_pid,,': an empty item; PIDs are separated by single commas" \
	"$CTXPROF" -p "$go_pid,,"
refuses "a PID list starting with a comma" 2 "an empty item" "$CTXPROF" -p ",$go_pid"
refuses "trace sources ending with a comma" 2 "--trace-sources: 'label,' is not a list" \
	"$CTXPROF" -p "$go_pid" --trace-sources label,
refuses "an empty label in --otlp-labels" 2 "--otlp-labels 'route,,tenant': an empty item; keys are separated by single commas" \
	"$CTXPROF" -p "$go_pid" --otlp http://127.0.0.1:4318 --otlp-labels route,,tenant
refuses "--metrics-addr with a port alone" 2 "^ctxprof-go: invalid --metrics-addr '9464': give HOST:PORT, \[IPV6\]:PORT or :PORT" \
	"$CTXPROF" -p "$go_pid" -d 1 --metrics-addr 9464
refuses "--metrics-addr with a port past 65535" 2 "invalid --metrics-addr '127.0.0.1:70000'" \
	"$CTXPROF" -p "$go_pid" -d 1 --metrics-addr 127.0.0.1:70000
refuses "a bad PID points at --help" 2 "^ctxprof-go: Try 'ctxprof-go --help'.$" "$CTXPROF" -p abc
refuses "convert without a format" 2 "^ctxprof-go: convert: no output format: give --pprof FILE, -f, --html FILE or --speedscope FILE$" \
	"$CTXPROF" convert /dev/null
refuses "convert with two formats" 2 "^ctxprof-go: convert: --pprof and -f \\(or --folded-\\*\\) both given" \
	"$CTXPROF" convert -f --pprof "$work/two.pb.gz" /dev/null
refuses "convert with a page and speedscope" 2 "^ctxprof-go: convert: --html and --speedscope both given: one format a run$" \
	"$CTXPROF" convert --html "$work/two.html" --speedscope "$work/two.json" /dev/null
# convert given an output where its input goes, or a terminal (issue 44)
printf '<!DOCTYPE html>\n<html></html>\n' >"$work/report.html"
refuses "convert --speedscope out.json report.html: says it read a page" 1 \
	"^ctxprof-go: $work/report.html is an HTML or XML page, not the JSON lines ctxprof-go writes: convert reads records \\(ctxprof-go -p PID -o records.jsonl; " \
	"$CTXPROF" convert --speedscope "$work/out.json" "$work/report.html"
[ ! -e "$work/out.json" ] || not_ok "convert of a page wrote $work/out.json"
printf '\x1f\x8b\x08\x00' >"$work/cpu.pb.gz"
refuses "convert -f cpu.pb.gz: says it read gzip data" 1 "^ctxprof-go: $work/cpu.pb.gz is gzip data \\(a pprof profile\\?\\), not the JSON lines" \
	"$CTXPROF" convert -f "$work/cpu.pb.gz"
# on a terminal of script's (what it shows, on its stdout)
out=$(timeout 10 script -qec "$CTXPROF convert -f" /dev/null | tr -d '\r')
rc=${PIPESTATUS[0]}
if [ "$rc" = 2 ] && grep -q "^ctxprof-go: convert reads the JSON lines ctxprof-go writes, from INPUT or a pipe, and stdin is a terminal" <<<"$out"; then
	ok "convert -f with no input, on a terminal: says so rather than wait: $(head -n 1 <<<"$out")"
else
	not_ok "convert -f with no input, on a terminal: exit $rc: $out"
fi
refuses "convert with stdin twice" 2 "^ctxprof-go: convert: stdin \\(-\\) given twice$" \
	"$CTXPROF" convert -f - -
: >"$work/empty.jsonl"
refuses "convert with a second input that is missing" 1 "^ctxprof-go: failed to open $work/nosuch.jsonl: No such file or directory$" \
	"$CTXPROF" convert -f "$work/empty.jsonl" "$work/nosuch.jsonl"
refuses "convert, an unknown flag, points at --help" 2 "^ctxprof-go: Try 'ctxprof-go convert --help'.$" \
	"$CTXPROF" convert --frobnicate
# a target that has exited but is not reaped yet (as one that exits while ctxprof-go starts)
bash -c 'sleep 0.2 & exec sleep 60' &
zparent=$!
zombie=
for ((i = 0; i < 50; i++)); do
	zombie=$(pgrep -P "$zparent" sleep)
	[ -n "$zombie" ] && [ "$(awk '{ print $3 }' "/proc/$zombie/stat" 2>/dev/null)" = Z ] && break
	sleep 0.1
done
refuses "a target that has exited (a zombie)" 1 "^ctxprof-go: pid $zombie \\(sleep\\): has exited$" "$CTXPROF" -p "$zombie" -d 1
kill "$zparent" 2>/dev/null
# --uprobe on what cannot hold one: said plainly, not as libbpf's own error number
printf 'not a program\n' >"$work/text.txt"
head -c 2000 "$bin" >"$work/truncated"
refuses "--uprobe on a directory" 1 "^ctxprof-go: --uprobe $work:main.burnDo: $work is not a regular file$" \
	"$CTXPROF" --uprobe "$work:main.burnDo" -d 1
refuses "--uprobe on a text file" 1 "^ctxprof-go: --uprobe $work/text.txt:main.burnDo: $work/text.txt is not an ELF file$" \
	"$CTXPROF" --uprobe "$work/text.txt:main.burnDo" -d 1
refuses "--uprobe on a truncated ELF file" 1 "^ctxprof-go: --uprobe $work/truncated:main.burnDo: $work/truncated: truncated ELF file: 2000 bytes" \
	"$CTXPROF" --uprobe "$work/truncated:main.burnDo" -d 1
refuses "--uprobe on a missing symbol" 1 "symbol main.noSuchFunc not found in $bin: neither a Go function" \
	"$CTXPROF" --uprobe "$bin:main.noSuchFunc" -d 1
# an output that cannot be written stops the run before it records, not after
out=$("$CTXPROF" -p "$go_pid" -d 600 --pprof "$work/no/such/dir/p.pb.gz" 2>&1 >/dev/null)
rc=$?
if [ "$rc" = 1 ] && grep -q "failed to open the pprof profile $work/no/such/dir/p.pb.gz: No such file or directory" <<<"$out" &&
	! grep -q "Ctrl-C to stop" <<<"$out"; then
	ok "--pprof into a missing directory: exit 1 before recording: $out"
else
	not_ok "--pprof into a missing directory: exit $rc: $out"
fi
# messages: our own, and getopt's, start with the program's name, not the path it was run by
refuses "an unknown option, run by its path" 2 "^ctxprof-go: unrecognized option '--bogus'$" "$CTXPROF" --bogus
refuses "-d 0 says the range" 2 "^ctxprof-go: invalid duration '0' \\(seconds, or a Go duration such as 500ms, 10s, 2m; more than 0, at most [0-9]+ s\\)$" \
	"$CTXPROF" -p "$go_pid" -d 0
refuses "-d 10x is no duration" 2 "^ctxprof-go: invalid duration '10x' " "$CTXPROF" -p "$go_pid" -d 10x
# options that would eat each other, as users typed them (issue 44)
refuses "--html -d 3: the next option is no file name" 2 \
	"^ctxprof-go: --html takes a value; '-d' looks like the next option \\(a value that starts with '-': --html=-d\\)$" \
	"$CTXPROF" -p "$go_pid" --html -d 3
refuses "--pprof -f 2: the same" 2 "^ctxprof-go: --pprof takes a value; '-f' looks like the next option" \
	"$CTXPROF" -p "$go_pid" --pprof -f 2
refuses "-o -d: the same, short" 2 "^ctxprof-go: -o \\(--output\\) takes a value; '-d' looks like the next option" \
	"$CTXPROF" -p "$go_pid" -o -d 2
refuses "-p PID PID, as \$(pidof a b) gives: the second is no duration" 2 \
	"^ctxprof-go: '$sleep_pid' after -p $go_pid is a running process too: give the PIDs as one argument, -p $go_pid,$sleep_pid or -p \"$go_pid $sleep_pid\" \\(a duration: 30s\\)$" \
	"$CTXPROF" -p "$go_pid" "$sleep_pid"
# what is taken: PIDs quoted, Go durations, a value with a dash written with =, the full OTLP endpoint
"$CTXPROF" -p "$go_pid $go_pid" -d 1500ms -i 500ms -o "$work/dur.jsonl" 2>"$work/dur.err"
rc=$?
flushes=$(jq -s '[.[].end] | unique | length' "$work/dur.jsonl")
if [ "$rc" = 0 ] && grep -q 'sampling 1 target at' "$work/dur.err" && [ "$flushes" -ge 2 ]; then
	ok "-p \"PID PID\" -d 1500ms -i 500ms: exit 0, one target, records of $flushes distinct ends"
else
	not_ok "-p \"PID PID\" -d 1500ms -i 500ms: exit $rc, $flushes intervals: $(tr '\n' ' ' <"$work/dur.err")"
fi
(cd "$work" && "$CTXPROF" -p "$go_pid" -d 1 --pprof=-dash.pb.gz -o /dev/null 2>"$work/dash.err")
check_eq "--pprof=-dash.pb.gz: a value with a dash, written with =, is taken" 0 "$?"
[ -s "$work/-dash.pb.gz" ] || not_ok "--pprof=-dash.pb.gz wrote no file"
"$CTXPROF" -p "$go_pid" -d 1 -o /dev/null --otlp "http://127.0.0.1:9/v1development/profiles/" 2>"$work/otlp.err"
check_eq "--otlp with the full endpoint: sent there, not to .../profiles/v1development/profiles" \
	"ctxprof-go: sending OTLP profiles to http://127.0.0.1:9/v1development/profiles (gzip) every 10 s" \
	"$(grep 'sending OTLP profiles to' "$work/otlp.err")"
# records that reach nothing but /dev/null, with no OTLP endpoint: said at the start
noenv=(env -u OTEL_EXPORTER_OTLP_ENDPOINT -u OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT)
check_eq "-o /dev/null and no OTLP endpoint: a warning, once" \
	"ctxprof-go: warning: the records go nowhere: -o /dev/null, and no OTLP endpoint (give --otlp URL or set OTEL_EXPORTER_OTLP_ENDPOINT)" \
	"$("${noenv[@]}" "$CTXPROF" -p "$go_pid" -d 1 -o /dev/null 2>&1 | grep 'records go nowhere')"
check_eq "records on a stdout that is /dev/null, --pprof /dev/null: a warning naming both" \
	"ctxprof-go: warning: the records go nowhere: stdout is /dev/null, --pprof /dev/null, and no OTLP endpoint (give --otlp URL or set OTEL_EXPORTER_OTLP_ENDPOINT)" \
	"$("${noenv[@]}" "$CTXPROF" -p "$go_pid" -d 1 --pprof /dev/null 2>&1 >/dev/null | grep 'records go nowhere')"
check_eq "-o /dev/null with --pprof FILE, with --otlp, with OTEL_EXPORTER_OTLP_ENDPOINT: no such warning" "0 0 0" \
	"$(grep -c 'records go nowhere' "$work/dash.err") $(grep -c 'records go nowhere' "$work/otlp.err") $(
		OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9 "$CTXPROF" -p "$go_pid" -d 1 -o /dev/null 2>&1 | grep -c 'records go nowhere')"
refuses "-d and a positional duration that disagree" 2 "^ctxprof-go: -d 1 and the duration 3s disagree: give one$" \
	"$CTXPROF" -p "$go_pid" -d 1 3s
# -f with --wall: the CPU stacks, and a pointer to --folded-wall
"$CTXPROF" -p "$go_pid" -d 1 -f --wall >/dev/null 2>"$work/fw.err"
rc=$?
if [ "$rc" = 0 ] && grep -q "^ctxprof-go: note: -f writes the CPU samples' stacks; --folded-wall writes --wall's" "$work/fw.err"; then
	ok "-f with --wall: exit 0, $(grep note: "$work/fw.err")"
else
	not_ok "-f with --wall: exit $rc, no note of --folded-wall: $(tr '\n' ' ' <"$work/fw.err")"
fi
# SIGUSR1: the statistics so far, and the run goes on to its end
"$CTXPROF" -p "$go_pid" -d 3 -o /dev/null 2>"$work/usr1.err" &
cp=$!
for ((i = 0; i < 100; i++)); do
	grep -q "Ctrl-C to stop" "$work/usr1.err" && break
	sleep 0.05
done
sleep 0.5
kill -USR1 "$cp"
wait "$cp"
rc=$?
n=$(grep -c "^ctxprof-go: so far, [0-9]* samples\? from 1 target," "$work/usr1.err")
m=$(grep -c "^ctxprof-go: [0-9]* samples\? from 1 target," "$work/usr1.err")
if [ "$rc" = 0 ] && [ "$n" = 1 ] && [ "$m" = 1 ]; then
	ok "SIGUSR1: a statistics line that says 'so far', and the final one at the end: $(grep 'so far' "$work/usr1.err" | cut -c 1-60)..."
else
	not_ok "SIGUSR1: exit $rc, $n 'so far' lines, $m final ones: $(tr '\n' ' ' <"$work/usr1.err")"
fi
# every line of stderr is ours, prefixed: the warnings of a run included
bad=$(grep -vc "^ctxprof-go: " "$work/usr1.err" "$work/fw.err" "$work/tid.err" | awk -F: '{ s += $2 } END { print s }')
check_eq "every stderr line of three runs starts 'ctxprof-go: '" 0 "$bad"
out=$("$CTXPROF" --help)
intro=$(sed -n '/^Samples the CPU/,/^$/p' <<<"$out" | tr '\n' ' ')
if grep -q "pprof label" <<<"$intro" && grep -q "traceparent" <<<"$intro" && grep -q "OpenTelemetry SDK span" <<<"$intro"; then
	ok "--help's intro names the three trace sources: pprof label, traceparent, OpenTelemetry SDK span"
else
	not_ok "--help's intro: $intro"
fi
abi=$(sed -n '/--uprobe-abi go|c/,/for anything else/p' <<<"$out" | sed 's/^ *--uprobe-abi go|c *//; s/^ *//' | tr '\n' ' ' | sed 's/ $//')
check_eq "--help: --uprobe-abi's text reads whole in its column" \
	"where that argument is: RAX (go) or RDI (c), on arm64 R0 for both; default: go for Go functions of BIN, c for anything else" "$abi"
out=$("$CTXPROF" --help)
if grep -q "Examples:" <<<"$out" && grep -q -- "--traced-only" <<<"$out" && grep -q -- "--wall-hz" <<<"$out"; then
	ok "--help lists options and examples"
else
	not_ok "--help: $out"
fi
check_eq "--version" "ctxprof-go" "$("$CTXPROF" --version | awk '{ print $1 }')"
done_testing
