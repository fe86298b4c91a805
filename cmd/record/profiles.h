/* SPDX-License-Identifier: GPL-2.0 */
/* profiles.h: the encoders a recording feeds besides JSON lines: --pprof, -f, --html, --otlp and the exit's summary. */
#ifndef __PROFILES_H
#define __PROFILES_H

#include <stdint.h>
#include <stdio.h>

#include "cmd/output/otlp.h"
#include "cmd/output/otlp_export.h"

struct profiles;
struct rec;
struct session_config;

/*
 * The encoders CFG asks for (CFG outlives them), and --otlp's thread that
 * sends a request each interval; PERIOD_NS is what a CPU sample stands
 * for. NULL with errno and a message on stderr.
 */
struct profiles *profiles__new(const struct session_config *cfg, uint64_t period_ns);
/* Stops the export thread, dropping what it holds, and frees. Accepts NULL. */
void profiles__free(struct profiles *p);
/* R into each; -ENOMEM. */
int profiles__add(struct profiles *p, const struct rec *r);

/* --otlp: what a process is, for its resource. */
void profiles__set_processes(struct profiles *p, otlp_process_fn fn, void *ctx);
/* --otlp: the records added since the last call, as one request to the export thread; -ENOMEM. */
int profiles__send(struct profiles *p);
/* --otlp: what is queued goes out within the flush time, the rest counted; then the thread ends. */
void profiles__stop_export(struct profiles *p);
/* --otlp's totals: the export thread's so far, or what it left when it stopped. */
void profiles__otlp_totals(const struct profiles *p, struct otlp_export_stats *st);
/* --otlp's encoder, for what it left out; NULL without --otlp. */
struct otlp *profiles__otlp(const struct profiles *p);

/* -f's stacks to stdout, --pprof's profile and --html's page; each said; 0 or the first -errno. */
int profiles__write(struct profiles *p);
/* The costliest NTRACES traces by CPU and by wall time, unless --quiet, in WIDTH columns. */
void profiles__summary(const struct profiles *p, FILE *f, int ntraces, int width);

#endif /* __PROFILES_H */
