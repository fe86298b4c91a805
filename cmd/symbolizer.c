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
	struct hashmap *cache; /* looked-up address -> struct frame */
	struct hashmap *strings; /* interned names and paths */
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
	s->dwfl = dwfl_begin(&proc_callbacks);
	if (!s->cache || !s->strings || !s->dwfl)
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

/* Go code: function, file and line from .gopclntab, as Go's own tools report them. */
static bool lookup_go(struct symbolizer *s, Dwfl_Module *mod, uint64_t addr, struct frame *f)
{
	const struct gopclntab *tab;
	struct gopclntab_func fn;
	const char *file;
	int i, line;

	for (i = 0; i < s->ngo; i++) {
		if (s->go[i].mod != mod)
			continue;
		tab = go_binary__pclntab(s->go[i].gb);
		if (gopclntab__lookup(tab, addr - s->go[i].bias, &fn) != 0)
			return false;
		f->func = intern(s, fn.name);
		if (gopclntab__line(tab, &fn, addr - s->go[i].bias, &file, &line) == 0 && line > 0) {
			f->file = intern(s, file);
			f->line = line;
		}
		return f->func != NULL;
	}
	return false;
}

static void lookup(struct symbolizer *s, uint64_t addr, struct frame *f)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
	const char *name = NULL, *file;
	Dwarf_Addr a;
	Dwfl_Line *line;
	GElf_Off off;
	GElf_Sym sym;
	char buf[32];
	int lineno = 0;

	f->file = NULL;
	f->line = 0;
	if (mod && lookup_go(s, mod, addr, f))
		return;
	if (mod) {
		name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
		line = dwfl_module_getsrc(mod, addr);
		file = line ? dwfl_lineinfo(line, &a, &lineno, NULL, NULL, NULL) : NULL;
		if (file && lineno > 0) {
			f->file = intern(s, file);
			f->line = lineno;
		}
	}
	if (!name) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
		name = buf;
	}
	f->func = intern(s, name);
	if (!f->func)
		f->func = "?";
}

void symbolizer__frame(struct symbolizer *s, uint64_t addr, bool leaf, struct frame *out)
{
	uint64_t pc = leaf || !addr ? addr : addr - 1;
	struct frame *f;

	f = hashmap__get(s->cache, &pc, sizeof(pc));
	if (!f) {
		f = malloc(sizeof(*f));
		if (!f) {
			out->func = "?";
			out->file = NULL;
			out->line = 0;
			return;
		}
		lookup(s, pc, f);
		if (hashmap__add(s->cache, &pc, sizeof(pc), f) != 0) {
			*out = *f;
			free(f);
			return;
		}
	}
	*out = *f;
}
