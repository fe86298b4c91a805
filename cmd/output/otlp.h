/* SPDX-License-Identifier: GPL-2.0 */
/* otlp.h: records as OTLP profiles (profiles/v1development of opentelemetry-proto 1.10 and 1.11), one request per interval. */
#ifndef __OTLP_H
#define __OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec.h"

/*
 * Attribute names one series carries at most, resource and sample
 * attributes together: Pyroscope refuses a series of more than 30 label
 * names, and adds four of its own (__name__, __delta__, __otel__,
 * service_name). Goroutine labels get what the resource and our own sample
 * attributes leave.
 */
#define OTLP_MAX_ATTRIBUTES 25
/* Our own sample attributes, reserved in every series: trace_source, state, wait_reason. */
#define OTLP_OWN_ATTRIBUTES 3

/* A resource attribute a process gives of itself: a string, an integer, a boolean or a double. */
enum otlp_kind { OTLP_STRING, OTLP_INT, OTLP_BOOL, OTLP_DOUBLE };
struct otlp_attr {
	const char *key;
	enum otlp_kind kind;
	const char *str; /* OTLP_STRING */
	int64_t num; /* OTLP_INT; OTLP_BOOL: 0 or 1 */
	double dbl; /* OTLP_DOUBLE */
};

/* What a process is beyond its records; the recording knows it, the encoder asks. NULL: unknown. */
struct otlp_process {
	const char *exe_path; /* /proc/PID/exe */
	const char *go_version; /* "go1.24.4" */
	/* its process context's resource (OTEP 4719), ahead of every other attribute */
	const struct otlp_attr *attrs;
	size_t nattrs;
	/* --alloc: its runtime.MemProfileRate, the period of its allocation profiles; <= 0: unknown */
	int64_t memprofile_rate;
};
/* Fills OUT for PID; false when nothing is known (the records still name it). */
typedef bool (*otlp_process_fn)(void *ctx, uint32_t pid, struct otlp_process *out);

/* What one request holds. */
struct otlp_batch {
	uint64_t records, samples; /* records taken, and the samples they count */
	uint64_t resources; /* processes */
};

/* What the encoder left out, over the whole run. */
#define OTLP_LEFT_OUT_NAMES 3
struct otlp_stats {
	uint64_t left_out_samples; /* samples sent without some of their labels: past the budget */
	uint64_t left_out_keys; /* distinct label keys left out at least once */
	const char *left_out_names[OTLP_LEFT_OUT_NAMES]; /* the first of them; NULL past the last */
};

struct otlp;

/*
 * An encoder. VERSION names ctxprof-go in the instrumentation scope;
 * CPU_PERIOD_NS and WALL_PERIOD_NS (0 without --wall) are what one CPU and
 * one wall sample stand for.
 */
struct otlp *otlp__new(const char *version, uint64_t cpu_period_ns, uint64_t wall_period_ns);
void otlp__free(struct otlp *o); /* accepts NULL */

/*
 * A resource attribute of every process (host.name, OTEL_RESOURCE_ATTRIBUTES);
 * copied. A process's own attribute of the same key wins. -ENOMEM.
 */
int otlp__set_attribute(struct otlp *o, const char *key, const char *value);
void otlp__set_processes(struct otlp *o, otlp_process_fn fn, void *ctx);

/*
 * Goroutine labels that hold trace or span IDs, under any convention read:
 * never attributes, since the link carries the IDs, and an attribute a
 * request would make a series a request at the backend. A label whose
 * value holds the record's trace or span ID (in hex, any case) is left
 * out whatever its key. KEYS copied. -ENOMEM.
 */
int otlp__set_id_keys(struct otlp *o, const char *const *keys, size_t n);
/*
 * --otlp-labels: the goroutine labels that become sample attributes, in
 * order of preference; the others are not sent. Without it, every label
 * but the ID ones, in key order. Either way, past the budget
 * (OTLP_MAX_ATTRIBUTES) the last ones are left out and counted. KEYS
 * copied. -ENOMEM.
 */
int otlp__set_labels(struct otlp *o, const char *const *keys, size_t n);

/*
 * Takes R's samples into the request being built: sampling records into
 * the CPU profile (samples/count, period cpu/nanoseconds), wall records
 * into the wall profile (wall/nanoseconds), allocation records into two
 * profiles, alloc_objects/count and alloc_space/bytes (period
 * memory/bytes, the process's rate); events (custom, uprobe) and requests
 * are no profile and are left out. Samples of one process with the same
 * stack, attributes and link are one sample. -ENOMEM.
 */
int otlp__add(struct otlp *o, const struct rec *r);

/*
 * Everything added since the last call as one ExportProfilesServiceRequest,
 * packed into *BUF (malloc'd; *LEN bytes), and what it holds into WHAT;
 * *BUF is NULL when nothing was added. Starts a new request. -ENOMEM.
 */
int otlp__take(struct otlp *o, uint8_t **buf, size_t *len, struct otlp_batch *what);

/* What was left out so far; the names are O's, valid until otlp__free. */
void otlp__stats(const struct otlp *o, struct otlp_stats *out);

#endif /* __OTLP_H */
