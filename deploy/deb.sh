#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# deb.sh: `make deb`: the Debian package of make install's PREFIX=/usr tree, made with dpkg-dev's tools.
#
# usage: deploy/deb.sh TREE ARCH VERSION DEB [SYSROOT]
#
# TREE/debian/ctxprof-go holds what `make install DESTDIR=...
# PREFIX=/usr` put there: /usr/bin/ctxprof-go, ctxprof-go(8) and
# /lib/systemd/system/ctxprof-go.service (Debian 12's place for units).
# The binary is stripped (STRIP names the strip of ARCH's toolchain) and
# the page gzipped; the copyright (DEP-5) and a changelog.gz are written
# beside them, the maintainer scripts come from deploy/deb/. TREE is laid
# out as debhelper lays out a package being built (debian/control,
# debian/changelog, debian/ctxprof-go/DEBIAN), so that dpkg-shlibdeps,
# dpkg-gencontrol and dpkg-deb work on it as they would in a package's
# build.
#
# Depends: dpkg-shlibdeps on the binary, from the symbols files of the
# libraries it loads: the machine's own (dpkg's database) for amd64; for
# arm64, SYSROOT's (tests/arm64-sysroot.sh gathers the arm64 packages'
# symbols and shlibs files into SYSROOT/DEBIAN, which dpkg-shlibdeps -S
# reads as it reads a library package being built beside it). Plus
# libcurl4, which dpkg-shlibdeps cannot see: --otlp opens libcurl.so.4 at
# run time (dlopen, cmd/output/otlp_export.c). Its version is the one its
# shlibs file (the machine's, or SYSROOT's) gives: that of the headers the
# build compiled against.
#
# ARCH is Debian's (amd64, arm64); DEB is the package's file, named with
# VERSION (git describe). The package's Version is Debian's form of it: a
# commit hash need not start with a digit, and hashes do not sort in the
# order they were made, so it is 0~git, the commit's time (UTC), then
# VERSION with "-" as "+": 0~git20250520.120000.94588cd, a native
# package's version (no Debian revision). Maintainer: DEBFULLNAME and
# DEBEMAIL when set (dch's variables), else "The ctxprof-go authors" and
# the address of the commit's author.
set -euo pipefail
trap 'echo "make deb: failed at deploy/deb.sh:$LINENO: $BASH_COMMAND" >&2' ERR

usage="usage: deploy/deb.sh TREE ARCH VERSION DEB [SYSROOT]"
tree=${1:?$usage}
arch=${2:?$usage}
version=${3:?$usage}
deb=${4:?$usage}
# absolute: dpkg-shlibdeps runs in TREE
sysroot=${5:+$(realpath "$5")}
name=ctxprof-go
pkg=$tree/debian/$name
here=$(cd "$(dirname "$0")" && pwd)
die() {
	echo "make deb: $*" >&2
	exit 1
}

case $arch in
amd64 | arm64) ;;
*) die "ARCH $arch: the package is built for amd64 or arm64" ;;
esac
for tool in dpkg-shlibdeps dpkg-gencontrol dpkg-deb; do
	command -v "$tool" >/dev/null || die "$tool is missing: apt-get install dpkg-dev (make deps installs it)"
done
for f in usr/bin/$name usr/share/man/man8/$name.8 lib/systemd/system/$name.service; do
	[ -f "$pkg/$f" ] || die "$pkg/$f is missing: make install DESTDIR=$pkg PREFIX=/usr puts it there"
done
if [ -n "$sysroot" ] && [ ! -s "$sysroot/DEBIAN/symbols" ]; then
	die "$sysroot/DEBIAN/symbols is missing: rm $(dirname "$sysroot")/sysroot.mk, then make ARCH=arm64 fetches the sysroot again"
fi

# --- the version, the date, the maintainer: from the commit ---
if when=$(TZ=UTC0 git log -1 --format=%cd --date=format-local:%Y%m%d.%H%M%S 2>/dev/null) && [ -n "$when" ]; then
	debversion=0~git$when.${version//-/+}
	date=$(git log -1 --format=%cD)
	export SOURCE_DATE_EPOCH
	SOURCE_DATE_EPOCH=$(git log -1 --format=%ct)
	email=${DEBEMAIL:-$(git log -1 --format=%ae)}
	# the copyright notice's years: the first commit's to the last's
	years=$(git log --format=%cd --date=format:%Y | sort -u | sed -n '1h; $ { x; G; s/\n/-/; s/^\([0-9]*\)-\1$/\1/; p }')
else
	debversion=0~${version//-/+}
	date=$(date -R)
	email=${DEBEMAIL:-}
	years=$(date +%Y)
fi
[[ $debversion =~ ^0~[A-Za-z0-9.+~]+$ ]] || die "VERSION '$version' makes no Debian version ($debversion)"
[ -n "$email" ] || die "no maintainer address: set DEBEMAIL (not in a git checkout)"
maintainer="${DEBFULLNAME:-The ctxprof-go authors} <$email>"

# --- the files ---
"${STRIP:-strip}" --remove-section=.comment --remove-section=.note --strip-unneeded "$pkg/usr/bin/$name"
gzip -9nf "$pkg/usr/share/man/man8/$name.8"
doc=$pkg/usr/share/doc/$name
install -d -m 0755 "$doc" "$pkg/DEBIAN"
cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ctxprof-go

Files: *
Copyright: $years The ctxprof-go authors
License: GPL-2
Comment: Every source file says SPDX-License-Identifier: GPL-2.0 (version 2
 only). The BPF programs compiled into the binary declare the license
 "GPL" to the kernel.

Files: opentelemetry/proto/*
Copyright: 2019-2023 OpenTelemetry Authors
 2016 Google Inc.
License: Apache-2.0
Comment: The OTLP messages compiled into the binary are C code that
 protoc-c generates at build time from these .proto files of Debian's
 opentelemetry-proto package (profiles.proto includes Google's work).

License: GPL-2
 This program is free software; you can redistribute it and/or modify it
 under the terms of the GNU General Public License version 2 as published
 by the Free Software Foundation.
 .
 This program is distributed in the hope that it will be useful, but
 WITHOUT ANY WARRANTY; without even the implied warranty of
 MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE. See the GNU General
 Public License for more details.
 .
 On Debian systems, the complete text of the GNU General Public License
 version 2 can be found in "/usr/share/common-licenses/GPL-2".

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may
 not use this file except in compliance with the License. You may obtain
 a copy of the License at
 .
     https://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS,
 WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 See the License for the specific language governing permissions and
 limitations under the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0
 can be found in "/usr/share/common-licenses/Apache-2.0".
EOF
# a version without a Debian revision is a native package's: its
# changelog is changelog.gz
cat >"$tree/debian/changelog" <<EOF
$name ($debversion) unstable; urgency=medium

  * Built from $version with make deb.

 -- $maintainer  $date
EOF
gzip -9nc "$tree/debian/changelog" >"$doc/changelog.gz"
cat >"$tree/debian/control" <<EOF
Source: $name
Section: devel
Priority: optional
Maintainer: $maintainer
Rules-Requires-Root: no

Package: $name
Architecture: any
Depends: \${shlibs:Depends}, \${curl:Depends}
Description: CPU profiles of Go programs, keyed by OpenTelemetry trace ID
 ctxprof-go samples the CPU of running Go processes with eBPF and tags
 every sample with the trace ID of the request the goroutine serves: from
 its pprof labels, the traceparent of its HTTP or gRPC request, or the
 OpenTelemetry SDK's spans, with no change to the programs. It writes JSON
 lines keyed by trace ID, pprof, folded stacks, a report page and OTLP
 profiles; --wall and --alloc add wall-clock time and allocations.
 .
 The systemd unit ctxprof-go.service, which samples every Go process on
 the host into /var/log/ctxprof-go, is installed disabled: systemctl
 enable --now ctxprof-go starts it.
EOF
for s in postinst prerm postrm; do
	install -m 0755 "$here/deb/$s" "$pkg/DEBIAN/$s"
done

# --- Depends ---
rm -f "$tree/debian/substvars"
(
	cd "$tree"
	export DEB_HOST_ARCH=$arch
	dpkg-shlibdeps ${sysroot:+"-S$sysroot"} -e"debian/$name/usr/bin/$name"
)
# libcurl4: its shlibs file's dependency, the version of the headers the
# build compiled against. Not its symbols file's: that dates the
# functions (7.16.2), not the options the code sets (CURLOPT_PROTOCOLS_STR
# is 7.85's)
if [ -n "$sysroot" ]; then
	shlibs=$sysroot/DEBIAN/shlibs
else
	shlibs=$(dpkg-query --control-path "libcurl4:$arch" shlibs 2>/dev/null) ||
		die "libcurl4:$arch is not installed: its shlibs file names the libcurl4 --otlp needs (apt-get install libcurl4)"
fi
strings -a "$pkg/usr/bin/$name" | grep -x 'libcurl\.so\.4' >/dev/null ||
	die "the binary does not name libcurl.so.4: which libcurl does --otlp open? (cmd/output/otlp_export.c)"
curl=$(awk '$1 == "libcurl" && $2 == "4" { $1 = $2 = ""; sub(/^ +/, ""); print; exit }' "$shlibs")
[ -n "$curl" ] || die "$shlibs has no entry for libcurl.so.4"
echo "curl:Depends=$curl" >>"$tree/debian/substvars"

# --- the package ---
(
	cd "$tree"
	DEB_HOST_ARCH=$arch dpkg-gencontrol -p"$name" -P"debian/$name"
	# what dpkg --verify checks the installed files against
	cd "debian/$name"
	find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum >DEBIAN/md5sums
)
mkdir -p "$(dirname "$deb")"
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >/dev/null
