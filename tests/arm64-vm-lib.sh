#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# arm64-vm-lib.sh: runs a guest script in Debian bookworm's arm64 kernel under qemu TCG, with a busybox initramfs, and brings its files back.
#
# Sourced after lib.sh, not run. Two functions:
#
#   vm_prepare
#	makes sure $VM_DIR holds the arm64 kernel Image and a static arm64
#	busybox, fetched once through the private apt configuration of
#	tests/arm64-sysroot.sh ($OUTPUT/arm64/apt, made here if missing).
#	Nothing is downloaded when both are there. 0, or 1 saying why.
#
#   vm_run STAGE TIMEOUT OUTDIR
#	boots the kernel with an initramfs made of STAGE's tree (STAGE/test.sh
#	is the guest script; binaries anywhere, e.g. STAGE/bin), busybox, an
#	/init of ours and, for every dynamically linked arm64 ELF in STAGE,
#	its loader and the closure of its DT_NEEDED libraries out of
#	$OUTPUT/arm64/sysroot. /init mounts proc, sysfs, devtmpfs, debugfs,
#	tracefs and bpffs, brings lo up, runs `sh /test.sh` (cwd /, stdin
#	/dev/null; PATH has /bin, where busybox's applets are), which writes
#	its results under /out, and sends /out back over the serial console
#	(a gzipped tar in base64, with its sha256). OUTDIR then holds /out's
#	files and ours (reserved names):
#	  test.log    the script's stdout and stderr
#	  test.rc     its exit status (143: killed by the guest's own timeout)
#	  uptime      the guest's uptime in seconds when /test.sh started
#	  dmesg.txt   the guest's kernel log (the console is kept quiet)
#	  timings     key=value: cpio_s cpio_bytes init_uptime test_uptime
#	              end_uptime wall_s (also printed on stderr)
#	  console.log everything qemu printed, for diagnosis
#	Returns 0 when the files came back whole, whatever the script's exit
#	status (read test.rc); 1 on a qemu failure, a boot or run timeout, or
#	a missing or damaged transfer, saying which on stderr.
#	The guest kills test.sh at TIMEOUT - 30 s (at least 10 s), so that
#	what it wrote still comes back when it hangs.
#
# Settings (environment): VM_DIR (cache, $OUTPUT/arm64/vm), VM_SYSROOT
# ($OUTPUT/arm64/sysroot), VM_QEMU_EXTRA (more qemu arguments),
# VM_APPEND_EXTRA (more kernel arguments).

VM_DIR=${VM_DIR:-$OUTPUT/arm64/vm}
VM_SYSROOT=${VM_SYSROOT:-$OUTPUT/arm64/sysroot}
VM_APT=$OUTPUT/arm64/apt

# vm_apt ARGS...: apt-get with the private arm64 configuration. As root,
# apt would drop to _apt for downloads, which cannot write into our
# directories: a warning each time, so the download runs as root.
vm_apt() {
	APT_CONFIG=$VM_APT/apt.conf apt-get -q -o APT::Sandbox::User=root "$@"
}

# vm_since T0: seconds since T0, an $EPOCHREALTIME (awk: bc is not always there)
vm_since() {
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'
}

# vm_fetch_deb PACKAGE DIR: one arm64 .deb into DIR. The package lists are
# those of the last apt-get update: when the mirror has moved on (a new
# kernel ABI, a security update), the name or the file is gone, so update
# once and try again.
vm_fetch_deb() {
	local pkg=$1 dir=$2
	(cd "$dir" && vm_apt download "$pkg" >/dev/null 2>&1) && return 0
	vm_apt update >/dev/null 2>&1 || { echo "arm64-vm: apt-get update failed (private config $VM_APT/apt.conf)" >&2; return 1; }
	(cd "$dir" && vm_apt download "$pkg" >&2) && return 0
	echo "arm64-vm: cannot download $pkg through $VM_APT/apt.conf" >&2
	return 1
}

vm_prepare() {
	local tmp kpkg img start=$EPOCHREALTIME
	[ -s "$VM_DIR/Image" ] && [ -x "$VM_DIR/busybox" ] && return 0
	if ! command -v dpkg-deb >/dev/null; then
		echo "arm64-vm: dpkg-deb missing" >&2
		return 1
	fi
	# the private apt configuration comes with the sysroot, which vm_run
	# needs anyway for dynamically linked programs
	if [ ! -s "$VM_APT/apt.conf" ]; then
		bash "$TOP/tests/arm64-sysroot.sh" "$OUTPUT/arm64" >&2 || {
			echo "arm64-vm: tests/arm64-sysroot.sh failed: no private apt configuration" >&2
			return 1
		}
	fi
	mkdir -p "$VM_DIR" || return 1
	tmp=$(mktemp -d "$VM_DIR/fetch.XXXXXX") || return 1
	# the metapackage names the current ABI's image package
	kpkg=$(APT_CONFIG=$VM_APT/apt.conf apt-cache depends linux-image-arm64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	if [ -z "$kpkg" ]; then
		vm_apt update >/dev/null 2>&1
		kpkg=$(APT_CONFIG=$VM_APT/apt.conf apt-cache depends linux-image-arm64 2>/dev/null |
			awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	fi
	if [ -z "$kpkg" ]; then
		echo "arm64-vm: linux-image-arm64 names no kernel package in $VM_APT" >&2
		rm -rf "$tmp"
		return 1
	fi
	if ! vm_fetch_deb "$kpkg" "$tmp" || ! vm_fetch_deb busybox-static "$tmp"; then
		rm -rf "$tmp"
		return 1
	fi
	# only the image out of the package: its 350 MB of modules are never used
	# (everything the guest needs is built in: BPF, perf, BTF, tracefs)
	mkdir -p "$tmp/k" "$tmp/bb"
	dpkg-deb --fsys-tarfile "$tmp/$kpkg"_*.deb | tar -x -C "$tmp/k" --wildcards './boot/vmlinuz-*'
	dpkg-deb --fsys-tarfile "$tmp"/busybox-static_*.deb | tar -x -C "$tmp/bb" ./bin/busybox
	img=$(find "$tmp/k/boot" -name 'vmlinuz-*' | head -n 1)
	if [ -z "$img" ] || [ ! -s "$tmp/bb/bin/busybox" ]; then
		echo "arm64-vm: no /boot/vmlinuz-* in $kpkg or no /bin/busybox in busybox-static" >&2
		rm -rf "$tmp"
		return 1
	fi
	# Debian's arm64 image is an uncompressed Image today; should a later
	# one be gzipped, -kernel is given the plain Image all the same
	if [ "$(head -c 2 "$img" | od -An -tx1 | tr -d ' ')" = 1f8b ]; then
		gzip -dc "$img" >"$tmp/Image" || { rm -rf "$tmp"; return 1; }
	else
		mv "$img" "$tmp/Image"
	fi
	if ! { mv "$tmp/bb/bin/busybox" "$VM_DIR/busybox" && mv "$tmp/Image" "$VM_DIR/Image"; }; then
		rm -rf "$tmp"
		return 1
	fi
	printf '%s\n' "$(basename "$tmp/$kpkg"_*.deb .deb)" "$(basename "$tmp"/busybox-static_*.deb .deb)" >"$VM_DIR/versions"
	rm -rf "$tmp"
	printf 'arm64-vm: fetched %s in %.1f s\n' "$(tr '\n' ' ' <"$VM_DIR/versions")" \
		"$(vm_since "$start")" >&2
}

# vm_elf_closure ROOT: for every arm64 ELF in ROOT that names an
# interpreter or shared libraries, copies them (the closure of DT_NEEDED)
# from the sysroot into ROOT, at the paths the sysroot has them, so that
# the guest's loader finds them in its default directories.
vm_elf_closure() {
	local root=$1 f lib p dir found interp
	local -a todo=()
	local -A seen=()
	while IFS= read -r -d '' f; do
		[ "$(head -c 4 "$f" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] || continue
		readelf -h "$f" 2>/dev/null | grep -q 'Machine:.*AArch64' || continue
		interp=$(readelf -l "$f" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
		if [ -n "$interp" ] && [ -z "${seen[$interp]:-}" ]; then
			seen[$interp]=1
			if [ ! -e "$VM_SYSROOT$interp" ]; then
				echo "arm64-vm: ${f#"$root"}: its loader $interp is not in $VM_SYSROOT" >&2
				return 1
			fi
			mkdir -p "$root$(dirname "$interp")" && cp -L "$VM_SYSROOT$interp" "$root$interp" || return 1
		fi
		todo+=("$f")
	done < <(find "$root" -type f -print0)
	# breadth first over the NEEDED entries of the programs, then of the
	# libraries they bring
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for lib in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			[ -n "${seen[$lib]:-}" ] && continue
			seen[$lib]=1
			found=
			for dir in /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu; do
				p=$VM_SYSROOT$dir/$lib
				[ -e "$p" ] || continue
				mkdir -p "$root$dir" && cp -L "$p" "$root$dir/$lib" || return 1
				todo+=("$root$dir/$lib")
				found=1
				break
			done
			if [ -z "$found" ]; then
				echo "arm64-vm: ${f#"$root"} needs $lib, which is not in $VM_SYSROOT/{,usr/}lib/aarch64-linux-gnu" >&2
				return 1
			fi
		done
	done
}

# vm_init NONCE GUEST_TIMEOUT: the initramfs's /init. Every line the host
# reads starts with @@vm-NONCE, a new random one each run: nothing the
# guest script prints can pass for one.
vm_init() {
	cat <<EOF
#!/bin/busybox sh
# /init, written by tests/arm64-vm-lib.sh
M=@@vm-$1
T=$2
EOF
	cat <<'EOF'
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
# the loader finds them there by itself; this is for programs that dlopen
export LD_LIBRARY_PATH=/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu
export HOME=/root TMPDIR=/tmp
mkdir -p /proc /sys /dev /tmp /root /out /run
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t bpf bpf /sys/fs/bpf
# no NIC (-nic none), but the loopback, for servers and clients inside
ip link set lo up
# quiet and loglevel=0 on the command line already; this also covers
# anything that raises the level later. Kernel lines in the middle of the
# transfer would corrupt it (the host checks its sha256 all the same).
dmesg -n 1
echo "$M init $(cut -d' ' -f1 /proc/uptime)"
cd /
cut -d' ' -f1 /proc/uptime >/tmp/uptime
echo "$M test $(cat /tmp/uptime)"
# The script's output goes to a file, and from there to the console too
# (tail -f, best effort, a second late), so that a run the host has to
# kill still shows how far it got. Not through a pipe: whatever the script
# leaves running in the background would hold the pipe open, and /init
# would wait for it even after the timeout.
: >/tmp/test.log
tail -f /tmp/test.log &
timeout "$T" sh /test.sh </dev/null >/tmp/test.log 2>&1
echo $? >/tmp/test.rc
end=$(cut -d' ' -f1 /proc/uptime)
# what the script left running, tail included: nothing may write to /out
# or the console while they are sent (as PID 1, kill -1 spares us)
kill -KILL -1 2>/dev/null
echo "$M done $end"
dmesg >/tmp/dmesg.txt
cp /tmp/test.log /tmp/test.rc /tmp/uptime /tmp/dmesg.txt /out/
tar -C /out -czf /tmp/out.tgz .
echo "$M begin $(sha256sum /tmp/out.tgz | cut -d' ' -f1) $(wc -c </tmp/out.tgz)"
base64 /tmp/out.tgz
echo "$M end"
sync
poweroff -f
EOF
}

# vm_mark LOG NONCE WORD: the two fields after the guest's marker WORD
# (the serial line ends lines with CR LF)
vm_mark() {
	tr -d '\r' <"$1" | awk -v m="@@vm-$2" -v w="$3" '$1 == m && $2 == w { print $3 (NF > 3 ? " " $4 : ""); exit }'
}

# vm_unpack LOG NONCE OUTDIR: the gzipped tar of /out, in base64 between
# the begin and end markers of LOG, checked against the sha256 the guest
# sent and unpacked into OUTDIR. 1, saying why, when it is missing, cut
# short or damaged.
vm_unpack() {
	local log=$1 nonce=$2 outdir=$3 sum size got tgz=$3/.out.tgz
	read -r sum size <<<"$(vm_mark "$log" "$nonce" begin)"
	if [ -z "$sum" ]; then
		echo "arm64-vm: no begin marker: the guest stopped before sending /out (test.sh done: $(vm_mark "$log" "$nonce" "done" | grep . || echo no)); console: $log" >&2
		return 1
	fi
	if ! tr -d '\r' <"$log" | awk -v m="@@vm-$nonce" '$1 == m && $2 == "end" { found = 1 } END { exit !found }'; then
		echo "arm64-vm: no end marker: the transfer of /out was cut short; console: $log" >&2
		return 1
	fi
	tr -d '\r' <"$log" | awk -v m="@@vm-$nonce" '$1 == m && $2 == "begin" { on = 1; next } $1 == m && $2 == "end" { exit } on' |
		base64 -d >"$tgz" 2>/dev/null
	got=$(sha256sum "$tgz" | cut -d' ' -f1)
	if [ "$got" != "$sum" ]; then
		echo "arm64-vm: /out came back damaged ($(stat -c %s "$tgz") of $size bytes, sha256 $got, sent $sum): kernel messages on the console?; console: $log" >&2
		rm -f "$tgz"
		return 1
	fi
	tar -xzf "$tgz" -C "$outdir" --no-same-owner || { rm -f "$tgz"; return 1; }
	rm -f "$tgz"
}

# vm_stage STAGE A64: STAGE/bin/ctxprof-go (the arm64 build A64) and, in
# STAGE/t, testdata/traced by the oldest and the newest toolchain, pure and
# cgo (traced-goV-pure, traced-goV--cgo: a process's comm is its file's
# name). 1, saying why on stdout, when something is missing.
vm_stage() {
	local stage=$1 a64=$2 v var bin name
	if [ ! -x "$a64" ]; then
		echo "no arm64 ctxprof-go at $a64 (tests/arm64-build.sh builds it)"
		return 1
	fi
	mkdir -p "$stage/bin" "$stage/t" && cp "$a64" "$stage/bin/ctxprof-go" || return 1
	for v in $(go_toolchains | sed -n '1p;$p' | sort -u); do
		for var in arm64 arm64-cgo; do
			bin=$(go_build "$v" "$var") || { echo "go$v $var: build failed"; return 1; }
			name=traced-go$v-${var#arm64}
			[ "$name" = "${name%-}" ] || name=${name}pure
			cp "$bin" "$stage/t/$name" || return 1
		done
	done
}

vm_run() {
	local stage=${1:?vm_run STAGE TIMEOUT OUTDIR} timeout=${2:?} outdir=${3:?}
	local work root nonce cpio gt start t0 rc log size init_up test_up end_up wall cpio_s
	if [ ! -f "$stage/test.sh" ]; then
		echo "arm64-vm: $stage/test.sh missing" >&2
		return 1
	fi
	if [ ! -s "$VM_DIR/Image" ] || [ ! -x "$VM_DIR/busybox" ]; then
		echo "arm64-vm: no kernel or busybox in $VM_DIR: call vm_prepare first" >&2
		return 1
	fi
	command -v qemu-system-aarch64 >/dev/null || { echo "arm64-vm: qemu-system-aarch64 missing (Debian package qemu-system-arm)" >&2; return 1; }
	command -v cpio >/dev/null || { echo "arm64-vm: cpio missing" >&2; return 1; }
	mkdir -p "$outdir" || return 1
	outdir=$(realpath "$outdir")
	log=$outdir/console.log
	work=$(mktemp -d) || return 1
	root=$work/root
	start=$EPOCHREALTIME

	# the initramfs: the caller's tree, busybox, the libraries, /init
	if ! { mkdir -p "$root/bin" && cp -a "$stage/." "$root/" && cp "$VM_DIR/busybox" "$root/bin/busybox" &&
		vm_elf_closure "$root"; }; then
		echo "arm64-vm: could not make the initramfs's tree out of $stage" >&2
		rm -rf "$work"
		return 1
	fi
	nonce=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
	gt=$((timeout - 30))
	[ "$gt" -lt 10 ] && gt=10
	vm_init "$nonce" "$gt" >"$root/init"
	chmod 0755 "$root/init"
	cpio=$work/initrd.cpio
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet >"$cpio") || {
		echo "arm64-vm: cpio failed" >&2
		rm -rf "$work"
		return 1
	}
	cpio_s=$(vm_since "$start")
	size=$(stat -c %s "$cpio")
	printf 'arm64-vm: initramfs %.1f MB in %.1f s\n' "$(awk -v b="$size" 'BEGIN { print b / 1048576 }')" "$cpio_s" >&2

	t0=$EPOCHREALTIME
	# -nic none: without ipxe-qemu (a Recommends) qemu cannot find the
	# virtio NIC's ROM; panic=-1 and -no-reboot make a panic end qemu.
	# VM_QEMU_EXTRA is split into words on purpose.
	# shellcheck disable=SC2086
	timeout "$timeout" qemu-system-aarch64 -M virt -accel tcg,thread=multi -cpu max,pauth-impdef=on \
		-smp 2 -m 2048 -nographic -no-reboot -nic none \
		-kernel "$VM_DIR/Image" -initrd "$cpio" \
		-append "console=ttyAMA0 rdinit=/init panic=-1 quiet loglevel=0 ${VM_APPEND_EXTRA:-}" \
		${VM_QEMU_EXTRA:-} </dev/null >"$log" 2>&1
	rc=$?
	wall=$(vm_since "$t0")
	rm -rf "$work"

	init_up=$(vm_mark "$log" "$nonce" init)
	test_up=$(vm_mark "$log" "$nonce" test)
	end_up=$(vm_mark "$log" "$nonce" "done")
	printf 'cpio_s=%s\ncpio_bytes=%s\ninit_uptime=%s\ntest_uptime=%s\nend_uptime=%s\nwall_s=%s\n' \
		"$cpio_s" "$size" "$init_up" "$test_up" "$end_up" "$wall" >"$outdir/timings"
	printf 'arm64-vm: /init at %s s guest uptime, test.sh %s s to %s s, qemu wall %.1f s\n' \
		"${init_up:-?}" "${test_up:-?}" "${end_up:-?}" "$wall" >&2

	if [ "$rc" -eq 124 ]; then
		if [ -z "$init_up" ]; then
			echo "arm64-vm: boot timeout: no /init after ${timeout} s; console: $(tr -d '\r' <"$log" | tail -n 5)" >&2
		else
			echo "arm64-vm: run timeout after ${timeout} s (test.sh started at ${test_up:-?} s, finished: ${end_up:-no}); console: $log" >&2
		fi
		return 1
	fi
	if [ "$rc" -ne 0 ]; then
		echo "arm64-vm: qemu failed (exit status $rc): $(tr -d '\r' <"$log" | tail -n 5)" >&2
		return 1
	fi
	if [ -z "$init_up" ]; then
		echo "arm64-vm: the guest never reached /init (a panic?); console: $(tr -d '\r' <"$log" | tail -n 5)" >&2
		return 1
	fi
	vm_unpack "$log" "$nonce" "$outdir" || return 1
	printf 'arm64-vm: %s bytes of /out back; total %.1f s\n' "$(vm_mark "$log" "$nonce" begin | cut -d' ' -f2)" "$(vm_since "$start")" >&2
	return 0
}
