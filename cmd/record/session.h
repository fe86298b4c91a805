/* SPDX-License-Identifier: GPL-2.0 */
/* session.h: one recording: its BPF programs, a target set that grows and shrinks, the run loop and the report. */
#ifndef __SESSION_H
#define __SESSION_H

#include <stdbool.h>
#include <sys/types.h>

#include "cmd/output/otlp_export.h"
#include "custom.h"

/* What the user asked for; the strings must outlive the session. */
struct session_config {
	bool sampling; /* CPU samples of targets (cpu-clock perf events on every CPU) */
	bool all; /* every Go process: those running now, and each one that execs later */
	const char *cgroup; /* only processes in this cgroup v2 directory's subtree, or NULL */
	unsigned long freq; /* Hz */
	double duration; /* seconds; 0: until stopped */
	double interval; /* seconds between flushes */
	const char *output; /* -o FILE, or NULL for stdout */
	bool append; /* add to FILE rather than truncate it */
	const char *const *trace_keys; /* in order of preference */
	int ntrace_keys;
	bool traced_only;
	bool leaf_repair;
	bool verbose;
	unsigned long ring_kib; /* per CPU */
	const char *pprof;
	const char *html; /* --html FILE: the report page, written at exit */
	bool folded, folded_trace_root;
	bool folded_wall; /* -f writes wall records only */
	bool wall; /* --wall: every goroutine of each target, wall_hz times a second */
	unsigned long wall_hz;
	const char *pin_dir;
	const char *bpffs; /* where OBI pins otel/traces_ctx_v1 */
	bool obi_asked; /* --trace-sources named obi: no map is an error */
	bool quiet; /* --quiet: no summary of the costliest traces at exit */
	const char *const *uprobes;
	int nuprobes;
	enum uprobe_abi uprobe_abi;
	int max_targets; /* at once: sizes the kernel's targets map */
	unsigned int trace_sources; /* bit 1 << TRACE_SOURCE_*: where trace IDs may come from */
	const struct otlp_export_config *otlp; /* --otlp: where profiles go, or NULL */
	const char *const *otlp_labels; /* --otlp-labels: the labels sent as attributes */
	int notlp_labels;
	bool otlp_labels_set; /* false: every label but the ID ones */
	const char *metrics_addr; /* --metrics-addr: where /metrics is served, or NULL */
};

struct session;

/*
 * Opens the output, loads and attaches what CFG needs (only that: the
 * verifier's time is start-up time), and starts following the host's
 * mappings. Targets come after. NULL with a message on stderr.
 */
struct session *session__new(const struct session_config *cfg);
/* Stops everything still running and frees the session. Accepts NULL. */
void session__free(struct session *s);

/*
 * Checks PID as `check` does and starts sampling it: its layout into the
 * kernel's targets map, its mappings read now. -errno with a message on
 * stderr naming the process and the reason.
 */
int session__add_target(struct session *s, pid_t pid);
/* Stops sampling PID; WHY ("exited", ...) goes into a note on stderr. */
void session__remove_target(struct session *s, pid_t pid, const char *why);
/* Targets being sampled now. */
int session__ntargets(const struct session *s);

/*
 * --all: every Go process running now (from /proc), each binary checked
 * once. Later ones are added as they exec, by session__run.
 */
void session__discover(struct session *s);

/*
 * Says it is ready ("...; Ctrl-C to stop") and records until the duration
 * ends, SIGINT or SIGTERM, a failure that loses data, or, when END_WITH_TARGETS,
 * the last target is gone. Then stops the probes, reads what is in flight,
 * writes the last records and the statistics. 0, or -errno: the exit
 * status must say that data was lost.
 */
int session__run(struct session *s, bool end_with_targets);

#endif /* __SESSION_H */
