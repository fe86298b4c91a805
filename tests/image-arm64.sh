#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# image-arm64.sh: make image ARCH=arm64 on this x86 machine gives an arm64 image of Debian's arm64 packages that holds all its binary loads.
#
# make image ARCH=arm64 on a copy of the tracked tree (./ctxprof-go stays
# this machine's; the objects and the sysroot are tests/arm64-build.sh's,
# in .output/arm64). Then: both tags (VERSION-arm64, latest-arm64) name
# one image, which podman says is linux/arm64; its root, exported
# (podman create, podman export), holds no shell, compiler or package
# manager; its /usr/bin/ctxprof-go is the build's AArch64 program; its
# loader (PT_INTERP) and the closure of the DT_NEEDED entries of the
# binary and of libcurl.so.4 (which --otlp opens) are in the image, each an
# AArch64 file; /usr/share/ctxprof-go/packages names exactly the packages
# that the sysroot's lists say its libraries came from, with
# ca-certificates, whose bundle is this system's. Run by
# qemu-aarch64-static with the image's root as its only library tree:
# --version, and check --json on an arm64 build of testdata/traced:
# supported, arch arm64. The README's podman manifest commands, run on
# this image and make image's amd64 one, make a list of linux/amd64 and
# linux/arm64 (pushed to an OCI directory, not a registry). The exported
# root stays in .output/arm64/image-root.tar: tests/arm64-vm.sh runs it,
# chrooted, in the emulated arm64 machine (sampling needs an arm64 kernel).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

start=$SECONDS
for tool in podman aarch64-linux-gnu-gcc qemu-aarch64-static readelf; do
	command -v "$tool" >/dev/null || { not_ok "$tool missing (make test installs it)"; done_testing; }
done
work=$(mktemp -d)
src=$work/src
list=localhost/ctxprof-test-list:$$
trap 'podman manifest rm "$list" >/dev/null 2>&1; rm -rf "$work"' EXIT
mkdir -p "$src" "$work/root"
(cd "$TOP" && git ls-files -z | tar --null -cf - -T -) | tar -xf - -C "$src"
arm=$(realpath -m "$OUTPUT/arm64")
# the copy has no .git: VERSION is "dev", as tests/arm64-build.sh's objects say
if make -C "$src" -j2 ARCH=arm64 OUTPUT="$arm" image >"$work/build.log" 2>&1; then
	ok "make image ARCH=arm64: $(grep '^image ' "$work/build.log")"
else
	not_ok "make image ARCH=arm64 failed: $(tail -n 5 "$work/build.log")"
	done_testing
fi
img=localhost/ctxprof-go:latest-arm64
check_eq "the tags dev-arm64 and latest-arm64 name one image" \
	"$(podman image inspect --format '{{.Id}}' localhost/ctxprof-go:dev-arm64 2>&1)" \
	"$(podman image inspect --format '{{.Id}}' "$img" 2>&1)"
check_eq "podman image inspect: the image's platform" "linux/arm64" \
	"$(podman image inspect --format '{{.Os}}/{{.Architecture}}' "$img" 2>&1)"

# --- its root ---
root=$work/root
cid=$(podman create "$img" 2>/dev/null) && podman export -o "$work/root.tar" "$cid" &&
	tar -xf "$work/root.tar" -C "$root" || not_ok "podman create and export of $img failed"
[ -z "${cid:-}" ] || podman rm "$cid" >/dev/null
found=$(cd "$root" && find . \( -type f -o -type l \) | grep -E '/(sh|bash|dash|busybox|apt|apt-get|dpkg|gcc|cc|clang|ld|go)$' | tr '\n' ' ')
check_eq "the image holds no shell, package manager or compiler" "" "$found"
bin=$root/usr/bin/ctxprof-go
cp "$bin" "$work/ctxprof-go" 2>/dev/null || not_ok "no /usr/bin/ctxprof-go in the image"
check_eq "the image's /usr/bin/ctxprof-go: an AArch64 ELF program" "ELF64 AArch64" \
	"$(readelf -h "$work/ctxprof-go" 2>&1 | awk -F': *' '$1 ~ /Class/ { c = $2 } $1 ~ /Machine/ { m = $2 } END { print c, m }')"
cmp -s "$work/ctxprof-go" "$src/ctxprof-go" && ok "the image's ctxprof-go is the build's, byte for byte" ||
	not_ok "the image's ctxprof-go differs from the build's $src/ctxprof-go"

# in_root PATH: PATH as the image resolves it (its links lead within it),
# on stdout when it is a file there
in_root() {
	local p=$1 t n=0
	while [ -L "$root$p" ] && [ "$n" -lt 40 ]; do
		t=$(readlink "$root$p")
		case $t in /*) p=$t ;; *) p=$(dirname "$p")/$t ;; esac
		p=$(realpath -m -s "$p")
		n=$((n + 1))
	done
	[ -f "$root$p" ] && echo "$p"
}
# the loader, then the DT_NEEDED closure of the binary and of libcurl,
# each found where the loader looks: the multiarch directories
interp=$(readelf -l "$work/ctxprof-go" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
check_eq "the program's loader" /lib/ld-linux-aarch64.so.1 "$interp"
todo=(libcurl.so.4)
mapfile -t -O 1 todo < <(readelf -d "$work/ctxprof-go" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
declare -A seen=()
missing='' wrong='' i=0 files=()
if p=$(in_root "$interp"); then
	files+=("$p")
else
	missing+="$interp "
fi
while [ "$i" -lt ${#todo[@]} ]; do
	lib=${todo[i]}
	i=$((i + 1))
	[ -z "${seen[$lib]:-}" ] || continue
	seen[$lib]=1
	p=$(in_root "/lib/aarch64-linux-gnu/$lib" || in_root "/usr/lib/aarch64-linux-gnu/$lib")
	if [ -z "$p" ]; then
		missing+="$lib "
		continue
	fi
	files+=("$p")
	readelf -h "$root$p" 2>/dev/null | grep -q 'Machine:.*AArch64' || wrong+="$p "
	mapfile -t -O ${#todo[@]} todo < <(readelf -d "$root$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
done
check_eq "every DT_NEEDED library of ctxprof-go and libcurl.so.4 (${#seen[@]}) is in the image; missing" "" "$missing"
check_eq "the loader and the libraries are AArch64 files; others" "" "$wrong"
check_eq "the CA bundle is this system's" same \
	"$(cmp -s "$root/etc/ssl/certs/ca-certificates.crt" /etc/ssl/certs/ca-certificates.crt && echo same || echo different)"
# each library file's package, by the sysroot's lists (dpkg's format)
owners=$(for p in "${files[@]}"; do
	grep -lxF -- "$p" "$arm"/sysroot/var/lib/dpkg/info/*.list 2>/dev/null | head -n 1 | sed 's|.*/||; s|\.list$||'
done)
check_eq "/usr/share/ctxprof-go/packages: the packages of its libraries (the sysroot's lists say), and ca-certificates" \
	"$( (echo ca-certificates; echo "$owners") | grep . | sort -u | tr '\n' ' ')" \
	"$(sort "$root/usr/share/ctxprof-go/packages" 2>&1 | tr '\n' ' ')"

# --- run from the image's root alone ---
a64() { qemu-aarch64-static -L "$root" "$bin" "$@"; }
# (the version the objects were compiled with: make does not recompile for VERSION)
out=$(a64 --version 2>&1)
if [[ $out =~ ^ctxprof-go\ [^\ ]+$ ]]; then
	ok "--version under qemu-aarch64, with the image's loader and libraries: $out"
else
	not_ok "--version under qemu-aarch64, with the image's loader and libraries: $out"
fi
newest=$(go_toolchains | tail -n 1)
if traced=$(go_build "$newest" arm64); then
	check_eq "check --json go$newest arm64 traced, with the image's libraries" \
		'{"arch":"arm64","supported":true,"problems":[]}' \
		"$(a64 check --json "$traced" 2>&1 | jq -c '{arch, supported, problems}' 2>&1)"
else
	not_ok "go$newest arm64 traced: build failed"
fi

# --- the README's manifest of both ---
if out=$(make -C "$TOP" --no-print-directory image 2>&1); then
	mapfile -t cmds < <(sed -n '/^## In Kubernetes/,/^## /p' "$TOP/README.md" | grep '^podman manifest ')
	check_eq "the README's podman manifest commands: create, add, push" "create add push" \
		"$(printf '%s\n' "${cmds[@]}" | awk '{ print $3 }' | tr '\n' ' ' | sed 's/ $//')"
	ok=1
	for c in "${cmds[@]}"; do
		# this test's list, pushed to a directory
		c=${c//ctxprof-go:multiarch/$list}
		c=${c//docker:\/\/\$REGISTRY\/ctxprof-go:latest/oci:$work/pushed}
		read -ra words <<<"$c"
		"${words[@]}" >"$work/manifest.log" 2>&1 || { ok=; not_ok "$c: $(tail -n 3 "$work/manifest.log")"; }
	done
	if [ -n "$ok" ]; then
		check_eq "the list the README's commands push: its platforms" "linux/amd64 linux/arm64" \
			"$(podman manifest inspect "$list" | jq -r '[.manifests[].platform | "\(.os)/\(.architecture)"] | sort | join(" ")')"
		# the directory's index names the list, a blob of it
		d=$(jq -r '.manifests[0].digest' "$work/pushed/index.json" 2>/dev/null)
		check_eq "what they pushed: a list of those platforms" "linux/amd64 linux/arm64" \
			"$(jq -r '[.manifests[].platform | "\(.os)/\(.architecture)"] | sort | join(" ")' \
				"$work/pushed/blobs/sha256/${d#sha256:}" 2>&1)"
	fi
else
	not_ok "make image (amd64, for the manifest) failed: $(tail -n 3 <<<"$out")"
fi

# for the emulated machine
cp "$work/root.tar" "$arm/image-root.tar.tmp" && mv "$arm/image-root.tar.tmp" "$arm/image-root.tar" ||
	not_ok "could not keep the image's root in $arm/image-root.tar"
echo "# image-arm64: $((SECONDS - start)) s; the root: $(stat -c %s "$work/root.tar") bytes, ${#files[@]} files loaded"
done_testing
