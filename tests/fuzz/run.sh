#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh: `make fuzz`: seeds each libFuzzer target from the testdata builds and runs it FUZZ_TIME seconds.
#
# Seeds: the .gopclntab section of testdata/traced from every installed
# toolchain and variant, and of Debian's gofmt. Crashes land in
# .output/fuzz/crashes; the run fails on any, and prints each target's
# executions so that they can be recorded.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

FUZZ_TIME=${FUZZ_TIME:-60}
dir=$OUTPUT/fuzz
mkdir -p "$dir/corpus/gopclntab" "$dir/crashes"
for v in $(go_toolchains); do
	for var in $GO_VARIANTS; do
		bin=$(go_build "$v" "$var") || continue
		for s in .gopclntab .data.rel.ro.gopclntab; do
			objcopy -O binary --only-section="$s" "$bin" "$dir/corpus/gopclntab/go$v-$var" 2>/dev/null &&
				[ -s "$dir/corpus/gopclntab/go$v-$var" ] && break
		done
	done
	objcopy -O binary --only-section=.gopclntab "/usr/lib/go-$v/bin/gofmt" \
		"$dir/corpus/gopclntab/gofmt-go$v" 2>/dev/null
done
status=0
for target in gopclntab; do
	echo "fuzz: $target for ${FUZZ_TIME}s, $(ls "$dir/corpus/$target" | wc -l) seeds" >&2
	"$dir/fuzz_$target" -max_total_time="$FUZZ_TIME" -print_final_stats=1 \
		-artifact_prefix="$dir/crashes/$target-" "$dir/corpus/$target" >"$dir/$target.log" 2>&1 || status=1
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$target.log")
	echo "fuzz: $target: ${execs:-0} executions, exit $status" >&2
done
exit $status
