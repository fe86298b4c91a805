#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-stripped.sh: frames of a stripped Go program get Go names and file:line from .gopclntab.
#
# Target: Debian's gofmt of the newest installed toolchain (no DWARF, no
# .symtab) formatting that toolchain's src/cmd tree, sampled at 999 Hz from
# its start (it waits, stopped, for ctxprof-go) until it exits. Of all
# sampled frames, at least 95% must have a Go name and at least 90% a
# file:line, and go/printer or go/parser frames must appear.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "stripped gofmt, profiled"
v=$(go_toolchains | tail -n 1)
gofmt=/usr/lib/go-$v/bin/gofmt
if readelf -SW "$gofmt" | grep -qE ' \.(symtab|debug_info) '; then
	not_ok "$gofmt is not stripped; the test needs Debian's stripped build"
	done_testing
fi
# gofmt is stopped from its first instant until ctxprof-go samples, which
# on a busy machine takes longer than gofmt's whole run
"$gofmt" -d -s "/usr/lib/go-$v/src/cmd" >/dev/null 2>&1 &
p=$!
until [ "$(readlink "/proc/$p/exe")" = "$(readlink -f "$gofmt")" ] || ! kill -0 "$p" 2>/dev/null; do
	:
done
kill -STOP "$p"
if ctxprof_start "$work/err" "$work/out.jsonl" -p "$p" -F 999 -d 600; then
	kill -CONT "$p"
	wait "$ctxprof"
	rc=$?
else
	rc=$?
	kill -CONT "$p"
fi
check_eq "ctxprof-go on gofmt (go$v) exits" 0 "$rc"
read -r total named lined parser < <(jq -s -r '
	[.[].stacks[] | .samples as $n | .frames[] |
	 {n: $n, named: (.func | test("^0x") | not), lined: (.file != null and .line > 0),
	  parser: (.func | test("^go/(printer|parser)\\."))}] |
	"\(map(.n) | add // 0) \(map(select(.named) | .n) | add // 0) \(map(select(.lined) | .n) | add // 0) \(map(select(.parser) | .n) | add // 0)"' \
	"$work/out.jsonl")
if [ "${total:-0}" -lt 1000 ]; then
	not_ok "gofmt (go$v): only ${total:-0} frames sampled"
	done_testing
fi
pn=$(( 1000 * named / total ))
pl=$(( 1000 * lined / total ))
[ "$pn" -ge 950 ] && ok "gofmt (go$v): $named of $total frames have Go names ($((pn / 10)).$((pn % 10))%)" ||
	not_ok "gofmt (go$v): $named of $total frames have Go names ($((pn / 10)).$((pn % 10))%), need 95%"
[ "$pl" -ge 900 ] && ok "gofmt (go$v): $lined of $total frames have file:line ($((pl / 10)).$((pl % 10))%)" ||
	not_ok "gofmt (go$v): $lined of $total frames have file:line ($((pl / 10)).$((pl % 10))%), need 90%"
[ "$parser" -gt 0 ] && ok "gofmt (go$v): $parser frames in go/printer or go/parser" ||
	not_ok "gofmt (go$v): no go/printer or go/parser frames"
done_testing
