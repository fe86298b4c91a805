/* SPDX-License-Identifier: GPL-2.0 */
/* session_config.h: what the user asked of a recording, parsed once, read by each module for its own part. */
#ifndef __SESSION_CONFIG_H
#define __SESSION_CONFIG_H

#include <stdbool.h>
#include <sys/types.h>

#include "bpf/ctxprof.h"
#include "cmd/output/otlp_export.h"
#include "custom.h"

/* -p's processes at most */
#define MAX_TARGETS 4096
/* --otlp-labels' labels at most */
#define MAX_OTLP_LABELS 64

/*
 * What the user asked for, as the command line parses it; the strings
 * must outlive the session. A module reads its own members: none is
 * copied into another module's settings.
 */
struct session_config {
	/* what is recorded */
	pid_t pids[MAX_TARGETS]; /* -p, threads taken as their processes */
	int npids;
	bool all; /* every Go process: those running now, and each one that execs later */
	const char *cgroup; /* only processes in this cgroup v2 directory's subtree, or NULL */
	bool sampling; /* CPU samples of targets: -p or --all (cpu-clock perf events) */
	int max_targets; /* at once: sizes the kernel's targets map */
	unsigned long freq; /* Hz */
	double duration; /* seconds; 0: until stopped */
	double interval; /* seconds between flushes */
	bool wall; /* --wall: every goroutine of each target, wall_hz times a second */
	unsigned long wall_hz;
	bool alloc; /* --alloc: the allocations each target's runtime samples */
	double alloc_share; /* of a target's CPU its allocation probe may spend, 0 to 1 */
	bool leaf_repair; /* frameless leaves' callers put back (--no-leaf-repair: off) */
	int verbose; /* -v: details; -vv: libbpf's messages too */
	bool quiet; /* --quiet: no summary of the costliest traces at exit */
	unsigned long ring_kib; /* per CPU */
	bool realtime; /* --realtime: the rings' reader thread runs SCHED_FIFO */
	/* trace IDs */
	const char *trace_keys[MAX_TRACE_KEYS]; /* in order of preference */
	int ntrace_keys;
	bool traced_only;
	unsigned int trace_sources; /* bit 1 << TRACE_SOURCE_*: where trace IDs may come from */
	bool sources_asked; /* --trace-sources given: a target that cannot have one is told */
	bool obi_asked; /* --trace-sources named obi: no map is an error */
	const char *bpffs; /* where OBI pins otel/traces_ctx_v1 */
	/* Go < 1.21: the goroutine-start probe's share of its process's CPU, and cap a second */
	double start_share;
	unsigned long max_starts; /* ULONG_MAX: no cap */
	/* custom traces */
	const char *pin_dir;
	const char *uprobes[MAX_UPROBES];
	int nuprobes;
	enum uprobe_abi uprobe_abi;
	/* outputs */
	const char *output; /* -o FILE, or NULL for stdout */
	bool append; /* add to FILE rather than truncate it */
	const char *pprof;
	const char *html; /* --html FILE: the report page, written at exit */
	bool folded, folded_trace_root;
	bool folded_wall; /* -f writes wall records only */
	bool folded_alloc; /* -f writes alloc records only, weighed by bytes */
	const char *otlp_url; /* --otlp URL */
	unsigned long otlp_queue; /* --otlp-queue; 0: the default */
	struct otlp_export_config otlp; /* with the environment's; url NULL: no export */
	char *otlp_labels_buf; /* --otlp-labels, split in place */
	const char *otlp_labels[MAX_OTLP_LABELS]; /* the labels sent as attributes */
	int notlp_labels;
	bool otlp_labels_set; /* false: every label but the ID ones */
	const char *metrics_addr; /* --metrics-addr: where /metrics is served, or NULL */
};

/* Is the goroutine-start probe (Go < 1.21) asked for? */
static inline bool session_config__starts_probed(const struct session_config *c)
{
	return c->start_share > 0 && c->max_starts;
}

#endif /* __SESSION_CONFIG_H */
