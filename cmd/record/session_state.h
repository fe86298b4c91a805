/* SPDX-License-Identifier: GPL-2.0 */
/* session_state.h: the state of one recording, shared by session.c (the run) and targets.c (its targets) only. */
#ifndef __SESSION_STATE_H
#define __SESSION_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <signal.h>

#include "bpf/ctxprof.h"
#include "cmd/output/folded.h"
#include "cmd/output/otlp.h"
#include "cmd/output/otlp_export.h"
#include "cmd/output/pprof.h"
#include "cmd/output/recset.h"
#include "cmd/output/summary.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/vec.h"
#include "offsets/go_binary.h"
#include "aggregate.h"
#include "custom.h"
#include "frame_table.h"
#include "proc_ctx.h"
#include "processes.h"
#include "session.h"
#include "wall.h"

struct target {
	pid_t pid;
	int pidfd; /* readable once the process has exited */
	char comm[32];
	/* held while sampled: replicas of one binary read its DWARF once */
	struct go_binary *gb;
	bool pending; /* its name, container and mappings are still to be read */
	/* the traceparent source's probes in this process, at its handlers' entries */
	struct bpf_link *http_links[MAX_TRACE_PROBES];
	size_t nhttp;
	bool spawn_probed; /* one gives the goroutines a goroutine starts its context */
	struct wall_reader *wall; /* --wall: its goroutines; NULL when its binary cannot give them */
	__u32 reexecs; /* execs of its own file seen so far (target_info.reexecs) */
	char exe[PATH_MAX]; /* /proc/PID/exe's target when added */
	/* OTEL_SERVICE_NAME in its environment, or service.name in OTEL_RESOURCE_ATTRIBUTES; NULL until read, "" when none */
	char *env_service;
	struct proc_ctx *ctx; /* what its OpenTelemetry SDK publishes (OTEP 4719) */
	char ctx_why[160]; /* why its context was skipped last; "" when it was not */
	/*
	 * --pid: the cpu-clock events that follow its threads (inherited by
	 * the threads each makes later), struct thread_ticks each
	 */
	struct vec ticks;
	/* what the events counted, and on how many threads, once stopped */
	uint64_t ticked_ns;
	size_t ticked_threads;
	bool ticks_ran; /* its events counted CPU time: the kernel runs them */
	uint64_t cpu_ticked_ns; /* its CPU time once its threads' events were open */
	/* arm64, Go before 1.21: its binary's frame sizes, shared by its processes */
	struct frame_entry *frames;
	/* its CPU time when added, and when last seen alive: what the sampler should have seen */
	uint64_t cpu_added_ns, cpu_seen_ns;
};

/* a binary's frame_table, while a target uses it; left empty, by address of its go_binary */
struct frame_entry {
	struct frame_table *ft;
	unsigned int refs;
};

/* a cpu-clock event on one thread of a target, and the thread */
struct thread_ticks {
	pid_t tid;
	int fd; /* the event's, owned by LINK: read for the time it counted */
	struct bpf_link *link;
};

struct session {
	struct session_config cfg;
	struct ctxprof_bpf *skel;
	struct hashmap *frame_tables; /* struct frame_entry by go_binary address */
	int ncpus; /* possible CPUs: per-CPU maps are this long */
	bool *online; /* ncpus of them */
	int *ring_fds;
	struct ring_buffer *rb;
	struct bpf_link **perf_links; /* per CPU, NULL where none */
	int nevents;
	bool per_task; /* --pid: the cpu-clock events follow the targets' threads */
	struct bpf_link *uprobe_links[MAX_UPROBES];
	struct bpf_link *exec_link;
	struct pins *pins;
	struct pprof *pprof; /* --pprof */
	struct recset *report; /* --html: every record of the run */
	struct folded *folded; /* -f */
	struct otlp *otlp; /* --otlp: the request of this interval */
	struct otlp_export *export; /* --otlp: the thread that sends them */
	struct otlp_export_stats otlp_stats; /* its totals, once it has stopped */
	struct metrics_http *metrics; /* --metrics-addr */
	struct summary *summary; /* the costliest traces, said at exit; NULL with --quiet */
	struct aggregate *agg;
	struct processes *procs; /* every process's mappings, targets or not */
	struct hashmap *targets; /* pid -> struct target */
	int nadded; /* targets ever added, for the statistics */
	int nstart; /* of them, those there when sampling began */
	int npending; /* targets added and not yet described */
	uint64_t period_ns;
	FILE *out;
	const char *out_name; /* for messages: the -o FILE, or "stdout" */
	bool unflushed; /* events written into OUT's buffer since its last flush */
	/*
	 * A ring that never empties (a flood of events) must not hold the
	 * loop: -d, signals, flushes and the reader's health wait on it.
	 * Reading stops for this round past this moment.
	 */
	uint64_t read_until_ns;
	uint64_t nread;
	bool reading; /* rings may be read between targets being added and records written */
	/* --all: what each executable file is, so that each is checked once */
	struct hashmap *verdicts; /* struct file_key -> enum verdict */
	pid_t *execs; /* exec'd since the loop last looked */
	size_t nexecs, capexecs;
	bool targets_full; /* said once */
	/* targets per bit of the sampler's target_bits (TARGET_BITS of them) */
	uint16_t *target_bit_refs;
	char *cgroup_dir; /* --cgroup PATH below its cgroup2 mount, for --all */
	/* --wall: the kernel's trace contexts as of this snapshot, struct goid_key -> trace_ctx */
	struct hashmap *wall_ctxs;
	struct wall_stats wall_stats;
	uint64_t wall_cpu_ns; /* this process's CPU time in snapshots */
	uint64_t write_cpu_ns; /* and in writing records, over FLUSHES flushes */
	uint64_t flushes;
	/* the first failure that loses data (a write, memory): it ends the run */
	int fail;
	char fail_msg[PATH_MAX + 64]; /* what failed, for the last line; "" when said already */
};

/* The first failure that loses data; WHAT ("write records to stdout") is said at the end. */
static inline void session__fail(struct session *s, int err, const char *what)
{
	if (s->fail)
		return;
	s->fail = err;
	snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", what);
}

/* targets.c */
struct target *session__find_target(const struct session *s, pid_t pid);
/* A hashmap value's destructor: probes detached, the binary put, the pidfd closed. */
void target__free(void *p);
/* The cpu-clock event at the session's period on thread TID, inherited by what it makes. */
int session__open_task_ticks(const struct session *s, pid_t tid);
/*
 * --pid: a target whose threads used CPU the per-thread events should have
 * counted, and that they did not count at all; NULL while there is none.
 */
struct target *session__stalled_ticks(struct session *s);
/* Warns of every target that used CPU and had no sample taken (at the end of a run). */
void session__warn_unsampled(struct session *s);
/* Stops T's per-thread events: no sample of it is taken after this. */
void target__stop_ticks(struct target *t);
/* Targets added by --all since the loop last looked: their name, container and mappings, read now. */
void session__describe_pending(struct session *s, uint64_t until_ns);
/* Every target's process context looked at again, and its service named from it. */
void session__refresh_contexts(struct session *s);
/* processes' exec callback: PID is looked at in the loop, outside any flush. */
void session__on_exec(void *ctx, pid_t pid);
/* --all: processes that exec'd are what they now run, Go or not. */
void session__handle_execs(struct session *s);
/* Drops targets that exited or exec'd; their last samples are read first. */
void session__reap_targets(struct session *s);
/* Maps in every target's string constants again: labels whose bytes could not be read. */
void session__map_strings(struct session *s);
/*
 * --uprobe on a Go function of PATH: the string constants of every process
 * that runs it now are mapped in, as a target's are, so that the probe can
 * read their label keys (Go copies string headers, never their bytes).
 */
void session__map_binary_strings(struct session *s, const char *path);
/* --otlp: what a target is, for its resource (otlp_process_fn). */
bool session__describe_process(void *ctx, uint32_t pid, struct otlp_process *out);

#endif /* __SESSION_STATE_H */
