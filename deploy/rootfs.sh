#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rootfs.sh: the shared libraries programs load, copied into a root file system as this system has them.
#
# Sourced by deploy/image.sh (make image) and tests/container.sh.

# rootfs_libs ROOT FILE...: into ROOT, the libraries FILEs load (ldd) and
# those FILEs that are libraries themselves (libcurl, which ctxprof-go
# opens at run time), each as its soname's link and the file that names,
# in the directory /lib's links lead to; /lib and /lib64 as links into
# /usr where the system has them so (Debian 12 merges /usr), for the
# loader's absolute path. The libraries' paths on stdout.
rootfs_libs() {
	local root=$1 d lib real
	shift
	for d in lib lib64; do
		[ ! -L "/$d" ] || ln -sfn "$(readlink "/$d")" "$root/$d"
	done
	{
		for lib in "$@"; do
			case $lib in *.so | *.so.*) echo "$lib" ;; esac
		done
		# a static program has no libraries: ldd says so and fails
		ldd "$@" 2>/dev/null | awk '$NF ~ /:$/ { next }
			$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' || true
	} | while read -r lib; do
		echo "$(readlink -f "$(dirname "$lib")")/$(basename "$lib")"
	done | sort -u | while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -a "$lib" "$root$lib"
		real=$(readlink -f "$lib")
		[ "$real" = "$lib" ] || cp -a "$real" "$root$real"
		echo "$lib"
	done
}
