# SPDX-License-Identifier: GPL-2.0
# lib.sh: shared helpers for the test scripts: TAP-style verdicts and testdata builds.
# Sourced, not run. Verdict lines are "ok - ...", "not ok - ..." and "ok - ... # SKIP why";
# a script ends with done_testing, which prints the plan "1..N"; tests/run.sh
# checks the plan against the verdicts it saw.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTPUT=${OUTPUT:-$TOP/.output}
CTXPROF=${CTXPROF:-$TOP/ctxprof-go}
BUILDS=$OUTPUT/testdata

# Go must work offline, with no home directory, and never fetch a toolchain.
export GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-trimpath GOTELEMETRY=off
export GOCACHE=$OUTPUT/gocache GOPATH=$OUTPUT/gopath GOENV=off

# Every verdict also appends one byte to a file (o: ok or skip, n: not ok),
# so that those printed from subshells and pipelines count too. The file is
# unlinked at once: it lives as long as the open descriptor, and a script
# that dies leaves nothing behind.
tap_file=$(mktemp)
exec {TAP_FD}>>"$tap_file"
rm -f "$tap_file"
unset tap_file

ok() { printf 'ok - %s\n' "$*"; printf o >&"$TAP_FD"; }
not_ok() { printf 'not ok - %s\n' "$*"; printf n >&"$TAP_FD"; }
skip() { printf 'ok - %s # SKIP %s\n' "$1" "$2"; printf o >&"$TAP_FD"; }

# done_testing: the plan, "1..N" for the N verdicts printed, and the exit:
# 1 if any of them failed. A script ends with it, also when it stops early;
# tests/run.sh fails a script whose plan is missing or wrong, so checks
# lost to a script dying half-way cannot go unseen.
done_testing() {
	local counts
	# a last verdict of the sourcing library's own (profile-lib.sh: bare frames)
	if declare -F before_done_testing >/dev/null; then
		before_done_testing
	fi
	counts=$(cat "/dev/fd/$TAP_FD")
	printf '1..%d\n' "${#counts}"
	[[ $counts != *n* ]]
	exit
}
# check NAME EXPECTED ACTUAL: one verdict comparing two values
check_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1: $3"
	else
		not_ok "$1: expected '$2', got '$3'"
	fi
}

# sanitizer_report FILE: prints the first line of an ASan, LeakSanitizer or
# UBSan report in FILE and succeeds; fails, printing nothing, when there is none
sanitizer_report() {
	grep -m1 -E 'AddressSanitizer|LeakSanitizer|runtime error:' "$1"
}

# schema_verdict NAME JSONL...: every line is a record that the README's
# schema, cmd/output/record.schema.json, allows (Debian's python3-jsonschema)
schema_verdict() {
	local name=$1 out
	shift
	if out=$(/usr/bin/python3 "$TOP/tests/validate-records.py" "$TOP/cmd/output/record.schema.json" "$@" 2>&1); then
		ok "$name: $(tail -n 1 <<<"$out") (cmd/output/record.schema.json)"
	else
		not_ok "$name: cmd/output/record.schema.json: $(tr '\n' ' ' <<<"$out")"
	fi
}

# Installed Go toolchains, oldest first, as "1.19 1.21 ...". Versions named
# in CTXPROF_HIDE_GO ("1.26 1.27") count as not installed: that is how the
# tests are tried on a machine that lacks them.
go_toolchains() {
	local d v
	for d in /usr/lib/go-1.*; do
		v=${d#/usr/lib/go-}
		[[ " ${CTXPROF_HIDE_GO:-} " == *" $v "* ]] && continue
		[ -x "$d/bin/go" ] && printf '%s\n' "$v"
	done | sort -t. -k1,1n -k2,2n
}

GO_VARIANTS="plain stripped pie cgo cgo-stripped"
# and, for programs written against Debian's Go sources (no go.mod): mod and
# mod-stripped, built as modules so that the build info names their versions

DEB_GOCODE=/usr/share/gocode/src

# deb_semver VERSION: a Debian package version as the module version it
# packages: "1:0.27.0+dfsg-2" -> v0.27.0, "1.64.0-7" -> v1.64.0; a snapshot
# "0.0~git20210726.e7812ac-4" -> the pseudo-version
# v0.0.0-20210726000000-e7812ac00000 (Debian keeps the date and a short
# commit, which is padded to the 12 digits a pseudo-version has)
deb_semver() {
	local v=${1#*:}
	v=${v%-*}
	if [[ $v =~ ^0\.0~git([0-9]{8})\.([0-9a-f]{1,12}) ]]; then
		printf 'v0.0.0-%s000000-%s\n' "${BASH_REMATCH[1]}" \
			"$(printf '%-12s' "${BASH_REMATCH[2]}" | tr ' ' 0)"
		return 0
	fi
	v=${v%%[+~]*}
	[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || return 1
	printf 'v%s\n' "$v"
}

# go_vendor_tree PROGRAM GO: testdata/PROGRAM (no go.mod: it is written
# against Debian's Go sources) as a module in vendor mode, each dependency's
# files copied from /usr/share/gocode, each module at the version its Debian
# package has; prints the tree's directory. Its builds record those versions
# in .go.buildinfo, as a user's module build does, where GOPATH builds record
# none.
go_vendor_tree() {
	local prog=$1 go=$2 src=$TOP/testdata/$1 dir=$BUILDS/vendor/$1 pkg pdir root mod deb gov
	local maxgo=1.21
	local -A mod_ver mod_go mod_pkgs
	rm -rf "$dir" && mkdir -p "$dir/vendor" && cp "$src"/*.go "$dir/" || return 1
	while read -r pkg pdir; do
		[ "$pdir" = "$src" ] && continue
		if [[ $pdir != "$DEB_GOCODE"/* ]]; then
			echo "go_vendor_tree: $pkg is not in $DEB_GOCODE" >&2
			return 1
		fi
		root=$pdir
		while [ ! -e "$root/go.mod" ] && [ "$root" != "$DEB_GOCODE" ]; do
			root=${root%/*}
		done
		if [ ! -e "$root/go.mod" ]; then
			echo "go_vendor_tree: no go.mod above $pdir" >&2
			return 1
		fi
		mod=$(awk '$1 == "module" { print $2; exit }' "$root/go.mod")
		if [ -z "${mod_ver[$mod]:-}" ]; then
			deb=$(dpkg -S "$root/go.mod" 2>/dev/null | head -n 1 | cut -d: -f1)
			if [ -z "$deb" ] || ! mod_ver[$mod]=$(deb_semver "$(dpkg-query -W -f '${Version}' "$deb")"); then
				echo "go_vendor_tree: no module version for $mod (package '${deb:-none}')" >&2
				return 1
			fi
			gov=$(awk '$1 == "go" { print $2; exit }' "$root/go.mod" | cut -d. -f1,2)
			mod_go[$mod]=${gov:-1.16}
			maxgo=$(printf '%s\n' "$maxgo" "${mod_go[$mod]}" | sort -t. -k1,1n -k2,2n | tail -n 1)
		fi
		mod_pkgs[$mod]+="$pkg"$'\n'
		# each package's files copied (go:embed takes no links), into real
		# directories: one package's directory may hold another's
		mkdir -p "$dir/vendor/$pkg" || return 1
		find "$pdir" -maxdepth 1 -type f -exec cp -t "$dir/vendor/$pkg/" {} + || return 1
	done < <(cd "$src" && GO111MODULE=off GOPATH=${DEB_GOCODE%/src} "$go" list -deps \
		-f '{{if not .Standard}}{{.ImportPath}} {{.Dir}}{{end}}' .)
	{
		printf 'module ctxprof.test/%s\n\ngo %s\n\nrequire (\n' "$prog" "$maxgo"
		for mod in $(printf '%s\n' "${!mod_ver[@]}" | sort); do
			printf '\t%s %s\n' "$mod" "${mod_ver[$mod]}"
		done
		printf ')\n'
	} >"$dir/go.mod"
	# every module at the newest language version any needs: Debian's
	# sources are built together, some regenerated with newer code (grpc's
	# .pb.go files use Go 1.20 where its go.mod says 1.19)
	for mod in $(printf '%s\n' "${!mod_ver[@]}" | sort); do
		printf '# %s %s\n## explicit; go %s\n' "$mod" "${mod_ver[$mod]}" "$maxgo"
		sort -u <<<"${mod_pkgs[$mod]}" | sed '/^$/d'
	done >"$dir/vendor/modules.txt"
	printf '%s\n' "$dir"
}

# pid_tgid_key TGID TID: a thread's bpf_get_current_pid_tgid() as bpftool's
# key bytes (hex, little-endian), as OBI keys its traces_ctx_v1 map
pid_tgid_key() {
	printf '%016x' $(($1 << 32 | $2)) | sed 's/../& /g' | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }'
}

# go_build VERSION VARIANT [PROGRAM]: builds testdata/PROGRAM (default traced)
# with Go VERSION in one of GO_VARIANTS and prints the binary's path. Rebuilds
# only when the sources are newer than the binary.
go_build() {
	local out lock ret
	# the program's own name last, so that its comm is "traced" or "demo"
	out=$BUILDS/go$1/$2/${3:-traced}
	mkdir -p "$(dirname "$out")"
	# tests run side by side (tests/run.sh) share the builds: one builds, the
	# other waits; module builds of a program share its vendor tree
	case $2 in
	mod | mod-stripped) exec {lock}>"$BUILDS/vendor-${3:-traced}.lock" ;;
	*) exec {lock}>"$out.lock" ;;
	esac
	flock "$lock"
	go_build_locked "$@"
	ret=$?
	exec {lock}>&-
	return $ret
}

go_build_locked() {
	local v=$1 variant=$2 prog=${3:-traced} out src go
	go=/usr/lib/go-$v/bin/go
	src=$TOP/testdata/$prog
	out=$BUILDS/go$v/$variant/$prog
	if [ -x "$out" ] && [ -z "$(find "$src" -newer "$out" -type f | head -n 1)" ]; then
		printf '%s\n' "$out"
		return 0
	fi
	local -a env=(CGO_ENABLED=0) flags=()
	case $variant in
	plain) ;;
	stripped) flags=(-ldflags=-s\ -w) ;;
	mod | mod-stripped)
		[ "$variant" = mod ] || flags=(-ldflags=-s\ -w)
		# the vendor tree has a go.mod: built as a module, below
		src=$(go_vendor_tree "$prog" "$go") || return 1
		env+=(GO111MODULE=on GOFLAGS=-mod=vendor GOTOOLCHAIN=local GOPROXY=off GOWORK=off)
		;;
	pie) flags=(-buildmode=pie) ;;
	pie-stripped) flags=(-buildmode=pie -ldflags=-s\ -w) ;;
	cgo) env=(CGO_ENABLED=1) ;;
	cgo-stripped) env=(CGO_ENABLED=1) flags=(-ldflags=-s\ -w) ;;
	# arm64: read offline here, run in the emulated machine (arm64-vm.sh)
	arm64) env+=(GOARCH=arm64) ;;
	arm64-stripped) env+=(GOARCH=arm64) flags=(-ldflags=-s\ -w) ;;
	# linked by the cross gcc against the arm64 sysroot (tests/arm64-sysroot.sh)
	arm64-cgo | arm64-cgo-stripped)
		[ -d "$OUTPUT/arm64/sysroot" ] || { echo "go_build: no arm64 sysroot in $OUTPUT/arm64" >&2; return 1; }
		env=(CGO_ENABLED=1 GOARCH=arm64 "CC=aarch64-linux-gnu-gcc --sysroot=$(realpath "$OUTPUT/arm64/sysroot")")
		[ "$variant" = arm64-cgo ] || flags=(-ldflags=-s\ -w)
		;;
	*) echo "go_build: unknown variant $variant" >&2; return 1 ;;
	esac
	# no go.mod: GOPATH mode, against the Go sources Debian packages (golang-*-dev)
	[ -e "$src/go.mod" ] || env+=(GO111MODULE=off GOPATH=/usr/share/gocode)
	(cd "$src" && env "${env[@]}" "$go" build "${flags[@]}" -o "$out" .) >&2 || return 1
	printf '%s\n' "$out"
}

# private_mounts_why: true when a new mount namespace can make its mounts
# private, as containers and systemd's sandboxing do; else false, saying
# why. Only a root that is no mount point (a chroot's) cannot: anything
# else unshare says is left to the test to meet.
private_mounts_why() {
	local err
	err=$(unshare --mount --propagation private true 2>&1) && return 0
	case $err in
	*"cannot change root filesystem propagation"*)
		echo "no private mount namespace: the root is not a mount point (a chroot?): $err"
		return 1 ;;
	esac
	return 0
}

# fresh_root: a minimal Debian 12 (debootstrap --variant=minbase bookworm,
# from the machine's own Debian URI) with what a new machine ships (gcc,
# make, git, libc6-dev) and nothing of ctxprof-go's, made once into
# $OUTPUT/fresh-root (minutes) and kept; sets FRESH_ROOT. The caller then
# has it to itself until it exits (an flock on fresh-root.lock), so that
# tests/build-deps.sh, which builds in it, and tests/deb.sh, which installs
# into an overlay of it, never meet in it. False, with the reason in
# FRESH_ROOT_WHY, when it cannot be made. Needs root.
fresh_root() {
	local mirror
	FRESH_ROOT=$OUTPUT/fresh-root
	mkdir -p "$OUTPUT"
	exec {FRESH_ROOT_LOCK}>"$OUTPUT/fresh-root.lock"
	flock "$FRESH_ROOT_LOCK"
	[ -e "$FRESH_ROOT/.ready" ] && return 0
	if ! command -v debootstrap >/dev/null; then
		FRESH_ROOT_WHY="debootstrap is not installed (tests/deps.sh test installs it)"
		return 1
	fi
	mirror=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /debian\/?$/) { print $i; exit } }' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:.*debian\/?$/) { print $i; exit } }' \
		/etc/apt/sources.list 2>/dev/null | head -n 1)
	if [ -z "$mirror" ]; then
		FRESH_ROOT_WHY="no Debian source entry in /etc/apt to take a mirror from"
		return 1
	fi
	rm -rf "$FRESH_ROOT"
	echo "# debootstrap --variant=minbase bookworm from $mirror into $FRESH_ROOT"
	if ! debootstrap --variant=minbase --include=gcc,make,git,libc6-dev bookworm "$FRESH_ROOT" "$mirror" \
		>"$OUTPUT/fresh-root.log" 2>&1; then
		FRESH_ROOT_WHY="debootstrap failed: $(tail -n 3 "$OUTPUT/fresh-root.log" | tr '\n' ' ')"
		return 1
	fi
	touch "$FRESH_ROOT/.ready"
}

# The version string that the toolchain's own buildinfo reader sees.
go_version_of() {
	"/usr/lib/go-$1/bin/go" version "$2" | awk '{ print $NF }'
}
