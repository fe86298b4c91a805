#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rootfs.sh: the shared libraries programs load, copied into a root file system as this system or a sysroot has them.
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

# rootfs_sysroot_libs ROOT SYSROOT PROGRAM [SONAME...]: as rootfs_libs, for
# a program of another architecture, whose libraries are those of SYSROOT
# (tests/arm64-sysroot.sh's Debian packages): ldd cannot run it, so its
# loader (PT_INTERP) and the closure of the DT_NEEDED entries of it and of
# SONAMEs (libraries it opens at run time: libcurl.so.4) are read with
# readelf and found in SYSROOT's library directories. Each goes into ROOT
# at SYSROOT's path for it, as its link and the file that names; each must
# be for PROGRAM's machine. The libraries' paths (in ROOT) on stdout; 1,
# saying why, when one is missing.
rootfs_sysroot_libs() {
	local root=$1 sysroot prog=$3 machine interp name dir path real i=0
	local -a todo dirs
	local -A seen=()
	sysroot=$(realpath "$2") || return 1
	shift 3
	machine=$(readelf -h "$prog" | sed -n 's/^ *Machine: *//p')
	interp=$(readelf -l "$prog" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
	mapfile -t dirs < <(cd "$sysroot" && ls -d lib/*-linux-gnu* usr/lib/*-linux-gnu* 2>/dev/null)
	todo=("$@")
	mapfile -t -O ${#todo[@]} todo < <(readelf -d "$prog" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
	[ -z "$interp" ] || todo+=("$interp")
	while [ "$i" -lt ${#todo[@]} ]; do
		name=${todo[i]}
		i=$((i + 1))
		[ -z "${seen[$name]:-}" ] || continue
		seen[$name]=1
		path=
		case $name in
		/*) [ -e "$sysroot$name" ] && path=$name ;;
		*)
			for dir in "${dirs[@]}"; do
				[ -e "$sysroot/$dir/$name" ] && path=/$dir/$name && break
			done
			;;
		esac
		if [ -z "$path" ]; then
			echo "rootfs: $name, which $prog needs, is not in $sysroot's ${dirs[*]:-library directories}" >&2
			return 1
		fi
		# the name, every link on the way (the sysroot's are relative) and the file
		real=$path
		while :; do
			mkdir -p "$root$(dirname "$real")" && cp -a "$sysroot$real" "$root$real" || return 1
			[ -L "$sysroot$real" ] || break
			real=$(realpath -m -s --relative-base="$sysroot" "$sysroot$(dirname "$real")/$(readlink "$sysroot$real")")
			case $real in
			/*)
				echo "rootfs: $sysroot$path leads out of $sysroot, to $real" >&2
				return 1
				;;
			esac
			real=/$real
		done
		if [ "$(readelf -h "$sysroot$real" 2>/dev/null | sed -n 's/^ *Machine: *//p')" != "$machine" ]; then
			echo "rootfs: $sysroot$real is not a library for $machine, as $prog is" >&2
			return 1
		fi
		echo "$path"
		mapfile -t -O ${#todo[@]} todo < <(readelf -d "$sysroot$real" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
	done
}
