#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# check-matrix.sh: `check --json` on testdata/traced built by every installed Go, in five variants.
#
# Builds: testdata/traced with each toolchain as plain, stripped (-ldflags=-s -w),
# pie, cgo (C __thread variables ahead of runtime.tlsg) and cgo-stripped.
# Then testdata/waitkinds, which sets labels with pprof.Do alone, plain,
# stripped and PIE: the label probe goes on pprof.Do's set (label_probe).
# Expected values come from outside ctxprof-go: the version from the
# toolchain's own `go version`, offsets from llvm-dwarfdump (for stripped
# builds, from their unstripped twin) and from runtime_facts' table, the TLS slot
# from readelf/nm arithmetic or objdump's disassembly of runtime.stackcheck.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# the Go runtime's offsets, by release, from its runtime2.go: g.m m.curg g.labels g.goid labels
runtime_facts() {
	case $1 in
	1.19) echo "48 192 360 152 map" ;;
	1.21 | 1.22) echo "48 192 344 152 map" ;;
	1.23) echo "48 192 352 160 map" ;;
	1.24) echo "48 192 352 160 slice" ;;
	1.26 | 1.27) echo "48 184 352 152 slice" ;;
	*) echo "" ;;
	esac
}

# Member offsets and byte sizes as "struct.member=N" lines, from llvm-dwarfdump.
dwarfdump_members() {
	llvm-dwarfdump --show-children --name=runtime.g --name=runtime.m \
		--name='hash<string,string>' --name='bucket<string,string>' \
		--name=runtime/pprof.label --name=internal/runtime/pprof/label.Label \
		--name=runtime.gobuf "$1" |
		awk '
		/DW_TAG_structure_type/ { want = 1; st = ""; m = ""; next }
		/DW_TAG_typedef|DW_TAG_pointer_type/ { st = ""; next }
		/DW_TAG_member/ { m = ""; next }
		/DW_AT_name/ {
			n = $0; sub(/.*\("/, "", n); sub(/"\).*/, "", n)
			if (want) { st = n; want = 0 } else m = n
			next
		}
		/DW_AT_byte_size/ && st != "" && m == "" {
			v = $0; sub(/.*\(/, "", v); sub(/\).*/, "", v); print st ".size=" v; next
		}
		/DW_AT_data_member_location/ && st != "" {
			v = $0; sub(/.*\(/, "", v); sub(/\).*/, "", v); print st "." m "=" v
		}' | sort -u
}

dd() { # dd FILE KEY: one value from dwarfdump_members output
	awk -F= -v k="$2" '$1 == k { print $2; exit }' "$1"
}

# The g slot as readelf, nm and objdump see it.
tls_expected() {
	local bin=$1 tls memsz align tlsg insn
	tls=$(readelf -lW "$bin" | awk '$1 == "TLS" { print $6, $NF }')
	if [ -z "$tls" ]; then
		echo -8
		return
	fi
	read -r memsz align <<<"$tls"
	tlsg=$(nm "$bin" 2>/dev/null | awk '$3 == "runtime.tlsg" { print $1 }')
	if [ -n "$tlsg" ]; then
		echo $(( 0x$tlsg - ((memsz + align - 1) / align * align) ))
		return
	fi
	insn=$(objdump -d --disassemble=runtime.stackcheck.abi0 "$bin" |
		grep -m1 -oE 'mov +(%fs:0x[0-9a-f]+,%rax|\$0x[0-9a-f]+,%rcx)')
	insn=${insn##*0x}
	insn=${insn%%,*}
	[ -n "$insn" ] || return
	# objdump prints the sign-extended 64-bit value, which bash reads as negative;
	# a 32-bit rendering would need its sign restored
	insn=$(( 0x$insn ))
	(( insn > 0x7fffffff && insn <= 0xffffffff )) && insn=$(( insn - 0x100000000 ))
	echo "$insn"
}

verify() { # verify VERSION VARIANT BIN TWIN
	local v=$1 var=$2 bin=$3 twin=$4 json name="go$v $var" facts want got
	local -a f
	json=$("$CTXPROF" check --json "$bin")
	local rc=$?
	if [ $rc -ne 0 ] || ! jq -e . >/dev/null <<<"$json"; then
		not_ok "$name: check exited $rc: $json"
		return
	fi
	j() { jq -r "$1" <<<"$json"; }
	check_eq "$name supported" true "$(j .supported)"
	check_eq "$name version (go version)" "$(go_version_of "$v" "$bin")" "$(j .go_version)"

	local expect_source=dwarf
	case $var in *stripped) expect_source=table ;; esac
	check_eq "$name source" "$expect_source" "$(j .source)"

	# offsets from the unstripped twin's DWARF, read by llvm-dwarfdump
	local ddf
	ddf=$(mktemp)
	dwarfdump_members "$twin" >"$ddf"
	want="$(dd "$ddf" runtime.g.m) $(dd "$ddf" runtime.m.curg) $(dd "$ddf" runtime.g.labels) $(dd "$ddf" runtime.g.goid)"
	got=$(j '[.offsets["g.m","m.curg","g.labels","g.goid"]] | map(tostring) | join(" ")')
	check_eq "$name g.m m.curg g.labels g.goid (llvm-dwarfdump)" "$want" "$got"

	facts=$(runtime_facts "$v")
	if [ -n "$facts" ]; then
		read -ra f <<<"$facts"
		check_eq "$name offsets and labels layout (runtime_facts)" \
			"${f[0]} ${f[1]} ${f[2]} ${f[3]} ${f[4]}" "$got $(j .labels_layout)"
	fi

	if [ "$(j .labels_layout)" = map ]; then
		want="$(dd "$ddf" 'hash<string,string>.count') $(dd "$ddf" 'hash<string,string>.flags') $(dd "$ddf" 'hash<string,string>.B')"
		want="$want $(dd "$ddf" 'hash<string,string>.buckets') $(dd "$ddf" 'hash<string,string>.oldbuckets')"
		want="$want $(dd "$ddf" 'bucket<string,string>.tophash') $(dd "$ddf" 'bucket<string,string>.keys') $(dd "$ddf" 'bucket<string,string>.values')"
		want="$want $(dd "$ddf" 'bucket<string,string>.overflow') $(dd "$ddf" 'bucket<string,string>.size')"
		got=$(j '[.offsets["hmap.count","hmap.flags","hmap.B","hmap.buckets","hmap.oldbuckets","bucket.tophash","bucket.keys","bucket.values","bucket.overflow","bucket.size"]] | map(tostring) | join(" ")')
		check_eq "$name hmap and bucket members (llvm-dwarfdump)" "$want" "$got"
	else
		local lt=runtime/pprof.label key=key value=value
		if grep -q '^internal/runtime/pprof/label.Label' "$ddf"; then
			lt=internal/runtime/pprof/label.Label key=Key value=Value
		fi
		want="$(dd "$ddf" "$lt.size") $(dd "$ddf" "$lt.$key") $(dd "$ddf" "$lt.$value")"
		got=$(j '[.offsets["label.size","label.key","label.value"]] | map(tostring) | join(" ")')
		check_eq "$name label element members (llvm-dwarfdump)" "$want" "$got"
	fi
	# --wall: runtime.g's scheduling members (llvm-dwarfdump), the goroutine
	# list (nm) and the names of wait reasons, whatever the build kept
	want=$(for m in g.atomicstatus g.waitreason g.sched gobuf.sp gobuf.pc gobuf.bp g.syscallsp g.syscallpc gobuf.lr; do
		dd "$ddf" "runtime.$m"
	done | paste -sd' ')
	got=$(j '.wall.offsets // {} | [.["g.atomicstatus","g.waitreason","g.sched","gobuf.sp","gobuf.pc","gobuf.bp","g.syscallsp","g.syscallpc","gobuf.lr"]] | map(tostring) | join(" ")')
	check_eq "$name --wall: runtime.g scheduling members (llvm-dwarfdump)" "$want" "$got"
	rm -f "$ddf"
	local allgs allglen reasons_size
	read -r allgs allglen reasons_size < <(nm -S "$twin" | awk '$4 == "runtime.allgs" { a = $1 }
		$4 == "runtime.allglen" { l = $1 } $4 == "runtime.waitReasonStrings" { n = $2 }
		END { print a, l, n }')
	want="$((16#${allgs:-0})) $((16#${allglen:-0})) $((16#${reasons_size:-0} / 16))"
	got=$(j '"\(.wall.allgs) \(.wall.allglen) \(.wall.wait_reasons)"')
	check_eq "$name --wall: runtime.allgs, allglen and the count of wait reasons (nm)" "$want" "$got"
	case $var in
	*stripped) want="true table code data" ;;
	*) want="true dwarf symtab symtab" ;;
	esac
	check_eq "$name --wall supported, and where its facts came from" "$want" \
		"$(j '"\(.wall.supported) \(.wall.sources.offsets) \(.wall.sources.goroutines) \(.wall.sources.wait_reasons)"')"
	if [ "$bin" != "$twin" ]; then
		check_eq "$name --wall: the wait reasons found in its data are its twin's, from the symbol table" \
			"$("$CTXPROF" check --json "$twin" | jq -c .wall.wait_reason_names)" "$(j '.wall.wait_reason_names | tojson')"
	fi

	want=$(tls_expected "$twin")
	check_eq "$name tls_g_offset (readelf/nm/objdump)" "$want" "$(j .tls_g_offset)"
	case $var in
	cgo*)
		if [ "$(j .tls_g_offset)" != -8 ]; then
			ok "$name: C thread-locals move g away from fs-8 (fs$(j .tls_g_offset))"
		else
			not_ok "$name: cgo build with C thread-locals still reports fs-8"
		fi
		;;
	esac
	check_eq "$name pie" "$([ "$var" = pie ] && echo true || echo false)" "$(j .pie)"
	check_eq "$name cgo" "$(case $var in cgo*) echo true ;; *) echo false ;; esac)" "$(j .cgo)"
	check_eq "$name sets_labels" true "$(j .sets_labels)"
	# it calls SetGoroutineLabels itself: every set is probed
	check_eq "$name label_probe" runtime_setProfLabel "$(j .label_probe)"
	if [ -n "${CTXPROF_SAN:-}" ]; then
		check_eq "$name ASan/UBSan build agrees" "$json" "$("$CTXPROF_SAN" check --json "$bin" 2>&1)"
	fi
}

versions=$(go_toolchains)
echo "# Go toolchains: $(echo $versions)"
for v in $versions; do
	for var in $GO_VARIANTS; do
		if ! bin=$(go_build "$v" "$var"); then
			not_ok "go$v $var: build of testdata/traced failed"
			continue
		fi
		case $var in
		stripped) twin=$(go_build "$v" plain) ;;
		cgo-stripped) twin=$(go_build "$v" cgo) ;;
		*) twin=$bin ;;
		esac
		verify "$v" "$var" "$bin" "$twin"
	done
done

# A program that sets labels with pprof.Do alone (testdata/waitkinds):
# the label probe takes pprof.Do's set, one hit a request, found through
# .gopclntab in stripped builds, and through the relocations in PIE ones.
for v in $versions; do
	for var in plain stripped pie; do
		bin=$(go_build "$v" "$var" waitkinds) || { not_ok "go$v $var waitkinds: build failed"; continue; }
		check_eq "go$v $var waitkinds (pprof.Do alone) label_probe" pprof.Do \
			"$("$CTXPROF" check --json "$bin" | jq -r .label_probe)"
	done
done

# A program that links runtime/pprof for CPU profiles but never makes a
# label (testdata/leafy): its DWARF keeps the label type's name with no
# members. It must still be supported, with the release's labels layout.
for v in $versions; do
	bin=$(go_build "$v" plain leafy) || { not_ok "go$v leafy: build failed"; continue; }
	read -r want_layout < <(runtime_facts "$v" | awk '{ print $5 }')
	got=$("$CTXPROF" check --json "$bin" |
		jq -r '"\(.supported) \(.source) \(.labels_layout) \(.sets_labels) \(.offsets["label.size"] // .offsets["bucket.size"])"')
	check_eq "go$v leafy (runtime/pprof linked, no labels): supported, DWARF, the release's labels layout" \
		"true dwarf $want_layout false $([ "$want_layout" = map ] && echo 272 || echo 32)" "$got"
done

# What a user will get, in check's line: the trace sources that work for
# this binary; a plain net/http server (testdata/httpserver, no labels)
# gets traceparent for its requests and the goroutines they start: on Go
# 1.21 and later through g.parentGoid, on Go 1.19 and 1.20 from a probe
# where goroutines start, whose site check finds in the code (amd64 and
# arm64 alike)
for v in 1.19 1.24; do
	if ! go_toolchains | grep -qx "$v"; then
		skip "check's line on a go$v net/http server" "go$v is not installed here"
		continue
	fi
	bin=$(go_build "$v" plain httpserver) || { not_ok "go$v httpserver: build failed"; continue; }
	# its first line; the second says where allocations are probed
	line=$("$CTXPROF" check "$bin" | head -n 1)
	want="trace IDs from traceparent (net/http requests, and the goroutines a handler starts)"
	[ "$v" = 1.19 ] && want="trace IDs from traceparent (net/http requests, and the goroutines they start, at any depth: a probe where goroutines start)"
	if [[ $line == *", $want" ]]; then
		ok "check's line on a go$v net/http server names its trace sources: ...${line##*--wall yes}"
	else
		not_ok "check's line on a go$v net/http server: $line (want it to end: $want)"
	fi
done
for variant in plain stripped arm64 arm64-stripped; do
	bin=$(go_build 1.19 "$variant" httpserver) || { not_ok "go1.19 $variant httpserver: build failed"; continue; }
	check_eq "check --json on a go1.19 $variant net/http server: how the goroutines a handler starts get its request" \
		probe "$("$CTXPROF" check --json "$bin" | jq -r .trace_sources.traceparent.goroutines)"
done
line=$("$CTXPROF" check "$(go_build "$(go_toolchains | tail -n 1)" plain)" | head -n 1)
[[ $line == *", trace IDs from label" ]] && ok "check's line on testdata/traced: labels: ...${line##*--wall yes}" ||
	not_ok "check's line on testdata/traced: $line"
done_testing
