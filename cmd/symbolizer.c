// SPDX-License-Identifier: GPL-2.0
/* symbolizer.c: names the addresses of one process: Go and C functions, file and line. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdwfl.h>

#include "binaries.h"
#include "hashmap.h"
#include "symbolizer.h"
#include "../offsets/go_binary.h"
#include "../offsets/gopclntab.h"

/* Mapped files per process: an executable plus its libraries and the vdso. */
#define MAX_GO_MODULES 16

/* A module whose code Go's function table describes better than ELF symbols and DWARF. */
struct go_module {
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	struct go_binary *gb;
};

struct symbolizer {
	Dwfl *dwfl;
	struct go_module go[MAX_GO_MODULES];
	int ngo;
	struct hashmap *cache; /* looked-up address -> struct frames */
	struct hashmap *sp_deltas; /* leaf PC -> int32_t SP delta, or -1 when not Go code */
	struct hashmap *strings; /* interned names and paths */
};

/* The answer for one address. */
struct frames {
	size_t n;
	struct frame f[];
};

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/*
 * Opens each module up front, since the process may be gone when its samples
 * are named: Go's function table for Go code, ELF symbols and DWARF otherwise.
 */
static int preload(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		   void *arg)
{
	struct symbolizer *s = arg;
	struct go_binary *gb = NULL;
	Dwarf_Addr bias;
	char err[256];

	dwfl_module_getelf(mod, &bias);
	if (name && name[0] == '/' && s->ngo < MAX_GO_MODULES)
		gb = binaries__get(name, err, sizeof(err));
	if (gb && !go_binary__pclntab(gb)) {
		binaries__put(gb);
		gb = NULL;
	}
	if (gb) {
		s->go[s->ngo].mod = mod;
		s->go[s->ngo].bias = bias;
		s->go[s->ngo++].gb = gb;
		return DWARF_CB_OK;
	}
	dwfl_module_getdwarf(mod, &bias);
	return DWARF_CB_OK;
}

struct symbolizer *symbolizer__new(pid_t pid, char *err, size_t errlen)
{
	struct symbolizer *s;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->cache = hashmap__new();
	s->strings = hashmap__new();
	s->sp_deltas = hashmap__new();
	s->dwfl = dwfl_begin(&proc_callbacks);
	if (!s->cache || !s->strings || !s->sp_deltas || !s->dwfl)
		goto nomem;
	ret = dwfl_linux_proc_report(s->dwfl, pid);
	if (ret != 0) {
		snprintf(err, errlen, "cannot read the mappings of pid %d: %s", (int)pid,
			 ret > 0 ? strerror(ret) : dwfl_errmsg(-1));
		symbolizer__free(s);
		return NULL;
	}
	if (dwfl_report_end(s->dwfl, NULL, NULL) != 0) {
		snprintf(err, errlen, "libdwfl: %s", dwfl_errmsg(-1));
		symbolizer__free(s);
		return NULL;
	}
	dwfl_getmodules(s->dwfl, preload, s, 0);
	return s;
nomem:
	snprintf(err, errlen, "out of memory");
	symbolizer__free(s);
	return NULL;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	while (s->ngo > 0)
		binaries__put(s->go[--s->ngo].gb);
	if (s->dwfl)
		dwfl_end(s->dwfl);
	hashmap__free(s->cache, free);
	hashmap__free(s->sp_deltas, free);
	hashmap__free(s->strings, free);
	free(s);
}

static const char *intern(struct symbolizer *s, const char *str)
{
	size_t len = strlen(str);
	char *copy;

	copy = hashmap__get(s->strings, str, len);
	if (copy)
		return copy;
	copy = strdup(str);
	if (!copy || hashmap__add(s->strings, str, len, copy) != 0) {
		free(copy);
		return NULL;
	}
	return copy;
}

/* The Go function table that covers ADDR, and ADDR as linked; NULL for other code. */
static const struct gopclntab *go_table(struct symbolizer *s, Dwfl_Module *mod, uint64_t *addr)
{
	int i;

	for (i = 0; mod && i < s->ngo; i++) {
		if (s->go[i].mod == mod) {
			*addr -= s->go[i].bias;
			return go_binary__pclntab(s->go[i].gb);
		}
	}
	return NULL;
}

/* Go code: functions, files and lines from .gopclntab, inlined calls expanded. */
static struct frames *lookup_go(struct symbolizer *s, Dwfl_Module *mod, uint64_t addr)
{
	struct gopclntab_frame gf[GOPCLNTAB_MAX_INLINE];
	const struct gopclntab *tab = go_table(s, mod, &addr);
	struct gopclntab_func fn;
	struct frames *out;
	int i, n;

	if (!tab || gopclntab__lookup(tab, addr, &fn) != 0)
		return NULL;
	n = gopclntab__frames(tab, &fn, addr, gf, GOPCLNTAB_MAX_INLINE);
	if (n <= 0)
		return NULL;
	out = calloc(1, sizeof(*out) + n * sizeof(out->f[0]));
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		out->f[i].func = intern(s, gf[i].func);
		if (!out->f[i].func) {
			free(out);
			return NULL;
		}
		if (gf[i].file[0] && gf[i].line > 0) {
			out->f[i].file = intern(s, gf[i].file);
			out->f[i].line = out->f[i].file ? gf[i].line : 0;
		}
		out->f[i].inlined = gf[i].inlined;
	}
	out->n = n;
	return out;
}

/* Anything else: ELF symbols and DWARF lines through libdwfl, or the address itself. */
static struct frames *lookup(struct symbolizer *s, uint64_t addr)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	const char *name = NULL, *file;
	struct frames *out;
	Dwarf_Addr a;
	Dwfl_Line *line;
	GElf_Off off;
	GElf_Sym sym;
	char buf[32];
	int lineno = 0;

	if (mod && (out = lookup_go(s, mod, addr)))
		return out;
	out = calloc(1, sizeof(*out) + sizeof(out->f[0]));
	if (!out)
		return NULL;
	out->n = 1;
	if (mod) {
		name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
		line = dwfl_module_getsrc(mod, addr);
		file = line ? dwfl_lineinfo(line, &a, &lineno, NULL, NULL, NULL) : NULL;
		if (file && lineno > 0) {
			out->f[0].file = intern(s, file);
			out->f[0].line = out->f[0].file ? lineno : 0;
		}
	}
	if (!name) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
		name = buf;
	}
	out->f[0].func = intern(s, name);
	if (!out->f[0].func)
		out->f[0].func = "?";
	return out;
}

size_t symbolizer__frames(struct symbolizer *s, uint64_t addr, bool leaf,
			  const struct frame **frames)
{
	static const struct frame unknown = { .func = "?" };
	uint64_t pc = leaf || !addr ? addr : addr - 1;
	struct frames *f;

	f = hashmap__get(s->cache, &pc, sizeof(pc));
	if (!f) {
		f = lookup(s, pc);
		if (!f) {
			*frames = &unknown;
			return 1;
		}
		if (hashmap__add(s->cache, &pc, sizeof(pc), f) != 0) {
			free(f);
			*frames = &unknown;
			return 1;
		}
	}
	*frames = f->f;
	return f->n;
}

/*
 * The SP delta at PC: from pcsp in Go code; 0 at the first instruction of
 * any other function with an ELF symbol (nothing is pushed yet); -1 when
 * unknown. Cached per PC.
 */
static int32_t sp_delta(struct symbolizer *s, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	const struct gopclntab *tab;
	struct gopclntab_func fn;
	int32_t *d, delta = -1;
	uint64_t addr = pc;
	GElf_Off off;
	GElf_Sym sym;

	d = hashmap__get(s->sp_deltas, &pc, sizeof(pc));
	if (d)
		return *d;
	tab = go_table(s, mod, &addr);
	if (tab) {
		if (gopclntab__lookup(tab, addr, &fn) != 0 ||
		    gopclntab__sp_delta(tab, &fn, addr, &delta) != 0)
			delta = -1;
	} else if (mod && dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL) && !off) {
		delta = 0;
	}
	d = malloc(sizeof(*d));
	if (d) {
		*d = delta;
		if (hashmap__add(s->sp_deltas, &pc, sizeof(pc), d) != 0)
			free(d);
	}
	return delta;
}

/* Does a return address lead into a named function: Go code, or an ELF symbol? */
static bool returns_into_code(struct symbolizer *s, uint64_t ret)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, ret - 1);
	const struct gopclntab *tab;
	struct gopclntab_func fn;
	uint64_t addr = ret - 1;
	GElf_Off off;
	GElf_Sym sym;

	if (!mod)
		return false;
	tab = go_table(s, mod, &addr);
	if (tab)
		return gopclntab__lookup(tab, addr, &fn) == 0;
	return dwfl_module_addrinfo(mod, ret - 1, &off, &sym, NULL, NULL, NULL) != NULL;
}

uint64_t symbolizer__leaf_caller(struct symbolizer *s, uint64_t leaf, uint64_t sp, uint64_t bp,
				 const uint64_t top[2])
{
	int32_t d = sp_delta(s, leaf);
	uint64_t ret;

	/*
	 * Only SP + 0 and SP + 8 were sent: a frameless function, a prologue
	 * before or just after PUSHQ BP, an epilogue after POPQ BP. Go 1.19's
	 * prologue (SUBQ first, BP saved after) has wider deltas without a
	 * frame pointer for two instructions; those stay unrepaired.
	 */
	if (d != 0 && d != 8)
		return 0;
	/* a frame that is set up has BP just below the return address */
	if (bp == sp + d - 8)
		return 0;
	ret = top[d / 8];
	/* never invent a frame: it must return into a named function of this process */
	return ret && returns_into_code(s, ret) ? ret : 0;
}

bool symbolizer__mapping(struct symbolizer *s, uint64_t addr, struct mapping *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	const unsigned char *bits;
	const char *name, *file;
	Dwarf_Addr start, end;
	GElf_Addr vaddr;
	char hex[2 * 64 + 1];
	int i, n;

	if (!mod)
		return false;
	name = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, &file, NULL);
	out->start = start;
	out->limit = end;
	out->file = intern(s, file ? file : name ? name : "");
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	hex[0] = '\0';
	for (i = 0; i < n && i < 64; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	out->build_id = intern(s, hex);
	return out->file && out->build_id;
}
