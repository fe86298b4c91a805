#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh: `make fuzz`: seeds each libFuzzer target from the testdata builds and runs it FUZZ_TIME seconds.
#
# Targets and their seeds, all from the testdata builds of every installed
# toolchain and variant:
# - gopclntab: their .gopclntab sections, and Debian's gofmt's;
# - buildinfo: their .go.buildinfo sections;
# - go_tls: the first bytes of their runtime.stackcheck (both load forms);
# - go_binary: whole stripped and plain builds (ELF, build info, DWARF
#   offsets, TLS, pclntab together); slow, as each input is megabytes;
# - objfile: the symbolizer's ELF reader, on a stripped Go build, libz and
#   ls (ELF symbols, build IDs, DWARF lines, .gopclntab);
# - rec: convert's reader, on testdata/records (every origin, a stack of
#   no frames): JSON lines, the schema, the pprof and folded writers, and
#   each record it takes written back and taken again.
# Crashes land in .output/fuzz/crashes; the run fails on any, and prints
# each target's executions and their total, so that they can be recorded.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

FUZZ_TIME=${FUZZ_TIME:-60}
dir=$OUTPUT/fuzz
mkdir -p "$dir/corpus/gopclntab" "$dir/corpus/buildinfo" "$dir/corpus/go_tls" \
	"$dir/corpus/go_binary" "$dir/corpus/objfile" "$dir/corpus/rec" "$dir/crashes"
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
	for var in plain cgo; do
		bin=$(go_build "$v" "$var") || continue
		objcopy -O binary --only-section=.go.buildinfo "$bin" "$dir/corpus/buildinfo/go$v-$var" 2>/dev/null
		addr=$("/usr/lib/go-$v/bin/go" tool nm "$bin" 2>/dev/null | awk '$3 ~ /^runtime\.stackcheck(\.abi0)?$/ { print $1; exit }')
		[ -n "$addr" ] && objdump -d --start-address=0x$addr --stop-address=$((0x$addr + 16)) "$bin" |
			awk -F'\t' '/^ +[0-9a-f]+:/ { print $2 }' | xxd -r -p >"$dir/corpus/go_tls/go$v-$var"
	done
done
# two whole binaries: one stripped (table offsets), one with DWARF
for b in "$(go_build "$(go_toolchains | head -n 1)" stripped)" "$(go_build "$(go_toolchains | tail -n 1)" plain)"; do
	cp "$b" "$dir/corpus/go_binary/$(basename "$(dirname "$(dirname "$b")")")-$(basename "$(dirname "$b")")"
done
cp "$(go_build "$(go_toolchains | tail -n 1)" stripped)" "$dir/corpus/objfile/traced-stripped"
cp "$(readlink -f /lib/x86_64-linux-gnu/libz.so.1)" /bin/ls "$dir/corpus/objfile/"
cp "$TOP"/testdata/records/*.jsonl "$dir/corpus/rec/"
status=0
total=0
for target in gopclntab buildinfo go_tls go_binary objfile rec; do
	echo "fuzz: $target for ${FUZZ_TIME}s, $(ls "$dir/corpus/$target" | wc -l) seeds" >&2
	# whole binaries are megabytes: libFuzzer would cut them at 1 MiB
	maxlen=()
	case $target in go_binary | objfile) maxlen=(-max_len=4194304 -rss_limit_mb=4096) ;; esac
	"$dir/fuzz_$target" -max_total_time="$FUZZ_TIME" -print_final_stats=1 "${maxlen[@]}" \
		-artifact_prefix="$dir/crashes/$target-" "$dir/corpus/$target" >"$dir/$target.log" 2>&1 || status=1
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/$target.log")
	echo "fuzz: $target: ${execs:-0} executions, exit $status" >&2
	total=$((total + ${execs:-0}))
done
echo "fuzz: $total executions in all" >&2
exit $status
