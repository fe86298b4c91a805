#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arm64-sysroot.sh: what `make ARCH=arm64` links and compiles against: Debian's arm64 libraries and the arm64 kernel's BTF.
#
# Usage: arm64-sysroot.sh OUTPUT. Fills OUTPUT/sysroot with bookworm's
# arm64 -dev packages of every library ctxprof-go links (and their
# closure, libc6 included), writes OUTPUT/vmlinux.btf, the BTF that Debian's
# arm64 kernel carries in its image (for the BPF programs' vmlinux.h), then
# OUTPUT/sysroot.mk, which the Makefile includes. The packages' symbols and
# shlibs files are gathered into OUTPUT/sysroot/DEBIAN, as a package build
# tree has its own: `make deb ARCH=arm64` reads its Depends from them
# (dpkg-shlibdeps -S, deploy/deb.sh). The packages come through
# an apt configuration of its own in OUTPUT/apt, whose source is the URI of
# the machine's own Debian entry: the machine's apt configuration, dpkg
# database and architectures are not touched. Each package's files are
# listed as dpkg lists them, in OUTPUT/sysroot/var/lib/dpkg/info/PACKAGE.list
# (the arm64 image's packages list, deploy/image.sh). A second run finds
# sysroot.mk, those lists and the symbols files and does nothing; a
# sysroot made before either was kept is made again (the kernel's BTF is
# kept).
set -euo pipefail

out=$(realpath -m "${1:?usage: arm64-sysroot.sh OUTPUT}")
apt=$out/apt
sysroot=$out/sysroot
[ -s "$out/sysroot.mk" ] && [ -s "$sysroot/DEBIAN/symbols" ] && [ -d "$sysroot/var/lib/dpkg/info" ] && exit 0
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# the machine's Debian mirror, from its deb822 or one-line source entry
mirror=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /debian\/?$/) { print $i; exit } }' \
	/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:.*debian\/?$/) { print $i; exit } }' \
	/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n 1)
[ -n "$mirror" ] || { echo "arm64-sysroot: no Debian source entry on this machine to take a mirror from" >&2; exit 1; }
mirror=${mirror%/}

echo "arm64-sysroot: bookworm arm64 packages from $mirror into $sysroot" >&2
rm -rf "$apt" "$sysroot"
mkdir -p "$apt"/etc/apt.conf.d "$apt"/etc/preferences.d "$apt"/etc/sources.list.d \
	"$apt"/state/lists/partial "$apt"/cache/archives/partial "$sysroot"
printf 'deb [arch=arm64 signed-by=%s] %s bookworm main\n' "$keyring" "$mirror" >"$apt/etc/sources.list"
printf 'deb [arch=arm64 signed-by=%s] %s bookworm-updates main\n' "$keyring" "$mirror" >>"$apt/etc/sources.list"
: >"$apt/state/status"
cat >"$apt/apt.conf" <<EOF
Dir::Etc "$apt/etc";
Dir::Etc::SourceList "$apt/etc/sources.list";
Dir::Etc::SourceParts "$apt/etc/sources.list.d";
Dir::Etc::Parts "$apt/etc/apt.conf.d";
Dir::Etc::PreferencesParts "$apt/etc/preferences.d";
Dir::Etc::TrustedParts "/usr/share/keyrings";
Dir::State "$apt/state";
Dir::State::status "$apt/state/status";
Dir::Cache "$apt/cache";
APT::Architecture "arm64";
APT::Architectures { "arm64"; };
APT::Install-Recommends "false";
EOF
export APT_CONFIG=$apt/apt.conf
apt-get -qq update
# an empty dpkg status: apt resolves the whole closure, libc6 included;
# -d only downloads, and dpkg-deb unpacks into the sysroot alone
apt-get -qq -y -d install libbpf-dev libelf-dev libdw-dev libjansson-dev zlib1g-dev \
	libprotobuf-c-dev libcurl4-openssl-dev libc6-dev >/dev/null
mkdir -p "$sysroot/DEBIAN"
: >"$sysroot/DEBIAN/symbols"
: >"$sysroot/DEBIAN/shlibs"
# each package's files, "/."-rooted paths as dpkg -S reads them from its lists
info=$sysroot/var/lib/dpkg/info
mkdir -p "$info"
for deb in "$apt"/cache/archives/*.deb; do
	dpkg-deb -x "$deb" "$sysroot"
	dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./|/|' -e 's|^/$|/.|' -e 's|/$||' \
		>"$info/$(dpkg-deb -f "$deb" Package).list"
	rm -rf "$apt/control"
	dpkg-deb -e "$deb" "$apt/control"
	for f in symbols shlibs; do
		[ ! -e "$apt/control/$f" ] || cat "$apt/control/$f" >>"$sysroot/DEBIAN/$f"
	done
done
rm -rf "$apt/control"
# absolute links (libz.so -> /lib/aarch64-linux-gnu/libz.so.1...) would name the host's files
find "$sysroot" -type l -lname '/*' | while read -r link; do
	ln -sfnr "$sysroot$(readlink "$link")" "$link"
done

# the arm64 kernel's BTF: Debian builds it in (CONFIG_DEBUG_INFO_BTF), in
# the image's .BTF data, which starts with its magic and a header giving
# its length. One extracted by a run before is kept.
kpkg=kept
if [ ! -s "$out/vmlinux.btf" ]; then
	kpkg=$(apt-cache depends linux-image-arm64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	(cd "$apt" && apt-get -qq download "$kpkg")
	mkdir -p "$apt/kernel"
	dpkg-deb -x "$apt"/"$kpkg"_*.deb "$apt/kernel"
	python3 - "$apt"/kernel/boot/vmlinuz-* "$out/vmlinux.btf" <<'EOF'
import gzip, struct, sys

data = open(sys.argv[1], "rb").read()
if data[:2] == b"\x1f\x8b":
    data = gzip.decompress(data)
best = None
at = data.find(b"\x9f\xeb\x01\x00")
while at >= 0:
    # magic 0xeb9f, version 1, flags 0; then hdr_len, type_off, type_len, str_off, str_len
    hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<IIIII", data, at + 4)
    total = hdr_len + str_off + str_len
    if (hdr_len == 24 and type_off == 0 and str_off == type_len and at + total <= len(data)
            and data[at + hdr_len + str_off] == 0 and (best is None or total > best[1])):
        best = (at, total)
    at = data.find(b"\x9f\xeb\x01\x00", at + 1)
if not best:
    sys.exit(f"arm64-sysroot: no BTF in {sys.argv[1]}")
open(sys.argv[2], "wb").write(data[best[0]:best[0] + best[1]])
EOF
fi
# the kernel's modules and the packages: half a GB no build reads
rm -rf "$apt/kernel" "$apt"/*.deb "$apt"/cache/archives/*.deb
echo "arm64-sysroot: $(du -sh "$sysroot" | cut -f1) of libraries, $(stat -c %s "$out/vmlinux.btf") bytes of BTF ($kpkg)" >&2
echo "# written by tests/arm64-sysroot.sh: the sysroot is complete" >"$out/sysroot.mk"
