// SPDX-License-Identifier: GPL-2.0
/* gopclntab.c: Go's function table (.gopclntab), which survives strip and -ldflags=-s -w. */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"
#include "util.h"

/* Longest function name we accept; Go's longest real names are a few KiB. */
#define MAX_FUNC_NAME 65536

/*
 * Where the decoding of one pc-value table stopped. A lookup at or after
 * that point resumes there instead of at the function's entry, so that
 * addresses in ascending order (a sorted stack set, nm output) cost one pass
 * over each table rather than one per address: in a 100 KB function that
 * is the difference that matters.
 */
struct pc_cursor {
	uint64_t table; /* absolute offset of the table's start; 0: unused */
	uint64_t entry; /* of the function it was decoded for */
	uint64_t off; /* next byte to decode */
	uint64_t lo, hi; /* VAL holds for [lo, hi) */
	int32_t val;
};

/* Direct-mapped by table offset: a few per function (file, line, inlining) times a few functions. */
#define PC_CURSORS 64

/*
 * A whole pc-value table, decoded: VAL[i] holds below HI[i]. Kept for tables
 * long enough that decoding them per lookup costs more than searching, so
 * that addresses in any order cost O(log n) in big functions.
 */
struct pc_runs {
	uint64_t table, entry; /* as in pc_cursor; table 0: unused */
	size_t n;
	uint64_t *hi;
	int32_t *val;
};

/* Steps decoded for one lookup after which the table is decoded whole and kept. */
#define RUNS_AFTER 32
#define PC_RUNS 4096

struct memo {
	struct pc_cursor cursors[PC_CURSORS];
	struct pc_runs *runs; /* PC_RUNS of them, allocated when first needed */
	size_t last_func; /* index of the function found last */
};

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
	struct memo *memo; /* mutable, behind the const API */
	/* where inlining trees are read from, outside the table */
	uint64_t gofunc;
	gopclntab_reader read;
	void *read_ctx;
};

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static uint64_t get_uint(const uint8_t *p, unsigned int size)
{
	uint64_t v;

	if (size == 4)
		return get_u32(p);
	memcpy(&v, p, sizeof(v));
	return le64toh(v);
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

/* Field F (0: entry, 1: func offset) of functab entry IDX, which may be nfunc. */
static uint64_t ftab(const struct gopclntab *tab, size_t idx, int f)
{
	const uint8_t *p = tab->data + tab->functab_off + (idx * 2 + f) * tab->ftab_field;

	return get_uint(p, tab->ftab_field);
}

static const char *check_pc_tables(const struct gopclntab *tab);

/*
 * What the header points at, checked before any answer is given from it:
 * its instruction size, where the functions' records begin, every file a
 * compilation unit names (the start of a string of the file table), every
 * function: in address order, its record inside the section and naming the
 * same entry, its name the start of a string of the name table; then every
 * function's pc tables (check_pc_tables). A bit flipped in the header's
 * count or offsets fails one of these, rather than answering with
 * another function's name, file or line. NULL when all hold.
 */
static const char *check_tables(const struct gopclntab *tab)
{
	uint64_t prev = 0, entry, rec, nameoff, want;
	size_t i;

	if (tab->quantum != 1 && tab->quantum != 2 && tab->quantum != 4)
		return "its instruction size (quantum) is not 1, 2 or 4";
	/* from Go 1.18 the records follow the nfunc + 1 pairs, 8-byte aligned */
	want = (tab->nfunc * 2 + 1) * tab->ftab_field;
	if (tab->magic != GOPCLNTAB_MAGIC_116 &&
	    (ftab(tab, 0, 1) < want || ftab(tab, 0, 1) >= want + 8))
		return "its function count does not end where the functions' records begin";
	/* every file of a compilation unit: a string of the file table, or none (~0) */
	for (i = 0; tab->cu_off < tab->filetab_off && tab->filetab_off < tab->len &&
		    i < (tab->filetab_off - tab->cu_off) / 4;
	     i++) {
		rec = get_u32(tab->data + tab->cu_off + 4 * i);
		if (rec != UINT32_MAX && (tab->filetab_off + rec >= tab->len ||
					  (rec && tab->data[tab->filetab_off + rec - 1] != '\0')))
			return "a compilation unit's file is not one of the file table's strings";
	}
	for (i = 0; i <= tab->nfunc; i++) {
		entry = ftab(tab, i, 0);
		if (entry < prev)
			return "its functions are not in address order";
		prev = entry;
		if (i == tab->nfunc)
			break;
		/* _func starts with entry (pointer or uint32), then int32 nameOff */
		rec = tab->functab_off + ftab(tab, i, 1);
		if (!in_bounds(rec, tab->ftab_field + 4, tab->len))
			return "a function's record lies outside the table";
		if (get_uint(tab->data + rec, tab->ftab_field) != entry)
			return "a function's record names another address";
		nameoff = get_u32(tab->data + rec + tab->ftab_field);
		if (tab->funcname_off + nameoff >= tab->len ||
		    (nameoff && tab->data[tab->funcname_off + nameoff - 1] != '\0'))
			return "a function's name is not one of the name table's strings";
	}
	return check_pc_tables(tab);
}

struct gopclntab *gopclntab__open(const uint8_t *data, size_t len, uint64_t text_start,
				  char *err, size_t errlen)
{
	struct gopclntab *tab;
	unsigned int p, nwords;
	const char *why;
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
	if (tab)
		tab->memo = calloc(1, sizeof(*tab->memo));
	if (!tab || !tab->memo) {
		gopclntab__close(tab);
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
		gopclntab__close(tab);
		return NULL;
	}
	if (magic != GOPCLNTAB_MAGIC_116 && tab->text_start == 0) {
		set_err(err, errlen, "function table has no text start address");
		gopclntab__close(tab);
		return NULL;
	}
	if ((why = check_tables(tab))) {
		set_err(err, errlen, "function table fails a check: %s", why);
		gopclntab__close(tab);
		return NULL;
	}
	return tab;
}

void gopclntab__close(struct gopclntab *tab)
{
	size_t i;

	if (tab && tab->memo) {
		for (i = 0; tab->memo->runs && i < PC_RUNS; i++) {
			free(tab->memo->runs[i].hi);
			free(tab->memo->runs[i].val);
		}
		free(tab->memo->runs);
		free(tab->memo);
	}
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

static uint64_t entry_pc(const struct gopclntab *tab, size_t idx)
{
	uint64_t v = ftab(tab, idx, 0);

	return tab->magic == GOPCLNTAB_MAGIC_116 ? v : tab->text_start + v;
}

static const char *func_name(const struct gopclntab *tab, uint32_t nameoff)
{
	uint64_t at = tab->funcname_off + nameoff;
	size_t room = tab->len - at;

	if (at >= tab->len ||
	    !memchr(tab->data + at, '\0', room < MAX_FUNC_NAME ? room : MAX_FUNC_NAME))
		return NULL;
	return (const char *)tab->data + at;
}

int gopclntab__func(const struct gopclntab *tab, size_t idx, struct gopclntab_func *out)
{
	uint64_t funcoff;

	if (idx >= tab->nfunc)
		return -ERANGE;
	funcoff = tab->functab_off + ftab(tab, idx, 1);
	/* _func starts with entry (pointer or uint32), then int32 nameOff */
	if (!in_bounds(funcoff, tab->ftab_field + 4, tab->len))
		return -EINVAL;
	out->name = func_name(tab, get_u32(tab->data + funcoff + tab->ftab_field));
	if (!out->name)
		return -EINVAL;
	out->entry = entry_pc(tab, idx);
	out->end = entry_pc(tab, idx + 1);
	out->func_off = funcoff;
	return 0;
}

int gopclntab__lookup(const struct gopclntab *tab, uint64_t pc, struct gopclntab_func *out)
{
	size_t lo = 0, hi = tab->nfunc, mid, last = tab->memo->last_func;

	if (pc < entry_pc(tab, 0) || pc >= entry_pc(tab, tab->nfunc))
		return -ENOENT;
	/* ascending addresses mostly hit the function found last, or the next one */
	if (last < tab->nfunc && entry_pc(tab, last) <= pc) {
		if (pc < entry_pc(tab, last + 1))
			hi = last + 1;
		lo = last;
	}
	/* the last entry whose pc is <= PC */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (entry_pc(tab, mid) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	tab->memo->last_func = lo;
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
	const uint8_t *p = tab->data + *off;
	uint32_t v = 0;
	unsigned int shift;

	/* most deltas are one byte: take that path without the loop */
	if (*off < tab->len && !(p[0] & 0x80)) {
		*val = p[0];
		(*off)++;
		return true;
	}
	for (shift = 0; shift < 35; shift += 7) {
		if (*off >= tab->len)
			return false;
		v |= (uint32_t)(tab->data[*off] & 0x7f) << shift;
		if (!(tab->data[(*off)++] & 0x80)) {
			*val = v;
			return true;
		}
	}
	return false;
}

/* One step of a table at *OFF: 1, or 0 at its end, or -1 on a decoding error. */
static int pc_step(const struct gopclntab *tab, const struct gopclntab_func *fn, uint64_t *off,
		   uint64_t *cur, int32_t *val)
{
	uint32_t uv, pcdelta;

	if (!uvarint(tab, off, &uv))
		return -1;
	if (uv == 0 && *cur != fn->entry)
		return 0;
	*val += (int32_t)(-(uv & 1) ^ (uv >> 1));
	if (!uvarint(tab, off, &pcdelta))
		return -1;
	*cur += (uint64_t)pcdelta * tab->quantum;
	return 1;
}

/* Decodes the table at TABLE whole into R; false when out of memory. */
static bool decode_runs(const struct gopclntab *tab, const struct gopclntab_func *fn,
			uint64_t table, struct pc_runs *r)
{
	uint64_t off = table, cur = fn->entry, *hi;
	size_t cap = 0, n = 0;
	int32_t val = -1, *v;

	free(r->hi);
	free(r->val);
	*r = (struct pc_runs){};
	while (pc_step(tab, fn, &off, &cur, &val) > 0) {
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			hi = realloc(r->hi, cap * sizeof(*hi));
			if (hi)
				r->hi = hi;
			v = realloc(r->val, cap * sizeof(*v));
			if (v)
				r->val = v;
			if (!hi || !v)
				return false;
		}
		r->hi[n] = cur;
		r->val[n++] = val;
	}
	r->table = table;
	r->entry = fn->entry;
	r->n = n;
	return true;
}

static int32_t runs_value(const struct pc_runs *r, uint64_t pc)
{
	size_t lo = 0, hi = r->n, mid;

	/* the first run that ends above PC */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (r->hi[mid] <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n ? r->val[lo] : -1;
}

/*
 * Value of the pc-value table at TABOFF (from pctab) for PC in FN: pairs of
 * zigzag value delta and pc delta, starting at value -1 and the entry.
 * Decodes as Go's debug/gosym does, which `go tool addr2line` uses: offset 0
 * is decoded like any other (the runtime would call it "no table"; marker
 * symbols like go:textfipsstart have it), a zero value delta ends the table
 * only once the pc has moved past the entry, and -1 means not covered.
 */
static int32_t pcvalue(const struct gopclntab *tab, const struct gopclntab_func *fn,
		       uint32_t taboff, uint64_t pc)
{
	uint64_t table = tab->pctab_off + taboff, hash = table ^ table >> 6;
	struct pc_cursor *c = &tab->memo->cursors[hash % PC_CURSORS];
	struct pc_runs *r = tab->memo->runs ? &tab->memo->runs[hash % PC_RUNS] : NULL;
	uint64_t off = table, cur = fn->entry, lo = cur;
	unsigned int steps = 0;
	int32_t val = -1;

	if (r && r->table == table && r->entry == fn->entry)
		return runs_value(r, pc);
	if (c->table == table && c->entry == fn->entry && pc >= c->lo) {
		if (pc < c->hi)
			return c->val;
		off = c->off;
		cur = lo = c->hi;
		val = c->val;
		steps = RUNS_AFTER; /* already one lookup in, or more */
	}
	for (;;) {
		lo = cur;
		if (pc_step(tab, fn, &off, &cur, &val) <= 0)
			return -1;
		/* like Go's own reader, the table and not the function's size says where it ends */
		if (pc < cur) {
			*c = (struct pc_cursor){ table, fn->entry, off, lo, cur, val };
			return val;
		}
		if (++steps == RUNS_AFTER) {
			if (!tab->memo->runs)
				tab->memo->runs = calloc(PC_RUNS, sizeof(*tab->memo->runs));
			r = tab->memo->runs ? &tab->memo->runs[hash % PC_RUNS] : NULL;
			if (r && decode_runs(tab, fn, table, r))
				return runs_value(r, pc);
		}
	}
}

/*
 * _func, after its entry (a pointer before Go 1.18, then u32): nameOff,
 * args, deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset, [startLine
 * since 1.20], then four bytes that end in nfuncdata (funcID, flag, pad;
 * 1.16: funcID, two pad); then npcdata u32 pcdata offsets and nfuncdata
 * funcdata words.
 */
#define FUNC_PCSP 12
#define FUNC_PCFILE 16
#define FUNC_PCLN 20
#define FUNC_NPCDATA 24
#define FUNC_CUOFF 28

static unsigned int func_header(const struct gopclntab *tab)
{
	return tab->ftab_field + (tab->magic == GOPCLNTAB_MAGIC_120 ? 40 : 36);
}

static uint32_t func_u32(const struct gopclntab *tab, const struct gopclntab_func *fn,
			 unsigned int off)
{
	return get_u32(tab->data + fn->func_off + tab->ftab_field + off);
}

/* The file at PC as debug/gosym finds it: "" when the tables do not say. */
static const char *pc_file(const struct gopclntab *tab, const struct gopclntab_func *fn,
			   uint64_t pc)
{
	int32_t fileno = pcvalue(tab, fn, func_u32(tab, fn, FUNC_PCFILE), pc);
	uint64_t idx, fileoff, name;

	if (fileno < 0)
		return "";
	/* u32 arithmetic, as Go does it */
	idx = (uint32_t)(func_u32(tab, fn, FUNC_CUOFF) + (uint32_t)fileno);
	if (!in_bounds(tab->cu_off + idx * 4, 4, tab->len))
		return "";
	fileoff = get_u32(tab->data + tab->cu_off + idx * 4);
	name = tab->filetab_off + fileoff;
	if (name >= tab->len || !memchr(tab->data + name, '\0', tab->len - name))
		return "";
	return (const char *)tab->data + name;
}

static bool func_readable(const struct gopclntab *tab, const struct gopclntab_func *fn)
{
	return in_bounds(fn->func_off, func_header(tab), tab->len);
}

/*
 * Does FN's table at TABOFF end where a table must: at its terminator, past
 * the entry and not past the function? With CU set, is every value a file
 * of FN's compilation unit? A table offset, or the pc tables' or CU
 * table's base, that is off by a few bytes fails this at once: the varints
 * decode from the middle of another table.
 */
static bool pc_table_fits(const struct gopclntab *tab, const struct gopclntab_func *fn,
			  uint32_t taboff, bool cu)
{
	uint64_t off = tab->pctab_off + taboff, cur = fn->entry, prev, idx;
	uint64_t nfiles = (tab->filetab_off - tab->cu_off) / 4;
	uint32_t cuoff = cu ? func_u32(tab, fn, FUNC_CUOFF) : 0;
	int32_t val = -1;
	int step;

	/* offset 0 is "no table" (pctab starts with one 0 byte that no table uses) */
	if (!taboff)
		return true;
	for (;;) {
		prev = cur;
		step = pc_step(tab, fn, &off, &cur, &val);
		if (step <= 0)
			return step == 0 && cur <= fn->end;
		/* every step covers some code, and none goes past the function */
		if (cur == prev || cur > fn->end)
			return false;
		if (cu) {
			idx = (uint32_t)(cuoff + (uint32_t)val);
			if (val < 0 || idx >= nfiles ||
			    get_u32(tab->data + tab->cu_off + 4 * idx) == UINT32_MAX)
				return false;
		}
	}
}

/* Every function's stack, file and line tables (check_tables' last step). */
static const char *check_pc_tables(const struct gopclntab *tab)
{
	struct gopclntab_func fn;
	size_t i;

	if (tab->cu_off > tab->filetab_off || tab->filetab_off > tab->len)
		return "its compilation units' table does not end where its file table begins";
	if (tab->pctab_off >= tab->len || tab->data[tab->pctab_off] != 0)
		return "its pc tables do not start with the byte Go's linker puts there";
	for (i = 0; i < tab->nfunc; i++) {
		if (gopclntab__func(tab, i, &fn) != 0 || !func_readable(tab, &fn))
			return "a function's record lies outside the table";
		if (!pc_table_fits(tab, &fn, func_u32(tab, &fn, FUNC_PCSP), false) ||
		    !pc_table_fits(tab, &fn, func_u32(tab, &fn, FUNC_PCLN), false))
			return "a function's stack or line table does not fit the function";
		if (!pc_table_fits(tab, &fn, func_u32(tab, &fn, FUNC_PCFILE), true))
			return "a function's file table names files outside its compilation unit";
	}
	return NULL;
}

int gopclntab__line(const struct gopclntab *tab, const struct gopclntab_func *fn, uint64_t pc,
		    const char **file, int *line)
{
	*file = "";
	*line = -1;
	if (pc < fn->entry || pc >= fn->end)
		return -ENOENT;
	if (!func_readable(tab, fn))
		return -EINVAL;
	*file = pc_file(tab, fn, pc);
	*line = pcvalue(tab, fn, func_u32(tab, fn, FUNC_PCLN), pc);
	return **file && *line >= 0 ? 0 : -ENOENT;
}

int gopclntab__sp_delta(const struct gopclntab *tab, const struct gopclntab_func *fn, uint64_t pc,
			int32_t *delta)
{
	uint32_t pcsp;

	if (pc < fn->entry || pc >= fn->end)
		return -ENOENT;
	if (!func_readable(tab, fn))
		return -EINVAL;
	/* the runtime's reading: offset 0 is no table, and then nothing is known */
	pcsp = func_u32(tab, fn, FUNC_PCSP);
	if (!pcsp)
		return -ENOENT;
	*delta = pcvalue(tab, fn, pcsp, pc);
	return *delta < 0 ? -ENOENT : 0;
}

int gopclntab__frame_size(const struct gopclntab *tab, const struct gopclntab_func *fn,
			  uint32_t *size)
{
	uint64_t off, cur = fn->entry;
	int32_t val = -1, max = -1;
	uint32_t pcsp;
	int step;

	if (!func_readable(tab, fn))
		return -EINVAL;
	pcsp = func_u32(tab, fn, FUNC_PCSP);
	if (!pcsp)
		return -ENOENT;
	off = tab->pctab_off + pcsp;
	while ((step = pc_step(tab, fn, &off, &cur, &val)) > 0) {
		if (val > max)
			max = val;
	}
	if (step < 0 || max < 0)
		return step < 0 ? -EINVAL : -ENOENT;
	*size = max;
	return 0;
}

void gopclntab__set_funcdata(struct gopclntab *tab, uint64_t gofunc, gopclntab_reader read,
			     void *ctx)
{
	tab->gofunc = gofunc;
	tab->read = read;
	tab->read_ctx = ctx;
}

bool gopclntab__has_inlining(const struct gopclntab *tab)
{
	return tab->read && (tab->magic == GOPCLNTAB_MAGIC_116 || tab->gofunc);
}

/* Index into the inlining tree of FN */
#define PCDATA_INLTREEINDEX 2
#define FUNCDATA_INLTREE 3

/* Link-time address of FN's inlining tree; 0 when it has none. */
static uint64_t inline_tree(const struct gopclntab *tab, const struct gopclntab_func *fn,
			    uint32_t *index_tab)
{
	uint64_t hdr = fn->func_off + func_header(tab), fd, word;
	uint32_t npcdata = func_u32(tab, fn, FUNC_NPCDATA);
	uint8_t nfuncdata = tab->data[hdr - 1];
	unsigned int fdsize = tab->magic == GOPCLNTAB_MAGIC_116 ? tab->ptrsize : 4;

	if (npcdata <= PCDATA_INLTREEINDEX || nfuncdata <= FUNCDATA_INLTREE ||
	    !in_bounds(hdr, (uint64_t)npcdata * 4, tab->len))
		return 0;
	*index_tab = get_u32(tab->data + hdr + PCDATA_INLTREEINDEX * 4);
	/* the runtime's "no table", unlike debug/gosym's reading of the line tables */
	if (*index_tab == 0)
		return 0;
	fd = hdr + (uint64_t)npcdata * 4;
	/* Go 1.16, 1.17: pointer-aligned pointers, aligned in memory and so in the table */
	if (fdsize == 8)
		fd = (fd + 7) & ~(uint64_t)7;
	if (!in_bounds(fd + FUNCDATA_INLTREE * fdsize, fdsize, tab->len))
		return 0;
	word = get_uint(tab->data + fd + FUNCDATA_INLTREE * fdsize, fdsize);
	if (tab->magic == GOPCLNTAB_MAGIC_116)
		return word;
	return word == UINT32_MAX ? 0 : tab->gofunc + word;
}

/*
 * One inlinedCall of the tree at TREE. Go 1.20+: {funcID u8, pad [3], nameOff
 * i32, parentPc i32, startLine i32}; before: {parent i16, funcID u8, pad u8,
 * file i32, line i32, nameOff i32, parentPc i32}.
 */
static int inlined_call(const struct gopclntab *tab, uint64_t tree, int32_t idx,
			uint32_t *nameoff, uint32_t *parent_pc)
{
	unsigned int size = tab->magic == GOPCLNTAB_MAGIC_120 ? 16 : 20;
	unsigned int name_at = tab->magic == GOPCLNTAB_MAGIC_120 ? 4 : 12;
	const uint8_t *p;

	if (idx < 0 || tree + (uint64_t)idx * size < tree)
		return -EINVAL;
	p = tab->read(tab->read_ctx, tree + (uint64_t)idx * size, size);
	if (!p)
		return -EINVAL;
	*nameoff = get_u32(p + name_at);
	*parent_pc = get_u32(p + name_at + 4);
	return 0;
}

/* FN's frames at PC from its inlining tree, as the runtime unwinds them; -EINVAL if corrupt. */
static int expand(const struct gopclntab *tab, const struct gopclntab_func *fn, uint64_t pc,
		  struct gopclntab_frame *out, size_t max)
{
	uint32_t index_tab, nameoff, parent_pc;
	uint64_t tree = inline_tree(tab, fn, &index_tab);
	size_t n = 0;
	int32_t idx;

	for (;;) {
		idx = tree ? pcvalue(tab, fn, index_tab, pc) : -1;
		if (n == max || (idx >= 0 && n == max - 1))
			return -E2BIG;
		out[n].file = pc_file(tab, fn, pc);
		out[n].line = pcvalue(tab, fn, func_u32(tab, fn, FUNC_PCLN), pc);
		out[n].inlined = idx >= 0;
		if (idx < 0) {
			out[n++].func = fn->name;
			return n;
		}
		if (inlined_call(tab, tree, idx, &nameoff, &parent_pc) != 0)
			return -EINVAL;
		out[n].func = func_name(tab, nameoff);
		if (!out[n++].func)
			return -EINVAL;
		/* the parent's line is the one of the call site, which parentPc marks */
		pc = fn->entry + parent_pc;
		if (pc >= fn->end)
			return -EINVAL;
	}
}

int gopclntab__frames(const struct gopclntab *tab, const struct gopclntab_func *fn, uint64_t pc,
		      struct gopclntab_frame *out, size_t max)
{
	int n;

	if (pc < fn->entry || pc >= fn->end)
		return -ENOENT;
	if (!func_readable(tab, fn))
		return -EINVAL;
	if (max == 0)
		return -E2BIG;
	n = gopclntab__has_inlining(tab) ? expand(tab, fn, pc, out, max) : -ENODATA;
	if (n > 0)
		return n;
	/* no tree, or one we cannot trust: the function alone, with the innermost line as addr2line gives it */
	out[0].func = fn->name;
	out[0].file = pc_file(tab, fn, pc);
	out[0].line = pcvalue(tab, fn, func_u32(tab, fn, FUNC_PCLN), pc);
	out[0].inlined = false;
	return 1;
}
