#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# image.sh: `make image`: ctxprof-go and the libraries it runs with, from this Debian system's packages, as an OCI image.
#
# No image registry is asked for anything: the root file system is made
# here and imported with Debian's podman. It holds /usr/bin/ctxprof-go,
# the shared libraries it loads (ldd), libcurl and the ones libcurl loads
# (--otlp opens it at run time), the dynamic loader, the CA bundle of
# ca-certificates for https collectors, /etc/passwd's root, and an empty
# /tmp: no shell, no compiler, no package manager. Each file's package is
# listed in /usr/share/ctxprof-go/packages (dpkg -S). The default command
# is the agent: every Go process (--all), OTLP to
# $OTEL_EXPORTER_OTLP_ENDPOINT, the counts on :9464/metrics, no JSON lines
# (-o /dev/null); logs on stderr. Arguments given to the container replace
# the command.
#
# With SYSROOT, BINARY is a cross build (make image ARCH=arm64): its
# libraries and loader are SYSROOT's, Debian's packages for its
# architecture (tests/arm64-sysroot.sh), found by their DT_NEEDED entries
# (ldd cannot run it), and each one's package is the one SYSROOT's lists
# say it came from; the CA bundle, data alike on every architecture, is
# this system's. Its tags say its architecture (latest-arm64, VERSION-arm64),
# so that both images can be pushed as one manifest.
#
# The image the tags named before is removed once no tag names it (each
# make image would otherwise leave one untagged); one a container still
# uses is kept, and said.
#
# usage: deploy/image.sh BINARY VERSION [OUTDIR [SYSROOT]]
set -euo pipefail
trap 'echo "make image: failed at deploy/image.sh:$LINENO: $BASH_COMMAND" >&2' ERR
. "$(dirname "$0")/rootfs.sh"

bin=${1:?usage: image.sh BINARY VERSION [OUTDIR [SYSROOT]]}
version=${2:?usage: image.sh BINARY VERSION [OUTDIR [SYSROOT]]}
out=${3:-.output/image}
sysroot=${4:-}
name=localhost/ctxprof-go

command -v podman >/dev/null || {
	echo "make image needs podman: apt-get install podman" >&2
	exit 1
}
# podman's name of the binary's architecture
machine=$(readelf -h "$bin" | sed -n 's/^ *Machine: *//p')
case $machine in
*X86-64) arch=amd64 ;;
AArch64) arch=arm64 ;;
*)
	echo "make image: $bin is for $machine, neither x86-64 nor AArch64" >&2
	exit 1
	;;
esac
suffix=
[ -z "$sysroot" ] || suffix=-$arch
root=$out/root
rm -rf "$root"
mkdir -p "$root/usr/bin" "$root/tmp" "$root/etc/ssl/certs" "$root/usr/share/ctxprof-go"
chmod 1777 "$root/tmp"
install -m 0755 "$bin" "$root/usr/bin/ctxprof-go"

# the libraries: what the binary needs, and libcurl with what it needs
if [ -n "$sysroot" ]; then
	rootfs_sysroot_libs "$root" "$sysroot" "$bin" libcurl.so.4 >"$out/libs"
	mapfile -t libs <"$out/libs"
else
	# (awk reads to the end: an early exit would fail ldconfig's write, and pipefail the script)
	curl=$(ldconfig -p | awk '$1 == "libcurl.so.4" && /x86-64|AArch64/ && !n++ { print $NF }')
	[ -n "$curl" ] || {
		echo "make image: libcurl.so.4 is not installed (libcurl4)" >&2
		exit 1
	}
	mapfile -t libs < <(rootfs_libs "$root" "$bin" "$curl")
fi
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
echo 'root:x:0:0:root:/root:/usr/sbin/nologin' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"

# which Debian package each file came from: this system's (dpkg may know
# it by its path before /usr was merged), or SYSROOT's lists of each
# package's files
owner() {
	local p
	if [ -n "$sysroot" ] && [ "${1#"$sysroot"}" != "$1" ]; then
		p=$(grep -lxF -- "${1#"$sysroot"}" "$sysroot"/var/lib/dpkg/info/*.list 2>/dev/null || true)
		p=${p%%$'\n'*}
		[ -z "$p" ] || { basename "$p" .list && return 0; }
	else
		for p in "$1" "${1#/usr}"; do
			dpkg -S "$p" 2>/dev/null | cut -d: -f1 && return 0
		done
	fi
	echo "make image: no Debian package holds $1" >&2
	return 1
}
sysroot=${sysroot:+$(realpath "$sysroot")}
for f in "${libs[@]}"; do
	owner "$(readlink -f "${sysroot:-}$f")"
done >"$out/packages"
owner /usr/share/ca-certificates >>"$out/packages"
sort -u "$out/packages" >"$root/usr/share/ctxprof-go/packages"

# the image the tags name now, to remove once they name the new one
old=()
for tag in "$version$suffix" "latest$suffix"; do
	old+=("$(podman image inspect --format '{{.Id}}' "$name:$tag" 2>/dev/null || true)")
done
tar --numeric-owner --owner=0 --group=0 -C "$root" -cf "$out/rootfs.tar" .
podman import --quiet --arch "$arch" \
	--change 'ENTRYPOINT ["/usr/bin/ctxprof-go"]' \
	--change 'CMD ["--all", "--metrics-addr", ":9464", "-o", "/dev/null"]' \
	--change 'ENV PATH=/usr/bin' \
	--change "LABEL org.opencontainers.image.title=ctxprof-go org.opencontainers.image.version=$version" \
	--change 'EXPOSE 9464' \
	"$out/rootfs.tar" "$name:$version$suffix" >/dev/null
podman tag "$name:$version$suffix" "$name:latest$suffix"
new=$(podman image inspect --format '{{.Id}}' "$name:latest$suffix")
for id in $(printf '%s\n' "${old[@]}" | sort -u); do
	# still named (an older VERSION's tag), or this one: kept
	[ "$id" != "$new" ] && [ "$(podman image inspect --format '{{len .RepoTags}}' "$id" 2>/dev/null)" = 0 ] || continue
	err=$(podman image rm "$id" 2>&1 >/dev/null) && continue
	case $err in
	*"in use by a container"*) err="a container uses it (podman image prune removes it once none does)" ;;
	esac
	echo "make image: the image before, ${id:0:12}, is kept: $err" >&2
done
size=$(podman image inspect --format '{{.Size}}' "$name:latest$suffix")
echo "image $name:latest$suffix and $name:$version$suffix ($arch): $((size / 1024 / 1024)) MiB ($size bytes), ${#libs[@]} libraries from $(wc -l <"$root/usr/share/ctxprof-go/packages") Debian packages"
