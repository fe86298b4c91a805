// SPDX-License-Identifier: GPL-2.0
/* test_gopclntab.c: gopclntab__* on tables of each format built here, and on a real binary. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "offsets/gopclntab.h"
#include "tap.h"

#define TABLE_MAX 1024
#define NFUNC 3
#define TEXT_START 0x401000ULL
/* end of text, from TEXT_START: the functab's last entry */
#define TEXT_SIZE 0x180

/* Header words, after the 8-byte prefix; Go 1.16 has no textStart. */
#define W_NFUNC 0
#define W116_FUNCNAME 2
#define W116_PCLN 6
#define W118_TEXT 2
#define W118_FUNCNAME 3
#define W118_PCLN 7

static const struct {
	const char *name;
	uint32_t entryoff; /* from TEXT_START */
} funcs[NFUNC] = {
	{ "main.main", 0x0 },
	{ "runtime.stackcheck", 0x40 },
	{ "runtime/pprof.Do", 0x100 },
};

static uint64_t func_entry(size_t i)
{
	return TEXT_START + funcs[i].entryoff;
}

static uint64_t func_end(size_t i)
{
	return TEXT_START + (i + 1 < NFUNC ? funcs[i + 1].entryoff : TEXT_SIZE);
}

struct format {
	const char *what;
	uint32_t magic;
	unsigned int ptrsize;
};

static const struct format formats[] = {
	{ "Go 1.20+", GOPCLNTAB_MAGIC_120, 8 },
	{ "Go 1.18", GOPCLNTAB_MAGIC_118, 8 },
	{ "Go 1.16", GOPCLNTAB_MAGIC_116, 8 },
	{ "Go 1.20+ 32-bit", GOPCLNTAB_MAGIC_120, 4 },
	{ "Go 1.16 32-bit", GOPCLNTAB_MAGIC_116, 4 },
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

/* A table as Go's linker lays it out, with the offsets the tests patch. */
struct table {
	uint8_t b[TABLE_MAX];
	size_t len;
	const struct format *fmt;
	size_t pcln; /* the functab, from the table start */
	size_t func_at[NFUNC]; /* each _func, from the table start */
};

static bool is_116(const struct format *fmt)
{
	return fmt->magic == GOPCLNTAB_MAGIC_116;
}

static void put_uint(uint8_t *p, uint64_t v, unsigned int size)
{
	unsigned int i;

	for (i = 0; i < size; i++)
		p[i] = v >> (8 * i);
}

static void set_word(struct table *t, unsigned int idx, uint64_t v)
{
	put_uint(t->b + 8 + idx * t->fmt->ptrsize, v, t->fmt->ptrsize);
}

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Function names, NUL-terminated, at OFF; fills NAMEOFF with each one's offset. */
static size_t put_names(struct table *t, size_t off, uint32_t *nameoff)
{
	size_t i, n = off;

	for (i = 0; i < NFUNC; i++) {
		nameoff[i] = n - off;
		memcpy(t->b + n, funcs[i].name, strlen(funcs[i].name) + 1);
		n += strlen(funcs[i].name) + 1;
	}
	return n;
}

/*
 * Builds a three-function table of format FMT whose header says textStart is
 * HEADER_TEXT (ignored by Go 1.16). Go's linker puts funcnametab before the
 * functab; NAMES_LAST puts it at the end, so that truncation cuts names.
 */
static void build(struct table *t, const struct format *fmt, uint64_t header_text,
		  bool names_last)
{
	unsigned int field = is_116(fmt) ? fmt->ptrsize : 4;
	unsigned int nwords = is_116(fmt) ? 7 : 8;
	size_t i, names, pctab, pcln, fn, end;
	uint32_t nameoff[NFUNC];
	uint64_t entry;

	memset(t, 0, sizeof(*t));
	t->fmt = fmt;
	put_uint(t->b, fmt->magic, 4);
	t->b[6] = 1; /* minLC */
	t->b[7] = fmt->ptrsize;
	end = 8 + nwords * fmt->ptrsize;

	names = end;
	if (!names_last)
		end = align8(put_names(t, names, nameoff));

	/* the CU, file and pc tables: empty, but for the 0 byte the linker starts pctab with */
	pctab = end;
	end = align8(end + 1);

	/* functab: NFUNC + 1 pairs {entry, funcoff}, then the _func structs */
	pcln = t->pcln = end;
	fn = pcln + (NFUNC + 1) * 2 * field;
	for (i = 0; i <= NFUNC; i++) {
		entry = i < NFUNC ? funcs[i].entryoff : TEXT_SIZE;
		if (is_116(fmt))
			entry += TEXT_START;
		put_uint(t->b + pcln + 2 * i * field, entry, field);
		if (i == NFUNC)
			break;
		put_uint(t->b + pcln + (2 * i + 1) * field, fn - pcln, field);
		t->func_at[i] = fn;
		/* entry, nameOff, then zeros: no pc tables, no pcdata, no funcdata */
		fn += field + (fmt->magic == GOPCLNTAB_MAGIC_120 ? 40 : 36);
	}
	end = fn;

	if (names_last) {
		names = end;
		end = put_names(t, names, nameoff);
	}
	for (i = 0; i < NFUNC; i++) {
		put_uint(t->b + t->func_at[i], is_116(fmt) ? func_entry(i) : funcs[i].entryoff,
			 field);
		put_uint(t->b + t->func_at[i] + field, nameoff[i], 4);
	}
	t->len = end;

	set_word(t, W_NFUNC, NFUNC);
	set_word(t, 1, 1); /* nfiles */
	if (is_116(fmt)) {
		set_word(t, W116_FUNCNAME, names);
		for (i = 3; i < W116_PCLN; i++) /* cu, file and pc tables */
			set_word(t, i, pctab);
		set_word(t, W116_PCLN, pcln);
	} else {
		set_word(t, W118_TEXT, header_text);
		set_word(t, W118_FUNCNAME, names);
		for (i = 4; i < W118_PCLN; i++)
			set_word(t, i, pctab);
		set_word(t, W118_PCLN, pcln);
	}
}

/* "name [entry, end)" or the error, for comparing a result with the expected one. */
static const char *func_str(char *buf, size_t size, int rc, const struct gopclntab_func *fn)
{
	if (rc)
		snprintf(buf, size, "error %d", rc);
	else
		snprintf(buf, size, "%s [0x%llx, 0x%llx)", fn->name,
			 (unsigned long long)fn->entry, (unsigned long long)fn->end);
	return buf;
}

static const char *expected_func(char *buf, size_t size, size_t i)
{
	snprintf(buf, size, "%s [0x%llx, 0x%llx)", funcs[i].name,
		 (unsigned long long)func_entry(i), (unsigned long long)func_end(i));
	return buf;
}

static void check_func(const char *what, int rc, const struct gopclntab_func *fn, size_t i)
{
	char expected[128], got[128];

	expected_func(expected, sizeof(expected), i);
	func_str(got, sizeof(got), rc, fn);
	verdict(strcmp(expected, got) == 0, what, expected, got);
}

/* Checks lookups of PCs outside the text: all must be -ENOENT. */
static void check_outside(const char *what, const struct gopclntab *tab)
{
	static const uint64_t pcs[] = { 0, TEXT_START - 1, TEXT_START + TEXT_SIZE,
					TEXT_START + TEXT_SIZE + 1, UINT64_MAX };
	struct gopclntab_func fn;
	char got[256] = "";
	size_t i, n = 0;
	int rc;

	for (i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
		rc = gopclntab__lookup(tab, pcs[i], &fn);
		n += snprintf(got + n, sizeof(got) - n, "%s%s", i ? " " : "",
			      rc == -ENOENT ? "-ENOENT" : rc ? "error" : fn.name);
	}
	verdict(strcmp(got, "-ENOENT -ENOENT -ENOENT -ENOENT -ENOENT") == 0, what,
		"-ENOENT for each", got);
}

static void test_format(const struct format *fmt)
{
	struct gopclntab_func fn;
	struct gopclntab *tab;
	uint8_t *copy;
	struct table t;
	char err[128] = "";
	uint64_t mid;
	size_t i;

	build(&t, fmt, TEXT_START, false);
	copy = dup_exact(t.b, t.len);
	tab = gopclntab__open(copy, t.len, 0, err, sizeof(err));
	if (!check(tab != NULL, desc("%s: open a %zu-byte table", fmt->what, t.len), "a table",
		   err)) {
		free(copy);
		return;
	}
	check_hex(desc("%s: magic", fmt->what), fmt->magic, gopclntab__magic(tab));
	check_int(desc("%s: nfunc", fmt->what), NFUNC, gopclntab__nfunc(tab));
	check_int(desc("%s: textStart word offset", fmt->what),
		  is_116(fmt) ? -1 : 8 + 2 * (long)fmt->ptrsize,
		  gopclntab__text_start_offset(copy, t.len));

	for (i = 0; i < NFUNC; i++)
		check_func(desc("%s: func %zu", fmt->what, i), gopclntab__func(tab, i, &fn), &fn,
			   i);
	check_int(desc("%s: func %d", fmt->what, NFUNC), -ERANGE,
		  gopclntab__func(tab, NFUNC, &fn));

	for (i = 0; i < NFUNC; i++) {
		check_func(desc("%s: lookup entry 0x%llx", fmt->what,
				(unsigned long long)func_entry(i)),
			   gopclntab__lookup(tab, func_entry(i), &fn), &fn, i);
		mid = (func_entry(i) + func_end(i)) / 2;
		check_func(desc("%s: lookup 0x%llx", fmt->what, (unsigned long long)mid),
			   gopclntab__lookup(tab, mid, &fn), &fn, i);
		check_func(desc("%s: lookup last byte 0x%llx", fmt->what,
				(unsigned long long)func_end(i) - 1),
			   gopclntab__lookup(tab, func_end(i) - 1, &fn), &fn, i);
	}
	check_outside(desc("%s: lookup 0, before text start, at and after text end, 2^64-1",
			   fmt->what),
		      tab);

	for (i = 0; i < NFUNC; i++)
		check_func(desc("%s: find \"%s\"", fmt->what, funcs[i].name),
			   gopclntab__find(tab, funcs[i].name, &fn), &fn, i);
	check_int(desc("%s: find \"runtime.main\"", fmt->what), -ENOENT,
		  gopclntab__find(tab, "runtime.main", &fn));
	check_int(desc("%s: find \"main\" (a prefix)", fmt->what), -ENOENT,
		  gopclntab__find(tab, "main", &fn));
	gopclntab__close(tab);
	free(copy);
}

/* Opens T, passing TEXT_START, and checks the lookup of runtime.stackcheck's entry. */
static void check_text_start(const char *what, const struct table *t, uint64_t text_start,
			     bool opens)
{
	struct gopclntab_func fn;
	struct gopclntab *tab;
	char err[128] = "", expected[128], got[128];
	uint8_t *copy = dup_exact(t->b, t->len);

	tab = gopclntab__open(copy, t->len, text_start, err, sizeof(err));
	if (!opens) {
		check(!tab, what, "no table", "a table");
	} else if (tab) {
		expected_func(expected, sizeof(expected), 1);
		func_str(got, sizeof(got), gopclntab__lookup(tab, func_entry(1), &fn), &fn);
		verdict(strcmp(expected, got) == 0, what, expected, got);
	} else {
		verdict(false, what, "a table", err);
	}
	gopclntab__close(tab);
	free(copy);
}

static void test_text_start(void)
{
	const struct format *f120 = &formats[0], *f116 = &formats[2];
	struct table t;

	build(&t, f120, 0, false);
	check_text_start("Go 1.20+, header textStart 0, no text_start: open fails", &t, 0, false);
	check_text_start("Go 1.20+, header textStart 0, text_start given", &t, TEXT_START, true);
	build(&t, f120, 0x1000, false);
	check_text_start("Go 1.20+, text_start overrides the header's", &t, TEXT_START, true);
	build(&t, f116, 0, false);
	check_text_start("Go 1.16 ignores text_start (its entries are absolute)", &t, 0x1000,
			 true);
}

/*
 * The caller reads a pointer-sized word at the offset gopclntab__text_start_offset
 * returns, so the whole word must lie inside the data it was given.
 */
static void test_text_start_offset(void)
{
	static const struct {
		const char *what;
		unsigned int format;
		uint8_t ptrsize; /* header byte 7 */
	} cases[] = {
		{ "Go 1.20+", 0, 8 },
		{ "Go 1.18", 1, 8 },
		{ "Go 1.20+ 32-bit", 3, 4 },
		{ "Go 1.20+ with pointer size 255", 0, 255 },
	};
	size_t i, len, outside;
	uint8_t *copy;
	struct table t;
	long off;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build(&t, &formats[cases[i].format], TEXT_START, false);
		t.b[7] = cases[i].ptrsize;
		outside = 0;
		for (len = 0; len <= t.len; len++) {
			copy = dup_exact(t.b, len);
			off = gopclntab__text_start_offset(copy, len);
			if (off >= 0 && (size_t)off + cases[i].ptrsize > len)
				outside++;
			free(copy);
		}
		check_int(desc("%s: textStart offset for each of 0..%zu bytes: lengths where "
			       "the word is past the end",
			       cases[i].what, t.len),
			  0, outside);
	}
}

/* Does a successful result's name lie wholly inside TAB[0..LEN)? */
static bool name_inside(const uint8_t *tab, size_t len, const struct gopclntab_func *fn)
{
	const uint8_t *name = (const uint8_t *)fn->name;

	return name >= tab && name < tab + len && memchr(name, '\0', tab + len - name);
}

/*
 * Every truncation of a valid table either fails to open or yields functions
 * whose names are inside what is left. Returns how many results were wrong.
 */
static size_t truncations(const struct table *t, size_t *opened)
{
	struct gopclntab_func fn;
	struct gopclntab *tab;
	size_t len, i, bad = 0;
	uint8_t *copy;

	*opened = 0;
	for (len = 0; len <= t->len; len++) {
		copy = dup_exact(t->b, len);
		tab = gopclntab__open(copy, len, 0, NULL, 0);
		if (tab) {
			(*opened)++;
			for (i = 0; i < gopclntab__nfunc(tab); i++) {
				if (gopclntab__func(tab, i, &fn) == 0 &&
				    !name_inside(copy, len, &fn))
					bad++;
			}
			for (i = 0; i < NFUNC; i++) {
				if (gopclntab__lookup(tab, func_entry(i), &fn) == 0 &&
				    !name_inside(copy, len, &fn))
					bad++;
				if (gopclntab__find(tab, funcs[i].name, &fn) == 0 &&
				    !name_inside(copy, len, &fn))
					bad++;
			}
		}
		gopclntab__close(tab);
		free(copy);
	}
	return bad;
}

static void test_truncation(void)
{
	size_t i, bad, opened;
	struct table t;
	int names_last;
	char got[64];

	for (i = 0; i < NFORMATS; i++) {
		for (names_last = 0; names_last <= 1; names_last++) {
			build(&t, &formats[i], TEXT_START, names_last);
			bad = truncations(&t, &opened);
			snprintf(got, sizeof(got), "%zu opened, %zu names outside the data",
				 opened, bad);
			verdict(bad == 0 && opened > 0,
				desc("%s, names %s: open each of 0..%zu bytes", formats[i].what,
				     names_last ? "last" : "first", t.len),
				"some opened, no name outside the data", got);
		}
	}
}

/* What a header check must reject; each patches one byte or word of a valid table. */
static void test_bad_headers(void)
{
	static const struct {
		const char *what;
		unsigned int format; /* index in formats */
		int byte; /* patch this byte ... */
		uint8_t val;
		int word; /* ... or this header word */
		uint64_t wval;
	} cases[] = {
		{ "magic 0xfffffffb (Go 1.2 to 1.15)", 0, 0, 0xfb, -1 },
		{ "magic 0xfffffff2", 0, 0, 0xf2, -1 },
		{ "magic 0xfffffff5", 2, 0, 0xf5, -1 },
		{ "byte 4 not zero", 0, 4, 1, -1 },
		{ "byte 5 not zero", 2, 5, 1, -1 },
		{ "minLC 0", 0, 6, 0, -1 },
		{ "pointer size 0", 0, 7, 0, -1 },
		{ "pointer size 2", 0, 7, 2, -1 },
		{ "pointer size 16", 2, 7, 16, -1 },
		{ "pointer size 255", 0, 7, 255, -1 },
		{ "nfunc 0", 0, -1, 0, W_NFUNC, 0 },
		{ "nfunc 2^40", 0, -1, 0, W_NFUNC, 1ULL << 40 },
		{ "nfunc 2^64-1", 2, -1, 0, W_NFUNC, UINT64_MAX },
		{ "Go 1.16 nfunc 2^32+3", 2, -1, 0, W_NFUNC, (1ULL << 32) + 3 },
		{ "nfunc 100, functab past the end", 0, -1, 0, W_NFUNC, 100 },
		{ "funcnametab past the end", 0, -1, 0, W118_FUNCNAME, TABLE_MAX },
		{ "functab past the end", 0, -1, 0, W118_PCLN, TABLE_MAX },
		{ "functab at 2^64-8", 0, -1, 0, W118_PCLN, UINT64_MAX - 7 },
		{ "Go 1.16 funcnametab past the end", 2, -1, 0, W116_FUNCNAME, 1ULL << 62 },
		{ "Go 1.16 functab past the end", 2, -1, 0, W116_PCLN, TABLE_MAX },
	};
	struct gopclntab *tab;
	uint8_t *copy;
	struct table t;
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		build(&t, &formats[cases[i].format], TEXT_START, false);
		if (cases[i].byte >= 0)
			t.b[cases[i].byte] = cases[i].val;
		else
			set_word(&t, cases[i].word, cases[i].wval);
		copy = dup_exact(t.b, t.len);
		err[0] = '\0';
		tab = gopclntab__open(copy, t.len, 0, err, sizeof(err));
		verdict(!tab && err[0], desc("%s: open fails", cases[i].what), "NULL and a reason",
			tab ? "a table" : err[0] ? err : "NULL, no reason");
		gopclntab__close(tab);
		free(copy);
	}
}

/*
 * A corrupt entry in the function table: the table is refused when opened,
 * with the reason, so that no answer comes from it.
 */
static void test_bad_funcs(void)
{
	static const struct {
		const char *what;
		unsigned int format;
		bool funcoff; /* patch the functab's funcoff, not the _func's nameOff */
		uint64_t val;
	} cases[] = {
		{ "nameOff past the end", 0, false, TABLE_MAX },
		{ "nameOff -1", 0, false, 0xffffffff },
		{ "Go 1.16 nameOff past the end", 2, false, 0x7fffffff },
		{ "funcoff past the end", 0, true, TABLE_MAX },
		{ "funcoff 2^32-1", 0, true, 0xffffffff },
		{ "Go 1.16 funcoff 2^64-1", 2, true, UINT64_MAX },
		{ "Go 1.16 32-bit funcoff 2^32-1", 4, true, 0xffffffff },
		{ "nameOff inside a name", 0, false, 1 },
	};
	const struct format *fmt;
	struct gopclntab *tab;
	unsigned int field;
	char err[256] = "";
	uint8_t *copy;
	struct table t;
	size_t i, at;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fmt = &formats[cases[i].format];
		field = is_116(fmt) ? fmt->ptrsize : 4;
		build(&t, fmt, TEXT_START, false);
		/* function 1, runtime.stackcheck, is the broken one */
		if (cases[i].funcoff) {
			at = t.pcln + 3 * field; /* pair 1, second field */
			put_uint(t.b + at, cases[i].val, field);
		} else {
			put_uint(t.b + t.func_at[1] + field, cases[i].val, 4);
		}
		copy = dup_exact(t.b, t.len);
		err[0] = '\0';
		tab = gopclntab__open(copy, t.len, 0, err, sizeof(err));
		verdict(!tab && strstr(err, "function table fails a check: "),
			desc("%s: refused", cases[i].what), "NULL, fails a check", tab ? "a table" : err);
		gopclntab__close(tab);
		free(copy);
	}
}

/* A bit flipped in the header's instruction size, or functions out of order: refused. */
static void test_bad_header(void)
{
	const struct format *fmt = &formats[0];
	struct gopclntab *tab;
	char err[256] = "";
	uint8_t *copy;
	struct table t;

	build(&t, fmt, TEXT_START, false);
	t.b[6] ^= 0x10;
	copy = dup_exact(t.b, t.len);
	tab = gopclntab__open(copy, t.len, 0, err, sizeof(err));
	verdict(!tab && strstr(err, "quantum"), desc("quantum 17: refused"), "NULL, the quantum",
		tab ? "a table" : err);
	gopclntab__close(tab);
	free(copy);
	build(&t, fmt, TEXT_START, false);
	/* pair 1's entry above pair 2's */
	put_uint(t.b + t.pcln + 2 * 4, 0xffff, 4);
	copy = dup_exact(t.b, t.len);
	err[0] = '\0';
	tab = gopclntab__open(copy, t.len, 0, err, sizeof(err));
	verdict(!tab && strstr(err, "fails a check"), desc("functions out of order: refused"),
		"NULL, fails a check", tab ? "a table" : err);
	gopclntab__close(tab);
	free(copy);
}

/* The first section named NAME, and its header. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	const char *s;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, shdr))
			continue;
		s = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (s && strcmp(s, name) == 0)
			return scn;
	}
	return NULL;
}

/* NAME's entry in .symtab, an independent reader of the same addresses; false if stripped. */
static bool find_symbol(Elf *elf, const char *name, GElf_Sym *sym)
{
	GElf_Shdr shdr;
	Elf_Data *data;
	Elf_Scn *scn;
	const char *s;
	size_t i;

	scn = find_section(elf, ".symtab", &shdr);
	if (!scn || !(data = elf_getdata(scn, NULL)) || !shdr.sh_entsize)
		return false;
	for (i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
		if (!gelf_getsym(data, i, sym))
			continue;
		s = elf_strptr(elf, shdr.sh_link, sym->st_name);
		if (s && strcmp(s, name) == 0)
			return true;
	}
	return false;
}

/* Every function in order, each ending where the next starts, each with a name. */
static size_t inconsistent_funcs(const struct gopclntab *tab)
{
	struct gopclntab_func fn;
	uint64_t prev_end = 0;
	size_t i, bad = 0;

	for (i = 0; i < gopclntab__nfunc(tab); i++) {
		if (gopclntab__func(tab, i, &fn) != 0) {
			bad++;
			continue;
		}
		if (!fn.name[0] || fn.end <= fn.entry || (i && fn.entry != prev_end))
			bad++;
		prev_end = fn.end;
	}
	return bad;
}

/*
 * The text start to pass to gopclntab__open: 0 when the header has one. PIE
 * builds and Go 1.26+ leave the header's zero; then runtime.text from .symtab,
 * or, for stripped binaries, the start of .text (where Go's own linker puts
 * runtime.text). SOURCE says which.
 */
static uint64_t text_start(Elf *elf, const uint8_t *data, size_t len, const char **source)
{
	uint64_t word = 0;
	GElf_Shdr shdr;
	GElf_Sym sym;
	long off;

	*source = "its header";
	off = gopclntab__text_start_offset(data, len);
	if (off < 0 || len < 8 || (size_t)off > len - 8)
		return 0;
	memcpy(&word, data + off, 8);
	if (word)
		return 0;
	*source = "runtime.text";
	if (find_symbol(elf, "runtime.text", &sym))
		return sym.st_value;
	*source = ".text";
	if (find_section(elf, ".text", &shdr))
		return shdr.sh_addr;
	*source = "nowhere";
	return 0;
}

static void check_real_table(const char *path, Elf *elf, const uint8_t *data, size_t len)
{
	char err[128] = "", expected[64], got[128];
	struct gopclntab_func fn, at;
	struct gopclntab *tab;
	const char *source;
	uint64_t text;
	GElf_Sym sym;
	int rc;

	text = text_start(elf, data, len, &source);
	tab = gopclntab__open(data, len, text, err, sizeof(err));
	if (text)
		snprintf(got, sizeof(got), "0x%llx from %s", (unsigned long long)text, source);
	else
		snprintf(got, sizeof(got), "from %s", source);
	if (!check(tab != NULL, desc("%s: open its %zu-byte .gopclntab, text start %s", path,
				     len, got),
		   "a table", err))
		return;
	check_int(desc("%s: %zu functions in address order, each with a name", path,
		       gopclntab__nfunc(tab)),
		  0, inconsistent_funcs(tab));

	rc = gopclntab__find(tab, "runtime.main", &fn);
	if (!check_int(desc("%s: find \"runtime.main\"", path), 0, rc)) {
		gopclntab__close(tab);
		return;
	}
	rc = gopclntab__lookup(tab, fn.entry + 1, &at);
	verdict(rc == 0 && strcmp(at.name, "runtime.main") == 0 && at.entry == fn.entry,
		desc("%s: lookup 0x%llx", path, (unsigned long long)fn.entry + 1),
		"runtime.main", func_str(got, sizeof(got), rc, &at));

	if (find_symbol(elf, "runtime.main", &sym)) {
		snprintf(expected, sizeof(expected), "0x%llx, %llu bytes",
			 (unsigned long long)sym.st_value, (unsigned long long)sym.st_size);
		verdict(sym.st_value == fn.entry && fn.end - fn.entry >= sym.st_size,
			desc("%s: runtime.main as .symtab has it", path), expected,
			func_str(got, sizeof(got), 0, &fn));
	} else {
		skip(desc("%s: runtime.main as .symtab has it", path), "no .symtab");
	}
	gopclntab__close(tab);
}

static void test_real_binary(void)
{
	const char *path = getenv("GO_TEST_BINARY");
	GElf_Shdr shdr;
	Elf_Data *data;
	Elf_Scn *scn;
	Elf *elf;
	int fd;

	if (!path || !*path) {
		skip("real binary", "GO_TEST_BINARY not set");
		return;
	}
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		verdict(false, desc("open %s", path), "a readable file", strerror(errno));
		return;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		verdict(false, desc("elf_begin %s", path), "an ELF file", elf_errmsg(-1));
		close(fd);
		return;
	}
	scn = find_section(elf, ".gopclntab", &shdr);
	if (!scn)
		scn = find_section(elf, ".data.rel.ro.gopclntab", &shdr);
	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (check(data && data->d_buf, desc("%s: .gopclntab section", path), "its data",
		  scn ? elf_errmsg(-1) : "no such section"))
		check_real_table(path, elf, data->d_buf, data->d_size);
	elf_end(elf);
	close(fd);
}

/*
 * Inlining: one function, main.outer, into which main.mid is inlined, and
 * main.leaf into main.mid. Offsets from the entry, and what each range is:
 *   [0x00,0x10) outer, line 10     [0x30,0x31) outer's call of mid, line 11
 *   [0x10,0x20) leaf, line 20      [0x31,0x32) mid's call of leaf, line 31
 *   [0x20,0x30) mid, line 30       [0x32,0x40) outer, line 12
 * The tree: [0] mid, parentPc 0x30; [1] leaf, parent 0, parentPc 0x31.
 */
#define INL_SIZE 0x40
#define GOFUNC 0x600000ULL /* where go:func.* is "mapped" */
#define TREE_OFF 0x10 /* the tree, from GOFUNC */

struct inl_run {
	uint32_t end; /* from the entry */
	int32_t line, index;
};

static const struct inl_run inl_runs[] = {
	{ 0x10, 10, -1 }, { 0x20, 20, 1 }, { 0x30, 30, 0 },
	{ 0x31, 11, -1 }, { 0x32, 31, 0 }, { 0x40, 12, -1 },
};

#define NRUNS (sizeof(inl_runs) / sizeof(inl_runs[0]))

/* go:func.*, as the reader callback sees it */
struct inl_memory {
	uint8_t b[64];
	bool broken; /* the reader fails, as for an address the file does not hold */
};

static const uint8_t *inl_read(void *ctx, uint64_t vaddr, size_t len)
{
	struct inl_memory *m = ctx;

	if (m->broken || vaddr < GOFUNC || vaddr - GOFUNC > sizeof(m->b) ||
	    len > sizeof(m->b) - (vaddr - GOFUNC))
		return NULL;
	return m->b + (vaddr - GOFUNC);
}

static size_t put_uvarint(uint8_t *p, uint32_t v)
{
	size_t n = 0;

	for (; v >= 0x80; v >>= 7)
		p[n++] = (v & 0x7f) | 0x80;
	p[n++] = v;
	return n;
}

/* A pc-value table of the runs, value FIELD of each (0: line, 1: index); returns its size. */
static size_t put_pcvalue(uint8_t *p, int field)
{
	int32_t prev = -1, val, d;
	uint32_t start = 0;
	size_t i, n = 0;

	for (i = 0; i < NRUNS; i++) {
		val = field ? inl_runs[i].index : inl_runs[i].line;
		d = val - prev;
		n += put_uvarint(p + n, d < 0 ? ((uint32_t)-d << 1) - 1 : (uint32_t)d << 1);
		n += put_uvarint(p + n, inl_runs[i].end - start);
		prev = val;
		start = inl_runs[i].end;
	}
	p[n++] = 0; /* end */
	return n;
}

/* Builds the one-function table of format FMT into T and go:func.* into M. */
static void build_inline(struct table *t, struct inl_memory *m, const struct format *fmt)
{
	static const char names[] = "main.outer\0main.mid\0main.leaf";
	bool v116 = is_116(fmt), v120 = fmt->magic == GOPCLNTAB_MAGIC_120;
	unsigned int field = v116 ? fmt->ptrsize : 4, nwords = v116 ? 7 : 8, hdr;
	size_t n, nameoff, cuoff, fileoff, pctab, pcfile, pcln, pcinl, functab, fn, fd, i;
	uint8_t *call;

	memset(t, 0, sizeof(*t));
	memset(m, 0, sizeof(*m));
	t->fmt = fmt;
	put_uint(t->b, fmt->magic, 4);
	t->b[6] = 1;
	t->b[7] = fmt->ptrsize;
	n = 8 + nwords * fmt->ptrsize;

	nameoff = n;
	memcpy(t->b + n, names, sizeof(names));
	n = align8(n + sizeof(names));
	cuoff = n; /* one unit, one file: file 0 at filetab offset 0 */
	n += 8;
	fileoff = n;
	memcpy(t->b + n, "/src/x.go", 10);
	n = align8(n + 10);
	pctab = n;
	t->b[n++] = 0; /* as the linker writes it: no table starts at offset 0 */
	pcfile = n - pctab;
	t->b[n++] = 2; /* file 0 ... */
	t->b[n++] = INL_SIZE; /* ... for the whole function */
	t->b[n++] = 0;
	pcln = n - pctab;
	n += put_pcvalue(t->b + n, 0);
	pcinl = n - pctab;
	n += put_pcvalue(t->b + n, 1);
	n = align8(n);

	functab = t->pcln = n;
	fn = functab + 4 * field;
	put_uint(t->b + functab, v116 ? TEXT_START : 0, field);
	put_uint(t->b + functab + field, fn - functab, field);
	put_uint(t->b + functab + 2 * field, v116 ? TEXT_START + INL_SIZE : INL_SIZE, field);
	t->func_at[0] = fn;
	put_uint(t->b + fn, v116 ? TEXT_START : 0, field);
	/* nameOff, args, deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset */
	put_uint(t->b + fn + field + 16, pcfile, 4);
	put_uint(t->b + fn + field + 20, pcln, 4);
	put_uint(t->b + fn + field + 24, 3, 4);
	/* Go 1.20 added startLine; Go 1.16's header is 1.18's with a pointer-sized entry */
	hdr = field + (v120 ? 40 : 36);
	t->b[fn + hdr - 1] = 4; /* nfuncdata */
	put_uint(t->b + fn + hdr + 2 * 4, pcinl, 4); /* pcdata[2]: the tree index */
	fd = fn + hdr + 3 * 4;
	if (v116) {
		fd = (fd + fmt->ptrsize - 1) & ~(size_t)(fmt->ptrsize - 1);
		put_uint(t->b + fd + 3 * fmt->ptrsize, GOFUNC + TREE_OFF, fmt->ptrsize);
		n = fd + 4 * fmt->ptrsize;
	} else {
		for (i = 0; i < 3; i++)
			put_uint(t->b + fd + 4 * i, 0xffffffff, 4);
		put_uint(t->b + fd + 12, TREE_OFF, 4);
		n = fd + 16;
	}
	t->len = n;

	/* the tree: name offsets 11 (main.mid) and 20 (main.leaf) */
	for (i = 0; i < 2; i++) {
		call = m->b + TREE_OFF + i * (v120 ? 16 : 20);
		if (v120) {
			put_uint(call + 4, i ? 20 : 11, 4);
			put_uint(call + 8, i ? 0x31 : 0x30, 4);
		} else {
			put_uint(call, i ? 0 : 0xffff, 2); /* parent */
			put_uint(call + 12, i ? 20 : 11, 4);
			put_uint(call + 16, i ? 0x31 : 0x30, 4);
		}
	}

	set_word(t, W_NFUNC, 1);
	set_word(t, 1, 1);
	if (v116) {
		set_word(t, W116_FUNCNAME, nameoff);
		set_word(t, 3, cuoff);
		set_word(t, 4, fileoff);
		set_word(t, 5, pctab);
		set_word(t, W116_PCLN, functab);
	} else {
		set_word(t, W118_TEXT, TEXT_START);
		set_word(t, W118_FUNCNAME, nameoff);
		set_word(t, 4, cuoff);
		set_word(t, 5, fileoff);
		set_word(t, 6, pctab);
		set_word(t, W118_PCLN, functab);
	}
}

/* "func:line func:line ... " with "*" marking inlined frames, or the error. */
static const char *frames_str(char *buf, size_t size, const struct gopclntab *tab, uint64_t pc,
			      size_t max)
{
	struct gopclntab_frame f[8];
	struct gopclntab_func fn;
	size_t len = 0;
	int i, n;

	if (gopclntab__lookup(tab, pc, &fn) != 0)
		return "lookup failed";
	n = gopclntab__frames(tab, &fn, pc, f, max);
	if (n < 0) {
		snprintf(buf, size, "error %d", n);
		return buf;
	}
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		len += snprintf(buf + len, size - len, "%s%s%s@%s:%d", i ? " " : "",
				f[i].inlined ? "*" : "", f[i].func, f[i].file, f[i].line);
	return buf;
}

/*
 * gopclntab__frame_size on the inlining table's one function: none without
 * a pcsp table; with its line table read as one, the largest of its runs'
 * values (31), whatever the order they come in.
 */
static void test_frame_size(const struct format *fmt, const struct table *t,
			    const struct gopclntab *tab, uint8_t *copy)
{
	unsigned int field = is_116(fmt) ? fmt->ptrsize : 4;
	size_t at = t->func_at[0] + field;
	struct gopclntab_func fn;
	uint32_t size = 0;
	int rc;

	if (!check_int(desc("%s frame size: lookup", fmt->what), 0,
		       gopclntab__lookup(tab, TEXT_START + 1, &fn)))
		return;
	rc = gopclntab__frame_size(tab, &fn, &size);
	check_int(desc("%s frame size: no pcsp table", fmt->what), -ENOENT, rc);
	/* pcsp := pcln, its offset at field 5 of the _func after the entry */
	memcpy(copy + at + 12, copy + at + 20, 4);
	rc = gopclntab__frame_size(tab, &fn, &size);
	check_int(desc("%s frame size: the largest value of the table", fmt->what), 31,
		  rc ? rc : (int)size);
	memset(copy + at + 12, 0, 4);
}

static void test_inlining(void)
{
	static const struct {
		uint32_t off;
		const char *frames;
	} cases[] = {
		{ 0x05, "main.outer@/src/x.go:10" },
		{ 0x15, "*main.leaf@/src/x.go:20 *main.mid@/src/x.go:31 main.outer@/src/x.go:11" },
		{ 0x2f, "*main.mid@/src/x.go:30 main.outer@/src/x.go:11" },
		{ 0x30, "main.outer@/src/x.go:11" },
		{ 0x3f, "main.outer@/src/x.go:12" },
	};
	const char *no_tree = "main.outer@/src/x.go:20";
	struct inl_memory m;
	struct gopclntab *tab;
	const char *last;
	uint8_t *copy;
	struct table t;
	char got[256];
	size_t f, i, bad;
	int fi;

	for (fi = 0; fi < 3; fi++) {
		const struct format *fmt = &formats[fi];

		build_inline(&t, &m, fmt);
		copy = dup_exact(t.b, t.len);
		tab = gopclntab__open(copy, t.len, 0, NULL, 0);
		if (!check(tab != NULL, desc("%s inlining: open", fmt->what), "a table", "NULL")) {
			free(copy);
			continue;
		}
		verdict(!strcmp(frames_str(got, sizeof(got), tab, TEXT_START + 0x15, 8), no_tree),
			desc("%s inlining: without funcdata, the function alone with the innermost line",
			     fmt->what), no_tree, got);
		gopclntab__set_funcdata(tab, is_116(fmt) ? 0 : GOFUNC, inl_read, &m);
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			frames_str(got, sizeof(got), tab, TEXT_START + cases[i].off, 8);
			verdict(!strcmp(got, cases[i].frames),
				desc("%s inlining: frames at entry+0x%x", fmt->what, cases[i].off),
				cases[i].frames, got);
		}
		frames_str(got, sizeof(got), tab, TEXT_START + 0x15, 2);
		verdict(!strcmp(got, no_tree),
			desc("%s inlining: room for 2 of 3 frames gives the function alone",
			     fmt->what), no_tree, got);
		m.broken = true;
		frames_str(got, sizeof(got), tab, TEXT_START + 0x15, 8);
		verdict(!strcmp(got, no_tree),
			desc("%s inlining: an unreadable tree gives the function alone", fmt->what),
			no_tree, got);
		m.broken = false;
		/* leaf's parentPc pointing back into leaf: a loop the depth bound must end */
		put_uint(m.b + TREE_OFF + (fmt->magic == GOPCLNTAB_MAGIC_120 ? 16 + 8 : 20 + 16),
			 0x15, 4);
		frames_str(got, sizeof(got), tab, TEXT_START + 0x15, 8);
		verdict(!strcmp(got, no_tree),
			desc("%s inlining: a tree that loops gives the function alone", fmt->what),
			no_tree, got);
		/* every byte of the tree flipped: always an answer, ending in main.outer */
		for (f = 0, bad = 0; f < sizeof(m.b); f++) {
			m.b[f] ^= 0xff;
			frames_str(got, sizeof(got), tab, TEXT_START + 0x15, 8);
			last = strrchr(got, ' ');
			if (strncmp(last ? last + 1 : got, "main.outer@", 11) != 0)
				bad++;
			m.b[f] ^= 0xff;
		}
		check_int(desc("%s inlining: each byte of the tree flipped: answers not ending in "
			       "main.outer",
			       fmt->what),
			  0, bad);
		test_frame_size(fmt, &t, tab, copy);
		gopclntab__close(tab);
		free(copy);
	}
}

int main(void)
{
	size_t i;

	for (i = 0; i < NFORMATS; i++)
		test_format(&formats[i]);
	test_text_start();
	test_text_start_offset();
	test_truncation();
	test_bad_headers();
	test_bad_funcs();
	test_bad_header();
	test_inlining();
	test_real_binary();
	return tap_done();
}
