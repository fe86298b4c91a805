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

# schema_verdict NAME JSONL...: every line is a record that the README's
# schema, cmd/record.schema.json, allows (Debian's python3-jsonschema)
schema_verdict() {
	local name=$1 out
	shift
	if out=$(/usr/bin/python3 "$TOP/tests/validate-records.py" "$TOP/cmd/record.schema.json" "$@" 2>&1); then
		ok "$name: $(tail -n 1 <<<"$out") (cmd/record.schema.json)"
	else
		not_ok "$name: cmd/record.schema.json: $(tr '\n' ' ' <<<"$out")"
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

# go_build VERSION VARIANT [PROGRAM]: builds testdata/PROGRAM (default traced)
# with Go VERSION in one of GO_VARIANTS and prints the binary's path. Rebuilds
# only when the sources are newer than the binary.
go_build() {
	local v=$1 variant=$2 prog=${3:-traced} out src go
	go=/usr/lib/go-$v/bin/go
	src=$TOP/testdata/$prog
	# the program's own name last, so that its comm is "traced" or "demo"
	out=$BUILDS/go$v/$variant/$prog
	mkdir -p "$(dirname "$out")"
	if [ -x "$out" ] && [ -z "$(find "$src" -newer "$out" -type f | head -n 1)" ]; then
		printf '%s\n' "$out"
		return 0
	fi
	local -a env=(CGO_ENABLED=0) flags=()
	case $variant in
	plain) ;;
	stripped) flags=(-ldflags=-s\ -w) ;;
	pie) flags=(-buildmode=pie) ;;
	cgo) env=(CGO_ENABLED=1) ;;
	cgo-stripped) env=(CGO_ENABLED=1) flags=(-ldflags=-s\ -w) ;;
	*) echo "go_build: unknown variant $variant" >&2; return 1 ;;
	esac
	# no go.mod: GOPATH mode, against the Go sources Debian packages (golang-*-dev)
	[ -e "$src/go.mod" ] || env+=(GO111MODULE=off GOPATH=/usr/share/gocode)
	(cd "$src" && env "${env[@]}" "$go" build "${flags[@]}" -o "$out" .) >&2 || return 1
	printf '%s\n' "$out"
}

# The version string that the toolchain's own buildinfo reader sees.
go_version_of() {
	"/usr/lib/go-$1/bin/go" version "$2" | awk '{ print $NF }'
}
