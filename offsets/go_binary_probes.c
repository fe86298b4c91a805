// SPDX-License-Identifier: GPL-2.0
/* go_binary_probes.c: where the trace sources probe a Go binary, and why one cannot be used. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "buildinfo.h"
#include "elf_image.h"
#include "go_binary_priv.h"
#include "go_dwarf.h"
#include "gopclntab.h"
#include "../golayout/golayout.h"
#include "../bpf/gomap.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void source_problem(struct go_binary *gb, enum trace_source src, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(gb->source_problem[src], NOTE_LEN, fmt, ap);
	va_end(ap);
}

/* The header map fits what the probe reads; checked here so that BPF need not. */
static const char *header_problem(const struct go_header_layout *h)
{
	if (h->map == GO_MAP_HMAP && !hmap_fits(&h->hmap, GO_SLICE_SIZE))
		return "its header map does not fit what the probe reads";
	if (h->map == GO_MAP_SWISS &&
	    (h->sm_dir_ptr % 8 || h->sm_dir_ptr + 8 > MAP_HEADER_LEN || h->sm_dir_len % 8 ||
	     h->sm_dir_len + 8 > MAP_HEADER_LEN))
		return "its header map's header does not fit what the probe reads";
	if (h->map == GO_MAP_SWISS &&
	    (h->sg_size > MAX_BUCKET_SIZE || h->sg_ctrl + 8 > h->sg_size ||
	     h->sg_slots + BUCKET_SLOTS * h->ss_size > h->sg_size || h->ss_key + 16 > h->ss_size ||
	     h->ss_elem + 16 > h->ss_size))
		return "its header map group does not fit what the probe reads";
	return NULL;
}

/* JBE, short or near */
static bool amd64_jbe(const uint8_t *p)
{
	return p[0] == 0x76 || (p[0] == 0x0f && p[1] == 0x86);
}

/* B.LS */
static bool arm64_bls(uint32_t w)
{
	return (w & 0xff00001f) == 0x54000009;
}

/*
 * The branch of FN's stack check, a small frame's or a larger one's (SP
 * less the frame's size past 128 bytes, compared with g.stackguard0):
 *   amd64  CMPQ SP, 16(R14); JBE
 *          LEAQ -N(SP), R12; CMPQ R12, 16(R14); JBE
 *   arm64  MOVD 16(R28), R16; CMP R16, RSP; BLS
 *          MOVD 16(R28), R16; SUB $N, RSP, R17; CMP R16, R17; BLS
 * 0 for another opening (a huge frame's check, or none).
 */
static uint64_t check_branch(const struct go_binary *gb, const struct gopclntab_func *fn)
{
	static const uint8_t amd64_check[] = { 0x49, 0x3b, 0x66, 0x10 }; /* CMPQ SP, 16(R14) */
	static const uint8_t amd64_r12_check[] = { 0x4d, 0x3b, 0x66, 0x10 }; /* CMPQ R12, 16(R14) */
	const uint8_t *code;
	size_t lea;
	uint32_t w[4];

	code = fn->end - fn->entry >= 16 ? elf_image__at(gb->img, fn->entry, 16) : NULL;
	if (!code)
		return 0;
	if (gb->arm64) {
		memcpy(w, code, sizeof(w));
		if (w[0] != 0xf9400b90) /* MOVD 16(R28), R16 */
			return 0;
		if (w[1] == 0xeb3063ff && arm64_bls(w[2])) /* CMP R16, RSP */
			return fn->entry + 8;
		/* SUB $imm12 (<< 12 with sh), RSP, R17; CMP R16, R17 */
		if ((w[1] & 0xff8003ff) == 0xd10003f1 && w[2] == 0xeb10023f && arm64_bls(w[3]))
			return fn->entry + 12;
		return 0;
	}
	if (!memcmp(code, amd64_check, sizeof(amd64_check)))
		return amd64_jbe(code + 4) ? fn->entry + 4 : 0;
	/* LEAQ disp32(SP), R12 or LEAQ disp8(SP), R12 */
	if (code[0] != 0x4c || code[1] != 0x8d || code[3] != 0x24)
		return 0;
	if (code[2] == 0xa4)
		lea = 8;
	else if (code[2] == 0x64)
		lea = 5;
	else
		return 0;
	if (memcmp(code + lea, amd64_r12_check, sizeof(amd64_r12_check)) || !amd64_jbe(code + lea + 4))
		return 0;
	return fn->entry + lea + 4;
}

/*
 * Where to probe FN: the branch of its stack check, which the kernel
 * emulates; its first instruction, a compare or a LEAQ, the kernel would
 * step out of line, a second trap (a debug exception, which a hypervisor
 * may intercept: tens of microseconds a hit in a VM). At the branch the
 * registers the check leaves alone (the arguments, g, SP, the frame
 * pointer) are still the entry's, and R12 is scratch in Go's ABI. Its
 * flags tell a call that must grow its stack first (or is to be
 * preempted: the guard is then above any SP), which goes through
 * morestack and comes back to the entry and through the branch again,
 * with the same arguments. The entry when FN has no such check.
 */
uint64_t go_binary_probes__pc(const struct go_binary *gb, const struct gopclntab_func *fn)
{
	return check_branch(gb, fn) ?: fn->entry;
}

/*
 * The functions whose entry the traceparent source probes, found by name in
 * .gopclntab (stripping keeps it). Go's register ABI: a method's receiver
 * comes first, then its arguments, in RAX, RBX, RCX, RDI, ...; an
 * interface takes two (itab, data).
 */
struct probe_func {
	const char *name;
	__u64 cookie;
	bool required;
	enum trace_source source;
};

static const struct probe_func http_funcs[] = {
	/* every request of every protocol net/http serves; req after sh and the rw interface */
	{ "net/http.serverHandler.ServeHTTP", HTTP_PROBE_REQ_RDI, true, TRACE_SOURCE_TRACEPARENT },
	/* an HTTP/1.1 request is done: its connection's goroutine may serve another */
	{ "net/http.(*response).finishRequest", HTTP_PROBE_END, true, TRACE_SOURCE_TRACEPARENT },
	/* h2c through golang.org/x/net/http2, which never calls serverHandler */
	{ "golang.org/x/net/http2.(*serverConn).runHandler", HTTP_PROBE_REQ_RCX, false,
	  TRACE_SOURCE_TRACEPARENT },
};

static const struct probe_func grpc_funcs[] = {
	/* (t *http2Server, ctx, frame *MetaHeadersFrame, handle): a stream's headers */
	{ "google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders",
	  GRPC_PROBE_HEADERS, true, TRACE_SOURCE_TRACEPARENT },
	/* (s *Server, t ServerTransport, stream *Stream): its handler starts */
	{ "google.golang.org/grpc.(*Server).handleStream", GRPC_PROBE_STREAM, true,
	  TRACE_SOURCE_TRACEPARENT },
};

static const struct probe_func otel_funcs[] = {
	/* (tr, psc, sc SpanContext, name, sr, config): a recording span starts */
	{ "go.opentelemetry.io/otel/sdk/trace.(*tracer).newRecordingSpan", OTEL_PROBE_START, true,
	  TRACE_SOURCE_OTEL_SDK },
	/* (s *recordingSpan, options...): it ends */
	{ "go.opentelemetry.io/otel/sdk/trace.(*recordingSpan).End", OTEL_PROBE_END, true,
	  TRACE_SOURCE_OTEL_SDK },
};

/* Adds the probes of FUNCS to GB's; NULL, or why not (in BUF). */
static const char *add_probes(struct go_binary *gb, const struct probe_func *funcs, size_t n,
			      char *buf, size_t len)
{
	size_t i, first = gb->nprobes;
	struct gopclntab_func fn;
	long off;

	for (i = 0; i < n; i++) {
		if (!gb->pcln || gopclntab__find(gb->pcln, funcs[i].name, &fn) != 0) {
			if (!funcs[i].required)
				continue;
			snprintf(buf, len, "no %s in the function table", funcs[i].name);
			goto undo;
		}
		off = elf_image__file_offset(gb->img, go_binary_probes__pc(gb, &fn));
		if (off < 0 || gb->nprobes >= MAX_TRACE_PROBES) {
			snprintf(buf, len, "%s is not in a loaded segment", funcs[i].name);
			goto undo;
		}
		gb->probes[gb->nprobes++] = (struct go_trace_probe){ .offset = off,
								     .cookie = funcs[i].cookie,
								     .func = funcs[i].name,
								     .source = funcs[i].source };
	}
	return NULL;
undo:
	gb->nprobes = first;
	return buf;
}

/* net/http's server: its header layout and probes; NULL, or why not (in BUF). */
static const char *find_http(struct go_binary *gb, const struct golayout_row *row,
			     const struct go_dwarf_result *dw, char *buf, size_t len)
{
	struct go_header_layout *h = &gb->layout.hdr;
	const char *why;

	if (dw && dw->layout.hdr.map)
		*h = dw->layout.hdr;
	else if (row && row->layout.hdr.map)
		*h = row->layout.hdr;
	if (!h->map) {
		snprintf(buf, len, "%s%sthe golayout table has no net/http header layout for Go %d.%d",
			 dw ? dw->http_err : "", dw ? "; " : "", gb->major, gb->minor);
		return buf;
	}
	why = header_problem(h) ?: add_probes(gb, http_funcs, ARRAY_SIZE(http_funcs), buf, len);
	if (why)
		memset(h, 0, sizeof(*h));
	return why;
}

/* A member of a type of package PKG, as the layouts below need it. */
struct member_ref {
	const char *pkg;
	const char *member;
	__u32 *out;
};

/*
 * The members REFS name: read from DWARF already (FROM_DWARF), or else from
 * the module table by each module's version in .go.buildinfo. Kept for
 * check. NULL, or why not (in BUF).
 */
static const char *find_members(struct go_binary *gb, const struct member_ref *refs, size_t n,
				bool from_dwarf, char *buf, size_t len)
{
	char module[128], version[64];
	size_t i, first = gb->nmembers;

	for (i = 0; i < n; i++) {
		if (!gb->buildinfo ||
		    buildinfo__package_module(gb->buildinfo, gb->buildinfo_len, refs[i].pkg, module,
					      sizeof(module), version, sizeof(version)) != 0)
			module[0] = version[0] = '\0';
		if (from_dwarf) {
			/* in place */
		} else if (!version[0]) {
			snprintf(buf, len, "no DWARF, and .go.buildinfo names no module version for "
					   "%s (built in GOPATH mode?) to look its layout up by",
				 refs[i].pkg);
			goto undo;
		} else if (golayout__member(module, version, refs[i].member, refs[i].out) != 0) {
			snprintf(buf, len, "no DWARF, and %.80s %.30s is not in the module table (%.60s)",
				 module, version,
				 *golayout__module_versions(module) ? golayout__module_versions(module) :
								      "it has no version of it");
			goto undo;
		}
		if (gb->nmembers < MAX_MODULE_MEMBERS) {
			struct go_module_member *m = &gb->members[gb->nmembers++];

			m->pkg = refs[i].pkg;
			m->member = refs[i].member;
			m->offset = *refs[i].out;
			snprintf(m->module, sizeof(m->module), "%s", module);
			snprintf(m->version, sizeof(m->version), "%s", version);
		}
	}
	return NULL;
undo:
	gb->nmembers = first;
	return buf;
}

/*
 * grpc-go's server, and x/net's header frames it reads them with: from
 * DWARF, or from the module table by the versions the build info names.
 */
static const char *find_grpc(struct go_binary *gb, const struct go_dwarf_result *dw, char *buf,
			     size_t len)
{
	struct go_grpc_layout *g = &gb->layout.grpc;
	const struct member_ref refs[] = {
		{ "golang.org/x/net/http2", "http2.MetaHeadersFrame.Fields", &g->mhf_fields },
		{ "golang.org/x/net/http2", "http2.HeadersFrame.FrameHeader.StreamID",
		  &g->fh_stream_id },
		{ "golang.org/x/net/http2/hpack", "hpack.HeaderField.size", &g->hf_size },
		{ "golang.org/x/net/http2/hpack", "hpack.HeaderField.Name", &g->hf_name },
		{ "golang.org/x/net/http2/hpack", "hpack.HeaderField.Value", &g->hf_value },
		{ "google.golang.org/grpc/internal/transport", "transport.Stream.id", &g->stream_id },
	};
	const char *why;

	if (dw && !dw->layout.grpc.ok) {
		snprintf(buf, len, "%s", dw->grpc_err);
		return buf;
	}
	if (dw)
		*g = dw->layout.grpc;
	why = find_members(gb, refs, ARRAY_SIZE(refs), dw, buf, len);
	if (!why)
		why = g->hf_name + 16 > g->hf_size || g->hf_value + 16 > g->hf_size ||
				      g->hf_size > 40 ?
			      "its hpack.HeaderField does not fit what the probe reads" :
			      add_probes(gb, grpc_funcs, ARRAY_SIZE(grpc_funcs), buf, len);
	if (why)
		memset(g, 0, sizeof(*g));
	else
		g->ok = 1;
	return why;
}

/*
 * The OpenTelemetry Go SDK: where a span's IDs are, from DWARF, or from the
 * module table by the versions of otel/trace and otel/sdk the build info
 * names. newRecordingSpan(tr, psc, sc, ...) gets psc and sc on the stack
 * (their arrays keep them out of registers), in that order from the first
 * word after the return address, each aligned to 8: sc is one SpanContext
 * after psc.
 */
static void find_otel(struct go_binary *gb, const struct go_dwarf_result *dw)
{
	struct go_otel_layout *o = &gb->layout.otel;
	const struct member_ref refs[] = {
		{ "go.opentelemetry.io/otel/trace", "trace.SpanContext.traceID", &o->sc_trace },
		{ "go.opentelemetry.io/otel/trace", "trace.SpanContext.spanID", &o->sc_span },
		{ "go.opentelemetry.io/otel/trace", "trace.SpanContext.remote", &o->sc_remote },
		{ "go.opentelemetry.io/otel/trace", "trace.SpanContext.size", &o->sc_size },
		{ "go.opentelemetry.io/otel/sdk/trace", "sdktrace.recordingSpan.spanContext",
		  &o->span_ctx },
		{ "go.opentelemetry.io/otel/sdk/trace", "sdktrace.recordingSpan.parent",
		  &o->span_parent },
	};
	char buf[NOTE_LEN];
	const char *why;

	memset(o, 0, sizeof(*o));
	if (!gb->uses_otel) {
		source_problem(gb, TRACE_SOURCE_OTEL_SDK, "does not record spans with the "
							  "OpenTelemetry Go SDK (no %s)",
			       otel_funcs[0].name);
		return;
	}
	if (dw && !dw->layout.otel.ok) {
		source_problem(gb, TRACE_SOURCE_OTEL_SDK, "%s", dw->otel_err);
		return;
	}
	if (dw)
		*o = dw->layout.otel;
	why = find_members(gb, refs, ARRAY_SIZE(refs), dw, buf, sizeof(buf));
	if (!why) {
		o->start_sc = 8 + ((o->sc_size + 7) & ~7U);
		why = add_probes(gb, otel_funcs, ARRAY_SIZE(otel_funcs), buf, sizeof(buf));
	}
	if (why) {
		memset(o, 0, sizeof(*o));
		source_problem(gb, TRACE_SOURCE_OTEL_SDK, "%s", why);
		return;
	}
	o->ok = 1;
}

/*
 * The instruction at CODE[I] (link-time address PC) calls TARGET: amd64's
 * CALL rel32, arm64's BL. *LEN is the instruction's length, so that the
 * scan can step over it; 0 when it is no call.
 */
static bool calls(const uint8_t *code, size_t i, size_t n, uint64_t pc, uint64_t target,
		  bool arm64, size_t *len)
{
	int64_t rel;
	uint32_t insn;

	*len = 0;
	if (arm64) {
		if (i % 4 || i + 4 > n)
			return false;
		memcpy(&insn, code + i, 4);
		if ((insn & 0xfc000000) != 0x94000000)
			return false;
		*len = 4;
		/* imm26, in instructions, sign-extended */
		rel = (int64_t)((uint64_t)(insn & 0x03ffffff) << 38) >> 36;
		return pc + rel == target;
	}
	if (i + 5 > n || code[i] != 0xe8)
		return false;
	memcpy(&insn, code + i + 1, 4);
	*len = 5;
	return pc + 5 + (int64_t)(int32_t)insn == target;
}

/*
 * Go before 1.21 keeps no g.parentGoid: the goroutines a request's
 * handler starts (a fan-out, an errgroup, a metrics registry's
 * collectors) would carry no trace ID. The sampler gives a goroutine its
 * creator's context instead, at its creation: runtime.newproc's closure
 * (newproc.func1, on the system stack, so m.curg is the creator) calls
 * newproc1, then runqput(pp, newg, true), whose second argument is the
 * new g with its goid set. The probe goes on that call, which the kernel
 * emulates rather than steps out of line.
 */
static void find_spawn_probe(struct go_binary *gb)
{
	struct gopclntab_func fn, mk, put;
	const uint8_t *code;
	size_t i, len, n;
	bool made = false;
	long off;

	if (gb->layout.g_parent_goid || !gb->nprobes || gb->nprobes >= MAX_TRACE_PROBES ||
	    gopclntab__find(gb->pcln, "runtime.newproc.func1", &fn) != 0 ||
	    gopclntab__find(gb->pcln, "runtime.newproc1", &mk) != 0 ||
	    gopclntab__find(gb->pcln, "runtime.runqput", &put) != 0 || fn.end <= fn.entry ||
	    fn.end - fn.entry > 4096)
		return;
	n = fn.end - fn.entry;
	code = elf_image__at(gb->img, fn.entry, n);
	for (i = 0; code && i < n; i += len ? len : 1) {
		if (!made) {
			made = calls(code, i, n, fn.entry + i, mk.entry, gb->arm64, &len);
			continue;
		}
		if (!calls(code, i, n, fn.entry + i, put.entry, gb->arm64, &len))
			continue;
		off = elf_image__file_offset(gb->img, fn.entry + i);
		if (off < 0)
			return;
		gb->probes[gb->nprobes++] = (struct go_trace_probe){
			.offset = off,
			.cookie = GO_PROBE_SPAWN,
			.func = "runtime.newproc.func1",
			.source = TRACE_SOURCE_COUNT,
		};
		gb->spawn_probe = true;
		return;
	}
}

/*
 * Where a goroutine's labels are set: pprof.SetGoroutineLabels (and so
 * pprof.Do) ends in the runtime's runtime_setProfLabel, linked under
 * pprof's name, which no release inlines (its body is in another package).
 */
static void find_label_probe(struct go_binary *gb)
{
	struct gopclntab_func fn;

	gb->label_probe = -1;
	if (!gb->sets_labels || !gb->pcln ||
	    gopclntab__find(gb->pcln, "runtime/pprof.runtime_setProfLabel", &fn) != 0)
		return;
	gb->label_probe = elf_image__file_offset(gb->img, go_binary_probes__pc(gb, &fn));
}

/* Some data word holds ENTRY: a function value of it, called where no call instruction shows. */
static bool func_value(const struct go_binary *gb, uint64_t entry)
{
	const uint8_t *p;
	GElf_Phdr ph;
	size_t i, n;
	uint64_t w;

	if (elf_image__relative_places(gb->img, entry, NULL, 0))
		return true;
	if (elf_getphdrnum(elf_image__elf(gb->img), &n) != 0)
		return true;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf_image__elf(gb->img), i, &ph) || ph.p_type != PT_LOAD ||
		    (ph.p_flags & PF_X) || !ph.p_filesz)
			continue;
		if (!(p = elf_image__at(gb->img, ph.p_vaddr, ph.p_filesz)))
			return true;
		for (size_t at = (8 - ph.p_vaddr % 8) % 8; at + 8 <= ph.p_filesz; at += 8) {
			memcpy(&w, p + at, 8);
			if (w == entry)
				return true;
		}
	}
	return false;
}

/*
 * The calls of SetGoroutineLabels and runtime_setProfLabel in FN: true
 * when each is one pprof.Do's labels take (SetGoroutineLabels' own,
 * Do's deferred restore, Do's set, once, kept in *AT).
 */
static bool label_calls(const struct go_binary *gb, const struct gopclntab_func *fn,
			uint64_t set, uint64_t rt, uint64_t doer, uint64_t *at)
{
	size_t i, len, n = fn->end - fn->entry;
	const uint8_t *code = elf_image__at(gb->img, fn->entry, n);
	uint64_t pc;
	bool to_set;

	if (!code)
		return fn->end <= fn->entry;
	/* each 0xe8 byte on amd64: a false match only costs the second hit */
	for (i = 0; i < n; i += gb->arm64 ? 4 : 1) {
		if (!gb->arm64) {
			const uint8_t *e8 = memchr(code + i, 0xe8, n - i);

			if (!e8)
				break;
			i = e8 - code;
		}
		pc = fn->entry + i;
		to_set = calls(code, i, n, pc, set, gb->arm64, &len);
		if (!to_set && !calls(code, i, n, pc, rt, gb->arm64, &len))
			continue;
		if (fn->entry == set && !to_set)
			continue;
		if (fn->entry == doer && to_set && !*at) {
			*at = pc;
			continue;
		}
		if (to_set && (!strcmp(fn->name, "runtime/pprof.Do.deferwrap1") ||
			       !strcmp(fn->name, "runtime/pprof.Do.func1")))
			continue;
		return false;
	}
	return true;
}

/*
 * One hit a pprof.Do, not two: pprof.Do calls SetGoroutineLabels to make
 * its set current, and again, deferred, to restore the one before. The
 * first call alone shows the set, and the setter's g tells later that it
 * left it. That holds only when pprof.Do is the only way the program sets
 * labels: no other call of SetGoroutineLabels or of runtime_setProfLabel
 * (a tracer's own SetGoroutineLabels, a PGO-inlined one), and neither
 * taken as a function value. Otherwise the set probe sees every set.
 */
static void find_do_probe(struct go_binary *gb)
{
	struct gopclntab_func doer, set, rt, fn;
	uint64_t at = 0;
	size_t i, n;

	gb->do_probe = -1;
	if (gb->label_probe < 0 || gopclntab__find(gb->pcln, "runtime/pprof.Do", &doer) != 0 ||
	    gopclntab__find(gb->pcln, "runtime/pprof.SetGoroutineLabels", &set) != 0 ||
	    gopclntab__find(gb->pcln, "runtime/pprof.runtime_setProfLabel", &rt) != 0)
		return;
	n = gopclntab__nfunc(gb->pcln);
	for (i = 0; i < n; i++) {
		if (gopclntab__func(gb->pcln, i, &fn) != 0 ||
		    !label_calls(gb, &fn, set.entry, rt.entry, doer.entry, &at))
			return;
	}
	if (!at || func_value(gb, set.entry) || func_value(gb, rt.entry))
		return;
	gb->do_probe = elf_image__file_offset(gb->img, at);
}

static bool has_func(const struct go_binary *gb, const char *name)
{
	struct gopclntab_func fn;

	return gb->pcln && gopclntab__find(gb->pcln, name, &fn) == 0;
}

/*
 * Which trace sources GB has something for: label sets and where they are
 * made, net/http's or grpc-go's server, the OpenTelemetry Go SDK: known
 * before the layout is read, whose DWARF types of theirs are read only
 * for what is here.
 */
void go_binary_probes__sources(struct go_binary *gb)
{
	gb->sets_labels = has_func(gb, "runtime/pprof.Do") ||
			  has_func(gb, "runtime/pprof.SetGoroutineLabels");
	find_label_probe(gb);
	find_do_probe(gb);
	gb->serves_http = has_func(gb, http_funcs[0].name);
	/*
	 * A program can link grpc-go's server methods without ever making a
	 * server (caddy does, through a type it refers to): only one that
	 * calls grpc.NewServer, its one constructor, serves grpc.
	 */
	gb->serves_grpc = has_func(gb, "google.golang.org/grpc.NewServer") &&
			  has_func(gb, grpc_funcs[0].name) && has_func(gb, grpc_funcs[1].name);
	if (!gb->sets_labels)
		source_problem(gb, TRACE_SOURCE_LABEL, "never sets goroutine labels (no "
						       "runtime/pprof.Do or SetGoroutineLabels)");
	gb->uses_otel = has_func(gb, otel_funcs[0].name) && has_func(gb, otel_funcs[1].name);
}

/*
 * The traceparent source: the servers the binary links, each with its
 * layout and probes. One that cannot be read is a warning when another can.
 */
void go_binary_probes__find(struct go_binary *gb, const struct golayout_row *row,
			    const struct go_dwarf_result *dw)
{
	char hbuf[NOTE_LEN], gbuf[NOTE_LEN];
	const char *http_why = NULL, *grpc_why = NULL;
	size_t n;

	memset(&gb->layout.hdr, 0, sizeof(gb->layout.hdr));
	memset(&gb->layout.grpc, 0, sizeof(gb->layout.grpc));
	if (gb->serves_http)
		http_why = find_http(gb, row, dw, hbuf, sizeof(hbuf));
	if (gb->serves_grpc)
		grpc_why = find_grpc(gb, dw, gbuf, sizeof(gbuf));
	n = gb->nprobes;
	find_otel(gb, dw);
	if (!gb->serves_http && !gb->serves_grpc)
		source_problem(gb, TRACE_SOURCE_TRACEPARENT,
			       "serves no HTTP with net/http (no net/http.serverHandler.ServeHTTP) "
			       "and no grpc-go");
	else if (!n)
		source_problem(gb, TRACE_SOURCE_TRACEPARENT, "%s%s%s", http_why ?: "",
			       http_why && grpc_why ? "; " : "", grpc_why ?: "");
	else if (http_why || grpc_why)
		note(&gb->warnings, "traceparent: %s requests will carry no trace ID: %s",
		     http_why ? "net/http" : "grpc-go", http_why ?: grpc_why);
	find_spawn_probe(gb);
}
