// SPDX-License-Identifier: GPL-2.0
/* gopclntab.c: Go's function table (.gopclntab), which survives strip and -ldflags=-s -w. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"
#include "util.h"

/* Longest function name we accept; Go's longest real names are a few KiB. */
#define MAX_FUNC_NAME 65536

struct gopclntab {
	const uint8_t *data;
	size_t len;
	uint32_t magic;
	unsigned int ptrsize;
	uint64_t nfunc;
	uint64_t text_start;
	uint64_t funcname_off; /* funcnametab, from the table start */
	uint64_t cu_off; /* cutab: per compile unit, u32 offsets into filetab */
	uint64_t filetab_off;
	uint64_t pctab_off; /* pc-value tables */
	uint64_t functab_off; /* functab (pclntab proper), from the table start */
	unsigned int quantum; /* instruction size unit of pc deltas */
	unsigned int ftab_field; /* bytes per functab field: 4 (1.18+) or ptrsize */
};

static uint64_t get_uint(const uint8_t *p, unsigned int size)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint32_t get_u32(const uint8_t *p)
{
	return get_uint(p, 4);
}

long gopclntab__text_start_offset(const uint8_t *data, size_t len)
{
	uint32_t magic;

	if (len < 16)
		return -1;
	magic = get_u32(data);
	if (magic != GOPCLNTAB_MAGIC_118 && magic != GOPCLNTAB_MAGIC_120)
		return -1;
	if (data[7] != 4 && data[7] != 8)
		return -1;
	/* nfunc, nfiles, then textStart */
	if (!in_bounds(8 + 2 * data[7], data[7], len))
		return -1;
	return 8 + 2 * (long)data[7];
}

struct gopclntab *gopclntab__open(const uint8_t *data, size_t len, uint64_t text_start,
				  char *err, size_t errlen)
{
	struct gopclntab *tab;
	unsigned int p, nwords;
	uint64_t w[8];
	unsigned int i;
	uint32_t magic;

	if (len < 16) {
		set_err(err, errlen, "function table is %zu bytes, shorter than its header", len);
		return NULL;
	}
	magic = get_u32(data);
	p = data[7];
	if (magic == GOPCLNTAB_MAGIC_116) {
		nwords = 7;
	} else if (magic == GOPCLNTAB_MAGIC_118 || magic == GOPCLNTAB_MAGIC_120) {
		nwords = 8;
	} else {
		set_err(err, errlen,
			"function table magic 0x%08x is not one of Go 1.16 to 1.27's formats", magic);
		return NULL;
	}
	if (data[4] != 0 || data[5] != 0 || (p != 4 && p != 8) || data[6] == 0) {
		set_err(err, errlen, "function table header is corrupt (pointer size %u)", p);
		return NULL;
	}
	if (!in_bounds(8, (uint64_t)nwords * p, len)) {
		set_err(err, errlen, "function table is truncated inside its header");
		return NULL;
	}
	for (i = 0; i < nwords; i++)
		w[i] = get_uint(data + 8 + i * p, p);

	tab = calloc(1, sizeof(*tab));
	if (!tab) {
		set_err(err, errlen, "out of memory");
		return NULL;
	}
	tab->data = data;
	tab->len = len;
	tab->magic = magic;
	tab->ptrsize = p;
	tab->quantum = data[6];
	tab->nfunc = w[0];
	if (magic == GOPCLNTAB_MAGIC_116) {
		/* nfunc, nfiles, funcname, cu, filetab, pctab, pcln */
		tab->funcname_off = w[2];
		tab->cu_off = w[3];
		tab->filetab_off = w[4];
		tab->pctab_off = w[5];
		tab->functab_off = w[6];
		tab->ftab_field = p;
	} else {
		/* nfunc, nfiles, textStart, funcname, cu, filetab, pctab, pcln */
		tab->text_start = text_start ? text_start : w[2];
		tab->funcname_off = w[3];
		tab->cu_off = w[4];
		tab->filetab_off = w[5];
		tab->pctab_off = w[6];
		tab->functab_off = w[7];
		tab->ftab_field = 4;
	}
	/* nfunc pairs {entry, funcoff}, then one entry holding the end of text */
	if (tab->funcname_off >= len || tab->nfunc == 0 || tab->nfunc > len ||
	    !in_bounds(tab->functab_off, (tab->nfunc * 2 + 1) * tab->ftab_field, len)) {
		set_err(err, errlen, "function table is truncated or corrupt (%llu functions)",
			(unsigned long long)tab->nfunc);
		free(tab);
		return NULL;
	}
	if (magic != GOPCLNTAB_MAGIC_116 && tab->text_start == 0) {
		set_err(err, errlen, "function table has no text start address");
		free(tab);
		return NULL;
	}
	return tab;
}

void gopclntab__close(struct gopclntab *tab)
{
	free(tab);
}

uint32_t gopclntab__magic(const struct gopclntab *tab)
{
	return tab->magic;
}

size_t gopclntab__nfunc(const struct gopclntab *tab)
{
	return tab->nfunc;
}

/* Field F (0: entry, 1: func offset) of functab entry IDX, which may be nfunc. */
static uint64_t ftab(const struct gopclntab *tab, size_t idx, int f)
{
	const uint8_t *p = tab->data + tab->functab_off + (idx * 2 + f) * tab->ftab_field;

	return get_uint(p, tab->ftab_field);
}

static uint64_t entry_pc(const struct gopclntab *tab, size_t idx)
{
	uint64_t v = ftab(tab, idx, 0);

	return tab->magic == GOPCLNTAB_MAGIC_116 ? v : tab->text_start + v;
}

int gopclntab__func(const struct gopclntab *tab, size_t idx, struct gopclntab_func *out)
{
	uint64_t funcoff, nameoff;
	const uint8_t *f;
	const char *name;

	if (idx >= tab->nfunc)
		return -ERANGE;
	funcoff = tab->functab_off + ftab(tab, idx, 1);
	/* _func starts with entry (pointer or uint32), then int32 nameOff */
	if (!in_bounds(funcoff, tab->ftab_field + 4, tab->len))
		return -EINVAL;
	f = tab->data + funcoff;
	nameoff = tab->funcname_off + get_u32(f + tab->ftab_field);
	if (nameoff >= tab->len)
		return -EINVAL;
	name = (const char *)tab->data + nameoff;
	if (!memchr(name, '\0', tab->len - nameoff < MAX_FUNC_NAME ? tab->len - nameoff
								     : MAX_FUNC_NAME))
		return -EINVAL;
	out->entry = entry_pc(tab, idx);
	out->end = entry_pc(tab, idx + 1);
	out->name = name;
	out->func_off = funcoff;
	return 0;
}

int gopclntab__lookup(const struct gopclntab *tab, uint64_t pc, struct gopclntab_func *out)
{
	size_t lo = 0, hi = tab->nfunc, mid;

	if (pc < entry_pc(tab, 0) || pc >= entry_pc(tab, tab->nfunc))
		return -ENOENT;
	/* the last entry whose pc is <= PC */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (entry_pc(tab, mid) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return gopclntab__func(tab, lo, out);
}

int gopclntab__find(const struct gopclntab *tab, const char *name, struct gopclntab_func *out)
{
	size_t i;

	for (i = 0; i < tab->nfunc; i++) {
		if (gopclntab__func(tab, i, out) == 0 && strcmp(out->name, name) == 0)
			return 0;
	}
	return -ENOENT;
}

/* Go's unsigned varint from the table at *OFF; false past the end or on overflow. */
static bool uvarint(const struct gopclntab *tab, uint64_t *off, uint32_t *val)
{
	uint32_t v = 0;
	unsigned int shift;
	uint8_t b;

	for (shift = 0; shift < 35; shift += 7) {
		if (*off >= tab->len)
			return false;
		b = tab->data[(*off)++];
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*val = v;
			return true;
		}
	}
	return false;
}

/*
 * Value of the pc-value table at TABOFF (from pctab) for PC in FN: pairs of
 * zigzag value delta and pc delta, starting at value -1 and the entry.
 */
static int pcvalue(const struct gopclntab *tab, const struct gopclntab_func *fn, uint32_t taboff,
		   uint64_t pc, int32_t *value)
{
	uint64_t off = tab->pctab_off + taboff, cur = fn->entry;
	uint32_t uv, pcdelta;
	int32_t val = -1;
	bool first = true;

	/*
	 * Offset 0 means "no table" to the runtime, but Go's own tools decode
	 * from the start of pctab anyway; answering as they do keeps us in step
	 * with `go tool addr2line` for marker symbols like go:textfipsstart.
	 */
	if (off >= tab->len)
		return -ENOENT;
	for (;;) {
		if (!uvarint(tab, &off, &uv))
			return -EINVAL;
		if (uv == 0 && !first)
			return -ENOENT;
		first = false;
		val += (int32_t)(-(uv & 1) ^ (uv >> 1));
		if (!uvarint(tab, &off, &pcdelta))
			return -EINVAL;
		cur += (uint64_t)pcdelta * tab->quantum;
		/* like Go's own reader, the table and not the function's size says where it ends */
		if (pc < cur) {
			*value = val;
			return 0;
		}
	}
}

int gopclntab__line(const struct gopclntab *tab, const struct gopclntab_func *fn, uint64_t pc,
		    const char **file, int *line)
{
	/* _func: entry (pointer, or u32 since 1.18), then nameOff, args, deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset */
	uint64_t f = fn->func_off, fileoff, name;
	uint32_t pcfile, pcln, cuoff, idx;
	int32_t fileno, lineno;
	int ret;

	if (pc < fn->entry || pc >= fn->end)
		return -ENOENT;
	if (!in_bounds(f, tab->ftab_field + 8 * 4, tab->len))
		return -EINVAL;
	f += tab->ftab_field;
	pcfile = get_u32(tab->data + f + 16);
	pcln = get_u32(tab->data + f + 20);
	cuoff = get_u32(tab->data + f + 28);
	ret = pcvalue(tab, fn, pcfile, pc, &fileno);
	if (!ret)
		ret = pcvalue(tab, fn, pcln, pc, &lineno);
	if (ret)
		return ret;
	if (fileno < 0 || lineno < 0)
		return -ENOENT;
	idx = cuoff + (uint32_t)fileno;
	if (!in_bounds(tab->cu_off + (uint64_t)idx * 4, 4, tab->len))
		return -EINVAL;
	fileoff = get_u32(tab->data + tab->cu_off + (uint64_t)idx * 4);
	if (fileoff == 0xffffffff)
		return -ENOENT;
	name = tab->filetab_off + fileoff;
	if (name >= tab->len || !memchr(tab->data + name, '\0', tab->len - name))
		return -EINVAL;
	*file = (const char *)tab->data + name;
	*line = lineno;
	return 0;
}
