/* SPDX-License-Identifier: GPL-2.0 */
/* gopclntab.h: Go's function table (.gopclntab), which survives strip and -ldflags=-s -w. */
#ifndef __GOPCLNTAB_H
#define __GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gopclntab;

/* Header magics, one per table format. */
#define GOPCLNTAB_MAGIC_116 0xfffffffa /* Go 1.16, 1.17 */
#define GOPCLNTAB_MAGIC_118 0xfffffff0 /* Go 1.18, 1.19 */
#define GOPCLNTAB_MAGIC_120 0xfffffff1 /* Go 1.20 and later */

struct gopclntab_func {
	uint64_t entry; /* link-time address of the first instruction */
	uint64_t end; /* one past the last instruction */
	const char *name; /* points into the table; NUL-terminated */
	uint64_t func_off; /* where its _func record sits in the table (for gopclntab__line) */
};

/*
 * Parses the table DATA[0..LEN), which must stay mapped while the result is
 * used. TEXT_START is the link-time address of the text the table describes;
 * pass 0 to take it from the table's own header (Go 1.18+), which PIE builds
 * leave as zero for the dynamic loader to fill. Returns NULL with a reason in
 * ERR when the data is not a table of a known format.
 */
struct gopclntab *gopclntab__open(const uint8_t *data, size_t len, uint64_t text_start,
				  char *err, size_t errlen);
void gopclntab__close(struct gopclntab *tab);

uint32_t gopclntab__magic(const struct gopclntab *tab);
/* Offset of the header's textStart word (Go 1.18+), or -1 for formats without one. */
long gopclntab__text_start_offset(const uint8_t *data, size_t len);
size_t gopclntab__nfunc(const struct gopclntab *tab);

/* Function IDX in address order; -ERANGE or -EINVAL on a corrupt entry. */
int gopclntab__func(const struct gopclntab *tab, size_t idx, struct gopclntab_func *out);
/* The function whose code contains PC; -ENOENT if none. */
int gopclntab__lookup(const struct gopclntab *tab, uint64_t pc, struct gopclntab_func *out);
/* The function named NAME; -ENOENT if none. */
int gopclntab__find(const struct gopclntab *tab, const char *name, struct gopclntab_func *out);

/*
 * File and line of PC inside FN, from its pcfile and pcln tables, as
 * `go tool addr2line` (debug/gosym) reads them: for code inlined into FN,
 * the inlined callee's. FILE points into the table and is "" when unknown;
 * LINE is -1 when unknown. Returns 0 when both are known, -ENOENT when PC
 * is outside FN or the tables do not cover it, -EINVAL on a corrupt _func.
 */
int gopclntab__line(const struct gopclntab *tab, const struct gopclntab_func *fn, uint64_t pc,
		    const char **file, int *line);

/*
 * Bytes the stack pointer has moved down at PC in FN since its entry (the
 * pcsp table): the return address is at SP + DELTA. -ENOENT when FN has no
 * table or it does not cover PC, -EINVAL on a corrupt _func.
 */
int gopclntab__sp_delta(const struct gopclntab *tab, const struct gopclntab_func *fn, uint64_t pc,
			int32_t *delta);

/*
 * FN's frame: the most its SP delta reaches, which is what it is at every
 * call FN makes (Go changes SP only in prologues and epilogues), so at
 * every return address in FN. -ENOENT when FN has no pcsp table.
 */
int gopclntab__frame_size(const struct gopclntab *tab, const struct gopclntab_func *fn,
			  uint32_t *size);

/* LEN bytes at link-time address VADDR, outside the table; NULL when the file has none there. */
typedef const uint8_t *(*gopclntab_reader)(void *ctx, uint64_t vaddr, size_t len);

/*
 * Inlining trees are funcdata, which live outside the table: Go 1.18+ store
 * them as offsets from GOFUNC (runtime.moduledata's gofunc, the start of
 * go:func.*), Go 1.16 and 1.17 as addresses (pass GOFUNC 0). Without this
 * call, gopclntab__frames does not expand inlined calls.
 */
void gopclntab__set_funcdata(struct gopclntab *tab, uint64_t gofunc, gopclntab_reader read,
			     void *ctx);
bool gopclntab__has_inlining(const struct gopclntab *tab);

struct gopclntab_frame {
	const char *func; /* points into the table */
	const char *file; /* "" when unknown */
	int line; /* -1 when unknown */
	bool inlined; /* FUNC's code was inlined into the next frame's */
};

/* Deeper inlining than Go's inliner produces; frames arrays of this size never overflow. */
#define GOPCLNTAB_MAX_INLINE 64

/*
 * The frames at PC in FN, innermost first, as the runtime unwinds them:
 * each function inlined there with the line it was at, then FN itself with
 * the line of the call. Writes at most MAX frames and returns how many (at
 * least one). Without a usable inlining tree the one frame is FN with the
 * innermost line, as gopclntab__line gives it. Returns -ENOENT when PC is
 * outside FN, -EINVAL when its _func is corrupt.
 */
int gopclntab__frames(const struct gopclntab *tab, const struct gopclntab_func *fn, uint64_t pc,
		      struct gopclntab_frame *out, size_t max);

#endif /* __GOPCLNTAB_H */
