#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# check-debian.sh: `check` on the stripped Go binaries Debian ships (no DWARF, no .symtab).
#
# For every installed toolchain, /usr/lib/go-1.NN/bin/gofmt and go must be
# supported, with offsets from the golayout table, and the version that the
# toolchain's own `go version` reads from them; --wall too, its goroutine
# list decoded from runtime.allgadd and its wait reasons found in .data. Runs with ./ctxprof-go and,
# when CTXPROF_SAN names it, the ASan+UBSan build.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

for v in $(go_toolchains); do
	for bin in /usr/lib/go-$v/bin/gofmt /usr/lib/go-$v/bin/go; do
		for c in "$CTXPROF" ${CTXPROF_SAN:+"$CTXPROF_SAN"}; do
			tag=""
			[ "$c" = "${CTXPROF_SAN:-}" ] && tag=" [asan+ubsan]"
			json=$("$c" check --json "$bin" 2>/tmp/ctxprof-check-debian.err)
			rc=$?
			if report=$(sanitizer_report /tmp/ctxprof-check-debian.err); then
				not_ok "$bin$tag: sanitizer report: $report"
				continue
			fi
			if [ $rc -ne 0 ]; then
				not_ok "$bin$tag: exit $rc: $json"
				continue
			fi
			want=$(go_version_of "$v" "$bin")
			got=$(jq -r '[.go_version, .source, .dwarf, .symtab, .labels_layout] | join(" ")' <<<"$json")
			layout=slice
			[ "${v#1.}" -le 23 ] && layout=map
			check_eq "$bin$tag: version source dwarf symtab labels" "$want table false false $layout" "$got"
			# --wall without symbols or DWARF: where each fact came from, and the
			# wait reasons are the release's (the table's, measured from its builds)
			got=$(jq -r '.wall | "\(.supported) \(.sources.offsets) \(.sources.goroutines) \(.sources.wait_reasons) \(.wait_reason_names[1])"' <<<"$json")
			check_eq "$bin$tag: --wall supported, its facts from" "true table code data GC assist marking" "$got"
		done
	done
done
rm -f /tmp/ctxprof-check-debian.err
done_testing
