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
# usage: deploy/image.sh BINARY VERSION [OUTDIR]
set -euo pipefail
trap 'echo "make image: failed at deploy/image.sh:$LINENO: $BASH_COMMAND" >&2' ERR
. "$(dirname "$0")/rootfs.sh"

bin=${1:?usage: image.sh BINARY VERSION [OUTDIR]}
version=${2:?usage: image.sh BINARY VERSION [OUTDIR]}
out=${3:-.output/image}
name=localhost/ctxprof-go

command -v podman >/dev/null || {
	echo "make image needs podman: apt-get install podman" >&2
	exit 1
}
root=$out/root
rm -rf "$root"
mkdir -p "$root/usr/bin" "$root/tmp" "$root/etc/ssl/certs" "$root/usr/share/ctxprof-go"
chmod 1777 "$root/tmp"
install -m 0755 "$bin" "$root/usr/bin/ctxprof-go"

# the libraries: what the binary needs, and libcurl with what it needs
# (awk reads to the end: an early exit would fail ldconfig's write, and pipefail the script)
curl=$(ldconfig -p | awk '$1 == "libcurl.so.4" && /x86-64|AArch64/ && !n++ { print $NF }')
[ -n "$curl" ] || {
	echo "make image: libcurl.so.4 is not installed (libcurl4)" >&2
	exit 1
}
mapfile -t libs < <(rootfs_libs "$root" "$bin" "$curl")
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
echo 'root:x:0:0:root:/root:/usr/sbin/nologin' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"

# which Debian package each file came from (dpkg may know it by its
# path before /usr was merged)
owner() {
	local p
	for p in "$1" "${1#/usr}"; do
		dpkg -S "$p" 2>/dev/null | cut -d: -f1 && return 0
	done
	echo "make image: no Debian package holds $1" >&2
	return 1
}
for f in "${libs[@]}" /usr/share/ca-certificates; do
	owner "$(readlink -f "$f")"
done | sort -u >"$root/usr/share/ctxprof-go/packages"

tar --numeric-owner --owner=0 --group=0 -C "$root" -cf "$out/rootfs.tar" .
podman import --quiet \
	--change 'ENTRYPOINT ["/usr/bin/ctxprof-go"]' \
	--change 'CMD ["--all", "--metrics-addr", ":9464", "-o", "/dev/null"]' \
	--change 'ENV PATH=/usr/bin' \
	--change "LABEL org.opencontainers.image.title=ctxprof-go org.opencontainers.image.version=$version" \
	--change 'EXPOSE 9464' \
	"$out/rootfs.tar" "$name:$version" >/dev/null
podman tag "$name:$version" "$name:latest"
size=$(podman image inspect --format '{{.Size}}' "$name:latest")
echo "image $name:latest and $name:$version: $((size / 1024 / 1024)) MiB ($size bytes), ${#libs[@]} libraries from $(wc -l <"$root/usr/share/ctxprof-go/packages") Debian packages"
