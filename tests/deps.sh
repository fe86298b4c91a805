#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# deps.sh: install the Debian packages and Go toolchains that build and test need.
#
# Usage: deps.sh [build|demo|test|check [ARCH]]
#   build  what `make` needs (make deps): a handful of packages
#   demo   that, jq and the Go toolchains (make demo)
#   test   everything the tests and make bench use (make test, make bench)
#   check  no installing, no root: prints what the build lacks, with the
#          package to install, and fails; silent when nothing is missing
#          (the Makefile asks before it compiles anything)
#
# Installs only what is missing, so a second run takes about a second. The extra
# suites (bookworm-backports, trixie, sid) reuse the URI and keyring of the
# machine's own Debian entry and are pinned to priority 100, so that nothing
# already installed is upgraded from them; a suite the machine already has
# is used as it is, never configured twice.
set -euo pipefail
MODE=${1:-test}

# golang-golang-x-net-dev: h2c for testdata/httpserver (GOPATH mode), the
# same version grpc-go's package pulls in from bookworm; groff-base and
# man-db: tests/install.sh renders and finds the man page (a minimal
# Debian has neither); time: GNU time's peak RSS for tests/hostile-input.sh;
# gcc-aarch64-linux-gnu and qemu-user-static: make ARCH=arm64 and its test;
# qemu-system-arm and cpio: the emulated arm64 machine (tests/arm64-vm.sh);
# xxd: the report page's files embedded at build time (and the tests');
# chromium, firefox-esr and fonts-dejavu-core: the report page and
# speedscope, looked at headless (tests/report.sh), with fonts whose widths
# do not change; podman, runc and python3-yaml: make image and the agent
# run as the DaemonSet says (tests/container.sh); dpkg-dev: make deb
# (dpkg-shlibdeps, dpkg-gencontrol); lintian: tests/deb.sh judges the package
BUILD_PACKAGES=(make gcc pkg-config clang llvm libbpf-dev bpftool libelf-dev libdw-dev libjansson-dev
	zlib1g-dev xxd protobuf-c-compiler libprotobuf-c-dev libcurl4-openssl-dev dpkg-dev)
TEST_PACKAGES=(libclang-rt-14-dev golang-golang-x-net-dev jq binutils dwarves curl util-linux
	bpftrace linux-perf e2fsprogs btrfs-progs libc6-dbg mandoc groff-base man-db strace openssl
	python3-jsonschema time gcc-aarch64-linux-gnu qemu-user-static qemu-system-arm cpio chromium
	firefox-esr fonts-dejavu-core debootstrap podman runc python3-yaml lintian)
# Node.js and npm run the browser tests' tools (tests/browser-lib.sh): the
# machine's own when it has them (whatever their origin), else Debian's
command -v node >/dev/null && command -v npm >/dev/null || TEST_PACKAGES+=(nodejs npm)
# The OTLP profiles messages and OTEP 4719's process context:
# opentelemetry-proto 1.11 or later, whose .proto files the build compiles
# with protoc-c. Only sid has it (trixie's
# 1.5 is another, incompatible layout); it is Architecture: all and depends
# on nothing, so nothing else comes from sid with it.
PROTO_PACKAGE=opentelemetry-proto
PROTO_MIN=1.11
PROTO_SUITE=sid
# The OpenTelemetry Go SDK for tests/profile-otel.sh, as Go sources (arch all),
# built in GOPATH mode. bookworm's versions are too old, so each is named from
# trixie; the rest of what they need resolves from bookworm.
OTEL_SUITE=trixie
OTEL_PACKAGES=(golang-opentelemetry-otel-dev golang-opentelemetry-contrib-dev
	golang-opentelemetry-proto-dev golang-google-grpc-dev golang-google-genproto-dev
	golang-google-cloud-dev golang-google-cloud-compute-metadata-dev
	golang-github-golang-protobuf-1-5-dev golang-github-google-cel-go-dev
	golang-go.opencensus-dev)
# The OpenTelemetry Collector's Go sources, for tests/otlp.sh's collector:
# from sid, which alone has 0.152, unpacked into a private tree and never
# installed (installed from sid they would upgrade libc6). Only the
# Architecture: all golang-*-dev packages of its dependency tree are taken.
COLLECTOR_PACKAGE=golang-opentelemetry-collector-dev
COLLECTOR_SUITE=sid
COLLECTOR_TREE=$(cd "$(dirname "$0")/.." && pwd)/.output/otelcol
# Go programs Debian ships, for tests/wall-debian.sh and servers-debian.sh,
# as PACKAGE/SUITE, never installed: a reverse proxy from three suites whose
# Go releases differ (1.19, 1.24, 1.26), and bookworm's metrics exporter
DEBIAN_PROGRAMS_WANTED=(caddy/bookworm caddy/trixie caddy/sid prometheus-node-exporter/bookworm)
DEBIAN_PROGRAM_SUITES=(bookworm trixie sid)
DEBIAN_PROGRAMS=$(cd "$(dirname "$0")/.." && pwd)/.output/debian-programs
TOOLCHAINS=(1.19 1.21 1.22 1.23 1.24 1.26 1.27)
SUITES=(bookworm-backports trixie sid)
SRC=/etc/apt/sources.list.d/ctxprof-go-toolchains.sources
PIN=/etc/apt/preferences.d/ctxprof-go-toolchains

log() { printf 'deps: %s\n' "$*" >&2; }
# installing WHAT: said, and remembered: a run that installs nothing says so at its end
installed=0
installing() {
	installed=1
	log "installing $*"
}

# check [ARCH]: what the build lacks, each with the package that holds it,
# on one line; nothing when nothing is missing
check() {
	local -a missing=()
	local tool pkg mod proto
	for tool in cc:gcc clang:clang bpftool:bpftool pkg-config:pkg-config protoc-c:protobuf-c-compiler xxd:xxd \
		${1:+$([ "$1" = arm64 ] && echo aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu)}; do
		command -v "${tool%%:*}" >/dev/null || missing+=("${tool%%:*} (package ${tool#*:})")
	done
	if command -v pkg-config >/dev/null; then
		for mod in libbpf:libbpf-dev libelf:libelf-dev libdw:libdw-dev jansson:libjansson-dev zlib:zlib1g-dev \
			libprotobuf-c:libprotobuf-c-dev libcurl:libcurl4-openssl-dev; do
			pkg-config --exists "${mod%%:*}" || missing+=("${mod%%:*} (package ${mod#*:})")
		done
	fi
	proto=/usr/include/opentelemetry/proto/processcontext/v1development/process_context.proto
	[ -e "$proto" ] || missing+=("$proto (package $PROTO_PACKAGE $PROTO_MIN or later, from $PROTO_SUITE)")
	[ "${#missing[@]}" -eq 0 ] && return 0
	printf 'the build needs %s' "${missing[0]}"
	printf ', %s' "${missing[@]:1}"
	printf '; install them with: sudo make deps%s\n' "$([ "${1:-}" != arm64 ] || echo " ARCH=arm64")"
	return 1
}
if [ "$MODE" = check ]; then
	check "${2:-}"
	exit
fi
case $MODE in
build)
	PACKAGES=("${BUILD_PACKAGES[@]}")
	# make deps ARCH=arm64: the cross compiler too
	[ "${2:-}" != arm64 ] || PACKAGES+=(gcc-aarch64-linux-gnu)
	;;
demo) PACKAGES=("${BUILD_PACKAGES[@]}" jq) ;;
test) PACKAGES=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
*) log "usage: deps.sh [build [ARCH]|demo|test|check [ARCH]]"; exit 2 ;;
esac

if [ "$(id -u)" != 0 ]; then
	log "must run as root to install packages (try: sudo make deps)"
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive

missing_pkgs() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			printf '%s\n' "$p"
	done
}

updated=0
apt_update() {
	[ "$updated" = 1 ] && return 0
	log "apt-get update"
	apt-get update -qq || log "apt-get update reported errors; continuing with the lists it got"
	updated=1
}

# The machine's own Debian entry: first deb822 stanza, or one-line entry, whose
# suite is a plain Debian release (not -security) and whose URI ends in /debian.
debian_source() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		[ "$f" = "$SRC" ] && continue
		awk 'BEGIN { RS = ""; FS = "\n" }
		{
			uri = ""; suites = ""; key = ""; types = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) { uri = $i; sub(/^URIs:[ \t]*/, "", uri); sub(/[ \t].*/, "", uri) }
				if ($i ~ /^Suites:/) { suites = $i }
				if ($i ~ /^Types:/) { types = $i }
				if ($i ~ /^Signed-By:/) { key = $i; sub(/^Signed-By:[ \t]*/, "", key) }
			}
			if (types ~ /deb( |$)/ && uri ~ /\/debian\/?$/ && suites !~ /security/) {
				print uri "\t" key; exit
			}
		}' "$f"
	done | head -n 1
	if [ -e /etc/apt/sources.list ]; then
		awk '$1 == "deb" && $0 !~ /security/ {
			uri = ""; key = ""
			for (i = 2; i <= NF; i++) {
				if ($i ~ /^\[/ || $i ~ /\]$/ || $i ~ /=/) {
					if ($i ~ /signed-by=/) { key = $i; sub(/.*signed-by=/, "", key); sub(/\]$/, "", key) }
					continue
				}
				uri = $i; break
			}
			if (uri ~ /\/debian\/?$/) { print uri "\t" key; exit }
		}' /etc/apt/sources.list
	fi
}

# The suites the machine's own apt sources already name (ours left out):
# deb822 Suites: lines and one-line entries, one suite a line
configured_suites() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] && [ "$f" != "$SRC" ] && awk '/^Suites:/ { for (i = 2; i <= NF; i++) print $i }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] && awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/ && $i !~ /=/) { print $(i + 1); break } }' "$f"
	done
}

add_suites() {
	local entry uri key s
	local -a add=()
	if [ -e "$SRC" ] && [ -e "$PIN" ]; then
		return 0
	fi
	# a suite the machine has already is used as it is: configured twice,
	# every apt-get after would warn about each of its lists
	for s in "${SUITES[@]}"; do
		configured_suites | grep -qx "$s" || add+=("$s")
	done
	if [ "${#add[@]}" -eq 0 ]; then
		log "suites ${SUITES[*]}: the machine has them all already"
		return 0
	fi
	entry=$(debian_source | head -n 1)
	uri=${entry%%$'\t'*}
	key=${entry#*$'\t'}
	if [ -z "$uri" ]; then
		log "no Debian source entry found in /etc/apt; cannot add suites for Go toolchains"
		return 1
	fi
	[ -n "$key" ] || key=/usr/share/keyrings/debian-archive-keyring.gpg
	log "adding suites ${add[*]} from the machine's Debian URI, pinned to 100"
	{
		echo "# Added by ctxprof-go tests/deps.sh: Go toolchains for the test matrix."
		echo "Types: deb"
		echo "URIs: $uri"
		echo "Suites: ${add[*]}"
		echo "Components: main"
		echo "Signed-By: $key"
	} >"$SRC"
	{
		echo "# Added by ctxprof-go tests/deps.sh: never upgrade from these suites."
		for s in "${add[@]}"; do
			printf 'Package: *\nPin: release n=%s\nPin-Priority: 100\n\n' "$s"
		done
	} >"$PIN"
	updated=0
}

mapfile -t need < <(missing_pkgs "${PACKAGES[@]}")
if [ "${#need[@]}" -gt 0 ]; then
	apt_update
	installing "${need[*]}"
	apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# the Go toolchains: make demo builds its service with one, the tests with every one
want=()
for v in "${TOOLCHAINS[@]}"; do
	[ "$MODE" = build ] || [ -x "/usr/lib/go-$v/bin/go" ] || want+=("$v")
done
if [ "${#want[@]}" -gt 0 ]; then
	add_suites
	apt_update
	for v in "${want[@]}"; do
		pkg=golang-$v-go
		# the newest suite that has it; its own dependencies come along as
		# candidates only where bookworm has none
		suite=$(apt-cache madison "$pkg" 2>/dev/null | awk -F'|' 'NR == 1 { split($3, w, " "); split(w[2], a, "/"); print a[1] }')
		if [ -z "$suite" ]; then
			log "$pkg: not in any configured suite; skipped"
			continue
		fi
		installing "$pkg from $suite"
		if ! apt-get install -y -qq --no-install-recommends "$pkg/$suite" >/dev/null; then
			log "$pkg: install from $suite failed; skipped"
		fi
	done
fi

need=()
[ "$MODE" = test ] && mapfile -t need < <(missing_pkgs "${OTEL_PACKAGES[@]}")
if [ "${#need[@]}" -gt 0 ]; then
	add_suites
	apt_update
	installing "${need[*]} from $OTEL_SUITE"
	if ! apt-get install -y -qq --no-install-recommends "${need[@]/%//$OTEL_SUITE}" >/dev/null; then
		log "OpenTelemetry Go SDK: install from $OTEL_SUITE failed; tests/profile-otel.sh will skip"
	fi
fi

# dpkg-query fails for a package never installed: that is an answer, not an error
proto=$({ dpkg-query -W -f='${Status} ${Version}\n' "$PROTO_PACKAGE" 2>/dev/null || true; } |
	awk '$3 == "installed" { print $4 }')
if [ -z "$proto" ] || dpkg --compare-versions "$proto" lt "$PROTO_MIN"; then
	add_suites
	apt_update
	installing "$PROTO_PACKAGE from $PROTO_SUITE (have: ${proto:-none}; the build needs $PROTO_MIN or later)"
	apt-get install -y -qq --no-install-recommends "$PROTO_PACKAGE/$PROTO_SUITE" >/dev/null
fi

# private_apt DIR SUITE...: an apt configuration of its own under DIR, with
# the machine's Debian URI and keyring and only SUITEs, nothing installed
# (an empty status); its options go into the array APT_OPTS. False, with a
# note, when the machine has no Debian source entry.
private_apt() {
	local dir=$1 entry uri key
	shift
	entry=$(debian_source | head -n 1)
	uri=${entry%%$'\t'*}
	key=${entry#*$'\t'}
	[ -n "$key" ] || key=/usr/share/keyrings/debian-archive-keyring.gpg
	if [ -z "$uri" ]; then
		log "no Debian source entry found in /etc/apt"
		return 1
	fi
	rm -rf "$dir"
	mkdir -p "$dir/sources.list.d" "$dir/preferences.d" "$dir/lists/partial" "$dir/archives/partial"
	: >"$dir/status"
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
		"$uri" "$*" "$key" >"$dir/sources.list.d/private.sources"
	APT_OPTS=(-o "Dir::Etc::sourcelist=/dev/null" -o "Dir::Etc::sourceparts=$dir/sources.list.d"
		-o "Dir::Etc::preferences=/dev/null" -o "Dir::Etc::preferencesparts=$dir/preferences.d"
		-o "Dir::State=$dir" -o "Dir::State::lists=$dir/lists" -o "Dir::State::status=$dir/status"
		-o "Dir::Cache=$dir" -o "Dir::Cache::archives=$dir/archives" -o "Debug::NoLocking=1"
		-o "APT::Sandbox::User=root")
	apt-get "${APT_OPTS[@]}" update -qq >/dev/null 2>&1 || log "apt-get update of the private $* lists failed"
}

# collector_sources: the collector's dependency tree from a private apt
# configuration (COLLECTOR_SUITE only, nothing installed), unpacked into
# $COLLECTOR_TREE/gocode
collector_sources() {
	local pkgs p
	[ -e "$COLLECTOR_TREE/gocode/.ready" ] && return 0
	rm -rf "$COLLECTOR_TREE/debs" "$COLLECTOR_TREE/gocode"
	mkdir -p "$COLLECTOR_TREE/debs" "$COLLECTOR_TREE/gocode"
	log "fetching $COLLECTOR_PACKAGE and its Go sources from $COLLECTOR_SUITE into $COLLECTOR_TREE (private)"
	if ! private_apt "$COLLECTOR_TREE/apt" "$COLLECTOR_SUITE"; then
		log "the collector's sources are not fetched; tests/otlp.sh will say so"
		return 0
	fi
	# the whole tree, as an empty system would install it; only Go sources are kept
	mapfile -t pkgs < <(apt-get "${APT_OPTS[@]}" install -s --no-install-recommends "$COLLECTOR_PACKAGE" 2>/dev/null |
		awk '$1 == "Inst" && $2 ~ /^golang-.*-dev$/ { print $2 }')
	[ "${#pkgs[@]}" -gt 0 ] && apt-cache "${APT_OPTS[@]}" show --no-all-versions "${pkgs[@]}" 2>/dev/null |
		awk '/^Package:/ { p = $2 } /^Architecture:/ && $2 == "all" && !seen[p]++ { print p }' \
			>"$COLLECTOR_TREE/packages"
	if [ ! -s "$COLLECTOR_TREE/packages" ]; then
		log "$COLLECTOR_PACKAGE is not in $COLLECTOR_SUITE; tests/otlp.sh will say so"
		return 0
	fi
	if ! (cd "$COLLECTOR_TREE/debs" && xargs apt-get "${APT_OPTS[@]}" download -qq <"$COLLECTOR_TREE/packages" >/dev/null 2>&1); then
		log "downloading the collector's sources failed; tests/otlp.sh will say so"
		return 0
	fi
	for p in "$COLLECTOR_TREE"/debs/*.deb; do
		dpkg-deb -x "$p" "$COLLECTOR_TREE/gocode" || return 1
	done
	rm -rf "$COLLECTOR_TREE/debs" "$COLLECTOR_TREE/apt/archives"
	log "collector sources: $(wc -l <"$COLLECTOR_TREE/packages") packages in $COLLECTOR_TREE/gocode"
	touch "$COLLECTOR_TREE/gocode/.ready"
}
[ "$MODE" = test ] && collector_sources

# debian_programs: Go programs Debian itself ships, stripped GOPATH builds
# by the Go of their suite: each of DEBIAN_PROGRAMS_WANTED, downloaded
# through a private apt configuration and unpacked into
# $DEBIAN_PROGRAMS/SUITE, never installed. The marker names the list, so a
# longer list fetches again.
debian_programs() {
	local want suite deb dir ready missing=0
	ready=$DEBIAN_PROGRAMS/.ready-$(printf '%s\n' "${DEBIAN_PROGRAMS_WANTED[@]}" | cksum | cut -d' ' -f1)
	[ -e "$ready" ] && return 0
	log "fetching ${DEBIAN_PROGRAMS_WANTED[*]} into $DEBIAN_PROGRAMS (private)"
	private_apt "$DEBIAN_PROGRAMS/apt" "${DEBIAN_PROGRAM_SUITES[@]}" || return 0
	for suite in "${DEBIAN_PROGRAM_SUITES[@]}"; do
		rm -rf "${DEBIAN_PROGRAMS:?}/$suite"
	done
	for want in "${DEBIAN_PROGRAMS_WANTED[@]}"; do
		suite=${want#*/}
		dir=$DEBIAN_PROGRAMS/$suite/.debs
		mkdir -p "$dir"
		if ! (cd "$dir" && apt-get "${APT_OPTS[@]}" download -qq "$want" >/dev/null 2>&1); then
			log "${want%/*} is not in $suite; the tests that run it will say so"
			missing=1
			continue
		fi
		for deb in "$dir"/*.deb; do
			dpkg-deb -x "$deb" "$DEBIAN_PROGRAMS/$suite" && rm -f "$deb"
		done
		rmdir "$dir"
	done
	rm -rf "$DEBIAN_PROGRAMS/apt" "$DEBIAN_PROGRAMS"/.ready*
	# a download that failed (a mirror's hiccup, an interrupted run) is tried
	# again next time
	[ "$missing" = 1 ] || touch "$ready"
}
[ "$MODE" = test ] && debian_programs

if [ "$MODE" = build ]; then
	[ "$installed" = 1 ] || log "nothing to install: the build has what it needs${2:+ (ARCH=$2)}"
	exit 0
fi
have=()
for v in "${TOOLCHAINS[@]}"; do
	[ -x "/usr/lib/go-$v/bin/go" ] && have+=("$v")
done
[ "$installed" = 1 ] || log "nothing to install: the $MODE has what it needs"
log "Go toolchains installed: ${have[*]:-none}"
[ "${#have[@]}" -gt 0 ]
