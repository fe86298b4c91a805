# SPDX-License-Identifier: GPL-2.0
# profile-lib.sh: helpers for the end-to-end tests that run ctxprof-go against live Go processes.
# Sourced after lib.sh.

# e2e_capable: can this machine run the sampler? Prints the reason when not.
e2e_capable() {
	if [ "$(id -u)" != 0 ]; then
		echo "not root"
		return 1
	fi
	if [ ! -r /sys/kernel/btf/vmlinux ]; then
		echo "no kernel BTF at /sys/kernel/btf/vmlinux"
		return 1
	fi
	return 0
}

# e2e_setup WHAT: skips the calling test when sampling cannot run here; else
# makes $work, and removes it and stops every background job at exit.
e2e_setup() {
	local why
	if ! why=$(e2e_capable); then
		skip "$1" "$why"
		done_testing
	fi
	work=$(mktemp -d)
	trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
}

# share_verdict NAME RIGHT TOTAL DETAIL: ok when RIGHT is at least 97% of TOTAL.
share_verdict() {
	local pct=$(( 1000 * $2 / $3 ))
	if [ "$pct" -ge 970 ]; then
		ok "$1: $2/$3 right ($((pct / 10)).$((pct % 10))%)$4"
	else
		not_ok "$1: $2/$3 right ($((pct / 10)).$((pct % 10))%), need 97%$4"
	fi
}

# The trace IDs of testdata/traced, read from its source: NAME=HEX lines.
traced_constants() {
	sed -n 's/^\t\(trace[A-Za-z]*\|span[A-Za-z]*\) *= *"\([0-9a-f]*\)"$/\1=\2/p' \
		"$TOP/testdata/traced/main.go"
}

# jq program: per burn function of testdata/traced, samples in total, with the
# right trace ID, with a wrong one, and with none. Needs --argjson want.
JOBS_JQ='
[ .[] as $r | $r.stacks[] |
  { trace: $r.trace_id, n: .samples,
    job: ([.frames[].func | select(. as $f | $want | has($f))] | first) } |
  select(.job != null) ] |
group_by(.job) |
map(.[0].job as $j | $want[$j] as $t |
  { job: $j, total: (map(.n) | add),
    right: (map(select(.trace == $t)) | map(.n) | add // 0),
    wrong: (map(select(.trace != null and .trace != $t)) | map(.n) | add // 0),
    none: (map(select(.trace == null and $t != null)) | map(.n) | add // 0) })'

# want_json: {"main.burnDo": "<traceDo>", ..., "main.burnUnlabeled": null}
want_json() {
	local -A c
	local k v
	while IFS== read -r k v; do c[$k]=$v; done < <(traced_constants)
	jq -n --arg do "${c[traceDo]}" --arg nested "${c[traceNested]}" --arg set "${c[traceSet]}" \
		--arg many "${c[traceMany]}" --arg alloc "${c[traceAlloc]}" \
		'{"main.burnDo": $do, "main.burnNested": $nested, "main.burnSet": $set,
		  "main.burnMany": $many, "main.burnAlloc": $alloc, "main.burnUnlabeled": null}'
}

# records_hold_stats JSONL ERR: "same" when the records' samples add up to
# the statistics line's count, else what each says
records_hold_stats() {
	local json stat
	json=$(jq -s 'map(.samples) | add // 0' "$1")
	stat=$(sed -n 's/^ctxprof-go: \([0-9]*\) samples from.*/\1/p' "$2")
	if [ -n "$stat" ] && [ "$json" = "$stat" ] && [ "$json" -gt 0 ]; then
		echo same
	else
		echo "records hold $json samples, statistics say '${stat:-nothing}'"
	fi
}
