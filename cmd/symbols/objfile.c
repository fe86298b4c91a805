// SPDX-License-Identifier: GPL-2.0
/* objfile.c: names the code of one mapped file (executable, library, vdso) by its link-time addresses. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "cmd/util/hashmap.h"
#include "offsets/elf_image.h"
#include "offsets/go_binary.h"
#include "offsets/gopclntab.h"
#include "binaries.h"
#include "objfile.h"

#define MAX_LOADS 16
/*
 * Answers kept per file: an agent that runs for days must not grow without
 * end. Past this, the cache starts over (a few ms to fill again).
 */
#define CACHE_MAX 65536
#define DEBUG_ROOT "/usr/lib/debug"

struct load {
	uint64_t offset, vaddr, filesz;
};

struct objfile {
	struct objfile *next;
	dev_t dev;
	ino_t ino;
	int refs;
	int fd;
	char *name;
	struct load loads[MAX_LOADS];
	int nloads;
	bool link_register; /* arm64: a call leaves its return address in LR, not on the stack */
	struct go_binary *gb; /* Go code: its function table */
	Dwfl *dwfl; /* everything else: ELF symbols and DWARF lines, opened at first use */
	Dwfl_Module *mod;
	bool dwfl_tried;
	char *build_id;
	struct hashmap *cache; /* vaddr -> struct frames */
	struct hashmap *sp_deltas; /* vaddr -> int32_t */
	struct hashmap *strings; /* interned names and paths */
};

/* The answer for one address. */
struct frames {
	size_t n;
	struct frame f[];
};

/* A host runs few distinct binaries and libraries: a list will do. */
static struct objfile *objfiles;
static struct objfile *vdso;

/*
 * Separate debug files, by build ID or .gnu_debuglink, on this machine
 * only. libdwfl's standard lookup also loads the debuginfod client (and
 * with it libcurl and some thirty libraries) on first use: about half a
 * second of start-up for a network lookup that is not wanted here.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink, GElf_Word crc, char **out)
{
	char path[PATH_MAX], dir[PATH_MAX];
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n, i, fd, len;

	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n > 1) {
		len = snprintf(path, sizeof(path), DEBUG_ROOT "/.build-id/%02x/", bits[0]);
		for (i = 1; i < n && len < (int)sizeof(path) - 8; i++)
			len += snprintf(path + len, sizeof(path) - len, "%02x", bits[i]);
		snprintf(path + len, sizeof(path) - len, ".debug");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			goto found;
	}
	if (!debuglink || !file_name)
		return -1;
	snprintf(dir, sizeof(dir), "%s", file_name);
	dirname(dir);
	{
		const char *const fmts[] = { "%s/%s", "%s/.debug/%s", DEBUG_ROOT "%s/%s" };

		for (i = 0; i < 3; i++) {
			snprintf(path, sizeof(path), fmts[i], dir, debuglink);
			/* the file itself is not its own debug file */
			if (!strcmp(path, file_name))
				continue;
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0)
				goto found;
		}
	}
	return -1;
found:
	*out = strdup(path);
	return fd;
}

static char *debuginfo_path;

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static void frames__free(void *p)
{
	free(p);
}

static void objfile__free(struct objfile *of)
{
	if (!of)
		return;
	binaries__put(of->gb);
	if (of->dwfl)
		dwfl_end(of->dwfl);
	if (of->fd >= 0)
		close(of->fd);
	hashmap__free(of->cache, frames__free);
	hashmap__free(of->sp_deltas, free);
	hashmap__free(of->strings, free);
	free(of->build_id);
	free(of->name);
	free(of);
}

/* The file's PT_LOAD segments, which turn file offsets into link-time addresses. */
static int read_loads(struct objfile *of, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t i, n;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(of->fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n) != 0 ||
	    !gelf_getehdr(elf, &eh)) {
		snprintf(err, errlen, "%s: not an ELF file: %s", of->name, elf_errmsg(-1));
		elf_end(elf);
		return -EINVAL;
	}
	of->link_register = eh.e_machine == EM_AARCH64;
	for (i = 0; i < n && of->nloads < MAX_LOADS; i++) {
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			of->loads[of->nloads++] = (struct load){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
	elf_end(elf);
	return 0;
}

static struct objfile *objfile__new(int fd, const struct stat *st, const char *name, char *err,
				    size_t errlen)
{
	struct objfile *of = calloc(1, sizeof(*of));
	char path[64], gerr[256];

	if (!of) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	of->fd = fd;
	of->dev = st->st_dev;
	of->ino = st->st_ino;
	of->refs = 1;
	of->name = strdup(name);
	of->cache = hashmap__new();
	of->sp_deltas = hashmap__new();
	of->strings = hashmap__new();
	if (!of->name || !of->cache || !of->sp_deltas || !of->strings) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (read_loads(of, err, errlen))
		goto fail;
	/* through our descriptor: the same file whatever the path now holds */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	of->gb = binaries__get(path, gerr, sizeof(gerr));
	if (of->gb && !go_binary__pclntab(of->gb)) {
		binaries__put(of->gb);
		of->gb = NULL;
	}
	return of;
fail:
	objfile__free(of);
	return NULL;
}

struct objfile *objfile__get(const char *open_path, const char *name, char *err, size_t errlen)
{
	struct objfile *of;
	struct stat st;
	int fd, saved;

	fd = open(open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		saved = errno;
		snprintf(err, errlen, "cannot open %s: %s", open_path, strerror(saved));
		if (fd >= 0)
			close(fd);
		errno = saved;
		return NULL;
	}
	for (of = objfiles; of; of = of->next) {
		if (of->dev == st.st_dev && of->ino == st.st_ino) {
			close(fd);
			of->refs++;
			return of;
		}
	}
	of = objfile__new(fd, &st, name, err, errlen);
	if (!of)
		return NULL;
	of->next = objfiles;
	objfiles = of;
	return of;
}

void objfile__put(struct objfile *of)
{
	struct objfile **pp, *o;

	if (!of || of == vdso)
		return;
	for (pp = &objfiles; (o = *pp); pp = &o->next) {
		if (o != of)
			continue;
		if (--o->refs == 0) {
			*pp = o->next;
			objfile__free(o);
		}
		return;
	}
}

/* The vdso's size: it ends with its section headers. */
static size_t vdso_size(const unsigned char *image)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;

	if (memcmp(image, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	return eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
}

struct objfile *objfile__vdso(void)
{
	const unsigned char *image = (const void *)getauxval(AT_SYSINFO_EHDR);
	char path[64], err[256];
	struct stat st;
	size_t size;
	int fd;

	if (vdso || !image)
		return vdso;
	size = vdso_size(image);
	/* a file of our own copy, so that libelf and libdwfl read it like any other */
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (!size || size > (1 << 20) || write(fd, image, size) != (ssize_t)size || fstat(fd, &st)) {
		close(fd);
		return NULL;
	}
	snprintf(path, sizeof(path), "[vdso]");
	vdso = objfile__new(fd, &st, path, err, sizeof(err));
	return vdso;
}

uint64_t objfile__vdso_symbol(const char *name)
{
	struct objfile *of = objfile__vdso();
	struct elf_image *img;
	uint64_t off = 0;
	char path[64];
	GElf_Phdr load;
	GElf_Sym sym;

	if (!of)
		return 0;
	/* our copy of the image, by its memfd */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", of->fd);
	img = elf_image__open(path, NULL, 0);
	/* from the image's start: its first load's address is subtracted */
	if (img && !elf_image__dynamic_symbol(img, name, &sym) &&
	    !elf_image__phdr(img, PT_LOAD, &load))
		off = sym.st_value - (load.p_vaddr - load.p_offset);
	elf_image__close(img);
	return off;
}

const char *objfile__name(const struct objfile *of)
{
	return of->name;
}

bool objfile__vaddr(const struct objfile *of, uint64_t off, uint64_t *vaddr)
{
	int i;

	for (i = 0; i < of->nloads; i++) {
		const struct load *l = &of->loads[i];

		if (off >= l->offset && off < l->offset + l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return true;
		}
	}
	return false;
}

/* libdwfl for code that .gopclntab does not cover, at its link-time addresses. */
static Dwfl_Module *dwfl_mod(struct objfile *of)
{
	int fd;

	if (of->dwfl_tried)
		return of->mod;
	of->dwfl_tried = true;
	of->dwfl = dwfl_begin(&callbacks);
	fd = of->dwfl ? dup(of->fd) : -1;
	if (fd < 0)
		return NULL;
	dwfl_report_begin(of->dwfl);
	/* base 0: addresses as linked, for ET_EXEC and ET_DYN alike; libdwfl owns FD */
	of->mod = dwfl_report_elf(of->dwfl, of->name, of->name, fd, 0, false);
	if (!of->mod)
		close(fd);
	dwfl_report_end(of->dwfl, NULL, NULL);
	return of->mod;
}

const char *objfile__build_id(struct objfile *of)
{
	const unsigned char *bits;
	Dwfl_Module *mod;
	GElf_Addr vaddr;
	char hex[2 * 64 + 1] = "";
	int i, n;

	if (of->build_id)
		return of->build_id;
	mod = dwfl_mod(of);
	n = mod ? dwfl_module_build_id(mod, &bits, &vaddr) : 0;
	for (i = 0; i < n && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	of->build_id = strdup(hex);
	return of->build_id ?: "";
}

static const char *intern(struct objfile *of, const char *str)
{
	size_t len = strlen(str);
	char *copy;

	copy = hashmap__get(of->strings, str, len);
	if (copy)
		return copy;
	copy = strdup(str);
	if (!copy || hashmap__add(of->strings, str, len, copy) != 0) {
		free(copy);
		return NULL;
	}
	return copy;
}

/* Go code: functions, files and lines from .gopclntab, inlined calls expanded. */
static struct frames *lookup_go(struct objfile *of, uint64_t vaddr)
{
	struct gopclntab_frame gf[GOPCLNTAB_MAX_INLINE];
	const struct gopclntab *tab = of->gb ? go_binary__pclntab(of->gb) : NULL;
	struct gopclntab_func fn;
	struct frames *out;
	int i, n;

	if (!tab || gopclntab__lookup(tab, vaddr, &fn) != 0)
		return NULL;
	n = gopclntab__frames(tab, &fn, vaddr, gf, GOPCLNTAB_MAX_INLINE);
	if (n <= 0)
		return NULL;
	out = calloc(1, sizeof(*out) + n * sizeof(out->f[0]));
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		out->f[i].func = intern(of, gf[i].func);
		if (!out->f[i].func) {
			free(out);
			return NULL;
		}
		if (gf[i].file[0] && gf[i].line > 0) {
			out->f[i].file = intern(of, gf[i].file);
			out->f[i].line = out->f[i].file ? gf[i].line : 0;
		}
		out->f[i].inlined = gf[i].inlined;
	}
	out->n = n;
	return out;
}

/*
 * The call frame information (.eh_frame) of the function holding VADDR:
 * its bounds in START and END, and returned (to be freed) for its rules.
 * Code without a symbol (the vDSO's static functions, a stripped
 * library's) still has it: unwinders, and not only debuggers, need it.
 */
static Dwarf_Frame *cfi_frame(struct objfile *of, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	Dwfl_Module *mod = dwfl_mod(of);
	Dwarf_Addr bias, lo, hi;
	Dwarf_Frame *frame;
	Dwarf_CFI *cfi;
	bool signalp;

	cfi = mod ? dwfl_module_eh_cfi(mod, &bias) : NULL;
	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr - bias, &frame) != 0)
		return NULL;
	if (dwarf_frame_info(frame, &lo, &hi, &signalp) < 0) {
		free(frame);
		return NULL;
	}
	*start = lo + bias;
	*end = hi + bias;
	return frame;
}

/*
 * Where the return address of the non-Go function holding VADDR lies, from
 * its call frame information, in objfile__sp_delta's terms: x86-64, while
 * the CFA is SP-based (no frame pointer set up), 8 bytes below the CFA,
 * so SP + CFA offset - 8; arm64, while LR has not been saved, 0 (LR holds
 * it). -1 otherwise: the frame is set up, and the walk finds the caller.
 */
static int32_t cfi_return_offset(struct objfile *of, uint64_t vaddr)
{
	/* DWARF's numbers for RSP, and arm64's link register */
	const Dwarf_Word dwarf_rsp = 7, dwarf_lr = 30;
	Dwarf_Op ops_mem[3], *ops;
	uint64_t start, end;
	Dwarf_Frame *frame;
	size_t nops;
	int32_t d = -1;

	frame = cfi_frame(of, vaddr, &start, &end);
	if (!frame)
		return -1;
	if (of->link_register) {
		/* "same value" or no rule: LR is the caller's still */
		if (dwarf_frame_register(frame, dwarf_lr, ops_mem, &ops, &nops) == 0 && nops == 0)
			d = 0;
	} else if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1 &&
		   ops[0].atom == DW_OP_bregx && ops[0].number == dwarf_rsp &&
		   (int64_t)ops[0].number2 >= 8 && (int64_t)ops[0].number2 <= INT32_MAX) {
		d = (int32_t)ops[0].number2 - 8;
	}
	free(frame);
	return d;
}

/*
 * A name for code no symbol covers: the symbol that shares its call frame
 * information (the signal trampoline, whose CFI starts one instruction
 * before its symbol, as unwinders look up a return address less one), or
 * else the file and where the function starts, one name for all of it.
 */
static const char *unnamed_code(struct objfile *of, Dwfl_Module *mod, uint64_t vaddr, char *buf,
				size_t len)
{
	uint64_t start, end;
	Dwarf_Frame *frame = cfi_frame(of, vaddr, &start, &end);
	const char *name;
	GElf_Addr addr;
	GElf_Off off;
	GElf_Sym sym;
	int i, n;

	if (!frame) {
		/*
		 * No CFI (Debian's arm64 vDSO has none): the symbol just after
		 * a return address less one (a handler returns to the signal
		 * trampoline's first instruction), or the one just before a PC
		 * (past the trampoline's SVC, in the kernel).
		 */
		name = dwfl_module_addrinfo(mod, vaddr + 1, &off, &sym, NULL, NULL, NULL);
		if (name && !off)
			return name;
		name = dwfl_module_addrinfo(mod, vaddr - 1, &off, &sym, NULL, NULL, NULL);
		if (name && off + 1 == sym.st_size)
			return name;
		snprintf(buf, len, "%s+0x%" PRIx64, basename(of->name), vaddr);
		return buf;
	}
	free(frame);
	n = dwfl_module_getsymtab(mod);
	for (i = 1; i < n; i++) {
		name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (name && *name && GELF_ST_TYPE(sym.st_info) == STT_FUNC && addr >= start &&
		    addr < end)
			return name;
	}
	snprintf(buf, len, "%s+0x%" PRIx64, basename(of->name), start);
	return buf;
}

/* Anything else: ELF symbols and DWARF lines through libdwfl, or the address itself. */
static struct frames *lookup(struct objfile *of, uint64_t vaddr)
{
	Dwfl_Module *mod;
	const char *name = NULL, *file;
	struct frames *out;
	Dwarf_Addr a;
	Dwfl_Line *line;
	GElf_Off off;
	GElf_Sym sym;
	char buf[PATH_MAX + 32];
	int lineno = 0;

	out = lookup_go(of, vaddr);
	if (out)
		return out;
	out = calloc(1, sizeof(*out) + sizeof(out->f[0]));
	if (!out)
		return NULL;
	out->n = 1;
	mod = dwfl_mod(of);
	if (mod) {
		name = dwfl_module_addrinfo(mod, vaddr, &off, &sym, NULL, NULL, NULL);
		line = dwfl_module_getsrc(mod, vaddr);
		file = line ? dwfl_lineinfo(line, &a, &lineno, NULL, NULL, NULL) : NULL;
		if (file && lineno > 0) {
			out->f[0].file = intern(of, file);
			out->f[0].line = out->f[0].file ? lineno : 0;
		}
	}
	if (!name && mod)
		name = unnamed_code(of, mod, vaddr, buf, sizeof(buf));
	if (!name) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, vaddr);
		name = buf;
	}
	out->f[0].func = intern(of, name);
	if (!out->f[0].func)
		out->f[0].func = "?";
	return out;
}

size_t objfile__frames(struct objfile *of, uint64_t vaddr, const struct frame **frames)
{
	static const struct frame unknown = { .func = "?" };
	struct frames *f;

	if (!of->cache) {
		*frames = &unknown;
		return 1;
	}
	f = hashmap__get(of->cache, &vaddr, sizeof(vaddr));
	if (!f && hashmap__size(of->cache) >= CACHE_MAX) {
		hashmap__free(of->cache, frames__free);
		of->cache = hashmap__new();
		if (!of->cache) {
			*frames = &unknown;
			return 1;
		}
	}
	if (!f) {
		f = lookup(of, vaddr);
		if (!f || hashmap__add(of->cache, &vaddr, sizeof(vaddr), f) != 0) {
			free(f);
			*frames = &unknown;
			return 1;
		}
	}
	*frames = f->f;
	return f->n;
}

int32_t objfile__sp_delta(struct objfile *of, uint64_t vaddr)
{
	const struct gopclntab *tab = of->gb ? go_binary__pclntab(of->gb) : NULL;
	struct gopclntab_func fn;
	int32_t *d, delta = -1;
	Dwfl_Module *mod;
	GElf_Off off;
	GElf_Sym sym;

	if (!of->sp_deltas)
		return -1;
	d = hashmap__get(of->sp_deltas, &vaddr, sizeof(vaddr));
	if (d)
		return *d;
	if (hashmap__size(of->sp_deltas) >= CACHE_MAX) {
		hashmap__free(of->sp_deltas, free);
		of->sp_deltas = hashmap__new();
		if (!of->sp_deltas)
			return -1;
	}
	if (tab && gopclntab__lookup(tab, vaddr, &fn) == 0) {
		if (gopclntab__sp_delta(tab, &fn, vaddr, &delta) != 0)
			delta = -1;
	} else {
		delta = cfi_return_offset(of, vaddr);
		/* no CFI: nothing is pushed yet at a symbol's first instruction */
		if (delta < 0 && (mod = dwfl_mod(of)) &&
		    dwfl_module_addrinfo(mod, vaddr, &off, &sym, NULL, NULL, NULL) && !off)
			delta = 0;
	}
	d = malloc(sizeof(*d));
	if (d) {
		*d = delta;
		if (hashmap__add(of->sp_deltas, &vaddr, sizeof(vaddr), d) != 0)
			free(d);
	}
	return delta;
}

bool objfile__link_register(const struct objfile *of)
{
	return of->link_register;
}

bool objfile__in_function(struct objfile *of, uint64_t vaddr)
{
	const struct gopclntab *tab = of->gb ? go_binary__pclntab(of->gb) : NULL;
	struct gopclntab_func fn;
	Dwfl_Module *mod;
	GElf_Off off;
	GElf_Sym sym;

	if (tab && gopclntab__lookup(tab, vaddr, &fn) == 0)
		return true;
	mod = dwfl_mod(of);
	return mod && dwfl_module_addrinfo(mod, vaddr, &off, &sym, NULL, NULL, NULL) != NULL;
}
