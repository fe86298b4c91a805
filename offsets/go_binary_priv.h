/* SPDX-License-Identifier: GPL-2.0 */
/* go_binary_priv.h: what the go_binary files share; no other module includes it. */
#ifndef __GO_BINARY_PRIV_H
#define __GO_BINARY_PRIV_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buildinfo.h"
#include "elf_image.h"
#include "go_binary.h"
#include "../bpf/gomap.h"

struct gopclntab;
struct gopclntab_func;
struct golayout_row;
struct go_dwarf_result;

#define MAX_NOTES 8
#define NOTE_LEN 256

struct notes {
	size_t n;
	char text[MAX_NOTES][NOTE_LEN];
};

/*
 * One Go executable as go_binary__open reads it: go_binary.c fills in the
 * file, its version, function table, TLS slot and layout; go_binary_probes.c
 * the trace sources' part; go_binary_wall.c --wall's; go_binary_alloc.c
 * --alloc's.
 */
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
	struct go_alloc_probe alloc; /* --alloc: what is known of it, whether usable or not */
	int alloc_err; /* 0 when alloc can be probed, else -errno and alloc_problem says why */
	char alloc_problem[NOTE_LEN];
	char alloc_rate_problem[NOTE_LEN]; /* why alloc.rate_addr is 0, "" when it is not */
	uint64_t pcln_addr; /* link-time address of the function table */
	size_t pcln_len;
	struct notes problems, warnings;
};

/*
 * What more than one of the files needs is inline here, so that none of
 * them calls back into go_binary.c, which calls them.
 */
static inline void note(struct notes *notes, const char *fmt, ...)
{
	va_list ap;

	if (notes->n >= MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(notes->text[notes->n++], NOTE_LEN, fmt, ap);
	va_end(ap);
}

/* The file's word at P, which need not be aligned. */
static inline uint64_t word(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * A Go <= 1.23 map M, whose values are VALUE_SIZE bytes, fits what gomap.h
 * reads: its header's members in the MAP_HEADER_LEN bytes read whole, its
 * bucket in the sampler's buffer.
 */
static inline bool hmap_fits(const struct go_hmap_layout *m, __u32 value_size)
{
	return m->b < MAP_HEADER_LEN && m->flags < MAP_HEADER_LEN && m->buckets % 8 == 0 &&
	       m->buckets + 8 <= MAP_HEADER_LEN && m->oldbuckets % 8 == 0 &&
	       m->oldbuckets + 8 <= MAP_HEADER_LEN && m->size <= MAX_BUCKET_SIZE &&
	       m->tophash + BUCKET_SLOTS <= m->size &&
	       m->keys + BUCKET_SLOTS * GO_STRING_SIZE <= m->size &&
	       m->values + BUCKET_SLOTS * value_size <= m->size && m->overflow + 8 <= m->size;
}

/* Is [ADDR, ADDR + LEN) inside GB's section NAME (NOBITS ones too)? */
static inline bool in_section(const struct go_binary *gb, const char *name, uint64_t addr,
			      uint64_t len)
{
	uint64_t start, size;

	return elf_image__section_range(gb->img, name, &start, &size) == 0 && addr >= start &&
	       addr - start <= size && size - (addr - start) >= len;
}

/*
 * go_binary_probes.c: which trace sources GB has something for, as it is
 * opened; their probes and layouts, once the runtime's layout is known.
 */
void go_binary_probes__sources(struct go_binary *gb);
void go_binary_probes__find(struct go_binary *gb, const struct golayout_row *row,
			    const struct go_dwarf_result *dw);
/*
 * Where a uprobe on FN goes: the branch of its stack check, a small or a
 * large frame's, else its entry (go_binary_probes.c).
 */
uint64_t go_binary_probes__pc(const struct go_binary *gb, const struct gopclntab_func *fn);
/* go_binary_alloc.c: --alloc's probe, the size's argument, the sampling rate's address. */
void go_binary_alloc__find(struct go_binary *gb);
/* go_binary_wall.c: --wall's goroutine list, scheduling members and wait reasons. */
void go_binary_wall__find(struct go_binary *gb, const struct go_dwarf_result *dw);

#endif /* __GO_BINARY_PRIV_H */
