#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-filesystems.sh: targets whose executable lives on ext4, a btrfs subvolume, overlayfs and tmpfs.
#
# Builds testdata/traced with the newest installed Go, plain (pure Go,
# static), and runs a copy from each of: an ext4 image and a subvolume of a
# btrfs image (loop-mounted sparse files in $work, so the result does not
# depend on what / is); an overlayfs with the binary in lowerdir and its
# layers on the ext4 image, run from the merged directory and chrooted into
# it (a static Go binary needs nothing else there); a second overlay on the
# same lowerdir, mounted as a container runtime does, in a mount namespace of
# its own that the host does not see, and chrooted into; and tmpfs. The cgo build, which loads libc
# from /, runs from the btrfs subvolume too. All of them run at once (two
# workers each) while one ctxprof-go samples them at 999 Hz for 8 s.
# Per target, with bounds that follow what was sampled (other work on the
# machine decides how much CPU the targets get): at least a third of the
# targets' mean count of samples, since they all run the same program; in
# every burn function of traced at least 3% of the target's samples (the
# smallest, burnAlloc, gets 7 to 9%), none with another job's trace ID and
# at least 97% with its own (trace IDs from the Go source); at most 1% of
# frames left as bare addresses.
# Overall: no sample is dropped as from a target that "no longer ran its Go
# program": none of them execs, so such a drop means ctxprof-go did not
# recognise the file a target runs (on btrfs, stat()'s st_dev is not the
# super block's s_dev).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "targets on ext4, btrfs, overlayfs and tmpfs"
mounts=() # mount points, innermost last

cleanup() {
	kill $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	# mount -o loop sets autoclear: the loop device goes with the umount
	unmount_all
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# fs_missing FSTYPE: the kernel cannot mount FSTYPE (checked after a failed mount,
# which loads a module that exists)
fs_missing() {
	! grep -qw "$1" /proc/filesystems
}

# mount_image FSTYPE DIR MKFS...: a sparse 256 MiB image made by MKFS, loop-mounted
# on DIR; on failure, sets $why (not in a subshell: $mounts must keep DIR)
mount_image() {
	local fs=$1 dir=$2 img=$work/$1.img
	shift 2
	truncate -s 256M "$img" || return 1
	if ! why=$("$@" "$img" 2>&1); then
		why="$1 failed: $why"
		return 1
	fi
	mkdir -p "$dir"
	if ! why=$(mount -t "$fs" -o loop "$img" "$dir" 2>&1); then
		why="mount -t $fs -o loop failed: $why"
		return 1
	fi
	mounts+=("$dir")
}

v=$(go_toolchains | tail -n 1)
plain=$(go_build "$v" plain) || { not_ok "build go$v plain"; done_testing; }
cgo=$(go_build "$v" cgo) || { not_ok "build go$v cgo"; done_testing; }
echo "# testdata/traced built by go$v, plain and cgo"

declare -A kind_of
names=()
# add_case NAME KIND: KIND says how start_case runs the target
add_case() {
	names+=("$1")
	kind_of[$1]=$2
}

# start_case NAME ERRFILE: starts a target in the background; not niced, so
# that the targets get their share on a machine busy with other work
start_case() {
	local -a run=()
	case ${kind_of[$1]} in
	/*) run+=("${kind_of[$1]}") ;;
	chroot) run+=(chroot "$work/merged" /traced) ;;
	container)
		# the overlay exists in the target's mount namespace only, as with
		# a container runtime: the host has an empty directory there. Not
		# --propagation private: it remounts /, which fails in a chroot
		# (CI's machine), where / is no mount point; ns-root is a private
		# mount instead, so that nothing mounted on it reaches the host.
		run+=(unshare --mount --propagation unchanged sh -c \
			'mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4" || exit
			 root=$4; shift 4; exec chroot "$root" /traced "$@"' sh \
			"$o/lower" "$o/ns-upper" "$o/ns-work" "$work/ns-root") ;;
	esac
	"${run[@]}" -d 40s -workers 2 2>"$2" &
}

# loop devices: a container without /dev/loop-control cannot have them
if ! loop_why=$(losetup -f 2>&1 >/dev/null); then
	loop_why="no free loop device: ${loop_why:-losetup -f failed}"
fi

if [ -n "$loop_why" ]; then
	skip "ext4 image" "$loop_why"
elif ! command -v mkfs.ext4 >/dev/null; then
	not_ok "ext4 image: mkfs.ext4 missing (tests/deps.sh installs e2fsprogs)"
elif ! mount_image ext4 "$work/ext4" mkfs.ext4 -q; then
	if fs_missing ext4; then skip "ext4 image" "the kernel has no ext4"; else not_ok "ext4 image: $why"; fi
else
	mkdir "$work/ext4/bin"
	cp "$plain" "$work/ext4/bin/traced"
	add_case "ext4" "$work/ext4/bin/traced"
fi

if [ -n "$loop_why" ]; then
	skip "btrfs subvolume" "$loop_why"
elif ! command -v mkfs.btrfs >/dev/null || ! command -v btrfs >/dev/null; then
	not_ok "btrfs subvolume: mkfs.btrfs or btrfs missing (tests/deps.sh installs btrfs-progs)"
elif ! mount_image btrfs "$work/btrfs" mkfs.btrfs -q; then
	if fs_missing btrfs; then skip "btrfs subvolume" "the kernel has no btrfs"; else not_ok "btrfs subvolume: $why"; fi
elif ! why=$(btrfs -q subvolume create "$work/btrfs/app" 2>&1); then
	not_ok "btrfs subvolume create: $why"
else
	mkdir "$work/btrfs/app/cgo"
	cp "$plain" "$work/btrfs/app/traced"
	cp "$cgo" "$work/btrfs/app/cgo/traced"
	add_case "btrfs subvolume" "$work/btrfs/app/traced"
	add_case "btrfs subvolume, cgo" "$work/btrfs/app/cgo/traced"
fi

# a container's root: the image layer below, its writable layer above, both on
# one file system as a container runtime keeps them
if [ ! -d "$work/ext4/bin" ]; then
	skip "overlayfs" "its layers go on the ext4 image, which is not there"
else
	o=$work/ext4/overlay
	mkdir -p "$o/lower" "$o/upper" "$o/work" "$work/merged"
	cp "$plain" "$o/lower/traced"
	if ! why=$(mount -t overlay overlay -o "lowerdir=$o/lower,upperdir=$o/upper,workdir=$o/work" \
		"$work/merged" 2>&1); then
		if fs_missing overlay; then skip "overlayfs" "the kernel has no overlayfs"; else not_ok "overlayfs: $why"; fi
	else
		mounts+=("$work/merged")
		add_case "overlayfs" "$work/merged/traced"
		add_case "overlayfs, chrooted" chroot
		mkdir -p "$o/ns-upper" "$o/ns-work" "$work/ns-root"
		if ! why=$(mount --bind "$work/ns-root" "$work/ns-root" 2>&1); then
			not_ok "container: bind mount of its root: $why"
		else
			mounts+=("$work/ns-root")
			if ! why=$(mount --make-private "$work/ns-root" 2>&1); then
				not_ok "container: private mount of its root: $why"
			else
				add_case "container (overlayfs in its own mount namespace, chrooted)" container
			fi
		fi
	fi
fi

mkdir "$work/tmpfs"
if ! why=$(mount -t tmpfs -o size=32m ctxprof-test "$work/tmpfs" 2>&1); then
	not_ok "tmpfs: $why"
else
	mounts+=("$work/tmpfs")
	cp "$plain" "$work/tmpfs/traced"
	add_case "tmpfs" "$work/tmpfs/traced"
fi

if [ "${#names[@]}" -eq 0 ]; then
	done_testing
fi

declare -A pid_of
for i in "${!names[@]}"; do
	start_case "${names[i]}" "$work/start-$i.err"
	pid_of[${names[i]}]=$!
done
pids=()
started=()
for k in "${!names[@]}"; do
	name=${names[k]}
	pid=${pid_of[$name]}
	# chroot and sh exec the program in the same process
	for ((t = 0; t < 100; t++)); do
		[ "$(cat /proc/$pid/comm 2>/dev/null)" = traced ] && break
		sleep 0.1
	done
	if [ "$t" -eq 100 ]; then
		not_ok "$name: did not start: $(tr -s '\n\t ' ' ' <"$work/start-$k.err")"
		continue
	fi
	started+=("$name")
	pids+=("$pid")
	# what user space and the kernel each call the file's device: stat()'s
	# st_dev, and the super block's s_dev as /proc/PID/maps shows it
	dev=$(awk -v ino="$(stat -L -c %i /proc/$pid/exe)" '$5 == ino { print $4; exit }' /proc/$pid/maps)
	[ -n "$dev" ] && dev=$(printf '%d:%d' "0x${dev%:*}" "0x${dev#*:}")
	echo "# $name (pid $pid): st_dev" \
		"$(stat -L -c %Hd:%Ld /proc/$pid/exe), super block ${dev:-unknown}"
done
[ "${#pids[@]}" -gt 0 ] || done_testing
echo "# sampling ${#pids[@]} targets for 8 s at 999 Hz"
"$CTXPROF" -p "$(IFS=,; echo "${pids[*]}")" -F 999 -d 8 -i 60 -o "$work/out.jsonl" 2>"$work/err"
rc=$?
sed 's/^/# /' "$work/err"
check_eq "ctxprof-go with ${#pids[@]} targets exits" 0 "$rc"
dropped=$(sed -n 's/^ctxprof-go: \([0-9]*\) samples dropped from targets that no longer ran.*/\1/p' "$work/err")
check_eq "samples dropped as from targets that no longer ran their Go program" 0 "${dropped:-0}"

want=$(want_json)
mean=$(( $(jq -s 'map(.samples) | add // 0' "$work/out.jsonl") / ${#pids[@]} ))
for name in "${started[@]}"; do
	pid=${pid_of[$name]}
	jq -c --argjson pid "$pid" 'select(.pid == $pid)' "$work/out.jsonl" >"$work/p.jsonl"
	# samples, and frames (counted once per sample) left as bare addresses:
	# the symbolizer could not read the file the target runs
	read -r all frames bare < <(jq -s -r '[.[].stacks[] | .samples as $n | .frames[] |
		{n: $n, bare: (.func | startswith("0x"))}] as $f |
		"\(map(.samples) | add // 0) \($f | map(.n) | add // 0) \($f | map(select(.bare) | .n) | add // 0)"' \
		"$work/p.jsonl")
	# the jobs with under 3% of the samples, any wrong, or under 97% right;
	# the lowest share
	IFS='|' read -r short wrong lowest < <(jq -s -r --argjson want "$want" --argjson all "$all" "$JOBS_JQ"' as $got |
		[ $want | keys[] as $j | ($got | map(select(.job == $j))[0]) // {total: 0, right: 0, wrong: 0} |
		  { job: ($j | ltrimstr("main.")), total, right, wrong } ] |
		(map(select(.total == 0 or .total * 100 < $all * 3 or .wrong > 0 or .right * 1000 < .total * 970)) |
		  map("\(.job) \(.right)/\(.total) right, \(.wrong) wrong") | join("; ")) as $short |
		(min_by(if .total > 0 then .right / .total else 0 end)) as $low |
		"\($short)|\(map(.wrong) | add)|\($low.job) \($low.right)/\($low.total)"' "$work/p.jsonl")
	named="$bare of $frames frames bare addresses"
	if [ $((3 * all)) -lt "$mean" ] || [ "$all" -eq 0 ]; then
		not_ok "$name (pid $pid): $all samples, the targets' mean $mean"
	elif [ $((100 * bare)) -gt "$frames" ]; then
		not_ok "$name (pid $pid): $all samples ($(jq -s '[.[] | select(.trace_id) | .samples] | add // 0' \
			"$work/p.jsonl") with a trace ID), but $named: no job can be found"
	elif [ -z "$short" ]; then
		ok "$name (pid $pid): $all samples (mean $mean), $wrong with another job's trace ID, every job >= 97% right (lowest: $lowest), $named"
	else
		not_ok "$name (pid $pid): $all samples, $named; short: $short"
	fi
done
done_testing
