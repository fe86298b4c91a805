#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-obi.sh: trace IDs from OBI's traces_ctx_v1, whichever of OBI and ctxprof-go pins the map first.
#
# OBI itself cannot be built here: its part is played by bpftool, which
# makes and pins the map by OBI's spec (an LRU hash of 16,384 entries, 8-byte
# keys, 24-byte values, BPFFS/otel/traces_ctx_v1) and writes a thread's
# entry as OBI does (key: the thread's pid_tgid; value: trace ID, span ID).
# testdata/lockedthreads runs two goroutines locked to threads of their
# own, one under a trace ID label, the other with none; both threads get
# an OBI entry. Each in a bpffs of its own (--bpffs):
# 1. OBI first: samples in main.burnUnlabeled carry OBI's trace and span
#    ID, trace_source "obi"; those in main.burnLabeled keep their label's;
# 2. ctxprof-go first (Go 1.19's build): it makes and pins the map, the
#    entries are written after, with the same result;
# 3. --trace-sources without obi: main.burnUnlabeled untraced.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "OBI's traces"
command -v bpftool >/dev/null || { not_ok "no bpftool (make deps installs it)"; done_testing; }
OBI_TRACE=aabbccddeeff00112233445566778899 OBI_SPAN=0102030405060708
OTHER_TRACE=99887766554433221100ffeeddccbbaa OTHER_SPAN=0807060504030201
LABEL_TRACE=$(sed -n 's/^const traceLabel = "\([0-9a-f]*\)"$/\1/p' "$TOP/testdata/lockedthreads/main.go")

mounts=()
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; unmount_all; rm -rf "$work"' EXIT
# bpffs NAME: a bpffs of the test's own at $work/NAME
bpffs() {
	mkdir -p "$work/$1" && mount -t bpf bpf "$work/$1" && mounts+=("$work/$1")
}
# obi_create DIR: OBI's map, made and pinned as OBI does
obi_create() {
	mkdir -p -m 1700 "$1/otel" &&
		bpftool map create "$1/otel/traces_ctx_v1" type lru_hash key 8 value 24 entries 16384 name traces_ctx_v1
}
# obi_fill DIR PID TID TRACE SPAN: thread TID works for TRACE and SPAN, as OBI writes it
obi_fill() {
	# shellcheck disable=SC2046
	bpftool map update pinned "$1/otel/traces_ctx_v1" key hex $(pid_tgid_key "$2" "$3") \
		value hex $(sed 's/../& /g' <<<"$4$5")
}
# start_fixture VERSION: testdata/lockedthreads; sets $pid, $unlabeled and $labeled (thread IDs)
start_fixture() {
	local bin i
	bin=$(go_build "$1" plain lockedthreads) || return 1
	"$bin" -d 30s >"$work/tids" &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		unlabeled=$(sed -n 's/^unlabeled //p' "$work/tids")
		labeled=$(sed -n 's/^labeled //p' "$work/tids")
		[ -n "$unlabeled" ] && [ -n "$labeled" ] && return 0
		sleep 0.1
	done
	return 1
}
# ids FILE FUNC: the trace ID, source and span ID of FUNC's samples, one line each kind
ids() {
	jq -r --arg f "$2" 'select(any(.stacks[].frames[]; .func == $f)) |
		"\(.trace_id) \(.trace_source) \(.span_id)"' "$1" | sort -u | tr '\n' ';'
}

v_new=$(go_toolchains | tail -n 1)
v_old=$(go_toolchains | head -n 1)

# 1. OBI first
bpffs obi1 && obi_create "$work/obi1" || { not_ok "cannot make OBI's map with bpftool in a bpffs of our own"; done_testing; }
start_fixture "$v_new" || { not_ok "go$v_new lockedthreads did not start"; done_testing; }
obi_fill "$work/obi1" "$pid" "$unlabeled" "$OBI_TRACE" "$OBI_SPAN" &&
	obi_fill "$work/obi1" "$pid" "$labeled" "$OTHER_TRACE" "$OTHER_SPAN" || not_ok "bpftool could not write the entries"
ctxprof_start "$work/1.err" "$work/1.jsonl" -p "$pid" --bpffs "$work/obi1" -d 3 -v ||
	not_ok "OBI first: ctxprof-go did not start: $(tail -n 3 "$work/1.err")"
wait "$ctxprof"
check_eq "OBI first: exit status" 0 "$?"
check_eq "OBI first: it took OBI's map, made none" "1" "$(grep -c "OBI's traces from $work/obi1/otel/traces_ctx_v1\$" "$work/1.err")"
check_eq "OBI first: the unlabeled goroutine's samples carry its thread's OBI trace" \
	"$OBI_TRACE obi $OBI_SPAN;" "$(ids "$work/1.jsonl" main.burnUnlabeled)"
check_eq "OBI first: the labeled goroutine keeps its own trace ID" \
	"$LABEL_TRACE label null;" "$(ids "$work/1.jsonl" main.burnLabeled)"

# 3. the same map and threads, without the obi source
ctxprof_start "$work/3.err" "$work/3.jsonl" -p "$pid" --bpffs "$work/obi1" -d 2 \
	--trace-sources label,traceparent,otel-sdk || not_ok "without obi: ctxprof-go did not start"
wait "$ctxprof"
check_eq "--trace-sources without obi: OBI's entry ignored" "null null null;" \
	"$(ids "$work/3.jsonl" main.burnUnlabeled)"
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null

# 2. ctxprof-go first: it pins the map; OBI's writes come after
bpffs obi2 || { not_ok "cannot mount a bpffs"; done_testing; }
start_fixture "$v_old" || { not_ok "go$v_old lockedthreads did not start"; done_testing; }
ctxprof_start "$work/2.err" "$work/2.jsonl" -p "$pid" --bpffs "$work/obi2" -d 4 -i 1 -v ||
	not_ok "ctxprof-go first: it did not start: $(tail -n 3 "$work/2.err")"
check_eq "ctxprof-go first: it made and pinned OBI's map" "1 1" \
	"$(grep -c ": absent (OBI has not run), made and pinned there for OBI\$" "$work/2.err") $(bpftool map show pinned "$work/obi2/otel/traces_ctx_v1" 2>/dev/null |
		grep -c 'lru_hash  name traces_ctx_v1  flags 0x0')"
obi_fill "$work/obi2" "$pid" "$unlabeled" "$OBI_TRACE" "$OBI_SPAN" &&
	obi_fill "$work/obi2" "$pid" "$labeled" "$OTHER_TRACE" "$OTHER_SPAN" || not_ok "bpftool could not write the entries"
filled=$(date +%s.%N)
wait "$ctxprof"
check_eq "ctxprof-go first: exit status" 0 "$?"
# records written after the entries were
after=$(jq -c --argjson t "$filled" 'select((.start | sub("\\.[0-9]+Z$"; "Z") | fromdate) > $t)' "$work/2.jsonl")
check_eq "ctxprof-go first: after OBI's entries, the unlabeled goroutine's samples carry them" \
	"$OBI_TRACE obi $OBI_SPAN;" "$(ids <(echo "$after") main.burnUnlabeled)"
check_eq "ctxprof-go first: the labeled goroutine keeps its own trace ID" \
	"$LABEL_TRACE label null;" "$(ids "$work/2.jsonl" main.burnLabeled)"
kill "$pid" 2>/dev/null
done_testing
