/* SPDX-License-Identifier: GPL-2.0 */
/* folded.h: records as folded stacks, "comm;root;...;leaf COUNT", for flame graphs. */
#ifndef __FOLDED_H
#define __FOLDED_H

#include <stdbool.h>
#include <stdio.h>

#include "rec.h"
#include "writer.h"

struct folded;

struct folded *folded__new(void);
void folded__free(struct folded *f);

/* Counts R's stacks in each of the four sets folded__write picks from. -ENOMEM. */
int folded__add(struct folded *f, const struct rec *r);

/*
 * One "comm;root;...;leaf count" line per distinct stack, counts summed,
 * sorted; with TRACE_ROOT, the trace ID ("no-trace" for none) comes first.
 * WALL: the wall records (--wall) only, their state or wait reason as the
 * leaf ("[chan_receive]"); otherwise every other record. -errno.
 */
int folded__write(struct folded *f, FILE *out, bool trace_root, bool wall);

/* -f: to *D->stream, D->trace_root and D->wall_only as folded__write takes them */
extern const struct writer_ops folded_writer;

#endif /* __FOLDED_H */
