#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# output-files.sh: record files are private (0600), --append keeps what was there, SIGHUP reopens -o FILE.
#
# Target: testdata/traced built by the newest toolchain (plain), busy for the
# whole test. Records carry goroutine labels, which may name tenants or
# users, so files ctxprof-go creates are 0600 whatever the umask (022 here,
# which gives 0644 to a file created the usual way):
# 1. -o NEW, --pprof NEW and --html NEW, and `convert --pprof NEW`,
#    `--html NEW` and `--speedscope NEW`, are created 0600.
# 2. -o on an existing 0644 file truncates it and keeps its mode; with
#    --append, what was there stays first and the new records follow.
# 3. Log rotation: the file is renamed while ctxprof-go writes it, SIGHUP
#    makes it open -o FILE anew (0600), records go on into the new file,
#    and the two files together hold every sample the statistics count.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "output files"
umask 022
v=$(go_toolchains | tail -n 1)
bin=$(go_build "$v" plain) || { not_ok "go$v: build failed"; done_testing; }
nice -n 10 "$bin" -d 600s 2>/dev/null &
tp=$!
echo "# target: go$v testdata/traced (pid $tp), umask $(umask)"

mode() { stat -c %a "$1" 2>/dev/null || echo missing; }

# 1. new files
"$CTXPROF" -p "$tp" -F 499 -d 2 -o "$work/new.jsonl" --pprof "$work/new.pb.gz" --html "$work/new.html" 2>"$work/new.err"
check_eq "-o, --pprof and --html exit" 0 "$?"
check_eq "-o NEW is created 0600" 600 "$(mode "$work/new.jsonl")"
check_eq "--pprof NEW is created 0600" 600 "$(mode "$work/new.pb.gz")"
check_eq "--html NEW is created 0600" 600 "$(mode "$work/new.html")"
check_eq "the records in -o NEW are the statistics' samples" same \
	"$(records_hold_stats "$work/new.jsonl" "$work/new.err")"
"$CTXPROF" convert --pprof "$work/conv.pb.gz" "$work/new.jsonl" 2>"$work/conv.err"
check_eq "convert --pprof NEW exits" 0 "$?"
check_eq "convert --pprof NEW is created 0600" 600 "$(mode "$work/conv.pb.gz")"
for f in html speedscope; do
	"$CTXPROF" convert --$f "$work/conv.$f" "$work/new.jsonl" 2>"$work/conv.err"
	check_eq "convert --$f NEW is created 0600" 600 "$(mode "$work/conv.$f")"
done
# "-" is stdout, as perf, jq and pprof read it: no file named "-" is made
(
	cd "$work" || exit 1
	"$CTXPROF" -p "$tp" -F 499 -d 1 -o - 2>/dev/null | head -n 1 | jq -e .samples >/dev/null
	echo "records $?"
	"$CTXPROF" convert --pprof - new.jsonl 2>/dev/null | head -c 2 | xxd -p
	"$CTXPROF" convert --html - new.jsonl 2>/dev/null | head -n 1
	"$CTXPROF" convert --speedscope - new.jsonl 2>/dev/null | jq -r '."$schema"'
	[ -e - ] && echo "a file named -" || echo "no file named -"
) >"$work/dash.out" 2>&1
check_eq "-o -, convert --pprof -, --html -, --speedscope -: each on stdout" \
	"records 0|1f8b|<!DOCTYPE html>|https://www.speedscope.app/file-format-schema.json|no file named -" \
	"$(paste -sd '|' "$work/dash.out")"
# a file created the usual way, to show that the umask alone would not do it
: >"$work/usual"
echo "# for comparison, a file created by the shell here is $(mode "$work/usual")"

# 2. existing files keep their mode
printf '%s\n' '{"old":"line"}' >"$work/old.jsonl"
chmod 0644 "$work/old.jsonl"
"$CTXPROF" -p "$tp" -F 499 -d 2 -o "$work/old.jsonl" 2>"$work/old.err"
check_eq "-o on an existing 0644 file exits" 0 "$?"
check_eq "-o on an existing 0644 file keeps its mode" 644 "$(mode "$work/old.jsonl")"
check_eq "-o on an existing file starts it anew: every line is a record of this run" same \
	"$(records_hold_stats "$work/old.jsonl" "$work/old.err")"

printf '%s\n' '{"old":"line"}' >"$work/app.jsonl"
chmod 0640 "$work/app.jsonl"
"$CTXPROF" -p "$tp" -F 499 -d 2 -o "$work/app.jsonl" --append 2>"$work/app.err"
check_eq "--append exits" 0 "$?"
check_eq "--append keeps an existing file's mode" 640 "$(mode "$work/app.jsonl")"
check_eq "--append keeps what was there, first" '{"old":"line"}' "$(head -n 1 "$work/app.jsonl")"
check_eq "--append adds this run's records after it" same \
	"$(records_hold_stats <(tail -n +2 "$work/app.jsonl") "$work/app.err")"

# 3. rotation: rename, SIGHUP, records go on into a new private file
has_records() { [ -s "$1" ] && jq -e -s 'length > 0' "$1" >/dev/null 2>&1; }
if ctxprof_start "$work/rot.err" "$work/rot.jsonl" -p "$tp" -F 499 -i 1 -d 300; then
	samples_wait 1 60 has_records "$work/rot.jsonl"
	mv "$work/rot.jsonl" "$work/rot.jsonl.1"
	kill -HUP "$ctxprof"
	samples_wait 1 60 has_records "$work/rot.jsonl"
	ctxprof_stop
	rc=$?
else
	rc=$?
fi
check_eq "a run rotated with SIGHUP exits" 0 "$rc"
check_eq "after SIGHUP, -o FILE is created anew, 0600" 600 "$(mode "$work/rot.jsonl")"
before=$(jq -s 'length' "$work/rot.jsonl.1" 2>/dev/null || echo invalid)
after=$(jq -s 'length' "$work/rot.jsonl" 2>/dev/null || echo invalid)
if [[ $before =~ ^[1-9][0-9]*$ && $after =~ ^[1-9][0-9]*$ ]]; then
	ok "records before the rotation stay in the renamed file ($before), later ones go to the new one ($after), all valid JSON"
else
	not_ok "records before and after the rotation: renamed file '$before', new file '$after'"
fi
check_eq "the two files together hold every sample the statistics count" same \
	"$(records_hold_stats <(cat "$work/rot.jsonl.1" "$work/rot.jsonl") "$work/rot.err")"
kill "$tp" 2>/dev/null
done_testing
