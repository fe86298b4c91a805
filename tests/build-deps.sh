#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# build-deps.sh: `make` on a machine that has none of the build's packages names what is missing, before it compiles anything.
#
# A minimal Debian 12 (debootstrap --variant=minbase, from the machine's own
# Debian URI, cached in .output/fresh-root: fresh_root in tests/lib.sh,
# shared with tests/deb.sh) with what a new machine ships
# (gcc, make, git) and nothing else of the build's: a clone of this tree in
# it, then `make`. It must stop at once (make's exit status 2), before any
# compiler runs, naming each missing tool and library with its Debian
# package (clang, bpftool, pkg-config, protoc-c, xxd, opentelemetry-proto)
# and `sudo make deps`; `make ARCH=arm64` adds the cross compiler and
# `sudo make deps ARCH=arm64`. The same check on this machine finds nothing
# missing, and `make deps` says it installs nothing. Needs root (chroot)
# and debootstrap.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ]; then
	skip "make on a machine without the build's packages" "not root (chroot)"
	done_testing
fi
check_eq "deps.sh check on this machine: nothing missing" "" "$(bash "$TOP/tests/deps.sh" check)"

if ! fresh_root; then
	not_ok "a fresh Debian 12 root: $FRESH_ROOT_WHY"
	done_testing
fi
root=$FRESH_ROOT
rm -rf "$root/src"
git clone -q "$TOP" "$root/src" || { not_ok "git clone into the chroot failed"; done_testing; }
# what the working tree has that a clone of HEAD would not: the tree as it is
(cd "$TOP" && git ls-files -z | tar --null -cf - -T -) | tar -xf - -C "$root/src"
chroot "$root" bash -c 'cd /src && make' >"$OUTPUT/fresh-root.make" 2>&1
rc=$?
out=$(cat "$OUTPUT/fresh-root.make")
check_eq "make with none of the build's packages: make's exit status" 2 "$rc"
for want in "clang (package clang)" "bpftool (package bpftool)" "pkg-config (package pkg-config)" \
	"protoc-c (package protobuf-c-compiler)" "xxd (package xxd)" \
	"process_context.proto (package opentelemetry-proto 1.11 or later, from sid)" "install them with: sudo make deps"; do
	grep -qF "$want" <<<"$out" && ok "make names what is missing: $want" || not_ok "make does not say '$want': $out"
done
if ! grep -qE '^  (CC|BPF|GEN|PROTOC|EMBED) ' <<<"$out" && [ -z "$(find "$root/src/.output" -name '*.o' 2>/dev/null | head -n 1)" ]; then
	ok "make stopped before compiling anything: $(head -n 1 <<<"$out" | cut -c1-160)"
else
	not_ok "make compiled before it said what was missing: $(head -n 5 <<<"$out" | tr '\n' ' ')"
fi
# the cross build asks for its compiler, and names the command that installs it (issue 44)
out=$(chroot "$root" bash -c 'cd /src && make ARCH=arm64' 2>&1)
for want in "aarch64-linux-gnu-gcc (package gcc-aarch64-linux-gnu)" "install them with: sudo make deps ARCH=arm64"; do
	grep -qF "$want" <<<"$out" && ok "make ARCH=arm64 names what is missing: $want" ||
		not_ok "make ARCH=arm64 does not say '$want': $out"
done
rm -rf "$root/src"
# and make deps, with nothing missing, says so
check_eq "make deps on this machine" "deps: nothing to install: the build has what it needs (ARCH=x86)" \
	"$(make -C "$TOP" --no-print-directory deps 2>&1)"
done_testing
