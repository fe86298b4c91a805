#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# convert.sh: make bench section 11: convert's time per MiB, on records heavy in labels, stacks or long strings, at two sizes.
#
# Inputs made from testdata/records (a real run of testdata/traced): its
# records as they are; records of 10,000 labels each; records of 10,000
# stacks each; records whose label values and function names are 200 KB
# long. Each at about 8 and 32 MiB. Measured: `convert --pprof`, `-f` and
# `--html`, median of 3, in ms per MiB. Linear means no more per MiB at
# the larger size: the bound is 1.5 times the smaller's, for every kind and
# output (it was quadratic in labels: 10,000 keys took 2.4 s to convert
# --pprof, 20,000 took 10.3 s).
# Runs alone too: bash tests/bench/convert.sh (after make bench's build).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median_of() { sort -n | awk '{ a[NR] = $1 } END { print (NR ? a[int((NR + 1) / 2)] : "none") }'; }
status=0

python3 - "$TOP/testdata/records/traced.jsonl" "$work" <<'EOF'
import json, sys
src, out = sys.argv[1:3]
recs = [json.loads(l) for l in open(src) if '"origin":"sampling"' in l]
base = recs[0]

def labels(i):
    r = dict(base, labels={f"k{j}": f"v{i}-{j}" for j in range(10000)}, truncated=[])
    return r

def stacks(i):
    st = base["stacks"][0]
    r = dict(base, samples=10000, cpu_ns=10000 * base["cpu_ns"] // base["samples"],
             stacks=[dict(st, samples=1, frames=[dict(f, addr=hex(int(f["addr"], 16) + k)) for f in st["frames"]],
                          times_us=[0], goids=[1]) for k in range(10000)])
    return r

def strings(i):
    st = base["stacks"][0]
    long = "x" * 200000
    r = dict(base, labels={"otel.traceid": base["trace_id"], f"big{i}": long + str(i)}, truncated=[],
             samples=st["samples"], cpu_ns=st["samples"] * base["cpu_ns"] // base["samples"],
             stacks=[dict(st, frames=[dict(f, func=f["func"] + long[:200000 - len(f["func"])] + str(i)) for f in st["frames"]])])
    return r

def plain(i):
    return recs[i % len(recs)]

for name, make in (("records", plain), ("labels", labels), ("stacks", stacks), ("strings", strings)):
    for mib in (8, 32):
        n, size = 0, 0
        with open(f"{out}/{name}-{mib}.jsonl", "w") as f:
            while size < mib << 20:
                line = json.dumps(make(n)) + "\n"
                f.write(line)
                size += len(line)
                n += 1
EOF

printf '\n11. convert: ms per MiB, median of 3, at about 8 and 32 MiB of input\n'
for kind in records labels stacks strings; do
	for out in pprof folded html; do
		line="$kind, $out:"
		per=()
		for mib in 8 32; do
			f=$work/$kind-$mib.jsonl
			size=$(stat -c %s "$f")
			: >"$work/t"
			for _ in 1 2 3; do
				t0=$EPOCHREALTIME
				rc=0
				case $out in
				pprof) "$CTXPROF" convert --pprof "$work/out" "$f" 2>"$work/err" || rc=$? ;;
				folded) "$CTXPROF" convert -f "$f" 2>"$work/err" >/dev/null || rc=$? ;;
				html) "$CTXPROF" convert --html "$work/out" "$f" 2>"$work/err" || rc=$? ;;
				esac
				if [ "$rc" -ne 0 ]; then
					printf '%s: convert failed (exit %s): %s\n' "$kind, $out" "$rc" "$(tail -n 1 "$work/err")"
					exit 1
				fi
				awk -v a="$t0" -v b="$EPOCHREALTIME" -v s="$size" 'BEGIN { printf "%.2f\n", (b - a) * 1000 / (s / 1048576) }' >>"$work/t"
			done
			per+=("$(median_of <"$work/t")")
			line+=" $(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }') MiB: ${per[-1]} ms/MiB;"
		done
		ratio=$(awk -v a="${per[0]}" -v b="${per[1]}" 'BEGIN { printf "%.2f", b / a }')
		printf '%s per MiB at 32 against 8: %s (must be <= 1.5)\n' "$line" "$ratio"
		awk -v r="$ratio" 'BEGIN { exit !(r <= 1.5) }' || status=1
	done
done
exit $status
