/* SPDX-License-Identifier: GPL-2.0 */
/* folded.h: records as folded stacks, "comm;root;...;leaf COUNT", for flame graphs. */
#ifndef __FOLDED_H
#define __FOLDED_H

#include <stdbool.h>
#include <stdio.h>

#include "rec.h"
#include "writer.h"

struct folded;

/* The records folded__write writes: one set each. */
enum folded_set {
	FOLDED_CPU, /* CPU samples, and events: counted in samples */
	FOLDED_WALL, /* wall records (--wall), the state or wait reason as the leaf, counted in looks */
	FOLDED_ALLOC, /* alloc records (--alloc), counted in bytes allocated */
	FOLDED_SETS,
};

struct folded *folded__new(void);
void folded__free(struct folded *f);

/* Counts R's stacks in each of the sets folded__write picks from. -ENOMEM. */
int folded__add(struct folded *f, const struct rec *r);

/*
 * One "comm;root;...;leaf count" line per distinct stack of SET, counts
 * summed, sorted; with TRACE_ROOT, the trace ID ("no-trace" for none)
 * comes first. FOLDED_WALL's leaf is the state or wait reason
 * ("[chan_receive]"); FOLDED_ALLOC's stacks start at the allocating
 * function, and their count is its unbiased bytes. -errno.
 */
int folded__write(struct folded *f, FILE *out, bool trace_root, enum folded_set set);

/* -f: to *D->stream, D->trace_root, and D->wall_only or D->alloc_only for the set */
extern const struct writer_ops folded_writer;

#endif /* __FOLDED_H */
