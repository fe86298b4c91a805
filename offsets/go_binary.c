// SPDX-License-Identifier: GPL-2.0
/* go_binary.c: what ctxprof-go needs to know about one Go executable, and whether it can profile it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buildinfo.h"
#include "elf_image.h"
#include "go_binary_priv.h"
#include "go_dwarf.h"
#include "go_tls.h"
#include "gopclntab.h"
#include "../golayout/golayout.h"
#include "../bpf/gomap.h"

#define ERR_LEN 256

/* Bytes of runtime.stackcheck we decode: the g load is its first one or two instructions. */
#define STACKCHECK_CODE_LEN 16
/* runtime.load_g on arm64: the iscgo test, then the load of g (eight instructions) */
#define LOAD_G_CODE_LEN 64

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

const char *go_binary__thread_pointer(const struct go_binary *gb)
{
	return tls_way(gb)->tp;
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

/*
 * runtime.morestack's code, and where in g it leaves the function that
 * called it and that one's caller (struct go_layout): from --wall's
 * offsets of g.sched, which morestack fills.
 */
static void find_morestack(struct go_binary *gb)
{
	const struct go_wall_offsets *o = &gb->wall.off;
	bool arm64 = gb->arch && !strcmp(gb->arch, "arm64");
	struct gopclntab_func fn, noctxt;

	if (!o->ok || !gb->pcln || gopclntab__find(gb->pcln, "runtime.morestack", &fn) != 0 ||
	    fn.end <= fn.entry || (arm64 && !o->gobuf_lr))
		return;
	gb->layout.morestack = fn.entry;
	gb->layout.morestack_end = fn.end;
	/* most functions call morestack_noctxt, which only jumps on into morestack */
	if (gopclntab__find(gb->pcln, "runtime.morestack_noctxt", &noctxt) == 0 &&
	    noctxt.entry == fn.end && noctxt.end > noctxt.entry)
		gb->layout.morestack_end = noctxt.end;
	gb->layout.g_status = o->g_status;
	gb->layout.sched_pc = o->g_sched + o->gobuf_pc;
	gb->layout.sched_caller = o->g_sched + (arm64 ? o->gobuf_lr : o->gobuf_sp);
	gb->layout.sched_bp = o->g_sched + o->gobuf_bp;
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
		go_binary_probes__find(gb, row, ret == 0 ? &dw : NULL);
	go_binary_wall__find(gb, ret == 0 ? &dw : NULL);
	find_morestack(gb);
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
	gb->alloc = (struct go_alloc_probe){ .offset = -1, .memprof_disabled = -1 };
	gb->alloc_err = -ENOENT;
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
	go_binary_probes__sources(gb);
	find_tls(gb);
	find_layout(gb);
	find_funcdata(gb);
	go_binary_alloc__find(gb);
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
