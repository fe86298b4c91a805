/* SPDX-License-Identifier: GPL-2.0 */
/* stats.h: what a recording says of itself: the statistics at exit and on SIGUSR1, hints where trace IDs are few, /metrics. */
#ifndef __STATS_H
#define __STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "cmd/output/otlp_export.h"
#include "ring_keeper.h"

struct aggregate;
struct metrics_http;
struct otlp;
struct processes;
struct session_config;
struct targets;
struct wall_stats;

/* A recording's counts as of now, gathered by its session. */
struct stats_view {
	const struct session_config *cfg;
	int stats_fd; /* the kernel's counters: the per-CPU array of enum stat_idx */
	struct aggregate *agg;
	struct targets *targets;
	struct processes *procs;
	bool per_task; /* the cpu-clock events follow the targets' threads */
	int nstart; /* targets when sampling began */
	const struct wall_stats *wall; /* --wall, or NULL */
	uint64_t wall_cpu_ns; /* this process's CPU time in --wall snapshots */
	uint64_t write_cpu_ns, flushes; /* and in writing records, over FLUSHES flushes */
	struct otlp_export_stats otlp; /* --otlp's totals so far */
	struct otlp *encoder; /* --otlp's, for what it left out; or NULL */
	struct ring_keeper_stats kept; /* the rings read while the loop was busy */
};

/* The statistics lines on stderr: at exit, and on SIGUSR1 (SO_FAR). Lines about what did not happen are left out. */
void stats__print(const struct stats_view *v, bool so_far);
/* --metrics-addr: what the statistics lines say, as Prometheus's text format, into M. */
void stats__publish(const struct stats_view *v, struct metrics_http *m);

#endif /* __STATS_H */
