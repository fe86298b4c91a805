#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-e2e.sh: ctxprof-go samples testdata/traced built by every installed Go, pure and cgo, at once.
#
# Builds: testdata/traced with each toolchain, plain (pure Go), stripped
# (-s -w: names from .gopclntab alone) and cgo (C __thread variables, so g
# is not at fs-8). All of them run together while one
# ctxprof-go samples them at 999 Hz: many targets with different Go versions
# and label layouts in one run. Expected trace IDs come from the Go source.
# Per target: no sample in a burn function carries another job's trace ID;
# at least 97% carry the right one, from the second second of the
# recording on (a set made before it outside pprof.Do is judged by a scan
# until it is set again); unlabeled work has trace_id null; span
# IDs, merged nested labels and all twelve labels appear; GC work done while
# allocating is charged to the allocating goroutine's trace. main.mix, which
# the compiler inlines into main.spin, shows as a frame of its own marked
# inlined, at a line of its body, above main.spin at the line of the call.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "end-to-end sampling"
pids=()

want=$(want_json)
src=$TOP/testdata/traced/main.go
mix_first=$(grep -n '^func mix(' "$src" | cut -d: -f1)
mix_last=$(awk -v f="$mix_first" 'NR > f && /^}/ { print NR; exit }' "$src")
mix_call=$(grep -n 'sink += mix(' "$src" | cut -d: -f1)
# jq: samples in GC work charged to traceAlloc, the allocating job's trace
GC_JQ='def gc_samples: [ .[] | select(.trace_id == "8f3d6b7a1a5e6f9bac4d5e6f70819203") | .stacks[] |
	select(any(.frames[]; .func | test("^runtime\\.(gcAssistAlloc|gcDrain|scanobject|greyobject|markroot|gcmarknewobject|wbBuf)"))) |
	.samples ] | add // 0;'
declare -A label_of bins
# build everything first: the targets must all be running when sampling starts
for v in $(go_toolchains); do
	for var in plain stripped cgo; do
		bins["go$v $var"]=$(go_build "$v" "$var") || not_ok "go$v $var: build failed"
	done
done
for name in "${!bins[@]}"; do
	[ -n "${bins[$name]}" ] || continue
	# niced: 84 spinning threads on 2 CPUs would starve ctxprof-go itself
	nice -n 10 "${bins[$name]}" -d 600s 2>/dev/null &
	pids+=($!)
	label_of[$!]=$name
done

# enough OUT: every target has reached the sample counts the checks below
# need: 20 in each burn function and in main.mix, and a GC sample under
# traceAlloc. How long that takes depends on how busy the machine is.
enough() {
	jq -s -e --argjson want "$want" --argjson n "${#pids[@]}" "def jobs: $JOBS_JQ; $GC_JQ"'
		group_by(.pid) | length == $n and all(.[];
			(jobs | length == 6 and all(.[]; .total >= 20)) and
			([.[].stacks[] | select(any(.frames[]; .func == "main.mix")) | .samples] | add // 0) >= 20 and
			gc_samples >= 1)' "$1" >/dev/null 2>&1
}
echo "# sampling ${#pids[@]} targets at 999 Hz for 8 s, then until each has enough samples (at most 120 s)"
sample_until 8 120 enough "$work/err" "$work/out.jsonl" -v -p "$(IFS=,; echo "${pids[*]}")" -F 999
rc=$?
check_eq "ctxprof-go with ${#pids[@]} targets exits" 0 "$rc"
echo "# sampled for ${sampled:-0} s"
sed 's/^/# /' "$work/err"
if ! jq -e . "$work/out.jsonl" >/dev/null; then
	not_ok "output is not valid JSON lines"
	done_testing
fi
ok "every output line is valid JSON ($(wc -l <"$work/out.jsonl") records)"
schema_verdict "every toolchain's records" "$work/out.jsonl"
# the relocations took the kernel types they name, not all of the kernel's
# BTF (the cut that test_core_btf shows relocates as the whole does)
if cut=$(grep -o 'CO-RE: [0-9]* of the kernel.s [0-9]* BTF types' "$work/err"); then
	ok "start-up: $cut"
else
	not_ok "start-up read all of the kernel's BTF: $(grep 'CO-RE' "$work/err")"
fi

# diagnose PID: a target whose labels were never read (seen once, in a chroot
# CI run, never here): what it runs, what check says, and a second run's view
diagnose() {
	local check
	echo "# pid $1 runs $(readlink "/proc/$1/exe" 2>&1); $(grep -E '^(State|NSpid)' "/proc/$1/status" 2>&1 | tr '\n\t' '  ')"
	check=$("$CTXPROF" check --json "/proc/$1/exe" 2>&1)
	echo "# check: $(jq -c '{go_version, source, tls_g_offset, offsets}' <<<"$check" 2>&1)"
	"$CTXPROF" -v -p "$1" -d 2 -o "$work/again.jsonl" 2>&1 |
		grep -E "^ctxprof-go: pid $1|samples from|outside any goroutine" | sed 's/^/# again: /'
	echo "# again: $(jq -s '[.[] | select(.trace_id != null) | .samples] | add // 0' "$work/again.jsonl") samples with a trace ID"
	echo "# again: $(jq -s -c '[.[] | {labels: (.labels | length), samples}]' "$work/again.jsonl")"
	walk_by_hand "$1" "$check"
	walk_by_bpftrace "$1" "$check"
}

# walk_by_bpftrace PID CHECK_JSON: the sampler's walk from another BPF
# program (task->thread.fsbase, then user reads), per thread: samples whose
# walk reached a label set, and those that did not, beside gdb's fs (the
# slot is below fsbase: its distance goes as a positive number)
walk_by_bpftrace() {
	command -v bpftrace >/dev/null || { echo "# (no bpftrace: no second walk)"; return; }
	# shellcheck disable=SC2046
	timeout 60 bpftrace -e '
	profile:hz:499 /pid == $1/ {
		$fs = (uint64)curtask->thread.fsbase;
		$g = *(uint64 *)uptr($fs - $2);
		$m = *(uint64 *)uptr($g + $3);
		$c = *(uint64 *)uptr($m + $4);
		$l = *(uint64 *)uptr($c + $5);
		if ($l != 0) { @labels[tid, $fs] = count(); } else { @none[tid, $fs] = count(); }
	}
	interval:s:3 { exit(); }' "$1" $(jq -r '"\(-.tls_g_offset) \(.offsets["g.m"]) \(.offsets["m.curg"]) \(.offsets["g.labels"])"' <<<"$2") 2>&1 |
		grep '^@' | sed 's/^/# bpftrace: /' | head -n 40
}

# walk_by_hand PID CHECK_JSON: the walk the sampler makes, made by gdb on
# every thread of PID, with the offsets check reported: where it stops
walk_by_hand() {
	command -v gdb >/dev/null || { echo "# (no gdb: no walk by hand)"; return; }
	OFFS=$(jq -r '"\(.tls_g_offset) \(.offsets["g.m"]) \(.offsets["m.curg"]) \(.offsets["g.labels"])"' <<<"$2") \
		timeout 60 gdb -q -nx -batch -p "$1" -ex 'python
import os
tls, gm, mcurg, glabels = (int(x) for x in os.environ["OFFS"].split())
inf = gdb.selected_inferior()
def word(a):
    try:
        return int.from_bytes(bytes(inf.read_memory(a, 8)), "little")
    except gdb.MemoryError:
        return None
for t in inf.threads():
    t.switch()
    fs = int(gdb.parse_and_eval("$fs_base")) & (2**64 - 1)
    g = word(fs + tls) if fs else None
    m = word(g + gm) if g else None
    curg = word(m + mcurg) if m else None
    labels = word(curg + glabels) if curg else None
    lm = word(labels) if labels else None
    print("# gdb: tid %d fs %#x g %s m %s curg %s labels %s *labels %s" % (t.ptid[1], fs,
          *(("%#x" % v) if v is not None else "?" for v in (g, m, curg, labels, lm))))
' 2>&1 | grep '^# gdb' || echo "# (gdb could not attach to $1)"
}

for pid in "${pids[@]}"; do
	name="${label_of[$pid]} (pid $pid)"
	jq -c --argjson pid "$pid" 'select(.pid == $pid)' "$work/out.jsonl" >"$work/p.jsonl"
	[ "$(jq -s '[.[] | select(.trace_id != null)] | length' "$work/p.jsonl")" -gt 0 ] || diagnose "$pid"
	# the shares from the second second on: a set a goroutine made outside
	# pprof.Do (pprof.SetGoroutineLabels) before ctxprof-go attached is
	# judged by a scan of stacks, which cannot tell it from one inherited
	# from a request that ended, until the goroutine sets one again
	jq -c -s 'def secs: sub("\\.[0-9]*Z$"; "Z") as $s | ($s | fromdate) +
			(capture("\\.(?<f>[0-9]+)Z$").f // "0" | "0." + . | tonumber);
		(map(.start | secs) | min) as $t0 | .[] | select((.start | secs) >= $t0 + 1)' \
		"$work/p.jsonl" >"$work/steady.jsonl"
	job_verdicts "$name" "$work/steady.jsonl" 20
	# labels besides the trace ID
	got=$(jq -s -r '
		def rec(t): map(select(.trace_id == t)) | first // {};
		[ (rec("4bf92f3577b34da6a3ce929d0e0e4736") | "\(.span_id) \(.labels.route)"),
		  (rec("5c0a3f4e8d2b4c6e9f1a2b3c4d5e6f70") | "\(.labels.tenant) \(.labels.route)"),
		  (rec("6d1b4f5e9e3c4d7f8a2b3c4d5e6f7081") | "\(.span_id) \(.labels.route)"),
		  (rec("7e2c5a6f0f4d5e8a9b3c4d5e6f708192") | "\(.labels | length) \(.labels.k10)") ] | join(", ")' "$work/p.jsonl")
	check_eq "$name span IDs, nested merge, twelve labels" \
		"00f067aa0ba902b7 /do, acme /nested, a1b2c3d4e5f60718 /set, 12 value-10" "$got"
	# GC work on the system stack, charged to the goroutine that allocates
	gc=$(jq -s -r "$GC_JQ gc_samples" "$work/p.jsonl")
	if [ "$gc" -gt 0 ]; then
		ok "$name: $gc samples in GC work carry the allocating goroutine's trace ID"
	else
		not_ok "$name: no GC samples charged to the allocating goroutine"
	fi
	# the inlined frame: every main.mix frame, and the frame after it
	read -r right wrong < <(jq -s -r --argjson lo "$mix_first" --argjson hi "$mix_last" \
		--argjson call "$mix_call" '
		[ .[].stacks[] | .samples as $n | .frames as $f | range(0; $f | length) |
		  select($f[.].func == "main.mix") |
		  { n: $n, good: ($f[.].inlined == true and $f[.].line >= $lo and $f[.].line <= $hi and
				  $f[. + 1].func == "main.spin" and $f[. + 1].line == $call and
				  ($f[. + 1].inlined | not)) } ] |
		"\(map(select(.good) | .n) | add // 0) \(map(select(.good | not) | .n) | add // 0)"' \
		"$work/p.jsonl")
	if [ "$right" -ge 20 ] && [ "$wrong" -eq 0 ]; then
		ok "$name: $right samples show main.mix inlined (lines $mix_first-$mix_last) above main.spin at its call (line $mix_call)"
	else
		not_ok "$name: main.mix as an inlined frame above main.spin:$mix_call: $right samples right, $wrong wrong"
	fi
done
done_testing
