/* SPDX-License-Identifier: GPL-2.0 */
/* aggregate.h: counts samples per (pid, trace ID, label set, stack), and hands the records to the writers. */
#ifndef __AGGREGATE_H
#define __AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/ctxprof.h"
#include "cmd/output/rec.h"
#include "cmd/output/writer.h"
#include "offsets/go_wall.h"
#include "rec_build.h"

struct aggregate;

/* Fills OUT for PID as of TIME_NS (bpf_ktime_get_ns()); false when it knows nothing. */
typedef bool (*agg_lookup_fn)(void *ctx, uint32_t pid, uint64_t time_ns, struct agg_target *out);

/*
 * PERIOD_NS is the CPU time one sample stands for; MONO_TO_REAL_NS turns
 * bpf_ktime_get_ns() times into wall-clock times.
 */
struct aggregate *aggregate__new(uint64_t period_ns, int64_t mono_to_real_ns);
void aggregate__free(struct aggregate *a);

/* Tracers' label keys (README, trace sources), most preferred first: the first present decides. */
#define AGG_DEFAULT_TRACE_KEYS "otel.traceid", "otel_traceid", "trace_id", "trace id"
#define AGG_DEFAULT_SPAN_KEYS "span_id", "otel.spanid", "span id"
/* Labels that hold IDs no record field carries: Datadog's ID of the local root span */
#define AGG_OTHER_ID_KEYS "local root span id"
/* Keys aggregate__id_keys gives at most. */
#define AGG_MAX_ID_KEYS (8 + MAX_TRACE_KEYS)

/*
 * Every label key that holds a trace or span ID: each convention's
 * (whatever --trace-key chose), then TRACE_KEYS', into OUT (room for
 * AGG_MAX_ID_KEYS). Their number.
 */
size_t aggregate__id_keys(const char *const *trace_keys, int ntrace, const char **out);

/*
 * The keys whose labels hold the trace ID (32 hex digits) and the span ID
 * (16 hex digits, or a decimal u64 as Datadog writes it), in order of preference; the arrays must outlive A.
 * Until set, the defaults above.
 */
/*
 * Which sources may give a record its trace ID (all by default): the
 * labels, and the traceparent of the request the goroutine serves or the
 * SDK span it runs in, taken only when the labels give none.
 */
void aggregate__set_sources(struct aggregate *a, bool labels, bool traceparent, bool otel, bool obi);

void aggregate__set_keys(struct aggregate *a, const char *const *trace_keys, size_t ntrace,
			 const char *const *span_keys, size_t nspan);

/*
 * LOOKUP names events' frames as they are counted: the runtime's own
 * goroutines are told by their first function, and take no request from
 * the goroutine that started them (as Go gives them no labels).
 */
void aggregate__set_lookup(struct aggregate *a, agg_lookup_fn lookup, void *ctx);
/*
 * Events that carry the words at SP (SAMPLE_F_TOP_WORDS) get the caller a
 * frame-pointer walk misses put back, through the target's symbolizer
 * (the lookup's), before they are counted: stacks stay exact keys.
 */
void aggregate__repair_leaves(struct aggregate *a, bool on);

/* Hands every record to WS's outputs, which must outlive A; it writes none itself. */
void aggregate__set_writers(struct aggregate *a, struct writers *ws);

/* Counts one event from the ring buffer; -EINVAL for a malformed one. */
int aggregate__add(struct aggregate *a, const void *data, size_t size);

/*
 * A request's span begins or ends (struct span_event): an end whose begin
 * came counts the request into its trace's request record (origin
 * request), which a flush writes when the trace has samples in the
 * profile (within the last few flushes). 0, -EINVAL for a malformed
 * event, -ENOMEM.
 */
int aggregate__add_span(struct aggregate *a, const void *data, size_t size);

/*
 * Keeps when each sample was taken, and of which goroutine, for records'
 * rec_stack.times (the records' times_us, OTLP's per-sample times), up to
 * MAX_CPU CPU samples and MAX_WALL wall looks an interval; 0: none (the
 * default). Past them, samples are counted without their time.
 */
/* What a recording keeps: an OTLP request carries as many (8 bytes each) */
#define AGG_MAX_TIMES 1000000
void aggregate__keep_times(struct aggregate *a, uint64_t max_cpu, uint64_t max_wall);

/*
 * --wall: the wall-clock time one ORIGIN_WALL sample stands for; from then
 * on a running goroutine's wall sample gets the stack of its CPU sample
 * nearest in time. 0 or -ENOMEM.
 */
int aggregate__set_wall_period(struct aggregate *a, uint64_t period_ns);
/* --wall: PID's names of wait reasons (W's, copied), for its records; 0 or -ENOMEM. */
int aggregate__name_reasons(struct aggregate *a, uint32_t pid, const struct go_wall_layout *w);

/*
 * Where an event was counted, so that the same goroutine, unchanged, is
 * counted again without its labels and stack being hashed again: --wall
 * finds thousands of parked goroutines as they were at the last snapshot.
 * A filled slot holds its record and stack: a flush writes and empties
 * them but keeps them, until aggregate__release_slot or another fill.
 */
struct agg_slot {
	uint64_t gen; /* 0: never filled */
	void *record, *stack;
};

/* Like aggregate__add, and fills SLOT with where the event went (releasing what it held). */
int aggregate__add_slot(struct aggregate *a, const void *data, size_t size, struct agg_slot *slot);
/* SLOT no longer holds its record and stack; it is left empty. */
void aggregate__release_slot(struct aggregate *a, struct agg_slot *slot);
/*
 * N more samples where SLOT points, from LOOKS looks at goroutine GOID (a
 * wall look counts the snapshots since its last one), the first at
 * FIRST_NS and the last at LAST_NS, taken at TIMES, each counting WEIGHTS
 * snapshots (LOOKS of each, or TIMES NULL when not known one by one). With
 * LOOKS 0, the N samples are the look just counted at FIRST_NS, which
 * counts them too. False when the slot is stale (add the event again).
 */
bool aggregate__repeat(struct aggregate *a, const struct agg_slot *slot, uint64_t n,
		       uint64_t looks, uint64_t first_ns, uint64_t last_ns, const uint64_t *times,
		       const uint64_t *weights, uint64_t goid);
/* What a filled slot's gen is: one of an empty slot (0) is not. */
uint64_t aggregate__gen(const struct aggregate *a);

/*
 * Hands an event of a custom trace or a uprobe (origin not ORIGIN_SAMPLING)
 * to the writers as a record of its own, at once: samples 1, cpu_ns
 * null, and its origin, context, tid and goid. -EINVAL for a malformed
 * event, -errno when the record could not be written.
 */
int aggregate__write_event(struct aggregate *a, const void *data, size_t size,
			   agg_lookup_fn lookup, void *ctx);

/*
 * While it writes many records, aggregate__flush calls FN every few dozen,
 * so that the caller can read its rings: samples added meanwhile count
 * towards the next flush. Other long work that feeds the aggregate (adding
 * hundreds of targets) calls it through aggregate__progress.
 */
typedef void (*agg_progress_fn)(void *ctx);
void aggregate__set_progress(struct aggregate *a, agg_progress_fn fn, void *ctx);
void aggregate__progress(struct aggregate *a);

/*
 * Hands the writers one record per (pid, trace ID, label set) counted
 * since the last flush, most samples first, flushes them, and starts over.
 * Returns the number of records, or -errno when one could not be written
 * (a writer refused it, or its flush failed): the rest are dropped and
 * counted as unwritten.
 */
int aggregate__flush(struct aggregate *a, agg_lookup_fn lookup, void *ctx);

/* Totals since creation. */
struct agg_stats {
	uint64_t samples;
	uint64_t traced; /* with a trace ID */
	uint64_t inherited; /* with a trace inherited from a request that ended: no trace ID */
	uint64_t read_errors; /* the label walk failed; counted without labels */
	uint64_t unresolved; /* repeated a label set whose full event was lost */
	uint64_t malformed; /* events that did not parse */
	uint64_t repaired; /* stacks whose leaf's caller was put back */
	uint64_t events; /* custom-trace and uprobe events written */
	uint64_t records;
	uint64_t unwritten; /* records a failed write left out */
	uint64_t wall_samples; /* --wall: goroutines counted, snapshot by snapshot */
	uint64_t alloc_samples; /* --alloc: allocations the runtime sampled, counted */
	uint64_t wall_running; /* --wall: goroutines looked at while running, a CPU's */
	uint64_t wall_running_framed; /* of those, given the stack of a CPU sample of theirs */
	uint64_t requests; /* requests whose span began and ended */
	uint64_t requests_unsampled; /* of them, of traces without samples: not written */
};
void aggregate__stats(const struct aggregate *a, struct agg_stats *out);

/* One process's CPU samples, with and without a trace ID; its name as its records gave it. */
struct agg_pid_stats {
	uint32_t pid;
	char comm[16];
	uint64_t samples, traced, inherited;
};
/* PID's CPU samples so far: 0 when it had none. */
uint64_t aggregate__pid_samples(const struct aggregate *a, uint32_t pid);
/* Calls FN on every process that had samples, in no particular order. */
void aggregate__pids(const struct aggregate *a, void (*fn)(const struct agg_pid_stats *p, void *ctx),
		     void *ctx);

#endif /* __AGGREGATE_H */
