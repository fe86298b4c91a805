#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# otlp.sh: make bench section 9: what --otlp costs, through a real collector: CPU, bytes per sample, one export of 10,000 records.
#
# Target: testdata/traced (newest Go, 2 busy workers). A collector built as
# in tests/otlp.sh forwards to the sink. Measured:
# - ctxprof-go's own CPU (user + sys) for 11 s at 999 Hz, records every
#   second, without and with --otlp, 3 rounds taking turns: the difference
#   is what encoding and sending cost;
# - bytes sent per sample, plain and gzip, beside the gzip pprof profile and
#   the JSON lines of the same run;
# - bytes per sample before and after OTLP took the shape Pyroscope files as
#   its own (issue 31: trace and span IDs in the link alone, CPU as counts),
#   the build of $OTLP_BASELINE (default 68d3d5c, the last commit before it)
#   and this one taking turns, 3 rounds of 11 s each, on testdata/traced and
#   on testdata/conventions -requests (60 requests a second, each with IDs
#   of its own);
# - one export of 10,000 records (the records of that run repeated, each a
#   trace of its own, in 16 processes): encoded, and sent to the collector
#   until it answers, median of 5 (tests/bench/otlp_encode.c).
# The collector passes profiles to its debug exporter only: what it costs
# is its receiving and decoding.
# Runs alone too: bash tests/bench/otlp.sh (after make bench's build).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../profile-lib.sh"
. "$(dirname "$0")/../otlp-lib.sh"

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
if ! otelcol_build; then
	echo "otlp bench: $otelcol_why" >&2
	exit 1
fi
v=$(go_toolchains | tail -n 1)
traced=$(go_build "$v" plain)
"$traced" -d 600s -workers 2 2>/dev/null &
tp=$!
# the collector's own work only: its debug exporter, no sink behind it
cport=$(free_port)
collector_start "$work" "$cport" - || { echo "otlp bench: the collector did not start" >&2; exit 1; }
url=http://127.0.0.1:$cport

# cpu_s ARGS...: user+sys seconds of an 11 s recording of the target at 999 Hz
cpu_s() {
	local TIMEFORMAT='%U %S' t
	t=$({ time "$CTXPROF" -p "$tp" -F 999 -d 11 -i 1 "$@" 2>"$work/run.err"; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, a, " "); print a[1] + a[2] }'
}
printf '\n9. --otlp at 999 Hz, records every second, through a collector 0.152 (%s)\n' "$($OTELCOL --version)"
: >"$work/cpu"
for r in 1 2 3; do
	without=$(cpu_s -o /dev/null)
	with=$(cpu_s -o /dev/null --otlp "$url")
	echo "$without $with" >>"$work/cpu"
	printf 'round %d: %.2f s of CPU without, %.2f s with --otlp\n' "$r" "$without" "$with"
done
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
wo=$(cut -d' ' -f1 "$work/cpu" | med)
wi=$(cut -d' ' -f2 "$work/cpu" | med)
awk -v a="$wo" -v b="$wi" 'BEGIN { printf "own CPU, medians: %.2f s without, %.2f s with: +%.1f ms a second (%.2f%% of one CPU)\n",
	a, b, (b - a) * 1000 / 11, (b - a) * 100 / 11 }'

# bytes per sample: one run written every way, and a gzip run
cpu_s -o "$work/r3.jsonl" --otlp "$url" --pprof "$work/r3.pb.gz" >/dev/null
line=$(grep '^ctxprof-go: otlp:' "$work/run.err")
samples=$(sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) bytes).*/\1/p' <<<"$line")
bytes=$(sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) bytes).*/\2/p' <<<"$line")
OTEL_EXPORTER_OTLP_COMPRESSION=gzip "$CTXPROF" -p "$tp" -F 999 -d 11 -i 1 -o /dev/null --otlp "$url" 2>"$work/gz.err"
gline=$(grep '^ctxprof-go: otlp:' "$work/gz.err")
gsamples=$(sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) bytes).*/\1/p' <<<"$gline")
gbytes=$(sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) bytes).*/\2/p' <<<"$gline")
awk -v s="$samples" -v b="$bytes" -v gs="$gsamples" -v gb="$gbytes" -v p="$(stat -c %s "$work/r3.pb.gz")" \
	-v j="$(stat -c %s "$work/r3.jsonl")" 'BEGIN {
	printf "bytes a sample, 11 requests of 1 s: OTLP %.1f (gzip %.1f); the same run as JSON lines %.1f, as one gzip pprof profile of the whole run %.1f\n",
		b / s, gb / gs, j / s, p / s }'

# before and after: the baseline's build, once, from git
base=${OTLP_BASELINE:-68d3d5c}
base_bin=$(baseline_build "$base" "$work/baseline-build.log") || exit 1
conv=$(go_build "$v" plain conventions)
mkfifo "$work/conv.in"
"$conv" -requests -workers 2 -burn 5ms <"$work/conv.in" >/dev/null 2>&1 &
cp=$!
exec 7>"$work/conv.in"
# 60 requests a second, for as long as the bench runs
(while sleep 0.5; do echo 30 >&7 || exit; done) &
# per_sample BINARY PID COMPRESSION: bytes sent per sample in 11 s at 999 Hz (none or gzip)
per_sample() {
	local line
	OTEL_EXPORTER_OTLP_COMPRESSION=$3 "$1" -p "$2" -F 999 -d 11 -i 1 -o /dev/null --otlp "$url" 2>"$work/ps.err"
	line=$(grep '^ctxprof-go: otlp:' "$work/ps.err")
	sed -n 's/.*(\([0-9]*\) samples, \([0-9]*\) bytes).*/\1 \2/p' <<<"$line" | awk '{ printf "%.1f\n", $2 / $1 }'
}
printf 'bytes a sample before (%s) and after, 11 s at 999 Hz, 3 rounds taking turns:\n' "$base"
: >"$work/ba"
for r in 1 2 3; do
	for w in traced:$tp requests:$cp; do
		for z in none gzip; do
			b=$(per_sample "$base_bin" "${w#*:}" "$z")
			a=$(per_sample "$CTXPROF" "${w#*:}" "$z")
			echo "${w%%:*} $z $b $a" >>"$work/ba"
		done
	done
done
for w in traced requests; do
	for z in none gzip; do
		b=$(awk -v w="$w" -v z="$z" '$1 == w && $2 == z { print $3 }' "$work/ba" | med)
		a=$(awk -v w="$w" -v z="$z" '$1 == w && $2 == z { print $4 }' "$work/ba" | med)
		awk -v w="$w" -v z="$z" -v b="$b" -v a="$a" 'BEGIN {
			printf "  %-8s %-5s before %6.1f, after %6.1f: %.2f of it (medians of 3)\n", w, z, b, a, a / b }'
	done
done
exec 7>&-
kill "$cp" 2>/dev/null || true

# one export of 10,000 records
"$OUTPUT/bench/otlp-encode" "$work/r3.jsonl" 10000 5 "$url" | sed 's/^/one export: /'
