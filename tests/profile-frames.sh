#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-frames.sh: samples in the vDSO's clock and at a probed instruction keep their callers; no frame is a bare address.
#
# 1. The clock: testdata/clocky built by every installed toolchain, plain,
#    and by the newest stripped, all sampled at once at 999 Hz for 5 s and
#    on until each has 200 samples whose leaf is in the [vdso] mapping.
#    clocky reads the clock in tight loops, main.wallClock (time.Now) and
#    main.monoClock (time.Since), each under a trace ID of its own; Go calls
#    the vDSO on g0's stack with g left alone. Per target:
#    - of the vDSO samples, at least 99% carry a caller past the clock code
#      (a Go function that is not runtime.nanotime*, runtime.walltime*,
#      time.now, time.Now, time.Since or their inlined helpers);
#    - of the vDSO samples of the two clock traces, at least 99% run
#      through main.wallClock or main.monoClock, or the loop that calls
#      them (main.main.func1 and func2), and the trace's own;
#    - no frame is a bare address, named or in the [vdso] mapping alike.
# 2. A probed instruction: testdata/httpserver (Go 1.19, 1.22 and the
#    newest, plain) with the traceparent source on (the default), flooded
#    with small requests by testdata/httpload while sampled at 999 Hz, for
#    4 s and on until 30 samples lie at the entry of a probed function
#    (net/http.serverHandler.ServeHTTP, whose stack check's branch the
#    kernel emulates; (*response).finishRequest with --wall): most are in
#    the probe's trap; an instruction the kernel cannot emulate it steps
#    out of line, in the [uprobes] page. Per server: no frame's address
#    lies in its [uprobes] mapping and none is bare; at least 99% of the
#    samples at a probed entry have net/http.(*conn).serve as the next
#    frame, the probed function's caller.
# 3. --wall at the stack-growth check: clocky (Go 1.19 and the newest,
#    plain, and the newest stripped) read at 97 Hz for 5 s and on until each
#    has 50 goroutine samples parked at a function's entry, where
#    morestack left it (the leaf's address in a call of runtime.morestack*,
#    by `go tool objdump`). The caller's return address is then at SP
#    (amd64) or in gobuf.lr (arm64), not in a frame record. Per target, at
#    least 99% of those samples have next the frame whose address lies in
#    a call of the leaf's function, or an indirect call (a closure's)
#    (tests/parked-callers.py).
# 4. Stacks past many windows, in Duff's device, in system calls, through
#    stack growth:
#    testdata/bigframes (Go 1.19, 1.22 and the newest, plain, and the
#    newest stripped) sampled at once at 999 Hz for 5 s and on until each
#    has 200 samples of each kind (bigframes_stats in profile-lib.sh). Per
#    target, at least 99% whole (ending where Go's traceback does): of its
#    deep trace's samples, under 17 frames of 2 KiB each, with every one of
#    them; of its samples in runtime.duffcopy or duffzero (where the build
#    calls them), with main.copyLoop next; of its write trace's samples in
#    a system call function, through main.writeLoop; of its 50 or more
#    samples under runtime.morestack (goroutines whose first call,
#    main.growCaller's of main.growFrame, needs a larger stack), on past it
#    to runtime.goexit, with the function that called it next (after
#    growFrame, growCaller). No stack is a lone frame that is no root.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "frames in the vDSO, at probed instructions, deep, in Duff's device and in system calls"

# vdso_fewest FILE N: the fewest samples with a leaf in the vDSO of any of N
# targets
vdso_fewest() {
	jq -s --argjson n "$2" "$VDSO_JQ"'
		group_by(.pid) | if length < $n then 0 else
		map([.[] | .mappings as $m | .stacks[] | select(.frames[0] | in_vdso($m)) | .samples] |
		    add // 0) | min end' "$1"
}
declare -A bin_of
versions=$(go_toolchains)
for v in $versions; do
	bin_of["go$v plain"]=$(go_build "$v" plain clocky) || not_ok "go$v clocky: build failed"
done
newest=$(tail -n 1 <<<"$versions")
bin_of["go$newest stripped"]=$(go_build "$newest" stripped clocky) || not_ok "go$newest stripped clocky: build failed"
pids=()
declare -A name_of
for name in "${!bin_of[@]}"; do
	[ -n "${bin_of[$name]}" ] || continue
	"${bin_of[$name]}" -d 600s 2>/dev/null &
	pids+=($!)
	name_of[$!]=$name
done
enough_vdso() { [ "$(vdso_fewest "$1" "${#pids[@]}")" -ge 200 ]; }
echo "# sampling ${#pids[@]} clocky processes at 999 Hz for 5 s, then until each has 200 samples in the vDSO (at most 120 s)"
sample_until 5 120 enough_vdso "$work/err" "$work/clock.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -F 999
check_eq "ctxprof-go with ${#pids[@]} clocky targets exits" 0 "$?"
echo "# sampled for ${sampled:-0} s"
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
wall_trace=$(sed -n 's/^\twallTrace = "\([0-9a-f]*\)"$/\1/p' "$TOP/testdata/clocky/main.go")
mono_trace=$(sed -n 's/^\tmonoTrace = "\([0-9a-f]*\)"$/\1/p' "$TOP/testdata/clocky/main.go")
for p in "${pids[@]}"; do
	name=${name_of[$p]}
	# all, with a caller past the clock; of the two clock traces, all and
	# through their loops; bare frames; the commonest stack that lacks it
	IFS='|' read -r all called traced through bare example < <(jq -s -r --argjson pid "$p" \
		--arg re "$CLOCK_RE" --arg wall "$wall_trace" --arg mono "$mono_trace" "$VDSO_JQ"'
		[.[] | select(.pid == $pid)] as $r |
		([$r[] | .stacks[].frames[] | select(.func | test("^0x"))] | length) as $bare |
		[$r[] | .trace_id as $t | .mappings as $m | .stacks[] | select(.frames[0] | in_vdso($m)) |
		 { n: .samples, t: $t, f: [.frames[].func],
		   called: ([.frames[] | select(in_vdso($m) | not) | .func |
			select(test($re) | not)] | length > 0),
		   through: ([.frames[].func] | any(. == "main.wallClock" or . == "main.monoClock" or
			. == "main.main.func1" or . == "main.main.func2")) }] as $s |
		($s | map(select(.t == $wall or .t == $mono))) as $c |
		"\($s | map(.n) | add // 0)|\($s | map(select(.called) | .n) | add // 0)|\($c | map(.n) | add // 0)|\($c | map(select(.through) | .n) | add // 0)|\($bare)|\($s | map(select(.called | not)) | max_by(.n) // {f: []} | .f[0:6] | join(" < "))"' \
		"$work/clock.jsonl")
	part_verdict "$name" "$called" "$all" 200 "samples in the vDSO carry the Go caller of the clock" "$example"
	part_verdict "$name" "$through" "$traced" 1 \
		"vDSO samples of the clock traces run through main.wallClock or main.monoClock"
	check_eq "$name: bare frames" 0 "${bare:-?}"
done

# 2. probed instructions, stepped in the [uprobes] page
load_bin=$(go_build "$newest" plain httpload) || { not_ok "httpload: build failed"; done_testing; }
mapfile -t all_versions < <(go_toolchains)
servers=()
for v in 1.19 1.22 "$newest"; do
	[[ " ${all_versions[*]} " == *" $v "* ]] && [[ " ${servers[*]} " != *" $v "* ]] && servers+=("$v")
done
# jq: is a stack's leaf within 16 bytes of one of the entries $e (numbers)?
AT_ENTRY_JQ=$HEX_JQ'
def at_entry($e): (.frames[0].addr | hex) as $a | any($e[]; $a >= . and $a < . + 16);'
# at_entry FILE: samples at a probed entry ($entries); the server's [uprobes]
# mapping kept in $uprobes once it exists (the first step out of line)
at_entry() {
	jq -s --argjson e "$entries" "$AT_ENTRY_JQ"'[.[].stacks[] | select(at_entry($e)) | .samples] | add // 0' "$1"
}
enough_probed() {
	uprobes=${uprobes:-$(awk '$NF == "[uprobes]" { print $1 }' "/proc/$srv/maps" 2>/dev/null)}
	[ "$(at_entry "$1")" -ge 30 ]
}
for v in "${servers[@]}"; do
	bin=$(go_build "$v" plain httpserver) || { not_ok "go$v httpserver: build failed"; continue; }
	"$bin" -burn 0 >"$work/srv" 2>&1 &
	srv=$!
	for _ in $(seq 100); do
		grep -q '^http ' "$work/srv" && break
		sleep 0.1
	done
	addr=$(sed -n 's/^http //p' "$work/srv")
	# the probed functions' entries, from the symbol table
	entries=$(nm "$bin" | while read -r a _ sym; do
		case $sym in
		'net/http.serverHandler.ServeHTTP' | 'net/http.(*response).finishRequest') echo "$((16#$a))" ;;
		esac
	done | paste -sd, -)
	entries="[$entries]"
	"$load_bin" -url "http://$addr/small" -c 8 -d 600s >/dev/null 2>&1 &
	load=$!
	uprobes=""
	sample_until 4 120 enough_probed "$work/err" "$work/tp.jsonl" -p "$srv" -F 999
	check_eq "go$v httpserver under load: ctxprof-go exits" 0 "$?"
	kill "$load" "$srv" 2>/dev/null
	wait "$load" "$srv" 2>/dev/null
	[ -n "$uprobes" ] || uprobes=0-0
	lo=$((16#${uprobes%-*}))
	hi=$((16#${uprobes#*-}))
	IFS='|' read -r probed called in_page bare example < <(jq -s -r --argjson e "$entries" \
		--argjson lo "$lo" --argjson hi "$hi" "$AT_ENTRY_JQ"'
		[.[].stacks[] | select(at_entry($e))] as $p |
		"\($p | map(.samples) | add // 0)|\($p | map(select(.frames[1].func == "net/http.(*conn).serve") | .samples) | add // 0)|\([.[].stacks[].frames[] | select((.addr | hex) as $a | $a >= $lo and $a < $hi)] | length)|\([.[].stacks[].frames[] | select(.func | test("^0x"))] | length)|\($p | map(select(.frames[1].func != "net/http.(*conn).serve")) | max_by(.samples) // {frames: []} | [.frames[0:4][].func] | join(" < "))"' \
		"$work/tp.jsonl")
	part_verdict "go$v httpserver" "$called" "$probed" 30 \
		"samples at a probed function's entry have its caller, net/http.(*conn).serve, next ([uprobes] at $uprobes)" "$example"
	check_eq "go$v httpserver: frames in the [uprobes] page" 0 "${in_page:-?}"
	check_eq "go$v httpserver: bare frames" 0 "${bare:-?}"
	# where they were: the stacks that hold one, leaf first
	[ "${bare:-0}" = 0 ] || jq -c '.mappings as $m | .stacks[] | select(any(.frames[]; .func | test("^0x"))) |
		{samples, frames: [.frames[0:8][] | "\(.func)@\(.addr)"], mappings: [$m[] | "\(.file) \(.start)-\(.limit)"]}' \
		"$work/tp.jsonl" | head -n 3 | sed 's/^/# /'
done

# 3. --wall: goroutines parked at the stack-growth check
oldest=$(head -n 1 <<<"$versions")
declare -A od_of
pids=()
for name in "go$oldest plain" "go$newest plain" "go$newest stripped"; do
	bin=${bin_of[$name]:-}
	[ -n "$bin" ] || continue
	v=${name%% *}
	# a stripped build's text is its plain twin's
	od_of[$name]=$work/${v}.objdump
	[ -s "${od_of[$name]}" ] || "/usr/lib/go-${v#go}/bin/go" tool objdump "${bin_of[$v plain]}" >"${od_of[$name]}" ||
		not_ok "$name: go tool objdump failed"
	"$bin" -d 600s 2>/dev/null &
	pids+=($!)
	name_of[$!]=$name
done
# parked_fewest FILE: the fewest samples parked at the check of any target
parked_fewest() {
	local p n min=
	for p in "${pids[@]}"; do
		n=$(python3 "$TOP/tests/parked-callers.py" "${od_of[${name_of[$p]}]}" "$1" "$p" | cut -d'|' -f1)
		[ -z "$min" ] || [ "${n:-0}" -lt "$min" ] && min=${n:-0}
	done
	echo "${min:-0}"
}
enough_parked() { [ "$(parked_fewest "$1")" -ge 50 ]; }
echo "# --wall at 97 Hz on ${#pids[@]} clocky processes for 5 s, then until each has 50 samples parked at the stack-growth check (at most 90 s)"
sample_until 5 90 enough_parked "$work/err" "$work/wall.jsonl" -p "$(IFS=,; echo "${pids[*]}")" --wall --wall-hz 97
check_eq "ctxprof-go --wall with ${#pids[@]} clocky targets exits" 0 "$?"
echo "# sampled for ${sampled:-0} s"
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
for p in "${pids[@]}"; do
	name=${name_of[$p]}
	IFS='|' read -r parked called example < <(python3 "$TOP/tests/parked-callers.py" "${od_of[$name]}" \
		"$work/wall.jsonl" "$p")
	part_verdict "$name --wall" "$called" "$parked" 50 \
		"samples parked at a function's stack-growth check have its caller next" "$example"
done

# 4. deep large frames, Duff's device, system calls
pids=()
declare -A duff_of
for v in "${servers[@]}"; do
	for variant in plain stripped; do
		[ "$variant" = plain ] || [ "$v" = "$newest" ] || continue
		bin=$(go_build "$v" "$variant" bigframes) || { not_ok "go$v $variant bigframes: build failed"; continue; }
		"$bin" -d 600s 2>/dev/null &
		pids+=($!)
		name_of[$!]="go$v $variant bigframes"
		# a stripped build's text is its plain twin's
		duff_of[$!]=$(calls_duff objdump "$(go_build "$v" plain bigframes)")
	done
done
# big_fewest FILE: the fewest samples of any kind of any target
big_fewest() {
	local p min= n
	for p in "${pids[@]}"; do
		IFS='|' read -r deep _ duff _ sys _ _ _ grow _ < <(bigframes_stats "$1" "$p" "${duff_of[$p]}")
		[ "$duff" = - ] && duff=$deep
		for n in "${deep:-0}" "${duff:-0}" "${sys:-0}" $((${grow:-0} * 4)); do
			[ -z "$min" ] || [ "$n" -lt "$min" ] && min=$n
		done
	done
	echo "${min:-0}"
}
enough_big() { [ "$(big_fewest "$1")" -ge 200 ]; }
echo "# sampling ${#pids[@]} bigframes processes at 999 Hz for 5 s, then until each has 200 samples of each kind, 50 of stack growth (at most 120 s)"
sample_until 5 120 enough_big "$work/err" "$work/big.jsonl" -p "$(IFS=,; echo "${pids[*]}")" -F 999
check_eq "ctxprof-go with ${#pids[@]} bigframes targets exits" 0 "$?"
echo "# sampled for ${sampled:-0} s"
kill "${pids[@]}" 2>/dev/null
wait 2>/dev/null
for p in "${pids[@]}"; do
	bigframes_verdicts "${name_of[$p]}" "$work/big.jsonl" "$p" "${duff_of[$p]}" 200 50
done
done_testing
