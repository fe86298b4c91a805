/* SPDX-License-Identifier: GPL-2.0 */
/* pprof.h: records as a gzip-compressed profile.proto, the format go tool pprof reads. */
#ifndef __PPROF_H
#define __PPROF_H

#include "rec.h"
#include "writer.h"

struct pprof;

struct pprof *pprof__new(void);
void pprof__free(struct pprof *p);

/*
 * Takes R's samples: sample types samples/count, cpu/nanoseconds and
 * wall/nanoseconds, labels trace_id, span_id, trace_source, state and
 * wait_reason (wall records), every goroutine label, and pid, goid and
 * context as numbers. -ENOMEM.
 */
int pprof__add(struct pprof *p, const struct rec *r);

/* Writes every record added to PATH, created 0600 (an existing file keeps its mode); -errno. */
int pprof__write(struct pprof *p, const char *path);

/* --pprof: D->path */
extern const struct writer_ops pprof_writer;

#endif /* __PPROF_H */
