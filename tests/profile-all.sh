#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-all.sh: ctxprof-go --all finds Go processes that start after it, of three Go versions, and nothing else.
#
# Builds: testdata/traced by the oldest installed toolchain (pure Go), a
# middle one (cgo, with C thread-locals) and the newest (stripped: offsets
# from the table, names from .gopclntab). ctxprof-go --all starts first and
# says it samples; only then do the three targets start, beside a busy shell
# loop (not Go), and another that was already running. Each target is checked
# as profile-e2e.sh checks one: no sample in a job's function with another
# job's trace ID, at least 97% with the right one. The shells give no record.
# The statistics say how many targets came and went, and -v gives each
# target's samples and traced share, which its records must hold.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "--all: Go processes that start during the run"

mapfile -t tcs < <(go_toolchains)
if [ "${#tcs[@]}" -eq 0 ]; then
	not_ok "no Go toolchain installed (make deps installs them)"
	done_testing
fi
# one toolchain may serve more than one variant on a machine that has few
variants=("${tcs[0]} plain" "${tcs[${#tcs[@]} / 2]} cgo" "${tcs[${#tcs[@]} - 1]} stripped")
declare -A bin_of
for b in "${variants[@]}"; do
	bin_of[$b]=$(go_build $b) || { not_ok "go$b: build failed"; done_testing; }
done
echo "# testdata/traced: ${variants[*]/#/go}"

# a busy process that is not Go, there before ctxprof-go starts
nice -n 10 sh -c 'while :; do :; done' &
busy_before=$!

ctxprof_start "$work/err" "$work/out.jsonl" --all -v -F 999 -i 1 -d 300
rc=$?
if [ "$rc" -ne 0 ]; then
	not_ok "ctxprof-go --all did not start (exit $rc): $(tr '\n' ' ' <"$work/err")"
	done_testing
fi
ok "ctxprof-go --all samples: $(grep 'Ctrl-C to stop' "$work/err")"

# now the targets, and a second busy shell, all after the start
pids=()
declare -A name_of
for b in "${variants[@]}"; do
	# niced: 18 spinning threads on 2 CPUs would starve ctxprof-go itself
	nice -n 10 "${bin_of[$b]}" -d 300s -workers 6 2>/dev/null &
	pids+=($!)
	name_of[$!]="go$b"
done
nice -n 10 sh -c 'while :; do :; done' &
busy_after=$!
echo "# targets ${pids[*]}, busy shells $busy_before and $busy_after"

enough() { jobs_enough 20 "${#pids[@]}" "$1"; }
samples_wait 5 120 enough "$work/out.jsonl"
kill "${pids[@]}" "$busy_before" "$busy_after" 2>/dev/null
# gone before the run ends: its statistics count them so
wait "${pids[@]}" 2>/dev/null
ctxprof_stop
rc=$?
check_eq "ctxprof-go --all exits after SIGINT" 0 "$rc"
echo "# sampled for $sampled s"
sed 's/^/# /' "$work/err" | head -n 40

if ! jq -e . "$work/out.jsonl" >/dev/null; then
	not_ok "output is not valid JSON lines"
	done_testing
fi
for pid in "${pids[@]}"; do
	jq -c --argjson pid "$pid" 'select(.pid == $pid)' "$work/out.jsonl" >"$work/p.jsonl"
	job_verdicts "${name_of[$pid]} (pid $pid)" "$work/p.jsonl" 20
done
for pid in "$busy_before" "$busy_after"; do
	n=$(jq -s --argjson pid "$pid" 'map(select(.pid == $pid)) | length' "$work/out.jsonl")
	check_eq "busy shell loop (pid $pid, not Go): records" 0 "$n"
done
# the statistics say how many targets came and went, and -v what each gave
line=$(grep -E '^ctxprof-go: [0-9]+ samples? from' "$work/err")
if [[ $line =~ from\ ([0-9]+)\ targets?\ \(([0-9]+)\ at\ the\ start,\ ([0-9]+)\ came,\ ([0-9]+)\ went\) ]] &&
	[ "${BASH_REMATCH[3]}" -ge "${#pids[@]}" ] && [ "${BASH_REMATCH[4]}" -ge "${#pids[@]}" ] &&
	[ "${BASH_REMATCH[1]}" = $((BASH_REMATCH[2] + BASH_REMATCH[3])) ]; then
	ok "the statistics say the targets came and went: ${line%%, [0-9]* (*}"
else
	not_ok "the statistics do not say how many targets came and went: $line"
fi
for pid in "${pids[@]}"; do
	js=$(jq -s --argjson p "$pid" 'map(select(.pid == $p and .origin == "sampling")) | "\(map(.samples) | add) samples"' -r "$work/out.jsonl")
	v=$(grep -E "^ctxprof-go: pid $pid \(traced\): [0-9]+ samples?, [0-9.]+% with a trace ID; gone$" "$work/err")
	if [ -n "$v" ] && [[ $v == *": $js,"* ]]; then
		ok "-v: ${name_of[$pid]}'s line: ${v#ctxprof-go: }"
	else
		not_ok "-v: no summary line for ${name_of[$pid]} (pid $pid, $js in the records): $(grep "pid $pid " "$work/err" | tail -n 1)"
	fi
done
done_testing
