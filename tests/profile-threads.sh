#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-threads.sh: under -p the sampler follows the target's threads, those made after the attach and past an exec, and runs on no other process's tick.
#
# testdata/threads (newest toolchain, plain) idles for 3 s, then makes four
# OS threads one after the other, each burning 1.5 s of CPU under a trace
# ID of its own (1.5 s of the thread's own CPU time), and execs its own
# executable, whose main burns as long under one more. ctxprof-go -p attaches during the idle time, at 99 Hz, with two
# busy shell loops beside it (other processes' ticks), and stops with the
# target. Checked:
# - each of the four late threads' trace IDs has at least 100 samples
#   (each burns 1.5 s of its own CPU time: 148 at 99 Hz), and so has the
#   exec'd program's;
# - the sampler's BPF program (kernel.bpf_stats_enabled) ran at most
#   10% more times than the samples the run took, plus 50: the busy loops'
#   ticks, about 99 a second each, never reach it.
# Then the same program in a cgroup of its own (no exec), under --all
# --cgroup with the loops outside it: its traced threads have at least
# 200 samples (4 s of CPU), and the sampler's runs are bounded as above.
# Last, the program moved out of the cgroup once added: it burns 4 x 1 s
# there unsampled, and ctxprof-go names it, with the CPU time it used
# (3.5 to 6 s), where the runs above name no target.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "threads made late, an exec, and other processes' ticks under -p"
newest=$(go_toolchains | tail -n 1)
bin=$(go_build "$newest" plain threads) || { not_ok "go$newest threads: build failed"; done_testing; }
mapfile -t traces < <(sed -n 's/^\t"\(7e4d[0-9a-f]*\)",$/\1/p' "$TOP/testdata/threads/main.go")
exec_trace=$(sed -n 's/^const execTrace = "\([0-9a-f]*\)"$/\1/p' "$TOP/testdata/threads/main.go")
[ "${#traces[@]}" -eq 4 ] && [ -n "$exec_trace" ] || { not_ok "testdata/threads: trace IDs not found"; done_testing; }

# runs_verdict WHAT: the sampler's runs against the samples of $work/out.jsonl
runs_verdict() {
	local samples
	samples=$(jq -s '[.[] | select(.origin == "sampling") | .samples] | add // 0' "$work/out.jsonl")
	if [ "$runs" -gt 0 ] && [ "$runs" -le $((samples * 11 / 10 + 50)) ]; then
		ok "$1: the sampler ran $runs times for $samples samples, with two busy loops beside: no tick of theirs"
	else
		not_ok "$1: the sampler ran $runs times for $samples samples: other processes' ticks reach it"
	fi
}
# watch_runs: the sampler's run count until ctxprof-go ends, in $runs
watch_runs() {
	runs=0
	while kill -0 "$ctxprof" 2>/dev/null; do
		n=$(sampler_runs "$ctxprof")
		[ -n "$n" ] && runs=$n
		sleep 0.2
	done
}
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -qw kernel.bpf_stats_enabled=1
trap 'sysctl -qw kernel.bpf_stats_enabled='"$old_stats"'; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for _ in 1 2; do
	(while :; do :; done) &
done
"$bin" -wait 3s -exec 2>"$work/threads.err" &
target=$!
ctxprof_start "$work/err" "$work/out.jsonl" -p "$target" -F 99
check_eq "ctxprof-go -p threads starts" 0 "$?"
# sampler_runs PID: the run count of the on_sample program that PID holds
# (its fdinfo names the program's ID and counts its runs)
sampler_runs() {
	local ids f
	ids=" $(bpftool prog show -j 2>/dev/null | jq -r '.[] | select(.name == "on_sample") | .id' | tr '\n' ' ')"
	for f in /proc/"$1"/fdinfo/*; do
		awk -v ids="$ids" '$1 == "prog_id:" && index(ids, " " $2 " ") { hit = 1 }
			$1 == "run_cnt:" { n = $2 } END { if (hit) print n }' "$f" 2>/dev/null
	done | sort -n | tail -n 1
}
watch_runs
wait "$ctxprof"
check_eq "ctxprof-go ends with its target, exit status" 0 "$?"
wait "$target"
check_eq "threads: exit status after its exec" 0 "$?"
sed 's/^/# /' "$work/err"

for t in "${traces[@]}" "$exec_trace"; do
	n=$(jq -s --arg t "$t" '[.[] | select(.trace_id == $t) | .samples] | add // 0' "$work/out.jsonl")
	what="a thread made after the attach"
	[ "$t" = "$exec_trace" ] && what="the program after its exec"
	if [ "$n" -ge 100 ]; then
		ok "trace $t ($what): $n samples"
	else
		not_ok "trace $t ($what): $n samples, need 100"
	fi
done
runs_verdict "-p"

# --all --cgroup: the events count the cgroup's tasks only
cg=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
if [ -z "$cg" ] || ! mkdir "$cg/ctxprof-threads.$$" 2>/dev/null; then
	skip "--cgroup: the sampler runs on the cgroup's ticks only" "no cgroup v2 directory can be made here"
	done_testing
fi
trap 'sysctl -qw kernel.bpf_stats_enabled='"$old_stats"'; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rmdir "$cg/ctxprof-threads.$$"; rm -rf "$work"' EXIT
sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" -wait 3s -burn 1s' sh "$cg/ctxprof-threads.$$" "$bin" 2>/dev/null &
target=$!
ctxprof_start "$work/err" "$work/out.jsonl" --all --cgroup "$cg/ctxprof-threads.$$" -F 99 -d 15
check_eq "ctxprof-go --all --cgroup starts" 0 "$?"
watch_runs
wait "$ctxprof"
check_eq "ctxprof-go --all --cgroup: exit status" 0 "$?"
n=$(jq -s --argjson p "$target" '[.[] | select(.pid == $p and .trace_id != null) | .samples] | add // 0' "$work/out.jsonl")
if [ "$n" -ge 200 ]; then
	ok "--cgroup: the target's traced threads: $n samples"
else
	not_ok "--cgroup: the target's traced threads: $n samples, need 200"
fi
runs_verdict "--all --cgroup"
if grep -q 'no sample taken' "$work/err"; then
	not_ok "--all --cgroup: a target that was sampled is named as not: $(grep 'no sample taken' "$work/err")"
else
	ok "--all --cgroup: no target is named as used CPU without a sample"
fi

# A target the sampler cannot see any more: moved out of the --cgroup
# after it was added, it burns 4 x 1 s there, and no sample of it is taken.
# That is said, with the CPU time it used (its own clock, from /proc).
sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" -wait 4s -burn 1s' sh "$cg/ctxprof-threads.$$" "$bin" 2>/dev/null &
target=$!
ctxprof_start "$work/err" "$work/out.jsonl" -v --all --cgroup "$cg/ctxprof-threads.$$" -F 99
check_eq "ctxprof-go --all --cgroup, the target moved out: starts" 0 "$?"
for _ in $(seq 1 100); do
	grep -q "pid $target (.*) added" "$work/err" && break
	sleep 0.1
done
echo "$target" >"$cg/cgroup.procs"
wait "$target"
# the loop finds it gone within a second
sleep 1
ctxprof_stop
check_eq "ctxprof-go --all --cgroup, the target moved out: exit status after SIGINT" 0 "$?"
n=$(jq -s --argjson p "$target" '[.[] | select(.pid == $p) | .samples] | add // 0' "$work/out.jsonl")
check_eq "the target moved out of the cgroup: samples" 0 "$n"
line=$(grep "warning: pid $target (threads): no sample taken" "$work/err")
cpu=$(sed -n 's/.* used \([0-9.]*\) s of CPU.*/\1/p' <<<"$line")
# its CPU time as the loop last read it while it lived, since it was
# added: on a loaded machine 3.14 s of the 4 once, 3.37 s another time
if [ -n "$line" ] && awk -v c="${cpu:-0}" 'BEGIN { exit !(c >= 3 && c <= 6) }'; then
	ok "a target that used CPU without a sample is named, with its CPU time: $line"
else
	not_ok "no warning of pid $target's unsampled CPU (4 s burnt): ${line:-$(grep -i warning "$work/err" | head -n 3)}"
fi
done_testing
