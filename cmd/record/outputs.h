/* SPDX-License-Identifier: GPL-2.0 */
/* outputs.h: the writers a recording feeds, as its configuration asks: JSON lines, --pprof, -f, --html, --otlp and the exit's summary. */
#ifndef __OUTPUTS_H
#define __OUTPUTS_H

#include <stdint.h>
#include <stdio.h>

#include "cmd/output/otlp.h"
#include "cmd/output/otlp_export.h"
#include "cmd/output/writer.h"

struct outputs;
struct session_config;

/*
 * The writers CFG asks for (CFG outlives them): JSON lines to *OUT (a
 * stream its owner may replace), unless -f alone writes to stdout; and
 * --otlp's thread that sends a request each interval. PERIOD_NS is what a
 * CPU sample stands for. NULL with errno and a message on stderr.
 */
struct outputs *outputs__new(const struct session_config *cfg, uint64_t period_ns, FILE **out);
/* Stops the export thread, dropping what it holds, and frees. Accepts NULL. */
void outputs__free(struct outputs *o);
/* The writers, for the aggregator to hand records to. */
struct writers *outputs__writers(struct outputs *o);

/* --otlp: what a process is, for its resource. */
void outputs__set_processes(struct outputs *o, otlp_process_fn fn, void *ctx);
/* --otlp: what is queued goes out within the flush time, the rest counted; then the thread ends. */
void outputs__stop_export(struct outputs *o);
/* --otlp's totals: the export thread's so far, or what it left when it stopped. */
void outputs__otlp_totals(const struct outputs *o, struct otlp_export_stats *st);
/*
 * --otlp, once the thread has stopped: samples that never reached the
 * collector (dropped for any cause) or that it rejected are a failure, as
 * records not written are: said in one line, -EIO; else 0.
 */
int outputs__otlp_failed(const struct outputs *o);
/* --otlp's encoder, for what it left out; NULL without --otlp. */
struct otlp *outputs__otlp(const struct outputs *o);

/*
 * A warning on stderr when every output is the null device and no OTLP
 * endpoint is set: the records go nowhere. OUT is the JSON lines' stream.
 */
void outputs__warn_if_nowhere(const struct outputs *o, FILE *out);
/* -f's stacks to stdout, --pprof's profile and --html's page; each said; 0 or the first -errno. */
int outputs__write(struct outputs *o);
/* The costliest NTRACES traces by CPU and by wall time, unless --quiet, in WIDTH columns. */
void outputs__summary(const struct outputs *o, FILE *f, int ntraces, int width);

#endif /* __OUTPUTS_H */
