#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench.sh: times `ctxprof-go check` against `pahole -C runtime.g` on cmd/compile, in one run.
#
# cmd/compile is built (once, cached in .output/bench) by the newest installed
# toolchain from its own sources: about 35 MB with compressed DWARF. Both
# tools read the same struct from the same file; each is run RUNS times and
# the median wall time is compared. Exits 1 if the ratio exceeds 0.5.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RUNS=${RUNS:-11}
v=$(go_toolchains | tail -n 1)
bin=$OUTPUT/bench/compile-go$v
if [ ! -x "$bin" ]; then
	echo "bench: building cmd/compile with go$v (about a minute, once)" >&2
	mkdir -p "$(dirname "$bin")"
	(cd "/usr/lib/go-$v/src" && "/usr/lib/go-$v/bin/go" build -o "$bin" cmd/compile)
fi

now() { date +%s%N; }
median_ms() { # median_ms CMD...: median wall time in ms over RUNS runs
	local i t0 t1
	for ((i = 0; i < RUNS; i++)); do
		t0=$(now)
		"$@" >/dev/null 2>&1
		t1=$(now)
		echo $(( (t1 - t0) / 1000 ))
	done | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f\n", a[int((NR + 1) / 2)] / 1000 }'
}

pahole -C runtime.g "$bin" 2>/dev/null | grep -q 'struct runtime.g {' ||
	{ echo "bench: pahole cannot read runtime.g from $bin" >&2; exit 1; }
"$CTXPROF" check "$bin" >/dev/null || true

size=$(stat -c %s "$bin")
check_ms=$(median_ms "$CTXPROF" check "$bin")
pahole_ms=$(median_ms pahole -C runtime.g "$bin")
ratio=$(awk -v a="$check_ms" -v b="$pahole_ms" 'BEGIN { printf "%.3f", a / b }')
printf 'binary:   %s (go%s cmd/compile, %.1f MB, DWARF compressed)\n' "$bin" "$v" "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')"
printf 'check:    %8.1f ms  (median of %d, ctxprof-go check)\n' "$check_ms" "$RUNS"
printf 'pahole:   %8.1f ms  (median of %d, pahole -C runtime.g)\n' "$pahole_ms" "$RUNS"
printf 'ratio:    %8.3f     (check / pahole; must be <= 0.5, aim 0.1)\n' "$ratio"
awk -v r="$ratio" 'BEGIN { exit !(r <= 0.5) }'
