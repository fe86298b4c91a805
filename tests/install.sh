#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# install.sh: `make install` into a staging root; the installed binary, man page and systemd unit.
#
# Runs `make install DESTDIR=$tmp PREFIX=/usr/local` and checks the three
# files and their modes; that the binary runs (--version); that the man page
# renders at 80 columns with neither groff -ww nor mandoc -Tlint warning, is
# found by man(1) in the staged tree, and names every option that the
# program's --help and its subcommands' list; that the unit's ExecStart= is
# the installed binary with --all -o /var/log/ctxprof-go/cpu.jsonl and that
# systemd-analyze verify finds nothing in it (on a copy whose ExecStart= has
# the staging root in front, the one path that differs from a real install,
# with MANPATH on the staged pages so that Documentation= is checked too),
# and rates it OK or better (`security --offline`). PREFIX=/usr and BINDIR
# must move the paths. As root, the unit's capability bounding set is tried
# on testdata/traced (newest Go) run by uid 65534 from a deleted mode-0711
# file, a Go service as a host can have it: with the whole set, it is
# sampled with named frames; without each one, the run fails or its frames
# lose their names. Then the unit's sandbox, emulated with namespaces and
# read-only mounts, must still sample it, and an strace of a run must make
# none of the calls that the unit's seccomp settings deny. systemd is not
# needed (nor used) to run the unit. Last, `make uninstall` removes the
# three files, only.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
stage=$tmp/stage
bin=$stage/usr/local/bin/ctxprof-go
page=$stage/usr/local/share/man/man8/ctxprof-go.8
unit=$stage/usr/local/lib/systemd/system/ctxprof-go.service
mk() { make -C "$TOP" --no-print-directory "$@"; }

log=$(mk install DESTDIR="$stage" PREFIX=/usr/local 2>&1)
rc=$?
modes=$(stat -c '%a' "$bin" "$page" "$unit" 2>/dev/null | tr '\n' ' ')
if [ "$rc" -eq 0 ] && [ "$modes" = "755 644 644 " ]; then
	ok "make install DESTDIR PREFIX=/usr/local: bin, man8, unit, modes $modes($(grep -c '^  INSTALL ' <<<"$log") INSTALL lines)"
else
	not_ok "make install: exit $rc, modes '$modes': $log"
	done_testing
fi

want=$("$TOP/ctxprof-go" --version)
got=$("$bin" --version 2>&1)
check_eq "installed binary: --version" "$want" "$got"

# --- the man page ---
warn=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
if [ -z "$warn" ]; then
	ok "man page: groff -man -ww, no warning ($(wc -l <"$page") lines of roff)"
else
	not_ok "man page: groff -man -ww: $warn"
fi
if command -v mandoc >/dev/null; then
	warn=$(mandoc -Tlint "$page" 2>&1)
	if [ -z "$warn" ]; then
		ok "man page: mandoc -Tlint, nothing"
	else
		not_ok "man page: mandoc -Tlint: $warn"
	fi
else
	skip "man page: mandoc -Tlint" "mandoc is not installed (make deps installs it)"
fi
found=$(MANPATH=$stage/usr/local/share/man man -w 8 ctxprof-go 2>&1)
text=$(MANPATH=$stage/usr/local/share/man MANWIDTH=80 man 8 ctxprof-go 2>"$tmp/man.err" | col -b)
if [ "$found" = "$page" ] && [ ! -s "$tmp/man.err" ] && grep -q '^NAME' <<<"$text"; then
	ok "man page: man -w 8 ctxprof-go finds the installed page; $(wc -l <<<"$text") lines at 80 columns, no warning"
else
	not_ok "man page: man -w gave '$found' (want $page); stderr: $(cat "$tmp/man.err")"
fi

# Every option line of the usages ("  -p, --pid PID", "      --pprof FILE"),
# as the page must show it: "-p, --pid", "--pprof".
options=$(for sub in "" check addr2line convert; do
	# shellcheck disable=SC2086 # no subcommand is no argument
	"$bin" $sub --help
done | sed -n 's/^ \{2,\}\(-[a-zA-Z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\1\2/p' | sort -u)
missing=$(while read -r o; do
	grep -qF -- "$o" <<<"$text" || printf '%s; ' "$o"
done <<<"$options")
n=$(wc -l <<<"$options")
if [ "$n" -ge 20 ] && [ -z "$missing" ]; then
	ok "man page: all $n options of the --help texts (main, check, addr2line, convert)"
else
	not_ok "man page: $n options in --help; not in the page: ${missing:-none}"
fi

# --- the unit ---
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
check_eq "unit: ExecStart=" "/usr/local/bin/ctxprof-go --all --realtime -o /var/log/ctxprof-go/cpu.jsonl --append" "$exec_start"
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$tmp/verify"
	sed "s|^ExecStart=/usr/local/bin/|ExecStart=$stage/usr/local/bin/|" "$unit" >"$tmp/verify/ctxprof-go.service"
	out=$(MANPATH=$stage/usr/local/share/man systemd-analyze verify "$tmp/verify/ctxprof-go.service" 2>&1)
	rc=$?
	# the verdict rests on silence: make sure a fault is not silent
	mkdir -p "$tmp/broken"
	sed 's/^Restart=/Restrt=/' "$tmp/verify/ctxprof-go.service" >"$tmp/broken/ctxprof-go.service"
	control=$(MANPATH=$stage/usr/local/share/man systemd-analyze verify "$tmp/broken/ctxprof-go.service" 2>&1 | grep -c "Restrt")
	if [ "$rc" -eq 0 ] && [ -z "$out" ] && [ "$control" -ge 1 ]; then
		ok "unit: systemd-analyze verify, nothing (a misspelt key in a copy: $control line about it)"
	else
		not_ok "unit: systemd-analyze verify: exit $rc: $out (control: $control lines)"
	fi
	out=$(systemd-analyze security --offline=yes "$tmp/verify/ctxprof-go.service" 2>&1)
	level=$(sed -n 's/.*Overall exposure level for ctxprof-go.service: \([0-9.]* [A-Z]*\).*/\1/p' <<<"$out")
	case $level in
	*" OK" | *" SAFE") ok "unit: systemd-analyze security --offline: exposure $level" ;;
	"") skip "unit: systemd-analyze security --offline" "no exposure level in its output: $(tail -n 1 <<<"$out")" ;;
	*) not_ok "unit: exposure $level, want OK or SAFE" ;;
	esac
else
	skip "unit: systemd-analyze verify" "systemd-analyze is not installed"
fi

# --- other prefixes ---
usr=$tmp/usr
mk install DESTDIR="$usr" PREFIX=/usr >/dev/null 2>&1
got="$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$usr/lib/systemd/system/ctxprof-go.service" 2>/dev/null) $(grep -c '^\.I /usr/bin/ctxprof-go$\|^\.I /lib/systemd/system/ctxprof-go.service$' "$usr/usr/share/man/man8/ctxprof-go.8" 2>/dev/null)"
if [ -x "$usr/usr/bin/ctxprof-go" ] && [ "$got" = "/usr/bin/ctxprof-go 2" ]; then
	ok "PREFIX=/usr: /usr/bin, /usr/share/man/man8, /lib/systemd/system; ExecStart= and the page's FILES follow"
else
	not_ok "PREFIX=/usr: ExecStart= and FILES entries: '$got'; $(cd "$usr" && find . -type f | tr '\n' ' ')"
fi
opt=$tmp/opt
mk install DESTDIR="$opt" BINDIR=/opt/ctxprof/bin UNITDIR=/etc/systemd/system >/dev/null 2>&1
got=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$opt/etc/systemd/system/ctxprof-go.service" 2>/dev/null)
if [ -x "$opt/opt/ctxprof/bin/ctxprof-go" ] && [ "$got" = /opt/ctxprof/bin/ctxprof-go ]; then
	ok "BINDIR=/opt/ctxprof/bin UNITDIR=/etc/systemd/system: ExecStart=$got"
else
	not_ok "BINDIR, UNITDIR: ExecStart='$got'; $(cd "$opt" && find . -type f | tr '\n' ' ')"
fi

# --- the unit's capabilities, on a Go service as a host has them ---
# Each capability in the unit, what goes wrong without it: "refused REGEX"
# (exit 1 with that message) or "bare" (it runs, its frames have no names).
declare -A without=(
	[CAP_BPF]="refused missing: CAP_BPF"
	[CAP_PERFMON]="refused missing: CAP_PERFMON"
	[CAP_SYS_PTRACE]="refused missing: CAP_SYS_PTRACE"
	[CAP_DAC_READ_SEARCH]="refused ^ctxprof-go: pid [0-9]+ \(traced\): cannot read its executable( .+)?: .*Permission denied"
	[CAP_CHECKPOINT_RESTORE]="bare"
	[CAP_SYS_NICE]="realtime"
)
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit")
# setpriv's spelling: "+bpf,+perfmon,..."
setpriv_caps() {
	local c out=""
	for c in "$@"; do
		c=${c#CAP_}
		out+=",+${c,,}"
	done
	printf '%s' "${out#,}"
}
# samples_bare FILE: "SAMPLES BARE FRAMES" over the records of FILE, frames
# counted once per sample
samples_bare() {
	jq -rs '[.[].samples] | add // 0 | tostring' "$1" | tr '\n' ' '
	jq -rs '[.[].stacks[] | .samples as $n | .frames[] | {n: $n, bare: (.func | startswith("0x"))}] |
		"\(map(select(.bare) | .n) | add // 0) \(map(.n) | add // 0)"' "$1"
}
enough() { [ "$(jq -s '[.[].samples] | add // 0' "$1")" -ge 100 ]; }

if why=$(e2e_capable); then
	v=$(go_toolchains | tail -n 1)
	src=$(go_build "$v" plain) || { not_ok "build go$v plain"; done_testing; }
	mkdir "$tmp/svc"
	chmod 755 "$tmp" "$tmp/svc"
	cp "$src" "$tmp/svc/traced"
	chown 65534:65534 "$tmp/svc/traced"
	chmod 0711 "$tmp/svc/traced"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/svc/traced" -d 600s >/dev/null 2>&1 &
	pid=$!
	# deleted once it runs: until setpriv has exec'd it, the file is needed
	for _ in $(seq 300); do
		[ "$(readlink "/proc/$pid/exe")" = "$tmp/svc/traced" ] && break
		sleep 0.1
	done
	rm -f "$tmp/svc/traced"
	# ctxprof_start runs $CTXPROF: the installed binary in the unit's bounding set
	cat >"$tmp/capped" <<-EOF
		#!/bin/sh
		exec setpriv --bounding-set=-all,\$CAPS --inh-caps=-all -- "$bin" "\$@"
	EOF
	chmod 755 "$tmp/capped"
	CTXPROF=$tmp/capped
	export CAPS
	# shellcheck disable=SC2086 # the list is words
	CAPS=$(setpriv_caps $caps)
	sample_until 1 120 enough "$tmp/err" "$tmp/out.jsonl" -p "$pid"
	rc=$?
	read -r n bare frames < <(samples_bare "$tmp/out.jsonl")
	traced=$(jq -rs '[.[] | select(.trace_id != null) | .samples] | add // 0' "$tmp/out.jsonl")
	if [ "$rc" -eq 0 ] && [ "$n" -ge 100 ] && [ "$traced" -gt 0 ] && [ $((bare * 100)) -le "$frames" ]; then
		ok "the unit's capabilities ($caps): uid 65534's deleted 0711 go$v binary: $n samples, $traced with a trace ID, $bare of $frames frames bare"
	else
		not_ok "the unit's capabilities: exit $rc, $n samples, $traced with a trace ID, $bare of $frames frames bare (at most 1%): $(tail -n 2 "$tmp/err")"
	fi
	for cap in $caps; do
		# shellcheck disable=SC2086
		CAPS=$(setpriv_caps ${caps/$cap/})
		case ${without[$cap]:-} in
		refused*)
			re=${without[$cap]#refused }
			out=$("$CTXPROF" -p "$pid" -d 5 -o "$tmp/x.jsonl" 2>&1)
			rc=$?
			if [ "$rc" -eq 1 ] && grep -qE -- "$re" <<<"$out"; then
				ok "without $cap: exit 1: $(grep -E -- "$re" <<<"$out" | head -n 1 | cut -c1-120)"
			else
				not_ok "without $cap: exit $rc, want 1 and /$re/: $out"
			fi
			;;
		bare)
			sample_until 1 120 enough "$tmp/err" "$tmp/out.jsonl" -p "$pid"
			rc=$?
			read -r n bare frames < <(samples_bare "$tmp/out.jsonl")
			if [ "$rc" -eq 0 ] && [ "$n" -ge 100 ] && [ $((bare * 100)) -ge $((frames * 99)) ]; then
				ok "without $cap: $n samples, but $bare of $frames frames bare (the deleted binary is read through /proc/PID/map_files)"
			else
				not_ok "without $cap: exit $rc, $n samples, $bare of $frames frames bare: want at least 99% bare, else the unit need not grant it"
			fi
			# bare on purpose: not counted with the frames of the other runs
			: >"$tmp/out.jsonl"
			;;
		realtime)
			out=$("$CTXPROF" -p "$pid" -d 1 -v --realtime -o "$tmp/x.jsonl" 2>&1)
			rc=$?
			# shellcheck disable=SC2086
			with=$(CAPS=$(setpriv_caps $caps) "$CTXPROF" -p "$pid" -d 1 -v --realtime -o "$tmp/x.jsonl" 2>&1)
			if [ "$rc" -eq 0 ] && grep -q 'their reader ran SCHED_OTHER (SCHED_FIFO is not permitted' <<<"$out" &&
				grep -q 'their reader ran SCHED_FIFO$' <<<"$with"; then
				ok "without $cap: it runs, but --realtime's reader of the rings is not real-time (a starved agent loses samples)"
			elif grep -q 'their reader ran SCHED_OTHER' <<<"$with"; then
				skip "without $cap" "no real-time scheduling here even with it: $(grep -o 'their reader ran.*' <<<"$with")"
			else
				not_ok "without $cap: exit $rc, want 0 and a reader that is not real-time: $(grep -o 'their reader ran.*' <<<"$out"); with it: $(grep -o 'their reader ran.*' <<<"$with")"
			fi
			;;
		*) not_ok "$cap is in the unit, and this test does not know what it is for" ;;
		esac
	done

	# The unit's mount sandbox, as near as can be without systemd: a mount
	# namespace where every mount is read-only but the log directory
	# (ProtectSystem=strict, ProtectKernelTunables, ProtectControlGroups,
	# ProtectHome=read-only; stricter, since /proc is read-only too), a /dev
	# of pseudo devices only (PrivateDevices), network and UTS namespaces
	# (PrivateNetwork, ProtectHostname), no new privileges, the bounding set.
	# a chroot whose root is no mount point cannot make a namespace's mounts private
	if ! why=$(private_mounts_why); then
		skip "the unit's sandbox, emulated" "$why"
	else
		mkdir "$tmp/logs" "$tmp/dev"
		cat >"$tmp/sandbox" <<-EOF
			#!/bin/sh
			set -e
			mount --bind "$tmp/logs" "$tmp/logs"
			mount -t tmpfs -o mode=755 tmpfs "$tmp/dev"
			for n in null zero full random urandom tty; do
				touch "$tmp/dev/\$n"
				mount --bind "/dev/\$n" "$tmp/dev/\$n"
			done
			mount --move "$tmp/dev" /dev
			awk '{ print \$5 }' /proc/self/mountinfo | while read -r m; do
				[ "\$m" = "$tmp/logs" ] || [ "\$m" = /sys/kernel/tracing ] ||
					mount -o remount,bind,ro "\$m" 2>/dev/null || true
			done
			awk '\$5 == "/" || \$5 == "/sys" || \$5 == "/usr" || \$5 == "/var/log" { print \$6 }' /proc/self/mountinfo |
				grep -qv '^ro' && { echo "sandbox: a mount is still writable" >&2; exit 3; }
			exec setpriv --no-new-privs --bounding-set=-all,\$CAPS --inh-caps=-all -- "$bin" "\$@"
		EOF
		chmod 755 "$tmp/sandbox"
		printf '#!/bin/sh\nexec unshare -m -n -u --propagation private %s "$@"\n' "$tmp/sandbox" >"$tmp/sandboxed"
		chmod 755 "$tmp/sandboxed"
		CTXPROF=$tmp/sandboxed
		# shellcheck disable=SC2086
		CAPS=$(setpriv_caps $caps)
		# beside it, a zero-code server: its requests' traceparent, through uprobes
		mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
		srv_bin=$(go_build "$v" plain httpserver)
		"$srv_bin" -burn 50ms >"$tmp/srv.out" 2>&1 &
		srv=$!
		for _ in $(seq 100); do grep -q '^http ' "$tmp/srv.out" && break; sleep 0.1; done
		srv_addr=$(awk '$1 == "http" { print $2 }' "$tmp/srv.out")
		tp=00-5a1dbed0000000000000000000000001-00f067aa0ba902b7-01
		zc_traced() {
			enough "$1" && [ "$(jq -rs --argjson p "$srv" '[.[] | select(.pid == $p and .trace_id != null) | .trace_id] | unique | join(" ")' "$1")" = "${tp:3:32}" ]
		}
		(sleep 2; for _ in $(seq 20); do curl -s -o /dev/null -H "traceparent: $tp" "http://$srv_addr/work"; done) &
		sample_until 1 120 zc_traced "$tmp/err" "$tmp/logs/cpu.jsonl" -p "$pid,$srv"
		rc=$?
		read -r n bare frames < <(samples_bare "$tmp/logs/cpu.jsonl")
		if [ "$rc" -eq 0 ] && [ "$n" -ge 100 ] && [ $((bare * 100)) -le "$frames" ]; then
			ok "the unit's sandbox, emulated: $n samples, $bare of $frames frames bare"
		else
			not_ok "the unit's sandbox, emulated: exit $rc, $n samples, $bare of $frames frames bare: $(tail -n 2 "$tmp/err")"
		fi
		check_eq "the unit's sandbox, emulated: a zero-code server's trace ID, from its requests' traceparent (tracefs uprobe events)" \
			"${tp:3:32}" "$(jq -rs --argjson p "$srv" '[.[] | select(.pid == $p and .trace_id != null) | .trace_id] | unique | join(" ")' "$tmp/logs/cpu.jsonl")"
		kill "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
	fi

	# What seccomp would meet: the calls of a run (strace), against the
	# unit's SystemCallFilter= deny list, RestrictAddressFamilies=AF_UNIX
	# and MemoryDenyWriteExecute=.
	groups=$(sed -n 's/^SystemCallFilter=~//p' "$unit")
	if command -v strace >/dev/null && command -v systemd-analyze >/dev/null && [ -n "$groups" ]; then
		strace -f -qq -o "$tmp/strace" "$bin" -p "$pid" -d 3 -i 1 -o "$tmp/s.jsonl" 2>/dev/null
		rc=$?
		calls=$(sed -E 's/^[0-9]+ +//' "$tmp/strace" | grep -oE '^[a-z_0-9]+\(' | tr -d '(' | sort -u)
		# shellcheck disable=SC2086 # the groups are words
		denied=$(for g in $groups; do systemd-analyze syscall-filter "$g"; done |
			awk 'NF == 1 && $1 !~ /^[@#]/ { print $1 }' | sort -u)
		hits=$(comm -12 <(printf '%s\n' "$calls") <(printf '%s\n' "$denied") | tr '\n' ' ')
		sockets=$(grep -E '(^| )socket\(' "$tmp/strace" | grep -cv 'AF_UNIX')
		wx=$(grep -cE '(mmap|mprotect|pkey_mprotect)\(.*PROT_WRITE\|PROT_EXEC' "$tmp/strace")
		if [ "$rc" -eq 0 ] && [ -n "$calls" ] && [ -z "$hits" ] && [ "$sockets" -eq 0 ] && [ "$wx" -eq 0 ]; then
			ok "the unit's seccomp rules: $(wc -l <<<"$calls") distinct calls in a run, none of $(wc -l <<<"$denied") denied, no socket but AF_UNIX, no W+X mapping"
		else
			not_ok "the unit's seccomp rules: exit $rc; denied calls made: ${hits:-none}; $sockets other sockets; $wx W+X mappings"
		fi
	else
		skip "the unit's seccomp rules" "needs strace and systemd-analyze"
	fi
	kill "$pid" 2>/dev/null
else
	skip "the unit's capabilities on a running Go program" "$why"
fi

# --- uninstall: the three files, and nothing else ---
touch "$stage/usr/local/bin/other"
mk uninstall DESTDIR="$stage" PREFIX=/usr/local >/dev/null 2>&1
left=$(cd "$stage" && find . -type f | sort | paste -sd ' ')
check_eq "make uninstall: files left in the staging root" "./usr/local/bin/other" "$left"

done_testing
