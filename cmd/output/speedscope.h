/* SPDX-License-Identifier: GPL-2.0 */
/* speedscope.h: a whole run's records in speedscope's file format, a profile per trace and for the whole run. */
#ifndef __SPEEDSCOPE_H
#define __SPEEDSCOPE_H

#include "recset.h"
#include "writer.h"

/* The traces, costliest first (CPU plus wall-clock time), that get profiles of their own. */
#define SPEEDSCOPE_MAX_TRACES 100

/*
 * Writes RS to PATH (created 0600, or truncated) as speedscope's JSON:
 * "whole run · CPU", "whole run · goroutine time" and "whole run ·
 * allocated bytes" (sampled, the trace ID and the process as the outer
 * frames), then for each of the costliest traces "TRACE · CPU" (evented at
 * the samples' own times when every sample has its time, else sampled),
 * "TRACE · goroutine time" and "TRACE · allocated bytes" (sampled, in time
 * order); time in nanoseconds, each wait as a leaf frame [chan receive],
 * allocations in bytes, the allocating function as the leaf. Each is
 * there when it weighs anything. NAME is the file's name in speedscope.
 * 0, or -errno.
 */
int speedscope__write(struct recset *rs, const char *path, const char *name);

/* --speedscope: D->path, D->source its name in speedscope */
extern const struct writer_ops speedscope_writer;

#endif /* __SPEEDSCOPE_H */
