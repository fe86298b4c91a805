/* SPDX-License-Identifier: GPL-2.0 */
/* session_config.h: what the user asked of a recording, read by the session and the modules it holds. */
#ifndef __SESSION_CONFIG_H
#define __SESSION_CONFIG_H

#include <stdbool.h>

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
	bool realtime; /* --realtime: the rings' reader thread runs SCHED_FIFO */
	const char *pprof;
	const char *html; /* --html FILE: the report page, written at exit */
	bool folded, folded_trace_root;
	bool folded_wall; /* -f writes wall records only */
	bool wall; /* --wall: every goroutine of each target, wall_hz times a second */
	unsigned long wall_hz;
	const char *pin_dir;
	const char *bpffs; /* where OBI pins otel/traces_ctx_v1 */
	bool obi_asked; /* --trace-sources named obi: no map is an error */
	bool sources_asked; /* --trace-sources given: a target that cannot have one is told */
	bool quiet; /* --quiet: no summary of the costliest traces at exit */
	const char *const *uprobes;
	int nuprobes;
	enum uprobe_abi uprobe_abi;
	int max_targets; /* at once: sizes the kernel's targets map */
	unsigned int trace_sources; /* bit 1 << TRACE_SOURCE_*: where trace IDs may come from */
	/* Go < 1.21: the goroutine-start probe's share of its process's CPU, and cap a second */
	double start_share;
	unsigned int max_starts;
	const struct otlp_export_config *otlp; /* --otlp: where profiles go, or NULL */
	const char *const *otlp_labels; /* --otlp-labels: the labels sent as attributes */
	int notlp_labels;
	bool otlp_labels_set; /* false: every label but the ID ones */
	const char *metrics_addr; /* --metrics-addr: where /metrics is served, or NULL */
};

#endif /* __SESSION_CONFIG_H */
