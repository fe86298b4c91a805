# SPDX-License-Identifier: GPL-2.0
# profile-lib.sh: helpers for the end-to-end tests that run ctxprof-go against live Go processes.
# Sourced after lib.sh.

# e2e_capable: can this machine run the sampler? Prints the reason when not.
e2e_capable() {
	if [ "$(id -u)" != 0 ]; then
		echo "not root"
		return 1
	fi
	if [ ! -r /sys/kernel/btf/vmlinux ]; then
		echo "no kernel BTF at /sys/kernel/btf/vmlinux"
		return 1
	fi
	return 0
}

# part_verdict NAME PART ALL MIN WHAT [EXAMPLE]: ok when ALL is at least
# MIN and PART at least 99% of it ("NAME: PART of ALL WHAT"); EXAMPLE says
# what the rest looks like
part_verdict() {
	if [ "${3:-0}" -ge "$4" ] && [ $((${2:-0} * 100)) -ge $((${3:-0} * 99)) ]; then
		ok "$1: $2 of $3 $5"
	else
		not_ok "$1: ${2:-0} of ${3:-0} $5, need 99% of at least $4; commonest without: ${6:-none}"
	fi
}

# xol_verdict NAME PID: no probe hit in live process PID was stepped out
# of line. The kernel maps a process's [uprobes] page at the first
# instruction it steps there (a second trap, a debug exception, tens of
# microseconds in a VM), never for one it emulates: a call, a branch.
xol_verdict() {
	local page
	if [ ! -r "/proc/$2/maps" ]; then
		not_ok "$1: no probe stepped out of line: pid $2 is gone before it could be looked at"
		return
	fi
	page=$(awk '$NF == "[uprobes]" { print $1 }' "/proc/$2/maps")
	check_eq "$1: no probe hit stepped out of line: [uprobes] page" none "${page:-none}"
}

# where Go's traceback ends: a goroutine's start, a thread's, the
# scheduler's and the stack growth's switches to g0, a signal handler's
# start and its return (amd64's restorer, on the signal frame: Go 1.21
# names it runtime.sigreturn__sigaction); and where a
# thread's own stack starts (a C thread's first instructions)
ROOTS='["runtime.goexit","runtime.mstart","runtime.mstart0","runtime.mcall","runtime.morestack","runtime.rt0_go","runtime.sigtramp","runtime.sigreturn","runtime.sigreturn__sigaction","__clone3","__clone","clone3","clone"]'
# jq: whole, does a stack of function names (.f) end where Go's traceback does?
WHOLE_JQ="def whole: .f[-1] as \$r | $ROOTS | index(\$r) != null;"

# bigframes_stats FILE PID DUFF: testdata/bigframes's samples of PID in
# FILE, as "deep|whole|duff|whole|syscall|whole|lone|twice|grow|whole|commonest
# cut": its
# deep trace's samples under main.deep or in main.spin (not the clock read
# between rounds, nor the scheduler's code on g0), and those whose stack is
# whole, in main.spin with every level of main.deep (on the way down and
# up a sample has fewer); samples in
# runtime.duffcopy or duffzero (when DUFF is 1, the build calls them), and
# those whole with main.copyLoop next; samples of
# the write trace in a system call function, and those whole through
# main.writeLoop; the names of lone frames (a stack of one that is no
# root); the copy trace's samples with main.copyLoop twice (a record
# at the call read as a frame); the grow trace's samples under
# runtime.morestack, and those that go on past it to runtime.goexit, with
# the function that called it next (after main.growFrame, its caller
# main.growCaller); the commonest stack of the four that is not whole.
# Samples in morestack's own code are left out: there the caller's
# caller is still in a register (arm64: R3) or at SP + 8 (amd64), which
# the leaf repair does not put back. So are those in the scheduler that
# end at morestack: newstack calls it to preempt the goroutine
# (gopreempt_m), and once it has picked another, a new child with the
# same trace ID, curg's stack is no longer the one morestack left.
bigframes_stats() {
	local src=$TOP/testdata/bigframes/main.go
	trace() { sed -n "s/^\t$1 *= \"\([0-9a-f]*\)\"\$/\1/p" "$src"; }
	jq -s -r --argjson pid "$2" --argjson duff "$3" --arg deep "$(trace deepTrace)" \
		--arg copy "$(trace duffTrace)" --arg write "$(trace writeTrace)" --arg grow "$(trace growTrace)" \
		--argjson levels "$(sed -n 's/^\tdeepLevels *= \([0-9]*\)$/\1/p' "$src")" "$WHOLE_JQ"'
		[.[] | select(.pid == $pid) | .trace_id as $t | .stacks[] |
		 {n: .samples, t: $t, f: [.frames[].func]}] as $s |
		def sum: map(.n) | add // 0;
		($s | map(select(.t == $deep and any(.f[]; . == "main.deep" or . == "main.spin")))) as $d |
		($s | map(select(.t == $copy and (.f[0] == "runtime.duffcopy" or .f[0] == "runtime.duffzero")))) as $c |
		($s | map(select(.t == $write and (.f[0] | test("[Ss]yscall"))))) as $w |
		($d | map(select(whole and ((any(.f[]; . == "main.spin") | not) or
			([.f[] | select(. == "main.deep")] | length) == $levels + 1)))) as $dw |
		($c | map(select(whole and .f[1] == "main.copyLoop"))) as $cw |
		($w | map(select(whole and any(.f[]; . == "main.writeLoop")))) as $ww |
		($s | map(select(.t == $grow and .f[0] != "runtime.morestack" and
			any(.f[]; . == "runtime.morestack") and
			(.f[-1] == "runtime.morestack" and any(.f[]; . == "runtime.schedule") | not)))) as $g |
		($g | map((.f | index("runtime.morestack")) as $k | select(.f[-1] == "runtime.goexit" and
			.f[$k + 1] != null and (.f[$k + 1] != "main.growFrame" or .f[$k + 2] == "main.growCaller")))) as $gw |
		"\($d | sum)|\($dw | sum)|\(if $duff == 1 then $c | sum else "-" end)|\($cw | sum)|\($w | sum)|\($ww | sum)|\([$s[] | select((.f | length) == 1 and (whole | not)) | .f[0]] | unique | join(" "))|\($s | map(select(.t == $copy and ([.f[] | select(. == "main.copyLoop")] | length) > 1)) | sum)|\($g | sum)|\($gw | sum)|\(($d - $dw) + ($c - $cw) + ($w - $ww) + ($g - $gw) | max_by(.n) // {f: []} | .f[0:7] | join(" < "))"' "$1"
}

# bigframes_verdicts NAME FILE PID DUFF MIN GROW_MIN: bigframes_stats's
# verdicts on PID's samples in FILE, at least MIN of each kind but stack
# growth's, GROW_MIN of those
bigframes_verdicts() {
	local deep deep_ok duff duff_ok sys sys_ok lone twice grow grow_ok example
	IFS='|' read -r deep deep_ok duff duff_ok sys sys_ok lone twice grow grow_ok example < <(bigframes_stats "$2" "$3" "$4")
	part_verdict "$1" "$deep_ok" "$deep" "$5" \
		"samples in 17 frames of 2 KiB are whole, in main.spin with all 17" "$example"
	if [ "$duff" = - ]; then
		echo "# $1: main.copyLoop does not call runtime.duffcopy or duffzero in this build"
	else
		part_verdict "$1" "$duff_ok" "$duff" "$5" \
			"samples in runtime.duffcopy or duffzero are whole, with main.copyLoop next" "$example"
	fi
	part_verdict "$1" "$sys_ok" "$sys" "$5" "samples in a write system call are whole, through main.writeLoop" "$example"
	part_verdict "$1" "$grow_ok" "$grow" "$6" \
		"samples under runtime.morestack go on to runtime.goexit, from the function that called it" "$example"
	check_eq "$1: lone frames" "" "$lone"
	check_eq "$1: samples with main.copyLoop twice" 0 "$twice"
	# where they were: the stacks, leaf first, with their addresses
	[ "${twice:-0}" = 0 ] || jq -c --argjson pid "$3" 'select(.pid == $pid) | .stacks[] |
		select([.frames[] | select(.func == "main.copyLoop")] | length > 1) |
		{samples, frames: [.frames[0:6][] | "\(.func)@\(.addr)"]}' "$2" | head -n 3 | sed 's/^/# /'
}

# calls_duff OBJDUMP BIN: 1 when BIN's main.copyLoop calls Duff's device
# (runtime.duffcopy or duffzero), which some releases and architectures
# have and others do not; else 0
calls_duff() {
	"$1" -d --no-show-raw-insn "$2" | awk '/<main\.copyLoop>:/ { p = 1; next } p && /^$/ { exit }
		p && /<runtime\.duff(copy|zero)/ { n++ } END { print n ? 1 : 0 }'
}

# jq: hex, a "0x..." string as a number
HEX_JQ='def hex: ltrimstr("0x") | explode | reduce .[] as $c (0; . * 16 + (if $c >= 97 then $c - 87 else $c - 48 end));'

# jq: in_vdso($m), is a frame's address in the record's [vdso] mapping
# $m? Addresses compare as zero-padded hex strings.
VDSO_JQ='
def pad: ltrimstr("0x") | ("0000000000000000"[length:]) + .;
def in_vdso($m): (.addr // "0x0" | pad) as $a |
	any($m[] | select(.file == "[vdso]"); $a >= (.start | pad) and $a < (.limit | pad));
'
# Go's clock code: what a caller "past the clock code" is not
CLOCK_RE='^(runtime\.nanotime1?|runtime\.walltime1?|time\.now|time\.Now|time\.Since|time\.runtimeNano|time\.runtimeNow|time\.runtimeIsBubbled)$'

# Frames that are bare addresses (no function, no file) in the records a
# test's runs wrote, and of those the ones in a [vdso] mapping, where
# nothing is left unnamed. ctxprof_start counts a file before it empties
# it for the next run, done_testing what is in $work at the end.
# BARE_MAX_PCT (default 1) bounds the share; a test that makes bare
# frames on purpose (an executable it cannot read) sets it.
frames_all=0 frames_bare=0 frames_vdso=0 frames_eg=
BARE_MAX_PCT=${BARE_MAX_PCT:-1}
# frames_count FILE: adds FILE's frames, when it holds records
frames_count() {
	local n
	[ -s "$1" ] && [ "$(head -c 1 "$1")" = "{" ] || return 0
	n=$(grep -o '"func":"' "$1" | wc -l)
	frames_all=$((frames_all + n))
	n=$(grep -o '"func":"0x' "$1" | wc -l)
	[ "$n" -gt 0 ] || return 0
	frames_bare=$((frames_bare + n))
	n=$(grep '"func":"0x' "$1" | jq -s "$VDSO_JQ"'
		[.[] | (.mappings // []) as $m | .stacks[]?.frames[] | select(.func | startswith("0x")) |
		 select(in_vdso($m))] | length' 2>/dev/null)
	frames_vdso=$((frames_vdso + ${n:-0}))
	# what they are: the mapping each lies in, if any
	[ -n "$frames_eg" ] || frames_eg=$(grep -m 50 '"func":"0x' "$1" | jq -s -r "$HEX_JQ"'
		[.[] | .mappings as $m | .comm as $c | .stacks[]?.frames[] | select(.func | startswith("0x")) |
		 (.addr // "0x0" | hex) as $a |
		 "\(.func) of \($c) in \([$m[]? | select($a >= (.start | hex) and $a < (.limit | hex)) | .file][0] // "no mapping")"] |
		unique | .[0:3] | join("; ")' 2>/dev/null)
}

# called by done_testing: the verdict on bare frames, when the test wrote records
before_done_testing() {
	local f
	if [ -n "${work:-}" ] && [ -d "$work" ]; then
		while IFS= read -r -d '' f; do
			frames_count "$f"
		done < <(find "$work" -type f -size +0 -print0 2>/dev/null)
	fi
	[ "$frames_all" -gt 0 ] || return 0
	if [ "$frames_vdso" -eq 0 ] && [ $((frames_bare * 100)) -le $((frames_all * BARE_MAX_PCT)) ]; then
		ok "frames: $frames_bare of $frames_all bare addresses in the records written (at most $BARE_MAX_PCT%), $frames_vdso in the vDSO"
	else
		not_ok "frames: $frames_bare of $frames_all bare addresses in the records written (at most $BARE_MAX_PCT%), $frames_vdso in the vDSO (none allowed); such as $frames_eg"
	fi
}

# e2e_setup WHAT: skips the calling test when sampling cannot run here; else
# makes $work, and removes it and stops every background job at exit.
e2e_setup() {
	local why
	if ! why=$(e2e_capable); then
		skip "$1" "$why"
		done_testing
	fi
	work=$(mktemp -d)
	trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
}

# unmount_all: unmounts the mount points in $mounts, innermost (last) first;
# a busy one lazily
unmount_all() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}"
	done
}

# wait_exec PID...: until each PID runs its own program rather than the
# nice or env that started it (`nice -n 10 BIN &` gives nice's pid, which a
# loaded machine can leave unexec'd for a while), or is gone
wait_exec() {
	local p i
	for p in "$@"; do
		for ((i = 0; i < 200; i++)); do
			case $(readlink "/proc/$p/exe" 2>/dev/null || echo gone) in
			*/nice | */env) sleep 0.05 ;;
			*) break ;;
			esac
		done
	done
}

# ctxprof_start ERR OUT ARGS...: starts ctxprof-go ARGS -o OUT 2>ERR in the
# background ($ctxprof holds its pid; its stdout is the caller's) and
# returns once it samples, with a note on stderr. Its start-up (BPF
# verification above all) takes from under a second to ten seconds and
# more on a busy machine, so whatever a test times or counts starts from
# here, never from a guess. If it exits first, returns its exit status (1
# for 0); if it is not ready after READY_LIMIT seconds (default 300), kills
# it and returns 124.
ctxprof_start() {
	local err=$1 out=$2 start=$SECONDS rc a prev=
	shift 2
	# the targets of -p as their own programs, not what started them
	for a in "$@"; do
		[ "$prev" != -p ] || wait_exec ${a//,/ }
		prev=$a
	done
	# emptied first: the files of a previous run must not pass for this one's
	frames_count "$out"
	: >"$err"
	: >"$out"
	"$CTXPROF" "$@" -o "$out" 2>"$err" &
	ctxprof=$!
	until grep -q 'Ctrl-C to stop' "$err" 2>/dev/null; do
		if ! kill -0 "$ctxprof" 2>/dev/null; then
			wait "$ctxprof"
			rc=$?
			return $((rc ? rc : 1))
		fi
		if [ $((SECONDS - start)) -ge "${READY_LIMIT:-300}" ]; then
			kill "$ctxprof" 2>/dev/null
			wait "$ctxprof"
			return 124
		fi
		sleep 0.1
	done
	echo "# ctxprof-go ready after $((SECONDS - start)) s" >&2
}

# bpf_ids PID prog|map: the IDs of the BPF programs or maps process PID
# holds, as a JSON array for jq (fdinfo names each); [0] for none
bpf_ids() {
	local ids
	ids=$(grep -h "^$2_id:" /proc/"$1"/fdinfo/* 2>/dev/null | awk '{ print $2 }' | sort -u | paste -sd, -) || true
	echo "[${ids:-0}]"
}

# map_entries PID NAME: max_entries of the BPF map NAME that process PID holds
map_entries() {
	bpftool map show -j | jq -r --argjson ids "$(bpf_ids "$1" map)" --arg name "$2" \
		'[.[] | select(.name == $name and (.id as $i | $ids | index($i)))] | first | .max_entries // "none"'
}

# ctxprof_stop: SIGINT to the ctxprof-go of ctxprof_start; its exit status.
ctxprof_stop() {
	kill -INT "$ctxprof" 2>/dev/null
	wait "$ctxprof"
}

# sample_until MIN MAX CHECK ERR OUT ARGS...: ctxprof-go ARGS with records
# flushed every second to OUT, from the moment it samples, for at least MIN
# seconds and then until the command CHECK OUT succeeds, or MAX seconds have
# passed. A test that needs so many samples of each kind gets them however
# busy the machine is, or fails at MAX with what it got. Returns
# ctxprof-go's exit status; $sampled is the seconds it sampled.
sample_until() {
	local min=$1 max=$2 check=$3 err=$4 out=$5
	shift 5
	ctxprof_start "$err" "$out" "$@" -i 1 -d "$max" || return
	samples_wait "$min" "$max" "$check" "$out"
	ctxprof_stop
}

# samples_wait MIN MAX CHECK OUT: the waiting of sample_until, for a
# ctxprof-go already started (with -i 1) by ctxprof_start.
samples_wait() {
	local start=$SECONDS
	sleep "$1"
	while kill -0 "$ctxprof" 2>/dev/null && [ $((SECONDS - start)) -lt "$2" ] && ! "$3" "$4"; do
		sleep 1
	done
	sampled=$((SECONDS - start))
}

# share_verdict NAME RIGHT TOTAL DETAIL: ok when RIGHT is at least 97% of TOTAL.
share_verdict() {
	local pct=$(( 1000 * $2 / $3 ))
	if [ "$pct" -ge 970 ]; then
		ok "$1: $2/$3 right ($((pct / 10)).$((pct % 10))%)$4"
	else
		not_ok "$1: $2/$3 right ($((pct / 10)).$((pct % 10))%), need 97%$4"
		return 1
	fi
}

# The trace IDs of testdata/traced, read from its source: NAME=HEX lines.
traced_constants() {
	sed -n 's/^\t\(trace[A-Za-z]*\|span[A-Za-z]*\) *= *"\([0-9a-f]*\)"$/\1=\2/p' \
		"$TOP/testdata/traced/main.go"
}

# jq program: per burn function of testdata/traced, samples in total, with the
# right trace ID, with a wrong one, and with none. Needs --argjson want.
JOBS_JQ='
[ .[] as $r | $r.stacks[] |
  { trace: $r.trace_id, n: .samples,
    job: ([.frames[].func | select(. as $f | $want | has($f))] | first) } |
  select(.job != null) ] |
group_by(.job) |
map(.[0].job as $j | $want[$j] as $t |
  { job: $j, total: (map(.n) | add),
    right: (map(select(.trace == $t)) | map(.n) | add // 0),
    wrong: (map(select(.trace != null and .trace != $t)) | map(.n) | add // 0),
    none: (map(select(.trace == null and $t != null)) | map(.n) | add // 0) })'

# want_json: {"main.burnDo": "<traceDo>", ..., "main.burnUnlabeled": null}
want_json() {
	local -A c
	local k v
	while IFS== read -r k v; do c[$k]=$v; done < <(traced_constants)
	jq -n --arg do "${c[traceDo]}" --arg nested "${c[traceNested]}" --arg set "${c[traceSet]}" \
		--arg many "${c[traceMany]}" --arg alloc "${c[traceAlloc]}" \
		'{"main.burnDo": $do, "main.burnNested": $nested, "main.burnSet": $set,
		  "main.burnMany": $many, "main.burnAlloc": $alloc, "main.burnUnlabeled": null}'
}

# job_verdicts NAME JSONL MIN: one verdict per burn function of testdata/traced
# in JSONL (one target's records): at least MIN samples, none with another
# job's trace ID, and at least 97% with its own.
job_verdicts() {
	local name=$1 stats job total right wrong none
	stats=$(jq -s --argjson want "$(want_json)" "$JOBS_JQ" "$2")
	for job in burnDo burnNested burnSet burnMany burnAlloc burnUnlabeled; do
		read -r total right wrong none < <(jq -r --arg j "main.$job" \
			'map(select(.job == $j))[0] // {total:0,right:0,wrong:0,none:0} |
			 "\(.total) \(.right) \(.wrong) \(.none)"' <<<"$stats")
		if [ "$total" -lt "$3" ]; then
			not_ok "$name $job: only $total samples"
		elif [ "$wrong" -ne 0 ]; then
			not_ok "$name $job: $wrong of $total samples carry another trace ID"
			# what they were: the trace, the labels and the stack
			jq -c --arg j "main.$job" --argjson want "$(want_json)" '. as $r | .stacks[] |
				select(([.frames[].func | select(. as $f | $want | has($f))] | first) == $j and
				       $r.trace_id != null and $r.trace_id != $want[$j]) |
				{trace: $r.trace_id, labels: $r.labels, n: .samples,
				 frames: [.frames[] | "\(.func):\(.line)"]}' "$2" | sed 's/^/#   /'
		elif ! share_verdict "$name $job" "$right" "$total" ", 0 wrong, $none without"; then
			# what those without were: their labels, flags and stack
			jq -c --arg j "main.$job" --argjson want "$(want_json)" '. as $r | .stacks[] |
				select(([.frames[].func | select(. as $f | $want | has($f))] | first) == $j and
				       $r.trace_id == null) |
				{labels: $r.labels, truncated: $r.truncated, source: $r.trace_source, n: .samples,
				 frames: [.frames[] | "\(.func):\(.line)"]}' "$2" | sed 's/^/#   /'
		fi
	done
}

# jobs_enough MIN NPIDS JSONL: every one of NPIDS targets in JSONL has MIN
# samples in each of the six burn functions
jobs_enough() {
	jq -s -e --argjson want "$(want_json)" --argjson n "$2" --argjson min "$1" "def jobs: $JOBS_JQ;"'
		group_by(.pid) | length >= $n and
		(map(select(jobs | length == 6 and all(.[]; .total >= $min))) | length) >= $n' \
		"$3" >/dev/null 2>&1
}

# records_hold_stats JSONL ERR: "same" when the records' samples add up to
# the statistics line's count, else what each says
records_hold_stats() {
	local json stat
	json=$(jq -s 'map(.samples) | add // 0' "$1")
	stat=$(sed -n 's/^ctxprof-go: \([0-9]*\) samples from.*/\1/p' "$2")
	if [ -n "$stat" ] && [ "$json" = "$stat" ] && [ "$json" -gt 0 ]; then
		echo same
	else
		echo "records hold $json samples, statistics say '${stat:-nothing}'"
	fi
}

# leaf_verdicts NAME PAIRS TRUTH: for each leaf of testdata/leafy, a verdict
# that at least 99% of its samples (at least 50) show a true caller next.
# PAIRS holds "SAMPLES LEAF CALLER" lines, TRUTH the true callers, one a line.
leaf_verdicts() {
	local name=$1 leaf total right wrong
	for leaf in main.spinLeaf runtime.memclrNoHeapPointers main.framedTick main.framedWide; do
		read -r total right wrong < <(awk -v leaf="$leaf" -v truth="$3" '
			BEGIN { while ((getline f < truth) > 0) ok[f] = 1 }
			$2 == leaf { total += $1; if ($3 in ok) right += $1; else if (!ex) ex = $3 }
			END { print total + 0, right + 0, ex }' "$2")
		if [ "$total" -lt 50 ]; then
			not_ok "$name $leaf: only $total samples"
		elif [ $((1000 * right)) -ge $((990 * total)) ]; then
			ok "$name $leaf: $right/$total samples ($((1000 * right / total / 10)).$((1000 * right / total % 10))%) show a true caller next"
		else
			not_ok "$name $leaf: $right/$total samples ($((1000 * right / total / 10)).$((1000 * right / total % 10))%) show a true caller next, need 99%; e.g. $wrong"
		fi
	done
}

# jq: "SAMPLES LEAF CALLER" per (leaf, first frame not inlined after it) of
# the target $pid's stacks
LEAF_JQ='
[ .[] | select(.pid == $pid) | .stacks[] | .samples as $n | .frames as $f |
  { n: $n, leaf: $f[0].func,
    caller: ([ $f[1:][] | select(.inlined != true) | .func ] | first // "-") } ] |
group_by([.leaf, .caller]) | map("\(map(.n) | add) \(.[0].leaf) \(.[0].caller)") | .[]'

# jq -s over --wall records: one line per pid and trace ID, with the wall
# samples in all, those running or runnable, the same counted by looks (a
# look counts once, whatever snapshots it stands for), the samples by state,
# the dominant wait reason and the functions of the stack most samples off
# the CPU had
WALL_TRACES_JQ='map(select(.origin == "wall" and .trace_id != null)) | group_by([.pid, .trace_id])[] |
	{pid: .[0].pid, trace_id: .[0].trace_id, total: (map(.samples) | add),
	 run: (map(select(.state == "running" or .state == "runnable") | .samples) | add // 0),
	 looks: (map(.observed) | add),
	 run_looks: (map(select(.state == "running" or .state == "runnable") | .observed) | add // 0),
	 states: (group_by(.state) | map({key: .[0].state, value: (map(.samples) | add)}) | from_entries),
	 reason: (map(select(.state == "waiting")) | group_by(.wait_reason) |
		map({r: .[0].wait_reason, n: (map(.samples) | add)}) | max_by(.n).r // null),
	 idle_funcs: (map(select(.state == "waiting" or .state == "syscall")) | max_by(.samples) |
		[.stacks[0].frames[]?.func] // [])}'

# wall_kind_verdicts NAME KIND FUNC SHARE TOLERANCE MUTEX T: for one kind of
# wait of testdata/waitkinds (its main.wait* FUNC, the CPU share it measured),
# whose trace's WALL_TRACES_JQ line is T: the share of its looks that found
# it running or runnable within TOLERANCE of SHARE, and the share of its
# samples within TOLERANCE + 0.05 (a look that stands for snapshots the busy
# machine missed counts the state it finds for all of them, and it comes
# late when the CPUs are busy: running weighs more, 0.03 to 0.07 over the
# looks' share with 6 waitkinds on 2 CPUs); Go's own wait reason dominating
# (MUTEX names the release's for sync.Mutex), or state syscall for read(2);
# and the stack off the CPU running through FUNC
wall_kind_verdicts() {
	local name=$1 kind=$2 func=$3 share=$4 tol=$5 mutex=$6 t=$7 total run looks run_looks syscalls idle_func
	local got by_looks want
	read -r total run looks run_looks syscalls idle_func <<<"$(jq -r --arg f "$func" \
		'"\(.total) \(.run) \(.looks) \(.run_looks) \(.states.syscall // 0) \(any(.idle_funcs[]; . == $f))"' <<<"$t")"
	got=$(awk -v r="$run" -v t="$total" 'BEGIN { printf "%.3f", r / t }')
	by_looks=$(awk -v r="$run_looks" -v t="$looks" 'BEGIN { printf "%.3f", r / t }')
	if awk -v g="$by_looks" -v w="$share" -v tol="$tol" 'BEGIN { d = g - w; exit !(d <= tol && d >= -tol) }' &&
		awk -v g="$got" -v w="$share" -v tol="$tol" 'BEGIN { d = g - w; exit !(d <= tol + 0.05 && d >= -tol - 0.05) }'; then
		ok "$name $kind: running or runnable in $run_looks of $looks looks ($by_looks), $run of $total wall samples ($got), the workload's CPU share $share"
	else
		not_ok "$name $kind: running or runnable in $run_looks of $looks looks ($by_looks), $run of $total wall samples ($got), the workload's CPU share $share: off by more than $tol (looks) or $tol + 0.05 (samples); $t"
	fi
	case $kind in
	sleep) want=sleep ;;
	chan) want="chan receive" ;;
	mutex) want=$mutex ;;
	net) want="IO wait" ;;
	syscall) want=syscall ;;
	esac
	if [ "$kind" = syscall ]; then
		if [ "$syscalls" -ge $(((total - run) * 9 / 10)) ] && [ "$syscalls" -gt 0 ]; then
			ok "$name syscall: $syscalls of $((total - run)) samples off the CPU in state syscall"
		else
			not_ok "$name syscall: $syscalls of $((total - run)) off the CPU in state syscall; $t"
		fi
	else
		check_eq "$name $kind: the dominant wait reason" "$want" "$(jq -r .reason <<<"$t")"
	fi
	check_eq "$name $kind: the dominant stack off the CPU runs through $func" true "$idle_func"
}

# httpserver_start BIN: starts testdata/httpserver BIN in the background
# (pid in $srv) and sets $srv_http to its HTTP address once it has printed
# both its addresses (a busy machine can take a while); false if it never
# did
httpserver_start() {
	local i
	# the file first: the loop may look before the background shell has opened it
	: >"$work/srv.addr"
	"$1" >"$work/srv.addr" 2>/dev/null &
	srv=$!
	for ((i = 0; i < 600 && $(wc -l <"$work/srv.addr") < 2; i++)); do sleep 0.1; done
	srv_http=$(awk '$1 == "http" { print $2 }' "$work/srv.addr")
	[ -n "$srv_http" ]
}

# wait_line FILE ERE TENTHS: true once a line of FILE matches ERE, within
# TENTHS tenths of a second
wait_line() {
	local i
	for ((i = 0; i < $3; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# baseline_build REV LOG: builds ctxprof-go at REV into .output/bench/baseline-REV
# (once; the benches measure this build against it) and prints its path
baseline_build() {
	local dir=$OUTPUT/bench/baseline-$1
	if [ ! -x "$dir/ctxprof-go" ]; then
		echo "# building ctxprof-go $1 into $dir (once)" >&2
		rm -rf "$dir" && mkdir -p "$dir" &&
			git -C "$TOP" archive "$1" | tar -x -C "$dir" &&
			make -C "$dir" ctxprof-go >"$2" 2>&1 ||
			{ echo "building ctxprof-go $1 failed: $(tail -n 3 "$2")" >&2; return 1; }
	fi
	echo "$dir/ctxprof-go"
}

# testdata/allocs's allocating functions, each under a trace of its own
# but main.allocUntraced
ALLOC_FUNCS="main.allocSmall main.alloc1K main.alloc64K main.allocChild main.allocUntraced"
# jq, on alloc records: $f's stacks of process $pid, their objects and
# bytes, the trace IDs they carry and the function each starts at
ALLOC_OURS_JQ='[inputs | select(.origin == "alloc" and .pid == $pid) | . as $r | .stacks[] |
	select(any(.frames[]; .func == $f)) | {o: .alloc_objects, b: .alloc_bytes,
	t: ($r.trace_id // $r.inherited_trace_id), leaf: .frames[0].func}] |
	{objects: (map(.o) | add // 0), bytes: (map(.b) | add // 0), traces: (map(.t) | unique),
	 leaves: (map(.leaf) | unique)}'
# jq, on alloc records: trace $t's of process $pid, its objects and bytes
ALLOC_TRACED_JQ='[inputs | select(.origin == "alloc" and .pid == $pid and .trace_id == $t)] |
	{objects: (map(.alloc_objects) | add // 0), bytes: (map(.alloc_bytes) | add // 0)}'

# within2 WHAT WANT GOT: GOT within 2% of WANT, runtime.MemProfile's figure
within2() {
	if [ "$2" -gt 0 ] && awk -v w="$2" -v g="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= 0.02 * w) }'; then
		ok "$1: $3, runtime.MemProfile $2"
	else
		not_ok "$1: $3, runtime.MemProfile $2 (not within 2%)"
	fi
}

# alloc_lost_verdict NAME ERR: no sampled allocation lost between the
# probes and the records, by ctxprof-go's exit statistics in ERR (its
# stderr); NAME, when not empty, starts the verdict
alloc_lost_verdict() {
	local counted saw missed
	read -r counted saw missed < <(sed -n 's/^ctxprof-go: alloc: \([0-9]*\) sampled allocations counted, of \([0-9]*\) the probes saw; about \([0-9]*\) missed.*/\1 \2 \3/p' "$2")
	# (a budget's count may leave out the hit the kernel adds while user space refills it)
	if [ -n "${saw:-}" ] && [ "$counted" -ge "$saw" ] && [ "$missed" = 0 ]; then
		ok "${1:+$1: }every sampled allocation the probes saw is counted, none missed (the exit statistics): $counted of $saw"
	else
		not_ok "${1:+$1: }sampled allocations lost: $(grep '^ctxprof-go: alloc:' "$2")"
	fi
}

# alloc_verdicts NAME PID TRUTH RECORDS: testdata/allocs's process PID
# against what its own runtime.MemProfile counted (TRUTH, its -out), per
# function: the objects and bytes of RECORDS' alloc stacks that hold it
# within 2%, every such stack starting at it, its trace ID on them (none
# for main.allocUntraced), and the bytes of its trace's records within 2%
alloc_verdicts() {
	local name=$1 pid=$2 truth=$3 records=$4 f want_o want_b trace ours traced
	if ! jq -e .functions "$truth" >/dev/null 2>&1; then
		not_ok "$name: the program printed no truth"
		return
	fi
	echo "# $name: rate $(jq .rate "$truth")"
	for f in $ALLOC_FUNCS; do
		read -r want_o want_b trace < <(jq -r --arg f "$f" \
			'.functions[$f] | "\(.objects) \(.bytes) \(.trace_id // "null")"' "$truth")
		ours=$(jq -n --argjson pid "$pid" --arg f "$f" "$ALLOC_OURS_JQ" "$records")
		within2 "$name $f: objects" "$want_o" "$(jq .objects <<<"$ours")"
		within2 "$name $f: bytes" "$want_b" "$(jq .bytes <<<"$ours")"
		check_eq "$name $f: every stack starts at the allocating function" "[\"$f\"]" \
			"$(jq -c .leaves <<<"$ours")"
		if [ "$trace" = null ]; then
			check_eq "$name $f: untraced allocations carry no trace ID" '[null]' \
				"$(jq -c .traces <<<"$ours")"
			continue
		fi
		check_eq "$name $f: its allocations carry its trace ID" "[\"$trace\"]" \
			"$(jq -c .traces <<<"$ours")"
		traced=$(jq -n --argjson pid "$pid" --arg t "$trace" "$ALLOC_TRACED_JQ" "$records")
		within2 "$name trace $trace: bytes" "$want_b" "$(jq .bytes <<<"$traced")"
	done
}
