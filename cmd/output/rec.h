/* SPDX-License-Identifier: GPL-2.0 */
/* rec.h: one output record as C data, what every writer takes; as a JSON line, and back. */
#ifndef __REC_H
#define __REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "cmd/util/strbuf.h"
#include "writer.h"

struct rec_frame {
	const char *func; /* NULL: nothing names it, printed as PC in hex */
	const char *file; /* NULL when unknown; then no line either */
	int64_t line;
	uint64_t addr; /* the address looked up */
	uint64_t pc; /* as the stack holds it, for a frame nothing names */
	bool inlined;
};

/*
 * One sample of a stack, or one look of --wall at a goroutine, or one
 * request: the records' times_us, goids, weights (durations_us).
 */
struct rec_time {
	int64_t ns; /* CLOCK_REALTIME; a request's start */
	uint64_t goid; /* 0: none (a CPU sample outside any goroutine) */
	/* the samples it counts: 1, or the snapshots a wall look counts; a request's duration in ns */
	uint64_t weight;
};

/*
 * A record's times written at most (times_us, summed over its stacks):
 * samples past it are counted, not timed.
 */
#define REC_MAX_TIMES 100000

struct rec_stack {
	uint64_t samples;
	size_t nframes;
	const struct rec_frame *frames; /* leaf first */
	/* when its samples (wall: looks) were taken, in order, where kept; fewer than samples when not */
	size_t ntimes;
	const struct rec_time *times;
	/* REC_ALLOC: its sampled allocations, unbiased as Go's heap profile is */
	int64_t alloc_objects, alloc_bytes;
};

struct rec_mapping {
	uint64_t start, limit, offset;
	const char *file, *build_id;
};

/* A goroutine label: bytes as the target holds them, any bytes (writers make them valid UTF-8). */
struct rec_label {
	const uint8_t *key, *value;
	size_t key_len, value_len;
	bool cut; /* cut at the read limits: listed in "truncated" */
};

enum rec_origin {
	REC_SAMPLING,
	REC_WALL,
	REC_CUSTOM,
	REC_UPROBE,
	REC_REQUEST, /* the spans of a trace's requests: their starts, goroutines and durations */
	REC_ALLOC, /* allocations the Go runtime sampled (--alloc) */
};

/*
 * A record's request_goroutine: whether the goroutine is the one its
 * request runs on (it set its labels, or serves the request), or one the
 * request started; null when not known, or without a trace ID.
 */
enum rec_role {
	REC_ROLE_NONE, /* null */
	REC_ROLE_REQUEST, /* true */
	REC_ROLE_STARTED, /* false */
};

struct rec {
	const char *trace_id, *trace_source, *span_id; /* NULL: null */
	/*
	 * The trace a goroutine only inherited, from a request that had ended
	 * (trace_id is then null); NULL: null
	 */
	const char *inherited_trace_id;
	/* request_goroutine: null, true or false */
	enum rec_role role;
	const struct rec_label *labels;
	size_t nlabels;
	bool more_labels;
	bool labels_distinct; /* no two keys read alike (a record read from JSON): no search needed */
	uint32_t pid;
	const uint8_t *comm;
	size_t comm_len;
	const char *service_name; /* NULL: null */
	const char *container_id, *pod_uid; /* NULL: null */
	int64_t ns_pid; /* 0: null */
	enum rec_origin origin;
	uint64_t samples;
	int64_t cpu_ns; /* < 0: null (events, wall records) */
	int64_t wall_ns; /* REC_WALL only */
	int64_t elapsed_ns; /* REC_REQUEST only: its requests' durations, added */
	uint64_t observed; /* REC_WALL only: the looks behind samples */
	int64_t alloc_objects, alloc_bytes; /* REC_ALLOC only: its stacks', added */
	const char *state, *wait_reason; /* REC_WALL only; wait_reason NULL: null */
	int64_t start_ns, end_ns; /* CLOCK_REALTIME */
	const struct rec_stack *stacks;
	size_t nstacks;
	const struct rec_mapping *mappings;
	size_t nmappings;
	/* REC_CUSTOM and REC_UPROBE */
	uint64_t context;
	uint32_t tid;
	bool has_goid;
	uint64_t goid;
};

/* "sampling", "wall", "custom", "uprobe", "request", "alloc" */
const char *rec_origin__name(enum rec_origin o);

/*
 * Appends R as one JSON line, with its newline, to B: every string made
 * valid UTF-8 (U+FFFD for invalid bytes), escaped as JSON wants. -ENOMEM.
 */
int rec__json(const struct rec *r, struct strbuf *b);

/* JSON lines, the default output: rec__json's lines to *D->stream, flushed at each interval's end. */
extern const struct writer_ops json_lines_writer;

/* R's labels as the JSON object rec__json writes, appended to B. -ENOMEM. */
int rec__json_labels(const struct rec *r, struct strbuf *b);

/*
 * Labels as a JSON object keeps them: a key that reads like an earlier
 * one once made valid UTF-8 is no label of its own (SIZE_MAX), and the
 * first of such keys takes the last one's value: the index of that value.
 */
size_t rec__label_value(const struct rec *r, size_t i);

/* S[0..LEN) as a C string of valid UTF-8 in B (U+FFFD for invalid bytes; an inner NUL ends it). */
const char *rec__valid(struct strbuf *b, const uint8_t *s, size_t len);

/* What rec__from_json allocated for one record. */
struct rec_mem {
	void *blocks[8];
	size_t n;
};
void rec_mem__free(struct rec_mem *m);

/*
 * Fills R from O, a record as ctxprof-go writes it, checking everything the
 * writers read, so that a bad record is taken whole or not at all. R points
 * into O and M, which must outlive it. -EINVAL with the reason in ERR.
 */
int rec__from_json(json_t *o, struct rec *r, struct rec_mem *m, char *err, size_t errlen);

#endif /* __REC_H */
