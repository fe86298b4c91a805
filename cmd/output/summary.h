/* SPDX-License-Identifier: GPL-2.0 */
/* summary.h: a run's costliest traces by CPU, wall time and allocated bytes, each with its commonest leaf function, for the lines at exit. */
#ifndef __SUMMARY_H
#define __SUMMARY_H

#include <stdio.h>

#include "rec.h"
#include "writer.h"

/* Traces held at most: past it, the cheaper half goes (a run of days stays bounded). */
#define SUMMARY_MAX_TRACES 65536

struct summary;

struct summary *summary__new(void);
void summary__free(struct summary *s); /* accepts NULL */

/* A record as written: its trace's CPU or wall time or allocated bytes, and its stacks' leaves. -ENOMEM. */
int summary__add(struct summary *s, const struct rec *r);

/*
 * The N costliest traces by CPU, then the slowest (with their wall time
 * where there is any), then the N that allocated the most bytes where any
 * did (--alloc), to F: a heading and a line each, none wider than WIDTH
 * columns. Nothing when no record had a trace ID.
 */
void summary__print(const struct summary *s, FILE *f, int n, int width);

/* the costliest traces: summary__print says them */
extern const struct writer_ops summary_writer;

#endif /* __SUMMARY_H */
