#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# profile-alloc.sh: --alloc counts each request's allocations as the program's own runtime.MemProfile does.
#
# Workload: testdata/allocs, built by Go 1.19, 1.22 and the newest
# toolchain, plain and stripped, and by the newest as a PIE and with cgo: four requests under known trace IDs, each
# allocating in a function of its own (64-byte objects, 1 KiB, 64 KiB, and
# 4 KiB in a child goroutine the request starts), and an untraced
# goroutine (2 KiB). Each program waits for a start file, allocates for
# 3 s, and prints what its own runtime.MemProfile counted in that window,
# by function, unbiased as runtime/pprof does. All are recorded by one
# `ctxprof-go -p ... --alloc --pprof`, which ends when they have exited.
# Per program and function: alloc_objects and alloc_bytes of the stacks
# that hold the function within 2% of the program's own; per trace, its
# records' within 2% of its function's; the untraced function's
# allocations carry no trace ID; every such stack starts at the function
# (the runtime's malloc frames left out); `go tool pprof
# -sample_index=alloc_space -top` on the profile names the functions in
# the order of the program's own allocs profile. One program keeps Go's
# 512 KiB rate, the others set runtime.MemProfileRate 65536. A program
# that samples every 256 bytes has its probe rest past --alloc-share, and
# about what it missed said, at exit and on /metrics while it runs. A
# build that never references runtime.MemProfile is said to take no
# samples, exit 0. A net/http server
# with no labels has each request's allocations, its handler's and its
# child goroutine's, under the trace ID of its traceparent, and no probe
# hit stepped out of line (mProf_Malloc has a large frame before Go 1.23).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/profile-lib.sh"

e2e_setup "allocations by request (--alloc)"
mapfile -t all < <(go_toolchains)
want=()
for v in 1.19 1.22 "${all[-1]}"; do
	for have in "${all[@]}"; do
		[ "$have" != "$v" ] || { [[ " ${want[*]} " == *" $v "* ]] || want+=("$v"); }
	done
done
[ "${#want[@]}" -gt 0 ] || { skip "--alloc" "none of Go 1.19, 1.22 and the newest is installed"; done_testing; }

pids=()
declare -A name_of truth_of
n=0
# the newest also as a PIE and with cgo
builds=()
for v in "${want[@]}"; do builds+=("$v plain" "$v stripped"); done
builds+=("${all[-1]} pie" "${all[-1]} cgo")
for build in "${builds[@]}"; do
	read -r v variant <<<"$build"
	bin=$(go_build "$v" "$variant" allocs) || { not_ok "go$v $variant allocs: build failed"; continue; }
	# one keeps Go's default rate, the others sample more often
	rate=65536
	[ $n -ne 0 ] || rate=-1
	"$bin" -rate "$rate" -d 3s -start "$work/go" -out "$work/truth.$n.json" \
		-pprof "$work/own.$n.pb.gz" >"$work/ready.$n" 2>&1 &
	pids+=($!)
	name_of[$!]="go$v $variant"
	truth_of[$!]=$work/truth.$n.json
	wait_line "$work/ready.$n" '^ready' 100 || not_ok "go$v $variant allocs: not ready"
	n=$((n + 1))
done
[ "${#pids[@]}" -gt 0 ] || done_testing

ctxprof_start "$work/err" "$work/out.jsonl" -p "$(IFS=,; echo "${pids[*]}")" --alloc -i 3600 \
	--pprof "$work/alloc.pb.gz"
check_eq "ctxprof-go -p --alloc starts with ${#pids[@]} targets" 0 "$?" || { cat "$work/err"; done_testing; }
touch "$work/go"
wait "$ctxprof"
check_eq "ctxprof-go exits 0 once its targets have" 0 "$?" || cat "$work/err"
wait "${pids[@]}" 2>/dev/null
grep -i 'alloc\|warning' "$work/err" | sed 's/^/# /'
schema_verdict "alloc records" "$work/out.jsonl"
alloc_lost_verdict "" "$work/err"

for pid in "${pids[@]}"; do
	alloc_verdicts "${name_of[$pid]}" "$pid" "${truth_of[$pid]}" "$work/out.jsonl"
done

# go tool pprof -top on the profile and on the programs' own allocs
# profiles, merged: the allocating functions, in the same order
go=/usr/lib/go-${all[-1]}/bin/go
# alloc_top PROFILE...: the main.alloc* functions by allocated bytes, most first
alloc_top() {
	"$go" tool pprof -sample_index=alloc_space -top "$@" 2>/dev/null |
		awk '$NF ~ /^main\.alloc/ { print $NF }' | head -n 5 | tr '\n' ' ' | sed 's/ $//'
}
mapfile -t own < <(ls "$work"/own.*.pb.gz 2>/dev/null)
want_top=$(alloc_top "${own[@]}")
check_eq "go tool pprof -sample_index=alloc_space -top names Go's own allocs profile's functions, in its order" \
	"$want_top" "$(alloc_top "$work/alloc.pb.gz")"
echo "# go tool pprof -sample_index=alloc_space -top: $want_top"

# a net/http server with no labels (testdata/httpserver, -memrate 4096:
# it never references runtime.MemProfile), 12 requests each with a
# traceparent of its own: every allocation of a request, its handler's and
# its child goroutine's (parentGoid from Go 1.21, the goroutine-start probe
# before), under its trace ID, from the traceparent source
srv_builds=()
for v in 1.19 "${all[-1]}"; do
	[[ " ${all[*]} " == *" $v "* ]] && [[ " ${srv_builds[*]} " != *" $v "* ]] && srv_builds+=("$v")
done
srv_pids=()
declare -A srv_addr srv_name
for v in "${srv_builds[@]}"; do
	bin=$(go_build "$v" plain httpserver) || { not_ok "go$v httpserver: build failed"; continue; }
	: >"$work/srv.$v"
	"$bin" -memrate 4096 >"$work/srv.$v" 2>/dev/null &
	wait_line "$work/srv.$v" '^https ' 600 || { not_ok "go$v httpserver: no address"; continue; }
	srv_pids+=($!)
	srv_addr[$!]=$(awk '$1 == "http" { print $2 }' "$work/srv.$v")
	srv_name[$!]="go$v httpserver"
done
if [ "${#srv_pids[@]}" -gt 0 ]; then
	ctxprof_start "$work/srv.err" "$work/srv.jsonl" -p "$(IFS=,; echo "${srv_pids[*]}")" --alloc -i 3600
	check_eq "ctxprof-go --alloc on ${#srv_pids[@]} net/http servers starts" 0 "$?" || cat "$work/srv.err"
	for pid in "${srv_pids[@]}"; do
		for i in $(seq 1 12); do
			tid=$(printf 'a110cde0%08x%016x' "$pid" "$i")
			curl -sS --max-time 60 -H "traceparent: 00-$tid-00f067aa0ba902b7-01" \
				"http://${srv_addr[$pid]}/alloc?kb=64&n=16" >/dev/null || not_ok "${srv_name[$pid]}: request $i failed"
		done
	done
	ctxprof_stop
	for pid in "${srv_pids[@]}"; do
		xol_verdict "${srv_name[$pid]} --alloc" "$pid"
	done
	kill "${srv_pids[@]}" 2>/dev/null
	wait "${srv_pids[@]}" 2>/dev/null
	for pid in "${srv_pids[@]}"; do
		want=$(for i in $(seq 1 12); do printf 'a110cde0%08x%016x\n' "$pid" "$i"; done | jq -Rsc 'split("\n") | map(select(. != ""))')
		for f in main.handleAlloc main.childAlloc; do
			# per trace: its sources and its bytes in F
			got=$(jq -sc --argjson pid "$pid" --arg f "$f" '[.[] | select(.origin == "alloc" and .pid == $pid) |
				. as $r | .stacks[] | select(any(.frames[]; .func == $f)) |
				{t: $r.trace_id, s: $r.trace_source, b: .alloc_bytes}] | group_by(.t) |
				map({t: .[0].t, s: (map(.s) | unique), b: (map(.b) | add)})' "$work/srv.jsonl")
			check_eq "${srv_name[$pid]} $f: every request's allocations under its traceparent's trace ID" \
				"$want" "$(jq -c 'map(.t) | sort' <<<"$got")"
			check_eq "${srv_name[$pid]} $f: from the traceparent source" '["traceparent"]' \
				"$(jq -c 'map(.s[]) | unique' <<<"$got")"
			# 16 slices of 64 KiB, each sampled at one in 4096 bytes but for e^-16 of
			# them, each counted once (a stack that grows runs mProf_Malloc's first
			# instructions again), and 16 of 24 bytes (the sink's), a few sampled
			check_eq "${srv_name[$pid]} $f: each request's 16 slices of 64 KiB, each once, and 16 of 24 bytes" \
				'[true]' "$(jq -c 'map(.b >= 1048576 and .b < 1048576 + 16 * 4096) | unique' <<<"$got")"
		done
	done
fi

# past its budget: a program that samples one allocation in 256 bytes
# (about 250,000 a second here) has its probe rest, and what it missed said
bin=$(go_build "${all[-1]}" plain allocs)
rm -f "$work/go"
"$bin" -rate 256 -d 2s -start "$work/go" -out "$work/busy.json" >"$work/busy.ready" 2>&1 &
busy=$!
wait_line "$work/busy.ready" '^ready' 100
"$CTXPROF" -p "$busy" --alloc -o "$work/busy.jsonl" --metrics-addr 127.0.0.1:0 2>"$work/busy.err" &
ctxprof=$!
wait_line "$work/busy.err" 'Ctrl-C to stop' 300
addr=$(sed -n 's|^ctxprof-go: serving /metrics on http://\([^/]*\)/metrics$|\1|p' "$work/busy.err")
touch "$work/go"
# /metrics while it runs: the last page read before it exits
page=
while kill -0 "$ctxprof" 2>/dev/null; do
	got=$(curl -sS --max-time 2 "http://$addr/metrics" 2>/dev/null) && page=$got
	sleep 0.3
done
wait "$ctxprof"
check_eq "go${all[-1]} at -rate 256: ctxprof-go --alloc exits 0" 0 "$?"
wait "$busy" 2>/dev/null
line=$(grep -m1 'allocation probes of 1 processes gone saw' "$work/busy.err")
read -r seen missed < <(sed -n 's/.* saw \([0-9]*\) sampled allocations and missed about \([0-9]*\)$/\1 \2/p' <<<"$line")
truth=$(jq '[.functions[] | .raw_objects] | add' "$work/busy.json" 2>/dev/null)
echo "# -rate 256: $line; the program's own MemProfile: $truth sampled"
if [ -n "${seen:-}" ] && [ "${missed:-0}" -gt 0 ] && [ -n "$truth" ] &&
	[ $((seen + missed)) -ge $((truth / 2)) ] && [ $((seen + missed)) -le $((truth * 3 / 2)) ]; then
	ok "go${all[-1]} at -rate 256: the probe rested past --alloc-share and says about how many it missed: $seen seen, about $missed missed, of $truth"
else
	not_ok "go${all[-1]} at -rate 256: no line says what a rested probe missed, or not near the program's $truth: $(tr '\n' '|' <"$work/busy.err")"
fi
check_eq "go${all[-1]} at -rate 256: its records count what the probe saw" "$seen" \
	"$(jq -s 'map(select(.origin == "alloc") | .samples) | add' "$work/busy.jsonl")"
mseen=$(awk '$1 == "ctxprof_alloc_samples_seen_total" { print $2 }' <<<"$page")
mmissed=$(awk '$1 == "ctxprof_alloc_samples_missed_total" { print $2 }' <<<"$page")
if [ "${mseen:-0}" -gt 0 ] && [ "${mmissed:-0}" -gt 0 ] && [ "$mseen" -le "${seen:-0}" ]; then
	ok "go${all[-1]} at -rate 256: /metrics while it ran: $mseen sampled allocations seen, about $mmissed missed"
else
	not_ok "go${all[-1]} at -rate 256: /metrics said seen '${mseen:-}', missed '${mmissed:-}' (the exit line: $seen seen)"
fi

# a build that never references runtime.MemProfile: the linker turned memory profiling off
v=${all[-1]}
nomem=$work/nomem/allocs
if (cd "$TOP/testdata/allocs" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=mod \
	"/usr/lib/go-$v/bin/go" build -tags nomemprofile -o "$nomem" .); then
	"$nomem" -d 2s -out "$work/nomem.json" >/dev/null 2>&1 &
	nomem_pid=$!
	"$CTXPROF" -p "$nomem_pid" --alloc -o "$work/nomem.jsonl" 2>"$work/nomem.err"
	check_eq "go$v without runtime.MemProfile: ctxprof-go --alloc exits 0" 0 "$?"
	wait "$nomem_pid" 2>/dev/null
	if grep -q "pid $nomem_pid (allocs): --alloc: no allocations are sampled: runtime.MemProfileRate is 0: the linker turned memory profiling off" "$work/nomem.err"; then
		ok "go$v without runtime.MemProfile: said: $(grep -m1 'no allocations are sampled' "$work/nomem.err")"
	else
		not_ok "go$v without runtime.MemProfile: no line says it takes no allocation samples: $(tr '\n' '|' <"$work/nomem.err")"
	fi
	check_eq "go$v without runtime.MemProfile: no alloc records" 0 \
		"$(jq -s 'map(select(.origin == "alloc")) | length' "$work/nomem.jsonl")"
else
	not_ok "go$v allocs -tags nomemprofile: build failed"
fi
done_testing
