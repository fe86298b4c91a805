// SPDX-License-Identifier: GPL-2.0
/* go_binary.c: what ctxprof-go needs to know about one Go executable, and whether it can profile it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buildinfo.h"
#include "elf_image.h"
#include "go_allgs.h"
#include "go_binary.h"
#include "go_dwarf.h"
#include "go_tls.h"
#include "gopclntab.h"
#include "../golayout/golayout.h"
#include "../bpf/gomap.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_NOTES 8
#define NOTE_LEN 256
#define ERR_LEN 256

/* Bytes of runtime.stackcheck we decode: the g load is its first one or two instructions. */
#define STACKCHECK_CODE_LEN 16
/* runtime.load_g on arm64: the iscgo test, then the load of g (eight instructions) */
#define LOAD_G_CODE_LEN 64

struct notes {
	size_t n;
	char text[MAX_NOTES][NOTE_LEN];
};

struct go_binary {
	char *path;
	struct elf_image *img;
	struct gopclntab *pcln;
	char version[BUILDINFO_HEADER_LEN * 4];
	int major, minor;
	const char *arch;
	char arch_buf[32];
	bool pie, cgo, dwarf, symtab, sets_labels;
	bool arm64;
	enum go_layout_source source;
	enum go_tls_source tls_source;
	bool tls_known;
	struct go_layout layout;
	__u32 md_gofunc; /* runtime.moduledata.gofunc, 0 if unknown */
	const uint8_t *buildinfo; /* .go.buildinfo, in the mapped file */
	size_t buildinfo_len;
	bool serves_http; /* links net/http's server */
	bool serves_grpc; /* links grpc-go's server */
	bool uses_otel; /* records spans with the OpenTelemetry Go SDK */
	/* why a trace source cannot be used, "" when it can */
	char source_problem[TRACE_SOURCE_COUNT][NOTE_LEN];
	struct go_trace_probe probes[MAX_TRACE_PROBES];
	size_t nprobes;
	bool spawn_probe; /* one of them gives new goroutines their creator's context */
	/* runtime/pprof.runtime_setProfLabel's entry, as a file offset; -1 when it has none */
	long label_probe;
	/* pprof.Do's call that makes its set current, as a file offset; -1 when not alone */
	long do_probe;
	/* go_binary__said's marks */
	uint32_t said;
	/* the module members the grpc-go and otel-sdk layouts came from, for check */
	struct go_module_member members[MAX_MODULE_MEMBERS];
	size_t nmembers;
	struct go_wall_layout wall; /* --wall: the goroutine list, when wall_problem is "" */
	char wall_problem[NOTE_LEN];
	uint64_t pcln_addr; /* link-time address of the function table */
	size_t pcln_len;
	struct notes problems, warnings;
};

static void note(struct notes *notes, const char *fmt, ...)
{
	va_list ap;

	if (notes->n >= MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(notes->text[notes->n++], NOTE_LEN, fmt, ap);
	va_end(ap);
}

static const char *arch_name(const GElf_Ehdr *eh, char *buf, size_t len)
{
	bool is64 = eh->e_ident[EI_CLASS] == ELFCLASS64;
	bool le = eh->e_ident[EI_DATA] == ELFDATA2LSB;

	switch (eh->e_machine) {
	case EM_X86_64:
		return is64 ? "amd64" : "amd64p32";
	case EM_386:
		return "386";
	case EM_AARCH64:
		return "arm64";
	case EM_ARM:
		return "arm";
	case EM_PPC64:
		return le ? "ppc64le" : "ppc64";
	case EM_S390:
		return "s390x";
	case EM_RISCV:
		return is64 ? "riscv64" : "riscv";
	case EM_MIPS:
		return is64 ? (le ? "mips64le" : "mips64") : (le ? "mipsle" : "mips");
	case 258: /* EM_LOONGARCH, newer than some elf.h */
		return "loong64";
	default:
		snprintf(buf, len, "ELF machine %u", eh->e_machine);
		return buf;
	}
}

static const uint8_t *read_at(void *ctx, uint64_t vaddr, size_t len)
{
	return elf_image__at(ctx, vaddr, len);
}

/*
 * The file bytes of the next writable PT_LOAD segment from *IDX on, where Go
 * keeps its build info and module data; NULL after the last.
 */
static const uint8_t *next_data_segment(const struct elf_image *img, size_t *idx, size_t *size,
				       uint64_t *vaddr)
{
	const uint8_t *p;
	GElf_Phdr ph;
	size_t n;

	if (elf_getphdrnum(elf_image__elf(img), &n) != 0)
		return NULL;
	while (*idx < n) {
		if (!gelf_getphdr(elf_image__elf(img), (*idx)++, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_W))
			continue;
		p = elf_image__at(img, ph.p_vaddr, ph.p_filesz);
		if (p) {
			*size = ph.p_filesz;
			if (vaddr)
				*vaddr = ph.p_vaddr;
			return p;
		}
	}
	return NULL;
}

/* .go.buildinfo by section name, else by its magic in the writable segments. */
static const uint8_t *find_buildinfo(const struct elf_image *img, size_t *len)
{
	const uint8_t *seg, *p;
	size_t idx = 0, size;

	p = elf_image__section(img, ".go.buildinfo", len, NULL);
	if (p)
		return p;
	while ((seg = next_data_segment(img, &idx, &size, NULL))) {
		p = buildinfo__find(seg, size);
		if (p) {
			*len = size - (p - seg);
			return p;
		}
	}
	return NULL;
}

static int read_version(struct go_binary *gb)
{
	char err[ERR_LEN];
	const uint8_t *bi;
	size_t len;

	bi = find_buildinfo(gb->img, &len);
	gb->buildinfo = bi;
	gb->buildinfo_len = len;
	if (!bi) {
		note(&gb->problems, "not a Go binary: no Go build info (.go.buildinfo)");
		return -ENOENT;
	}
	if (buildinfo__version(bi, len, read_at, gb->img, gb->version, sizeof(gb->version), err,
			       sizeof(err)) != 0) {
		note(&gb->problems, "cannot read the Go version: %s", err);
		gb->version[0] = '\0';
		return -EINVAL;
	}
	if (buildinfo__parse_version(gb->version, &gb->major, &gb->minor) != 0) {
		note(&gb->problems, "cannot tell the Go release of version \"%s\"", gb->version);
		return -EINVAL;
	}
	return 0;
}

/* runtime.moduledata (Go 1.16+): pcHeader, then funcnametab {ptr, len, cap}, ..., minpc @160, text @176 */
#define MD_FUNCNAMETAB 8
#define MD_MINPC 160
#define MD_TEXT 176
#define MD_LEN 192

static uint64_t word(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * A word of the module data at MD + OFF, as the loader leaves it: a PIE's
 * pointer is its RELATIVE relocation's addend, whatever the file holds
 * there (GNU ld's arm64 output holds other values); 0 if the file does not
 * hold it.
 */
static uint64_t moduledata_word(const struct elf_image *img, uint64_t md, uint32_t off)
{
	const uint8_t *p = md ? elf_image__at(img, md + off, 8) : NULL;
	uint64_t v;

	if (!p)
		return 0;
	if (elf_image__relative_addend(img, md + off, &v) == 0)
		return v;
	return word(p);
}

/* Is MD a module data for the function table at TAB: its funcnametab inside, a text range? */
static bool plausible_moduledata(const struct elf_image *img, uint64_t md, uint64_t tab,
				 size_t tablen)
{
	uint64_t names = moduledata_word(img, md, MD_FUNCNAMETAB);
	uint64_t text = moduledata_word(img, md, MD_TEXT);

	return names > tab && names < tab + tablen && text &&
	       moduledata_word(img, md, MD_MINPC) >= text;
}

#define MAX_MD_PLACES 16

/*
 * Link-time address of runtime.firstmoduledata: its symbol, or else the
 * word that points at the function table, followed by the funcnametab
 * slice inside the table and a plausible text range. 0 if not found.
 */
static uint64_t find_moduledata(const struct elf_image *img, uint64_t tab, size_t tablen)
{
	const uint8_t *seg, *md;
	size_t idx = 0, size, off, i, n;
	uint64_t names, vaddr, at[MAX_MD_PLACES];
	GElf_Sym sym;

	if (elf_image__symbol(img, "runtime.firstmoduledata", &sym) == 0)
		return sym.st_value;
	while ((seg = next_data_segment(img, &idx, &size, &vaddr))) {
		for (off = 0; off + MD_LEN <= size; off += 8) {
			md = seg + off;
			if (word(md) != tab)
				continue;
			names = word(md + MD_FUNCNAMETAB);
			if (names <= tab || names >= tab + tablen || !word(md + MD_TEXT) ||
			    word(md + MD_MINPC) < word(md + MD_TEXT))
				continue;
			return vaddr + off;
		}
	}
	/* a PIE whose file holds 0 there: the relocation that points at the table */
	n = elf_image__relative_places(img, tab, at, MAX_MD_PLACES);
	for (i = 0; i < n && i < MAX_MD_PLACES; i++) {
		if (plausible_moduledata(img, at[i], tab, tablen))
			return at[i];
	}
	return 0;
}

static void open_pclntab(struct go_binary *gb)
{
	static const char *const names[] = { ".gopclntab", ".data.rel.ro.gopclntab" };
	char err[ERR_LEN] = "no .gopclntab section";
	uint64_t addr, text = 0;
	const uint8_t *p = NULL;
	size_t i, len = 0;
	long off;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && !p; i++)
		p = elf_image__section(gb->img, names[i], &len, &addr);
	if (p) {
		/*
		 * PIE: the loader fills the header's textStart, by a relocation
		 * or, when the file holds 0 and none names it, as the module
		 * data's text
		 */
		off = gopclntab__text_start_offset(p, len);
		if (off >= 0 && elf_image__relative_addend(gb->img, addr + off, &text) != 0 &&
		    !word(p + off))
			text = moduledata_word(gb->img, find_moduledata(gb->img, addr, len), MD_TEXT);
		gb->pcln = gopclntab__open(p, len, text, err, sizeof(err));
		gb->pcln_addr = addr;
		gb->pcln_len = len;
	}
	if (!gb->pcln)
		note(&gb->warnings, "cannot read Go's function table: %s", err);
}

static bool has_func(const struct go_binary *gb, const char *name)
{
	struct gopclntab_func fn;

	return gb->pcln && gopclntab__find(gb->pcln, name, &fn) == 0;
}

/* Where the assembly function NAME starts: its ELF symbol (NAME.abi0 or NAME), else .gopclntab's entry. */
static uint64_t asm_entry(const struct go_binary *gb, const char *name)
{
	struct gopclntab_func fn;
	char abi0[128];
	GElf_Sym sym;

	snprintf(abi0, sizeof(abi0), "%s.abi0", name);
	if (elf_image__symbol(gb->img, abi0, &sym) == 0 || elf_image__symbol(gb->img, name, &sym) == 0)
		return sym.st_value;
	if (gb->pcln && (gopclntab__find(gb->pcln, abi0, &fn) == 0 ||
			 gopclntab__find(gb->pcln, name, &fn) == 0))
		return fn.entry;
	return 0;
}

/*
 * Where each architecture's Go keeps g when C code shares the thread (a
 * PT_TLS block): the thread pointer's name, the symbol that places the
 * slot in the block and how, the function whose code loads g and how to
 * decode it; and where g is without PT_TLS.
 */
struct tls_way {
	const char *tp;
	const char *sym;
	int (*from_sym)(uint64_t value, uint64_t memsz, uint64_t align, int64_t *offset);
	const char *code_fn;
	size_t code_len;
	int (*decode)(const uint8_t *code, size_t len, int64_t *offset);
	enum go_tls_source code_source;
	__u64 no_pt_tls_offset;
	enum go_tls_source no_pt_tls_source;
};

static const struct tls_way tls_amd64 = {
	.tp = "fs",
	.sym = "runtime.tlsg",
	.from_sym = go_tls__from_tlsg,
	.code_fn = "runtime.stackcheck",
	.code_len = STACKCHECK_CODE_LEN,
	.decode = go_tls__decode_stackcheck,
	.code_source = GO_TLS_STACKCHECK,
	/* Go's internal linker's fixed slot */
	.no_pt_tls_offset = (__u64)(int64_t)GO_TLS_DEFAULT_OFFSET,
	.no_pt_tls_source = GO_TLS_NO_PT_TLS,
};

static const struct tls_way tls_arm64 = {
	.tp = "tpidr_el0",
	.sym = "runtime.tls_g",
	.from_sym = go_tls__from_tls_g_arm64,
	.code_fn = "runtime.load_g",
	.code_len = LOAD_G_CODE_LEN,
	.decode = go_tls__decode_load_g_arm64,
	.code_source = GO_TLS_LOAD_G,
	/* Go stores g in TLS only for C code's sake: without cgo, R28 alone has it */
	.no_pt_tls_offset = GO_G_IN_REGISTER,
	.no_pt_tls_source = GO_TLS_REGISTER,
};

static const struct tls_way *tls_way(const struct go_binary *gb)
{
	return gb->arm64 ? &tls_arm64 : &tls_amd64;
}

static void find_tls(struct go_binary *gb)
{
	const struct tls_way *way = tls_way(gb);
	int64_t from_sym = 0, from_code = 0;
	bool have_sym, have_code;
	const uint8_t *code;
	uint64_t entry;
	GElf_Phdr tls;
	GElf_Sym sym;

	if (elf_image__phdr(gb->img, PT_TLS, &tls) != 0) {
		gb->layout.tls_g_offset = way->no_pt_tls_offset;
		gb->tls_source = way->no_pt_tls_source;
		gb->tls_known = true;
		return;
	}
	have_sym = elf_image__symbol(gb->img, way->sym, &sym) == 0 &&
		   way->from_sym(sym.st_value, tls.p_memsz, tls.p_align, &from_sym) == 0;
	entry = asm_entry(gb, way->code_fn);
	code = entry ? elf_image__at(gb->img, entry, way->code_len) : NULL;
	have_code = code && way->decode(code, way->code_len, &from_code) == 0;
	if (have_sym && have_code && from_sym != from_code) {
		note(&gb->problems, "g's TLS slot is ambiguous: %s%+lld from %s, %s%+lld from %s",
		     way->tp, (long long)from_sym, way->sym, way->tp, (long long)from_code,
		     way->code_fn);
		return;
	}
	if (have_sym || have_code) {
		gb->layout.tls_g_offset = (__u64)(have_sym ? from_sym : from_code);
		gb->tls_source = have_sym ? GO_TLS_TLSG : way->code_source;
		gb->tls_known = true;
		return;
	}
	note(&gb->problems,
	     "cannot find g's TLS slot: PT_TLS present but no %s symbol and no recognisable "
	     "load of g in %s",
	     way->sym, way->code_fn);
}

static bool same_offsets(const struct go_layout *a, const struct go_layout *b)
{
	struct go_layout x = *a, y = *b;

	x.tls_g_offset = y.tls_g_offset = 0;
	x.gc_cycles = y.gc_cycles = 0;
	/* DWARF has the header layout only of a binary that serves HTTP; the table has no grpc */
	if (!x.hdr.map || !y.hdr.map)
		memset(&x.hdr, 0, sizeof(x.hdr)), memset(&y.hdr, 0, sizeof(y.hdr));
	memset(&x.grpc, 0, sizeof(x.grpc));
	memset(&y.grpc, 0, sizeof(y.grpc));
	memset(&x.otel, 0, sizeof(x.otel));
	memset(&y.otel, 0, sizeof(y.otel));
	return memcmp(&x, &y, sizeof(x)) == 0;
}

/*
 * A Go <= 1.23 map M, whose values are VALUE_SIZE bytes, fits what gomap.h
 * reads: its header's members in the MAP_HEADER_LEN bytes read whole, its
 * bucket in the sampler's buffer.
 */
static bool hmap_fits(const struct go_hmap_layout *m, __u32 value_size)
{
	return m->b < MAP_HEADER_LEN && m->flags < MAP_HEADER_LEN && m->buckets % 8 == 0 &&
	       m->buckets + 8 <= MAP_HEADER_LEN && m->oldbuckets % 8 == 0 &&
	       m->oldbuckets + 8 <= MAP_HEADER_LEN && m->size <= MAX_BUCKET_SIZE &&
	       m->tophash + BUCKET_SLOTS <= m->size &&
	       m->keys + BUCKET_SLOTS * GO_STRING_SIZE <= m->size &&
	       m->values + BUCKET_SLOTS * value_size <= m->size && m->overflow + 8 <= m->size;
}

/* The layout fits the sampler's fixed buffers; checked here so that BPF need not, and check says so. */
static const char *layout_problem(const struct go_layout *l)
{
	if (l->labels_layout == GO_LABELS_SLICE &&
	    (!l->label_size || l->label_size * MAX_LABELS > MAX_BUCKET_SIZE ||
	     l->label_key + 16 > l->label_size || l->label_value + 16 > l->label_size))
		return "its label element does not fit what the sampler reads";
	if (l->labels_layout == GO_LABELS_MAP && !hmap_fits(&l->lmap, GO_STRING_SIZE))
		return "its label map does not fit what the sampler reads";
	return NULL;
}

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

/*
 * Where to probe FN: its first instruction, a compare, the kernel steps
 * out of line, a second trap. The branch of the stack check after it the
 * kernel emulates, and there the registers are still the entry's (the
 * arguments, g, SP); a stack that must grow comes back to the entry and
 * through the branch again, with the same arguments.
 */
static uint64_t probe_pc(const struct go_binary *gb, const struct gopclntab_func *fn)
{
	static const uint8_t amd64_check[] = { 0x49, 0x3b, 0x66, 0x10 }; /* CMPQ SP, 16(R14) */
	const uint8_t *code;
	uint32_t w[3];

	code = fn->end - fn->entry >= 12 ? elf_image__at(gb->img, fn->entry, 12) : NULL;
	if (code && gb->arm64) {
		memcpy(w, code, sizeof(w));
		/* MOVD 16(R28), R16; CMP R16, RSP; BLS */
		if (w[0] == 0xf9400b90 && w[1] == 0xeb3063ff && (w[2] & 0xff00001f) == 0x54000009)
			return fn->entry + 8;
	} else if (code && !memcmp(code, amd64_check, sizeof(amd64_check)) &&
		   (code[4] == 0x76 || (code[4] == 0x0f && code[5] == 0x86))) {
		return fn->entry + 4; /* JBE */
	}
	return fn->entry;
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
		off = elf_image__file_offset(gb->img, probe_pc(gb, &fn));
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
	gb->label_probe = elf_image__file_offset(gb->img, probe_pc(gb, &fn));
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

/*
 * The traceparent source: the servers the binary links, each with its
 * layout and probes. One that cannot be read is a warning when another can.
 */
static void find_trace_probes(struct go_binary *gb, const struct golayout_row *row,
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

/* A pointer-sized word the file holds at VADDR, as the loader leaves it (a PIE's relocated). */
static bool linked_word(const struct elf_image *img, uint64_t vaddr, uint64_t *out)
{
	const uint8_t *p = elf_image__at(img, vaddr, 8);

	if (!p)
		return false;
	if (elf_image__relative_addend(img, vaddr, out) != 0)
		*out = word(p);
	return true;
}

/* Entry I of a []string-shaped array at BASE, when it is a plausible wait reason's name. */
static bool reason_at(const struct go_binary *gb, uint64_t base, size_t i, char *out, size_t outlen)
{
	const uint8_t *str;
	uint64_t ptr, len;
	size_t k;

	if (!linked_word(gb->img, base + 16 * i, &ptr) ||
	    !linked_word(gb->img, base + 16 * i + 8, &len) || len >= outlen)
		return false;
	str = len ? elf_image__at(gb->img, ptr, len) : NULL;
	if (len && !str)
		return false;
	for (k = 0; k < len; k++) {
		if (str[k] < ' ' || str[k] > '~')
			return false;
	}
	memcpy(out, str ?: (const uint8_t *)"", len);
	out[len] = '\0';
	return true;
}

/*
 * Go's own names of the reasons a goroutine waits, runtime.waitReasonStrings:
 * an array of strings, as the binary spells them, so each release's set and
 * numbering is its own. From the symbol table; false when it has none.
 */
static bool symtab_wait_reasons(struct go_binary *gb, struct go_wall_layout *w)
{
	GElf_Sym sym;
	size_t i;

	if (elf_image__symbol(gb->img, "runtime.waitReasonStrings", &sym) != 0 || sym.st_size % 16)
		return false;
	w->nreasons = sym.st_size / 16 < MAX_WAIT_REASONS ? sym.st_size / 16 : MAX_WAIT_REASONS;
	for (i = 0; i < w->nreasons; i++) {
		if (!reason_at(gb, sym.st_value, i, w->reasons[i], sizeof(w->reasons[i])))
			return false;
	}
	return true;
}

/*
 * The same array in a stripped binary, from its data: every release since
 * 1.19 names reason 1 "GC assist marking" and reason 0 "". Its string is
 * found in .rodata, then the string header that points to it in .data;
 * entries are read until one is no name, and when the table knows the
 * release and agrees on its entries, its count is taken (what follows the
 * array is never indexed, but check should count right).
 */
static bool data_wait_reasons(struct go_binary *gb, struct go_wall_layout *w)
{
	static const char first[] = "GC assist marking";
	const char *table[MAX_WAIT_REASONS];
	const uint8_t *ro, *data, *hit;
	uint64_t ro_addr, data_addr, want, ptr, base = 0;
	size_t ro_len, data_len, off, ntable, i;

	ro = elf_image__section(gb->img, ".rodata", &ro_len, &ro_addr);
	data = elf_image__section(gb->img, ".data", &data_len, &data_addr);
	if (!ro || !data)
		return false;
	for (off = 0; !base && off + sizeof(first) - 1 <= ro_len; off = hit - ro + 1) {
		hit = memmem(ro + off, ro_len - off, first, sizeof(first) - 1);
		if (!hit)
			break;
		want = ro_addr + (hit - ro);
		for (i = 16; !base && i + 16 <= data_len; i += 8) {
			if (word(data + i + 8) != sizeof(first) - 1 ||
			    !linked_word(gb->img, data_addr + i, &ptr) || ptr != want ||
			    word(data + i - 8) != 0)
				continue;
			base = data_addr + i - 16;
		}
	}
	if (!base)
		return false;
	for (w->nreasons = 0; w->nreasons < MAX_WAIT_REASONS; w->nreasons++) {
		if (!reason_at(gb, base, w->nreasons, w->reasons[w->nreasons],
			       sizeof(w->reasons[0])))
			break;
	}
	if (w->nreasons < 2 || strcmp(w->reasons[0], "") || strcmp(w->reasons[1], first))
		return false;
	ntable = golayout__wait_reasons(gb->major, gb->minor, table, MAX_WAIT_REASONS);
	for (i = 0; i < ntable && i < w->nreasons && !strcmp(table[i], w->reasons[i]); i++)
		;
	if (ntable && i == ntable)
		w->nreasons = ntable;
	return true;
}

/* The release's names from the golayout table: false when it has none. */
static bool table_wait_reasons(struct go_binary *gb, struct go_wall_layout *w)
{
	const char *table[MAX_WAIT_REASONS];
	size_t i;

	w->nreasons = golayout__wait_reasons(gb->major, gb->minor, table, MAX_WAIT_REASONS);
	for (i = 0; i < w->nreasons; i++)
		snprintf(w->reasons[i], sizeof(w->reasons[i]), "%s", table[i]);
	return w->nreasons > 0;
}

/* Is [ADDR, ADDR + LEN) inside section NAME? */
static bool in_section(const struct go_binary *gb, const char *name, uint64_t addr, uint64_t len)
{
	uint64_t start, size;

	return elf_image__section_range(gb->img, name, &start, &size) == 0 && addr >= start &&
	       addr - start <= size && size - (addr - start) >= len;
}

/*
 * runtime.allgs and runtime.allglen without a symbol table: decoded from
 * runtime.allgadd, which .gopclntab still names. The decoding is checked
 * against where the linker must have put them: allgs, a slice of
 * pointers, in .bss; allglen, a uintptr, in .noptrbss.
 */
static const char *code_allgs(struct go_binary *gb, uint64_t *allgs, uint64_t *allglen)
{
	struct gopclntab_func fn;
	const uint8_t *code;

	if (!gb->pcln || gopclntab__find(gb->pcln, "runtime.allgadd", &fn) != 0)
		return "no symbol table, and .gopclntab has no runtime.allgadd to find runtime.allgs in";
	code = fn.end > fn.entry ? elf_image__at(gb->img, fn.entry, fn.end - fn.entry) : NULL;
	if (!code)
		return "no symbol table, and runtime.allgadd's code cannot be read";
	if ((gb->arm64 ? go_allgs__decode_allgadd_arm64 : go_allgs__decode_allgadd)(
		    code, fn.end - fn.entry, fn.entry, allgs, allglen) != 0)
		return "no symbol table, and runtime.allgadd's code does not store allglen as "
		       "releases 1.19 to 1.27 do: runtime.allgs not found (never guessed)";
	if (!in_section(gb, ".bss", *allgs, 24) || !in_section(gb, ".noptrbss", *allglen, 8))
		return "no symbol table, and what runtime.allgadd's code names as runtime.allgs "
		       "and allglen is not in .bss and .noptrbss: not used";
	return NULL;
}

/* The bytes of a g that --wall reads: every member it reads, g.stack (at 0) too, lies in [0, g_read). */
static void wall_window(struct go_wall_layout *w, const struct go_layout *l)
{
	const struct go_wall_offsets *o = &w->off;
	const uint32_t at[][2] = {
		{ o->g_sched + o->gobuf_sp, 8 }, { o->g_sched + o->gobuf_pc, 8 },
		{ o->g_sched + o->gobuf_bp, 8 }, { o->g_syscallsp, 8 }, { o->g_syscallpc, 8 },
		{ o->g_sched + o->gobuf_lr, 8 },
		{ o->g_status, 4 }, { o->g_waitreason, 1 }, { l->g_goid, 8 }, { l->g_labels, 8 },
		{ l->g_parent_goid ?: l->g_goid, 8 },
	};
	size_t i;

	w->g_read = 16;
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		if (at[i][0] + at[i][1] > w->g_read)
			w->g_read = at[i][0] + at[i][1];
	}
}

/*
 * --wall reads every goroutine through runtime.allgs, and each g's
 * scheduling members: those from DWARF, else the golayout row of the
 * release; allgs from the symbol table, else runtime.allgadd's code; the
 * names of wait reasons from the symbol table, the binary's data or the
 * table. Each says where it came from; what cannot be found is refused.
 */
static void find_wall(struct go_binary *gb, const struct go_dwarf_result *dw)
{
	const struct golayout_row *row = golayout__lookup(gb->major, gb->minor);
	struct go_wall_layout *w = &gb->wall;
	GElf_Sym allgs, allglen;
	const char *why;

	if (dw && dw->wall.ok) {
		w->off = dw->wall;
		w->offsets_from = "dwarf";
	} else if (gb->source == GO_SOURCE_TABLE && row && row->wall.known) {
		w->off = (struct go_wall_offsets){
			.ok = true,
			.g_status = row->wall.g_status,
			.g_waitreason = row->wall.g_waitreason,
			.g_sched = row->wall.g_sched,
			.gobuf_sp = row->wall.gobuf_sp,
			.gobuf_pc = row->wall.gobuf_pc,
			.gobuf_bp = row->wall.gobuf_bp,
			.g_syscallsp = row->wall.g_syscallsp,
			.g_syscallpc = row->wall.g_syscallpc,
			.gobuf_lr = row->wall.gobuf_lr,
		};
		w->offsets_from = "table";
	} else {
		snprintf(gb->wall_problem, NOTE_LEN, "%s",
			 dw ? "DWARF: runtime.g lacks atomicstatus, waitreason, sched {sp, pc, bp, lr} "
			      "or syscallsp/syscallpc" :
			 row && !row->verified ?
			      "no DWARF, and the golayout row of this Go release is a public "
			      "reference without runtime.g's scheduling members (atomicstatus, "
			      "waitreason, sched): rebuild without -w or strip" :
			 row ? "no DWARF, and the golayout row of this Go release has no "
			       "runtime.g scheduling members: regenerate it with 'make golayout'" :
			      "no DWARF, and no golayout row with runtime.g's scheduling members "
			      "(atomicstatus, waitreason, sched) for this Go release");
		return;
	}
	if (elf_image__symbol(gb->img, "runtime.allgs", &allgs) == 0 &&
	    elf_image__symbol(gb->img, "runtime.allglen", &allglen) == 0) {
		w->allgs = allgs.st_value;
		w->allglen = allglen.st_value;
		w->goroutines_from = "symtab";
	} else if ((why = code_allgs(gb, &w->allgs, &w->allglen)) != NULL) {
		snprintf(gb->wall_problem, NOTE_LEN, "%s", why);
		return;
	} else {
		w->goroutines_from = "code";
	}
	if (symtab_wait_reasons(gb, w))
		w->reasons_from = "symtab";
	else if (data_wait_reasons(gb, w))
		w->reasons_from = "data";
	else if (table_wait_reasons(gb, w))
		w->reasons_from = "table";
	else {
		snprintf(gb->wall_problem, NOTE_LEN,
			 "runtime.waitReasonStrings, Go's names of wait reasons, is neither in the "
			 "symbol table nor found in the binary's data, and the golayout table has "
			 "none for this Go release");
		return;
	}
	wall_window(w, &gb->layout);
}

static void find_layout(struct go_binary *gb)
{
	const struct golayout_row *row = golayout__lookup(gb->major, gb->minor);
	struct go_dwarf_result dw;
	char err[ERR_LEN];
	GElf_Sym sym;
	__u64 tls = gb->layout.tls_g_offset;
	int ret = -ENODATA;

	if (gb->dwarf) {
		ret = go_dwarf__read(gb->img, gb->serves_http, gb->serves_grpc, gb->uses_otel, &dw,
				     err, sizeof(err));
		if (ret != 0)
			note(&gb->warnings, "%s; falling back to the golayout table", err);
	}
	gb->md_gofunc = ret == 0 && dw.md_gofunc ? dw.md_gofunc : row ? row->md_gofunc : 0;
	if (ret == 0) {
		gb->layout = dw.layout;
		gb->source = GO_SOURCE_DWARF;
		if (!dw.have_labels_type && row) {
			/*
			 * Nothing to read the labels layout from, and nothing
			 * will ever be stored there: the release's own, so that
			 * the layout stays whole.
			 */
			gb->layout = row->layout;
			gb->layout.g_m = dw.layout.g_m;
			gb->layout.m_curg = dw.layout.m_curg;
			gb->layout.g_labels = dw.layout.g_labels;
			gb->layout.g_goid = dw.layout.g_goid;
			gb->layout.g_parent_goid = dw.layout.g_parent_goid;
		} else if (row && !same_offsets(&gb->layout, &row->layout)) {
			note(&gb->warnings,
			     "DWARF offsets differ from the golayout row for Go %d.%d (custom "
			     "toolchain or GOEXPERIMENT?); using DWARF",
			     gb->major, gb->minor);
		}
	} else if (row) {
		gb->layout = row->layout;
		gb->source = GO_SOURCE_TABLE;
		if (!row->verified)
			note(&gb->warnings,
			     "offsets for Go %d.%d come from public reference tables, not verified "
			     "on a build here",
			     gb->major, gb->minor);
	} else {
		note(&gb->problems,
		     "%s, and Go %d.%d (%s) is not in the golayout table, which covers %s; "
		     "rebuild without -w or strip, or add the version with 'make golayout'",
		     gb->dwarf ? "no usable DWARF" : "no DWARF", gb->major, gb->minor, gb->version,
		     golayout__range());
	}
	gb->layout.tls_g_offset = tls;
	gb->layout.gc_cycles = 0;
	/* a stripped binary has neither; the sampler then reads every label set */
	if (ret == 0 && dw.work_cycles && elf_image__symbol(gb->img, "runtime.work", &sym) == 0)
		gb->layout.gc_cycles = sym.st_value + dw.work_cycles;
	if (gb->source != GO_SOURCE_NONE && layout_problem(&gb->layout))
		note(&gb->problems, "%s", layout_problem(&gb->layout));
	if (gb->source != GO_SOURCE_NONE)
		find_trace_probes(gb, row, ret == 0 ? &dw : NULL);
	find_wall(gb, ret == 0 ? &dw : NULL);
}

static const uint8_t *read_image(void *img, uint64_t vaddr, size_t len)
{
	return elf_image__at(img, vaddr, len);
}

/* Where inlining trees are: Go 1.18+ give their offsets from moduledata's gofunc. */
static void find_funcdata(struct go_binary *gb)
{
	const struct golayout_row *row;
	struct go_dwarf_result dw;
	uint64_t md, gofunc = 0;
	char err[ERR_LEN];
	GElf_Sym sym;

	if (!gb->pcln)
		return;
	if (gopclntab__magic(gb->pcln) == GOPCLNTAB_MAGIC_116) {
		gopclntab__set_funcdata(gb->pcln, 0, read_image, gb->img);
		return;
	}
	/* the start of go:func.* is gofunc; its symbol saves finding the module data */
	if (elf_image__symbol(gb->img, "go:func.*", &sym) == 0 ||
	    elf_image__symbol(gb->img, "go.func.*", &sym) == 0)
		gofunc = sym.st_value;
	/* opened for symbols only: no layout was read */
	if (!gofunc && !gb->md_gofunc) {
		row = golayout__lookup(gb->major, gb->minor);
		if (row)
			gb->md_gofunc = row->md_gofunc;
		else if (gb->dwarf && go_dwarf__read(gb->img, false, false, false, &dw, err, sizeof(err)) == 0)
			gb->md_gofunc = dw.md_gofunc;
	}
	if (!gofunc && !gb->md_gofunc) {
		note(&gb->warnings, "Go %d.%d's module data layout is unknown: inlined calls will "
				    "not be shown as frames of their own", gb->major, gb->minor);
		return;
	}
	if (!gofunc) {
		md = find_moduledata(gb->img, gb->pcln_addr, gb->pcln_len);
		gofunc = moduledata_word(gb->img, md, gb->md_gofunc);
	}
	if (!gofunc || !elf_image__at(gb->img, gofunc, 1)) {
		note(&gb->warnings, "cannot find Go's module data: inlined calls will not be shown "
				    "as frames of their own");
		return;
	}
	gopclntab__set_funcdata(gb->pcln, gofunc, read_image, gb->img);
}

static struct go_binary *open_binary(const char *path, bool full, char *err, size_t errlen)
{
	const GElf_Ehdr *eh;
	struct go_binary *gb;
	char ierr[ERR_LEN], goarch[32];
	GElf_Phdr ph;

	gb = calloc(1, sizeof(*gb));
	if (!gb || !(gb->path = strdup(path))) {
		free(gb);
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	gb->label_probe = -1;
	gb->do_probe = -1;
	gb->img = elf_image__open(path, ierr, sizeof(ierr));
	if (!gb->img) {
		if (errno != ENOEXEC && errno != EINVAL) {
			int saved = errno;

			snprintf(err, errlen, "%s", ierr);
			go_binary__close(gb);
			errno = saved;
			return NULL;
		}
		note(&gb->problems, "%s", ierr);
		return gb;
	}
	eh = elf_image__ehdr(gb->img);
	if ((eh->e_type != ET_EXEC && eh->e_type != ET_DYN) || elf_image__phdr(gb->img, PT_LOAD, &ph)) {
		/* nothing the kernel would run, nor anything a sample's address could be in */
		note(&gb->problems, "not an executable: %s",
		     eh->e_type != ET_EXEC && eh->e_type != ET_DYN ? "ELF type is neither EXEC nor DYN"
								  : "no loadable segment");
		return gb;
	}
	gb->arch = arch_name(eh, gb->arch_buf, sizeof(gb->arch_buf));
	gb->pie = eh->e_type == ET_DYN;
	gb->symtab = elf_image__has_section(gb->img, ".symtab");
	gb->dwarf = elf_image__has_section(gb->img, ".debug_info") ||
		    elf_image__has_section(gb->img, ".zdebug_info");

	if (read_version(gb) != 0)
		return gb;
	/* a file of no Go links C or not: cgo is a Go binary's fact */
	gb->cgo = elf_image__needed(gb->img) > 0;
	/*
	 * The ELF header and the build info must name one architecture: a
	 * header changed by hand (or a damaged one) would have x86 code read
	 * as arm64's, and the other way round.
	 */
	if (!buildinfo__setting(gb->buildinfo, gb->buildinfo_len, "GOARCH", goarch, sizeof(goarch)) &&
	    strcmp(goarch, gb->arch)) {
		note(&gb->problems, "the ELF header says %s, the Go build info GOARCH=%s: a damaged or altered binary",
		     gb->arch, goarch);
		return gb;
	}
	gb->arm64 = strcmp(gb->arch, "arm64") == 0;
	if (strcmp(gb->arch, "amd64") != 0 && !gb->arm64) {
		/* its functions are named as amd64's are: addr2line serves it */
		open_pclntab(gb);
		find_funcdata(gb);
		note(&gb->problems, "architecture %s is not supported (amd64 and arm64 only)",
		     gb->arch);
		return gb;
	}
	open_pclntab(gb);
	if (!full) {
		find_funcdata(gb);
		note(&gb->problems, "opened for its symbols only");
		return gb;
	}
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
	find_tls(gb);
	find_layout(gb);
	find_funcdata(gb);
	if (gb->pcln && !gb->sets_labels && !gb->nprobes)
		note(&gb->warnings, "never sets goroutine labels (no runtime/pprof.Do or "
				    "SetGoroutineLabels) and serves no HTTP that ctxprof-go can "
				    "read a traceparent from: no trace IDs will be seen");
	return gb;
}

struct go_binary *go_binary__open(const char *path, char *err, size_t errlen)
{
	return open_binary(path, true, err, errlen);
}

struct go_binary *go_binary__open_symbols(const char *path, char *err, size_t errlen)
{
	return open_binary(path, false, err, errlen);
}

void go_binary__close(struct go_binary *gb)
{
	if (!gb)
		return;
	gopclntab__close(gb->pcln);
	elf_image__close(gb->img);
	free(gb->path);
	free(gb);
}

bool go_binary__supported(const struct go_binary *gb)
{
	return gb->problems.n == 0 && gb->tls_known && gb->source != GO_SOURCE_NONE;
}

bool go_binary__is_elf(const struct go_binary *gb)
{
	return gb->img != NULL;
}

int go_binary__rodata(const struct go_binary *gb, uint64_t *addr, uint64_t *len)
{
	return elf_image__section_range(gb->img, ".rodata", addr, len);
}

uint64_t go_binary__entry(const struct go_binary *gb)
{
	const GElf_Ehdr *eh = gb->img ? elf_image__ehdr(gb->img) : NULL;

	return eh ? eh->e_entry : 0;
}

const char *go_binary__path(const struct go_binary *gb)
{
	return gb->path;
}

const char *go_binary__version(const struct go_binary *gb)
{
	return gb->version[0] ? gb->version : NULL;
}

const char *go_binary__arch(const struct go_binary *gb)
{
	return gb->arch;
}

const char *go_binary__thread_pointer(const struct go_binary *gb)
{
	return tls_way(gb)->tp;
}

bool go_binary__pie(const struct go_binary *gb)
{
	return gb->pie;
}

bool go_binary__cgo(const struct go_binary *gb)
{
	return gb->cgo;
}

bool go_binary__has_dwarf(const struct go_binary *gb)
{
	return gb->dwarf;
}

bool go_binary__has_symtab(const struct go_binary *gb)
{
	return gb->symtab;
}

bool go_binary__sets_labels(const struct go_binary *gb)
{
	return gb->sets_labels;
}

enum go_layout_source go_binary__source(const struct go_binary *gb)
{
	return gb->source;
}

enum go_tls_source go_binary__tls_source(const struct go_binary *gb)
{
	return gb->tls_source;
}

uint32_t go_binary__md_gofunc(const struct go_binary *gb)
{
	return gb->md_gofunc;
}

const struct gopclntab *go_binary__pclntab(const struct go_binary *gb)
{
	return gb->pcln;
}

int go_binary__layout(const struct go_binary *gb, struct go_layout *out)
{
	if (!go_binary__supported(gb))
		return -EINVAL;
	*out = gb->layout;
	return 0;
}

size_t go_binary__nproblems(const struct go_binary *gb)
{
	return gb->problems.n;
}

const char *go_binary__problem(const struct go_binary *gb, size_t idx)
{
	return idx < gb->problems.n ? gb->problems.text[idx] : NULL;
}

size_t go_binary__nwarnings(const struct go_binary *gb)
{
	return gb->warnings.n;
}

const char *go_binary__warning(const struct go_binary *gb, size_t idx)
{
	return idx < gb->warnings.n ? gb->warnings.text[idx] : NULL;
}

bool go_binary__said(struct go_binary *gb, unsigned int bit)
{
	uint32_t m = 1U << (bit & 31);
	bool was = gb->said & m;

	gb->said |= m;
	return was;
}

const char *go_layout_source__name(enum go_layout_source src)
{
	switch (src) {
	case GO_SOURCE_DWARF:
		return "dwarf";
	case GO_SOURCE_TABLE:
		return "table";
	default:
		return NULL;
	}
}

const char *go_tls_source__name(enum go_tls_source src)
{
	switch (src) {
	case GO_TLS_NO_PT_TLS:
		return "no-pt-tls";
	case GO_TLS_TLSG:
		return "tlsg";
	case GO_TLS_STACKCHECK:
		return "stackcheck";
	case GO_TLS_REGISTER:
		return "register";
	case GO_TLS_LOAD_G:
		return "load_g";
	default:
		return NULL;
	}
}

bool go_binary__serves_requests(const struct go_binary *gb)
{
	return gb->serves_http || gb->serves_grpc;
}

const char *go_binary__trace_servers(const struct go_binary *gb)
{
	static const char *const names[4] = { "", "net/http", "grpc-go", "net/http grpc-go" };
	int i = (gb->layout.hdr.map ? 1 : 0) | (gb->layout.grpc.ok ? 2 : 0);

	return go_binary__supported(gb) ? names[i] : "";
}

size_t go_binary__module_members(const struct go_binary *gb,
				  const struct go_module_member **members)
{
	*members = gb->members;
	return gb->nmembers;
}

long go_binary__label_probe(const struct go_binary *gb)
{
	return go_binary__supported(gb) && gb->label_probe >= 0 ? gb->label_probe : -1;
}

long go_binary__do_probe(const struct go_binary *gb)
{
	return go_binary__label_probe(gb) >= 0 ? gb->do_probe : -1;
}

bool go_binary__spawn_probe(const struct go_binary *gb)
{
	return gb->spawn_probe;
}

size_t go_binary__trace_probes(const struct go_binary *gb, const struct go_trace_probe **probes)
{
	*probes = gb->probes;
	return go_binary__supported(gb) ? gb->nprobes : 0;
}

const char *go_binary__trace_source_problem(const struct go_binary *gb, enum trace_source src)
{
	if (src >= TRACE_SOURCE_COUNT)
		return "unknown source";
	if (!go_binary__supported(gb))
		return "the binary is not supported";
	return gb->source_problem[src][0] ? gb->source_problem[src] : NULL;
}

const struct go_wall_layout *go_binary__wall(const struct go_binary *gb)
{
	return go_binary__supported(gb) && !gb->wall_problem[0] ? &gb->wall : NULL;
}

const char *go_binary__wall_problem(const struct go_binary *gb)
{
	if (!go_binary__supported(gb))
		return "the binary is not supported";
	return gb->wall_problem[0] ? gb->wall_problem : NULL;
}

const char *trace_source__name(enum trace_source src)
{
	static const char *const names[TRACE_SOURCE_COUNT] = {
		[TRACE_SOURCE_LABEL] = "label",
		[TRACE_SOURCE_TRACEPARENT] = "traceparent",
		[TRACE_SOURCE_OTEL_SDK] = "otel-sdk",
		[TRACE_SOURCE_OBI] = "obi",
	};

	return src < TRACE_SOURCE_COUNT ? names[src] : NULL;
}

const char *go_labels_layout__name(__u32 layout)
{
	switch (layout) {
	case GO_LABELS_MAP:
		return "map";
	case GO_LABELS_SLICE:
		return "slice";
	default:
		return NULL;
	}
}
