#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# demo.sh: `make demo`: builds testdata/traced and runs check on it and on Debian's own Go binaries.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

v=$(go_toolchains | tail -n 1)
echo "== testdata/traced built by go$v, with DWARF and stripped"
plain=$(go_build "$v" plain)
stripped=$(go_build "$v" stripped)
cgo=$(go_build "$v" cgo)
"$CTXPROF" check "$plain" "$stripped" "$cgo" || true
echo
echo "== the same as JSON, for CI pipelines"
"$CTXPROF" check --json "$cgo" | jq .
echo
echo "== Debian's stripped Go binaries (no DWARF, no .symtab)"
"$CTXPROF" check /usr/lib/go-1.*/bin/gofmt || true
echo
echo "== not Go"
"$CTXPROF" check /bin/ls || true
