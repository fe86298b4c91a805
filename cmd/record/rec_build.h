/* SPDX-License-Identifier: GPL-2.0 */
/* rec_build.h: a counted record as the record written: IDs in hex, the process named, every frame named. */
#ifndef __REC_BUILD_H
#define __REC_BUILD_H

#include <stdint.h>

#include "cmd/output/rec.h"
#include "cmd/symbols/symbolizer.h"
#include "offsets/go_wall.h"
#include "container.h"
#include "counted.h"

/* What the writer needs to know about a process when it prints its records. */
struct agg_target {
	const char *comm;
	const char *service_name; /* NULL: unknown */
	const struct container_info *container; /* NULL: none known */
	struct symbolizer *sym; /* may be NULL: frames are then printed as addresses */
	uint64_t time_ns; /* the moment whose mappings name the frames */
	int64_t memprofile_rate; /* --alloc: its runtime.MemProfileRate; <= 0 when not known */
};

/* How counts become times: what one sample stands for, and the wall clock. */
struct rec_clock {
	uint64_t period_ns; /* CPU time of a CPU sample */
	uint64_t wall_period_ns; /* wall time of a --wall sample */
	int64_t mono_to_real_ns; /* bpf_ktime_get_ns() + this = CLOCK_REALTIME */
};

/* Buffers kept from one record to the next. */
struct rec_builder;

struct rec_builder *rec_builder__new(void);
void rec_builder__free(struct rec_builder *b); /* accepts NULL */

/*
 * C as the record written, into OUT, which points into B's buffers and C
 * until the next build: trace and span IDs in hex with their source,
 * labels as read, T's name and container, and C's stacks, most samples
 * first, every frame named through T's symbolizer, with the mappings that
 * hold them. REASONS names the wait reasons of C's binary (NULL: each is
 * "unknown"). -ENOMEM.
 */
int rec_builder__build(struct rec_builder *b, const struct counted *c, const struct agg_target *t,
		       const struct rec_clock *clk, const struct go_wall_layout *reasons,
		       struct rec *out);

#endif /* __REC_BUILD_H */
