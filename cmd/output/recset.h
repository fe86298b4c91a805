/* SPDX-License-Identifier: GPL-2.0 */
/* recset.h: a whole run's records, kept compact (names, frames and label sets once), for writers that need them all at once. */
#ifndef __RECSET_H
#define __RECSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec.h"
#include "writer.h"

struct recset;

/* An interned string: its bytes, valid UTF-8 (rec__valid), NUL-terminated. */
struct recset_str {
	const char *s;
	size_t len;
};

/* One frame as the writers show it: a function, and where in it. */
struct recset_frame {
	uint32_t func; /* string */
	int32_t file; /* string, -1: unknown */
	int64_t line;
};

struct recset_stack {
	uint64_t samples;
	uint32_t nframes, ntimes;
	const uint32_t *frames; /* leaf first */
	const struct rec_time *times; /* in time order, where kept */
	int64_t alloc_objects, alloc_bytes; /* alloc records' */
};

/* A sampling, wall or alloc record. Strings are indices, -1 for null. */
struct recset_rec {
	int32_t trace_id, trace_source, span_id, comm, service, container_id, pod_uid;
	int32_t inherited; /* inherited_trace_id */
	enum rec_role role; /* request_goroutine */
	uint32_t input; /* which input it came from (recset__input), 0 for the first */
	int32_t labels; /* the label set: recset__labelsets()'s index */
	int32_t state, wait_reason; /* wall records */
	uint32_t pid;
	uint32_t trace; /* its trace: recset__traces()'s index */
	enum rec_origin origin;
	uint64_t samples;
	int64_t cpu_ns, wall_ns; /* -1 where the record has none */
	int64_t alloc_objects, alloc_bytes; /* -1 where the record has none */
	int64_t start_ns, end_ns;
	uint32_t nstacks;
	const struct recset_stack *stacks;
};

/* A trace's ID in recset_trace: the samples without one, those a goroutine only inherited. */
#define RECSET_NO_TRACE (-1)
#define RECSET_INHERITED (-2)

/*
 * The records of one trace ID (one, too, for those without, and one for
 * the time goroutines spent after their request ended: inherited).
 */
struct recset_trace {
	int32_t trace_id; /* string, or RECSET_NO_TRACE, RECSET_INHERITED */
	int64_t cpu_ns, wall_ns, first_ns, last_ns;
	int64_t alloc_objects, alloc_bytes; /* its alloc records' (--alloc) */
	uint64_t frames, times; /* what its stacks hold */
	bool full; /* chosen by recset__choose */
};

/* One request of a trace, from a request record: when it was in flight, and on which goroutine. */
struct recset_request {
	uint32_t trace; /* recset__traces()'s index */
	uint32_t input, pid;
	int32_t service; /* string: as the report names services (service_name, else comm) */
	uint64_t goid;
	int64_t start_ns, dur_ns;
};

struct recset *recset__new(void);
/* As a writer's new, add and free (writer.h), for the writers of a whole run's records. */
void *recset__writer_new(const struct writer_dest *d);
int recset__writer_add(void *w, const struct rec *r);
void recset__writer_free(void *w);
void recset__free(struct recset *rs);

/*
 * Copies R, a sampling, wall or alloc record, or a request record's
 * requests (event records are counted and left out). 0 or -ENOMEM.
 */
int recset__add(struct recset *rs, const struct rec *r);

/*
 * The records added from now on come from the input NAME (a file, on its
 * host's clock): its index, or -ENOMEM. Without a call, one unnamed input.
 */
int recset__input(struct recset *rs, const char *name);
/* The inputs' names, in order. */
const char *const *recset__inputs(const struct recset *rs, size_t *n);
/* N records that came again in a later input (a file read twice) were left out: said on the page. */
void recset__duplicates(struct recset *rs, uint64_t n);
uint64_t recset__duplicate_count(const struct recset *rs);

const struct recset_str *recset__strings(const struct recset *rs, size_t *n);
/* Label sets, each the JSON object of a record's labels (rec__json_labels), once. */
const struct recset_str *recset__labelsets(const struct recset *rs, size_t *n);
const struct recset_frame *recset__frames(const struct recset *rs, size_t *n);
const struct recset_rec *recset__records(const struct recset *rs, size_t *n);
const struct recset_trace *recset__traces(const struct recset *rs, size_t *n);
/* Every request of every trace, from the request records recset__add took. */
const struct recset_request *recset__requests(const struct recset *rs, size_t *n);
/* Event records (custom, uprobe) that recset__add left out. */
uint64_t recset__events(const struct recset *rs);
/* The CPU and wall time of one sample, from the records (0 when none had it). */
int64_t recset__cpu_period(const struct recset *rs);
int64_t recset__wall_period(const struct recset *rs);

/*
 * Marks the costliest traces (CPU plus wall time, most first; among
 * equals, the most allocated bytes) full, up to
 * MAX_TRACES of them, whose stacks hold at most MAX_FRAMES frames and
 * MAX_TIMES times in all: the rest are left for their totals. ORDER, when
 * not NULL, gets every trace's index, costliest first (room for them all).
 * The number marked.
 */
size_t recset__choose(struct recset *rs, size_t max_traces, uint64_t max_frames,
		      uint64_t max_times, uint32_t *order);

#endif /* __RECSET_H */
