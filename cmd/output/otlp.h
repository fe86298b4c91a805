/* SPDX-License-Identifier: GPL-2.0 */
/* otlp.h: records as OTLP profiles (profiles/v1development of opentelemetry-proto 1.10 and 1.11), one request per interval. */
#ifndef __OTLP_H
#define __OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rec.h"

/* Per-sample times a request carries at most (8 bytes each); past them, counts alone. */
#define OTLP_MAX_TIMES 1000000

/* What a process is beyond its records; the recording knows it, the encoder asks. NULL: unknown. */
struct otlp_process {
	const char *service_name; /* its OTEL_SERVICE_NAME, else its executable's name */
	const char *exe_path; /* /proc/PID/exe */
	const char *go_version; /* "go1.24.4" */
};
/* Fills OUT for PID; false when nothing is known (the records still name it). */
typedef bool (*otlp_process_fn)(void *ctx, uint32_t pid, struct otlp_process *out);

/* What one request holds. */
struct otlp_batch {
	uint64_t records, samples; /* records taken, and the samples they count */
	uint64_t resources; /* processes */
};

struct otlp;

/*
 * An encoder. VERSION names ctxprof-go in the instrumentation scope;
 * CPU_PERIOD_NS and WALL_PERIOD_NS (0 without --wall) are what one CPU and
 * one wall sample stand for.
 */
struct otlp *otlp__new(const char *version, uint64_t cpu_period_ns, uint64_t wall_period_ns);
void otlp__free(struct otlp *o); /* accepts NULL */

/* A resource attribute of every process (host.name, OTEL_RESOURCE_ATTRIBUTES); copied. -ENOMEM. */
int otlp__set_attribute(struct otlp *o, const char *key, const char *value);
void otlp__set_processes(struct otlp *o, otlp_process_fn fn, void *ctx);

/*
 * Takes R's samples into the request being built: sampling records into
 * the CPU profile, wall records into the wall profile; events (custom,
 * uprobe) are no profile and are left out. -ENOMEM.
 */
int otlp__add(struct otlp *o, const struct rec *r);

/*
 * Everything added since the last call as one ExportProfilesServiceRequest,
 * packed into *BUF (malloc'd; *LEN bytes), and what it holds into WHAT;
 * *BUF is NULL when nothing was added. Starts a new request. -ENOMEM.
 */
int otlp__take(struct otlp *o, uint8_t **buf, size_t *len, struct otlp_batch *what);

#endif /* __OTLP_H */
