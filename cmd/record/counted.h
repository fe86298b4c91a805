/* SPDX-License-Identifier: GPL-2.0 */
/* counted.h: what aggregate counts for one (pid, trace ID, label set): its identity and its stacks. */
#ifndef __COUNTED_H
#define __COUNTED_H

#include <stdint.h>

#include "bpf/ctxprof.h"
#include "cmd/util/hashmap.h"
#include "trace_ids.h"

/* Its flags: whether the goroutine had more labels, and which IDs its labels hold. */
#define COUNTED_F_LABELS_CUT SAMPLE_F_LABELS_CUT
#define COUNTED_F_TRACE (1U << 16) /* trace_id holds a packed 32-hex trace ID */
#define COUNTED_F_SPAN (1U << 17) /* span_id holds a packed 16-hex span ID */
#define COUNTED_F_TRACEPARENT (1U << 18) /* both came from the request's traceparent */
#define COUNTED_F_OTEL (1U << 19) /* both came from a span the OpenTelemetry SDK records */
#define COUNTED_F_OBI (1U << 20) /* both came from OBI's trace for the thread */
#define COUNTED_F_CONTEXT (COUNTED_F_TRACEPARENT | COUNTED_F_OTEL | COUNTED_F_OBI)
/*
 * The goroutine only inherited the trace, from a request that ended (its
 * setter left the labels, or the goroutine that started it moved on):
 * written as inherited_trace_id, not as the trace's
 */
#define COUNTED_F_INHERITED (1U << 21)
/*
 * Whether the goroutine is the one its request runs on (it set its labels
 * itself, or serves the request), with COUNTED_F_ROLE when that is known
 */
#define COUNTED_F_ROLE (1U << 22)
#define COUNTED_F_OWN (1U << 23)
/*
 * A request record: the spans of a trace's requests, each one's start, its
 * goroutine and its duration (struct counted_time's weight) in its stack
 */
#define COUNTED_F_REQUEST (1U << 24)
/* --alloc: allocations the runtime sampled, each stack's sizes added (counted_stack.bytes) */
#define COUNTED_F_ALLOC (1U << 25)

struct counted {
	uint32_t pid;
	uint32_t flags;
	uint32_t wall; /* ORIGIN_WALL records: state | wait reason << 8; 0 for CPU samples */
	uint8_t trace_id[TRACE_ID_LEN]; /* from the labels or the traceparent */
	uint8_t span_id[SPAN_ID_LEN];
	uint32_t nlabels;
	uint32_t refs; /* agg_slots that point at it: it is kept while they do */
	uint64_t samples;
	uint64_t observed; /* ORIGIN_WALL: the goroutine looks behind samples, each counting its weight */
	uint64_t elapsed_ns; /* COUNTED_F_REQUEST: its requests' durations, added */
	uint64_t first_ns, last_ns;
	struct hashmap *stacks; /* frames (u64 array) -> struct counted_stack */
	/* sorted by key, then value; last, so that a record kept has room for its NLABELS only */
	struct go_label labels[MAX_LABELS];
};

/* One sample, or one wall look, of a stack: when, of which goroutine, and what it counts. */
struct counted_time {
	uint64_t time_ns; /* bpf_ktime_get_ns() */
	uint64_t goid; /* 0: no goroutine (g0's own CPU) */
	uint64_t weight; /* samples: 1 for a CPU sample, the snapshots a wall look counts */
};

/* What one stack of a record counted: its samples, and when each was taken (up to the bounds). */
struct counted_stack {
	uint64_t count; /* first: agg_slot points at it */
	uint64_t bytes; /* COUNTED_F_ALLOC: the sizes of its sampled allocations, added */
	/*
	 * When it was first counted: its addresses are named with the
	 * mappings of that moment (0: the record's time), since a record can
	 * span an exec whose new program maps other addresses
	 */
	uint64_t seen_ns;
	struct counted_time *times;
	uint32_t ntimes, cap;
	uint32_t refs; /* agg_slots that point at it */
};

/* The bytes of a label's key and value that were read: the rest of each buffer is slack. */
void counted_stack__free(void *p);

static inline size_t label_key_bytes(const struct go_label *l)
{
	return l->key_len < MAX_KEY_LEN ? l->key_len : MAX_KEY_LEN;
}

static inline size_t label_value_bytes(const struct go_label *l)
{
	return l->value_len < MAX_VALUE_LEN ? l->value_len : MAX_VALUE_LEN;
}

#endif /* __COUNTED_H */
