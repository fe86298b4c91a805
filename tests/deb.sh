#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# deb.sh: `make deb` gives a package lintian finds no error in, that a fresh Debian 12 installs from its archive and purges without a trace.
#
# make deb writes .output/ctxprof-go_VERSION_amd64.deb: its files (the
# stripped binary, the gzipped page and the unit with /usr's paths, the
# DEP-5 copyright, the changelog), owned by root, and Depends naming the
# package of every library the binary loads (readelf's NEEDED, through
# ldconfig and dpkg -S) and libcurl4 (opened at run time by --otlp).
# lintian's output is shown; no E: line is allowed, and a copy of the
# package without its copyright must get one (the verdict rests on
# lintian speaking up). Then, as root, in an overlay of the fresh Debian
# 12 that tests/build-deps.sh builds in (fresh_root, tests/lib.sh),
# chrooted with /proc mounted: apt-get install ./the.deb pulls the Depends
# from the archive (the root's source is the machine's Debian URI),
# ctxprof-go --version and check on a Go program run, the page and the
# unit are there, nothing is enabled, dpkg --verify agrees; then, after an
# enable made as systemctl makes it and records written as the service
# writes them, apt-get purge leaves none of dpkg -L's files, no link, no
# record. Last, make deb ARCH=arm64 in a copy of the tree (this checkout's
# ./ctxprof-go stays x86's): an arm64 package, with the amd64 one's
# Depends, that lintian finds no error in.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
merged=$tmp/root
# unmounted before anything is removed: lazily if busy, never rm -rf through a mount
cleanup() {
	local m
	for m in "$merged/proc" "$merged"; do
		mountpoint -q "$m" 2>/dev/null && { umount "$m" 2>/dev/null || umount -l "$m"; }
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
for tool in dpkg-deb dpkg-shlibdeps lintian; do
	command -v "$tool" >/dev/null || { not_ok "$tool is missing (tests/deps.sh test installs it)"; done_testing; }
done
ver=$(cd "$TOP" && git describe --always --dirty 2>/dev/null || echo dev)

# lint NAME DEB: lintian's output as comments, and a verdict: no E: line
lint() {
	local out rc
	out=$(lintian --display-info --pedantic "$2" 2>&1)
	rc=$?
	sed 's/^/# /' <<<"$out"
	if [ "$rc" -le 1 ] && ! grep -q '^E: ' <<<"$out"; then
		ok "$1: lintian, no error ($(grep -c '^W: ' <<<"$out") warnings, $(grep -c '^[IP]: ' <<<"$out") notes)"
	else
		not_ok "$1: lintian exit $rc: $(grep '^E: ' <<<"$out" | tr '\n' ' ')"
	fi
}
# depends_names DEB: the packages of its Depends, sorted, one a line
depends_names() {
	dpkg-deb -f "$1" Depends | tr ',' '\n' | awk '{ print $1 }' | sort -u
}

# --- amd64: the package ---
deb=$OUTPUT/ctxprof-go_${ver}_amd64.deb
rm -f "$deb"
if out=$(make -C "$TOP" --no-print-directory deb 2>&1) && [ -s "$deb" ]; then
	ok "make deb: ${deb#"$TOP"/} ($(stat -c %s "$deb") bytes)"
else
	not_ok "make deb: no $deb: $(tail -n 5 <<<"$out")"
	done_testing
fi
check_eq "dpkg-deb -f: Package Architecture" "ctxprof-go amd64" \
	"$(dpkg-deb -f "$deb" Package Architecture | awk '{ printf "%s%s", sep, $2; sep = " " }')"
debversion=$(dpkg-deb -f "$deb" Version)
if [[ $debversion == 0~git*."${ver//-/+}" ]] && dpkg --validate-version "$debversion" 2>/dev/null; then
	ok "Version: $debversion, from git describe's $ver"
else
	not_ok "Version: '$debversion', want 0~gitDATE.${ver//-/+}"
fi
files=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { printf "%s%s %s %s", sep, $1, $2, $6; sep = "; " }')
want="-rw-r--r-- root/root ./lib/systemd/system/ctxprof-go.service; -rwxr-xr-x root/root ./usr/bin/ctxprof-go; \
-rw-r--r-- root/root ./usr/share/doc/ctxprof-go/changelog.gz; -rw-r--r-- root/root ./usr/share/doc/ctxprof-go/copyright; \
-rw-r--r-- root/root ./usr/share/man/man8/ctxprof-go.8.gz"
check_eq "dpkg-deb -c: the files, modes, owners" "$want" "$files"
x=$tmp/x
dpkg-deb -x "$deb" "$x"
check_eq "the packaged binary: --version" "$("$CTXPROF" --version 2>&1)" "$("$x/usr/bin/ctxprof-go" --version 2>&1)"
if readelf -S "$x/usr/bin/ctxprof-go" 2>/dev/null | grep -c ' \.symtab ' >/dev/null; then
	not_ok "the packaged binary has a symbol table: not stripped"
else
	ok "the packaged binary is stripped ($(stat -c %s "$x/usr/bin/ctxprof-go") bytes; ./ctxprof-go $(stat -c %s "$CTXPROF"))"
fi
got="$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$x/lib/systemd/system/ctxprof-go.service") $(zcat "$x/usr/share/man/man8/ctxprof-go.8.gz" |
	grep -c '^\.I /usr/bin/ctxprof-go$\|^\.I /lib/systemd/system/ctxprof-go.service$') $(zcat "$x/usr/share/man/man8/ctxprof-go.8.gz" | grep -c /usr/local/)"
check_eq "unit's ExecStart=, the page's FILES entries of /usr, its mentions of /usr/local" "/usr/bin/ctxprof-go 2 0" "$got"
copyright=$(cat "$x/usr/share/doc/ctxprof-go/copyright")
if [ "$(head -n 1 <<<"$copyright")" = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" ] &&
	grep -qE '^Copyright: [0-9]{4}(-[0-9]{4})? The ctxprof-go authors$' <<<"$copyright" &&
	[ "$(sed -n '/^Files: \*$/,/^$/ s/^License: //p' <<<"$copyright")" = GPL-2 ]; then
	ok "copyright: DEP-5, $(grep -m1 '^Copyright:' <<<"$copyright"), Files: * under License: GPL-2"
else
	not_ok "copyright: $(head -n 8 <<<"$copyright" | tr '\n' ' ')"
fi
check_eq "changelog.gz: its entry is the package's version" "ctxprof-go ($debversion) unstable; urgency=medium" \
	"$(zcat "$x/usr/share/doc/ctxprof-go/changelog.gz" | head -n 1)"

# Depends: the package of each library the binary needs, as this machine
# has them, and libcurl4 (which --otlp opens by name: no NEEDED entry)
needed=$(readelf -d "$x/usr/bin/ctxprof-go" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
# (dpkg may know a library by its path before /usr was merged)
libpkgs=$(while read -r so; do
	path=$(readlink -f "$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64/ { print $NF; exit }')")
	{ dpkg -S "$path" 2>/dev/null || dpkg -S "${path#/usr}" 2>/dev/null; } | sed 's/:.*//'
done <<<"$needed" | sort -u)
want=$(printf '%s\nlibcurl4\n' "$libpkgs" | sort -u)
check_eq "Depends: the packages of the $(wc -l <<<"$needed") NEEDED libraries, and libcurl4" \
	"$(tr '\n' ' ' <<<"$want")" "$(depends_names "$deb" | tr '\n' ' ')"
curl=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed -n 's/^ *\(libcurl4 .*\)/\1/p')
check_eq "Depends: libcurl4, as its shlibs file says" \
	"$(awk '$1 == "libcurl" && $2 == "4" { $1 = $2 = ""; sub(/^ +/, ""); print }' "$(dpkg-query --control-path libcurl4:amd64 shlibs)")" "$curl"
if grep -q 'dlopen(LIBCURL_SONAME' "$TOP/cmd/output/otlp_export.c" && ! grep -q libcurl <<<"$needed"; then
	ok "libcurl: opened by dlopen, not linked (no NEEDED entry): dpkg-shlibdeps cannot see it"
else
	not_ok "libcurl: the binary links it, or the source no longer opens it: Depends' libcurl4 needs a look"
fi

lint amd64 "$deb"
# the control: without its copyright file the package must get an E:
mkdir "$tmp/bad"
dpkg-deb -R "$deb" "$tmp/bad/tree"
rm "$tmp/bad/tree/usr/share/doc/ctxprof-go/copyright"
sed -i '/copyright$/d' "$tmp/bad/tree/DEBIAN/md5sums"
dpkg-deb --root-owner-group -b "$tmp/bad/tree" "$tmp/bad/ctxprof-go_${debversion}_amd64.deb" >/dev/null
bad=$(lintian "$tmp/bad/ctxprof-go_${debversion}_amd64.deb" 2>&1 | grep '^E: ')
if grep -q 'no-copyright-file' <<<"$bad"; then
	ok "lintian on a copy without the copyright file: $bad"
else
	not_ok "lintian on a copy without the copyright file says no error: the verdicts above prove nothing"
fi

# --- amd64: installed in a fresh Debian 12, then purged ---
in_root() { chroot "$merged" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"; }
if [ "$(id -u)" != 0 ]; then
	skip "apt-get install in a fresh Debian 12" "not root (chroot, mount)"
elif ! fresh_root; then
	skip "apt-get install in a fresh Debian 12" "no fresh Debian 12 root: $FRESH_ROOT_WHY"
else
	# an overlay: the shared root is not written to
	mkdir -p "$tmp/upper" "$tmp/work" "$merged"
	if ! mount -t overlay overlay -o "lowerdir=$FRESH_ROOT,upperdir=$tmp/upper,workdir=$tmp/work" "$merged" 2>"$tmp/mount.err"; then
		echo "# no overlay ($(cat "$tmp/mount.err")): a copy of the root"
		rmdir "$merged" && cp -a "$FRESH_ROOT" "$merged"
	fi
	mount -t proc proc "$merged/proc"
	# how this machine reaches the archive: its resolver and apt's Acquire settings
	cp /etc/resolv.conf "$merged/etc/resolv.conf"
	grep -l '^Acquire::' /etc/apt/apt.conf.d/* 2>/dev/null | xargs -r cp -t "$merged/etc/apt/apt.conf.d/"
	echo "# the root's apt source: $(grep -h '^deb ' "$merged/etc/apt/sources.list" | tr '\n' ' ')"
	before=$(in_root dpkg-query -W -f '${Package}\n' | sort)
	cp "$deb" "$merged/tmp/"
	go=$(go_build "$(go_toolchains | tail -n 1)" plain) && cp "$go" "$merged/tmp/traced"
	if in_root apt-get update -qq >"$tmp/apt.log" 2>&1 &&
		in_root sh -c "cd /tmp && apt-get install -y -q ./${deb##*/}" >>"$tmp/apt.log" 2>&1; then
		ok "apt-get install ./${deb##*/} in a fresh Debian 12: $(grep -c '^Setting up ' "$tmp/apt.log") packages set up"
	else
		not_ok "apt-get install ./${deb##*/}: $(tail -n 5 "$tmp/apt.log" | tr '\n' ' ')"
	fi
	after=$(in_root dpkg-query -W -f '${Package} ${Status}\n' | awk '$4 == "installed" { print $1 }' | sort)
	pulled=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
	missing=$(comm -23 <(depends_names "$deb") <(echo "$after") | tr '\n' ' ')
	if [ -z "$missing" ] && [[ " $pulled " == *" ctxprof-go "* ]] && [[ " $pulled " == *" libbpf1 "* ]]; then
		ok "every Depends is installed; apt pulled in: $pulled"
	else
		not_ok "Depends not installed: ${missing:-none}; pulled in: ${pulled:-nothing}"
	fi
	check_eq "ctxprof-go --version, installed" "$("$CTXPROF" --version 2>&1)" "$(in_root ctxprof-go --version 2>&1)"
	want=$("$CTXPROF" check --json "$merged/tmp/traced" 2>&1 | jq -c '{supported, offsets}')
	got=$(in_root ctxprof-go check --json /tmp/traced 2>&1 | jq -c '{supported, offsets}')
	if [ -n "$got" ] && [ "$got" = "$want" ] && [ "$(jq -r .supported <<<"$got")" = true ]; then
		ok "ctxprof-go check, installed, on testdata/traced: supported, the offsets ./ctxprof-go finds"
	else
		not_ok "ctxprof-go check, installed: '$got', want '$want'"
	fi
	if in_root ldconfig -p | grep -c 'libcurl\.so\.4 ' >/dev/null; then
		ok "libcurl.so.4, which --otlp opens, is there"
	else
		not_ok "libcurl.so.4 is not in the root's ld.so cache: --otlp would fail"
	fi
	page=$(in_root dpkg -L ctxprof-go | grep '/man8/')
	if [ "$page" = /usr/share/man/man8/ctxprof-go.8.gz ] && zcat "$merged$page" | grep -c '^\.TH CTXPROF\\-GO 8 ' >/dev/null; then
		ok "the man page: $page"
	else
		not_ok "the man page: '$page'"
	fi
	unit=/lib/systemd/system/ctxprof-go.service
	enabled=$(find "$merged/etc/systemd" -name 'ctxprof-go.service' 2>/dev/null)
	dsh=/var/lib/systemd/deb-systemd-helper-enabled
	if [ -f "$merged$unit" ] && [ -z "$enabled" ] && grep -q 'multi-user.target.wants/ctxprof-go.service' "$merged$dsh/ctxprof-go.service.dsh-also" 2>/dev/null; then
		ok "the unit: $unit, not enabled; deb-systemd-helper knows the link an enable makes"
	else
		not_ok "the unit: $(ls -l "$merged$unit" 2>&1); enabled: ${enabled:-no}; $(cat "$merged$dsh/ctxprof-go.service.dsh-also" 2>&1)"
	fi
	out=$(in_root dpkg --verify ctxprof-go 2>&1)
	[ -z "$out" ] && ok "dpkg --verify ctxprof-go: every file as md5sums says" || not_ok "dpkg --verify: $out"

	# the administrator enables it (systemctl's link) and it runs (its records)
	mkdir -p "$merged/etc/systemd/system/multi-user.target.wants" "$merged/var/log/ctxprof-go"
	ln -s "$unit" "$merged/etc/systemd/system/multi-user.target.wants/ctxprof-go.service"
	echo '{}' >"$merged/var/log/ctxprof-go/cpu.jsonl"
	listed=$(in_root dpkg -L ctxprof-go)
	if in_root apt-get purge -y -q ctxprof-go >"$tmp/purge.log" 2>&1; then
		ok "apt-get purge ctxprof-go"
	else
		not_ok "apt-get purge: $(tail -n 5 "$tmp/purge.log" | tr '\n' ' ')"
	fi
	# what is left: a directory only when another package has it too
	left=$(while read -r p; do
		[ "$p" = /. ] && continue
		[ -e "$merged$p" ] || [ -L "$merged$p" ] || continue
		[ -d "$merged$p" ] && in_root dpkg -S "$p" >/dev/null 2>&1 && continue
		printf '%s ' "$p"
	done <<<"$listed")
	for p in /etc/systemd/system/multi-user.target.wants/ctxprof-go.service /var/log/ctxprof-go \
		"$dsh/ctxprof-go.service.dsh-also"; do
		[ -e "$merged$p" ] || [ -L "$merged$p" ] && left+="$p "
	done
	status=$(in_root dpkg-query -W -f '${Status}' ctxprof-go 2>/dev/null || echo forgotten)
	if [ -z "$left" ] && [ "$(wc -l <<<"$listed")" -ge 10 ] && { [ "$status" = forgotten ] || [[ $status == *not-installed ]]; }; then
		ok "after the purge: none of dpkg -L's $(wc -l <<<"$listed") paths (but directories other packages have), no enable link, no records, no state; dpkg: $status"
	else
		not_ok "after the purge, left: ${left:-nothing}; dpkg: $status"
	fi
fi

# --- arm64, from a copy of the tree: its objects and sysroot in .output/arm64 ---
if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	not_ok "aarch64-linux-gnu-gcc is missing (make deps ARCH=arm64 installs it)"
	done_testing
fi
src=$tmp/src
# a clone for git describe; the files as they are, with their times, so
# that the objects in .output/arm64 stay current
git clone -q --no-checkout "$TOP" "$src" && (cd "$TOP" && git ls-files -z | tar --null -cf - -T -) | tar -xf - -C "$src" &&
	git -C "$src" reset -q
arm=$(realpath -m "$OUTPUT/arm64")
adeb=$src/.output/ctxprof-go_${ver}_arm64.deb
if make -C "$src" -j2 deb ARCH=arm64 OUTPUT="$arm" >"$tmp/arm64.log" 2>&1 && [ -s "$adeb" ]; then
	ok "make deb ARCH=arm64: ${adeb#"$src"/} ($(stat -c %s "$adeb") bytes)"
else
	not_ok "make deb ARCH=arm64: no ${adeb#"$src"/}: $(tail -n 5 "$tmp/arm64.log")"
	done_testing
fi
check_eq "dpkg-deb -I" "Architecture: arm64" "$(dpkg-deb -I "$adeb" | sed -n 's/^ *\(Architecture: .*\)/\1/p')"
dpkg-deb --fsys-tarfile "$adeb" | tar -xO ./usr/bin/ctxprof-go >"$tmp/arm64-bin"
what=$(readelf -h "$tmp/arm64-bin" 2>&1 | awk -F': *' '$1 ~ /Machine/ { print $2 }')
check_eq "the packaged binary's machine" AArch64 "$what"
check_eq "Depends of arm64 (the sysroot's symbols files) name the packages amd64's do" \
	"$(depends_names "$deb" | tr '\n' ' ')" "$(depends_names "$adeb" | tr '\n' ' ')"
echo "# arm64 Depends: $(dpkg-deb -f "$adeb" Depends)"
lint arm64 "$adeb"
done_testing
