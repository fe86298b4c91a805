/* SPDX-License-Identifier: GPL-2.0 */
/* aggregate_priv.h: what the aggregate files share; no other module includes it. */
#ifndef __AGGREGATE_PRIV_H
#define __AGGREGATE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/ctxprof.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/vec.h"
#include "aggregate.h"
#include "counted.h"
#include "goid_stacks.h"
#include "rec_build.h"
#include "trace_ids.h"

struct aggregate {
	struct trace_keys keys; /* the labels that hold the IDs */
	bool no_labels, no_traceparent, no_otel, no_obi; /* --trace-sources without them */
	struct rec_clock clock; /* what a sample stands for, and the wall clock */
	uint64_t max_times[2]; /* sample times kept an interval at most: CPU, wall; 0: none */
	uint64_t times_left[2]; /* of them, in this interval: CPU, wall */
	uint64_t gen; /* of filled slots: 1 */
	struct hashmap *records; /* record key -> struct counted */
	struct hashmap *cpus; /* cpu number -> struct cpu_labels */
	struct hashmap *reasons; /* pid -> struct go_wall_layout, for its wait reasons' names */
	struct hashmap *pids; /* pid -> struct agg_pid_stats: what each process's samples were */
	struct agg_stats stats;
	agg_lookup_fn repair_lookup;
	void *repair_ctx;
	bool repair; /* put frameless leaves' callers back */
	struct writers *writers; /* where records go */
	agg_progress_fn progress;
	void *progress_ctx;
	struct rec_builder *build;
	/* --wall: the goroutines' latest CPU stacks, for those found running */
	struct goid_stacks *running;
	/* requests begun and not yet ended: {tgid, goid, epoch} -> struct open_span */
	struct hashmap *open_spans;
	/* requests ended since the last flush, struct ended_span each: counted there */
	struct vec ended;
	/*
	 * The traces the profile has, {pid, trace ID} -> the flush that last
	 * counted a sample of theirs: only their requests are written
	 */
	struct hashmap *sampled;
	uintptr_t flushes;
};

/*
 * Calls run one way (tests/layering.sh): aggregate.c calls the three
 * others, agg_requests.c calls agg_counted.c, and none calls back.
 */

/* agg_event.c: an event read into its record's identity and its stack; -EINVAL: malformed. */
int agg_event__parse(struct aggregate *a, const struct sample_event *e, size_t size,
		     struct counted *tmp, const uint64_t **stack, size_t *nframes, uint64_t *buf);
/* R's trace as the request's lifetime has it: the goroutine's own, inherited, or none. */
void agg_event__judge(struct aggregate *a, const struct sample_event *e, struct counted *r,
		      const uint64_t *stack, size_t nframes);

/* agg_counted.c: the key R is found by in a.records, into BUF (MAX_COUNTED_KEY); its length. */
#define MAX_COUNTED_KEY (16 + TRACE_ID_LEN + SPAN_ID_LEN + MAX_LABELS * sizeof(struct go_label))
size_t agg_counted__key(const struct counted *r, uint8_t *buf);
/* A struct counted, with its stacks; accepts NULL. */
void agg_counted__free(void *p);
bool agg_counted__keep_time(struct aggregate *a, struct counted_stack *cs, bool wall,
			    uint64_t time_ns, uint64_t goid, uint64_t weight);

/* agg_requests.c: its maps made, 0 or -ENOMEM; aggregate__free frees what was made. */
int agg_requests__init(struct aggregate *a);
void agg_requests__free(struct aggregate *a);
/*
 * The flush's first step: spans open too long forgotten, the traces this
 * flush has samples of marked, and the requests ended since the last one
 * counted into the request records of the traces sampled. 0 or -ENOMEM.
 */
int agg_requests__flush(struct aggregate *a);

#endif /* __AGGREGATE_PRIV_H */
