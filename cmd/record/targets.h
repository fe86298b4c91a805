/* SPDX-License-Identifier: GPL-2.0 */
/* targets.h: a recording's target set: processes added, installed in the kernel, described, reaped; --all's discovery. */
#ifndef __TARGETS_H
#define __TARGETS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "target.h"

struct otlp_process;
struct targets;

struct targets_config {
	struct target_env env; /* its frame_tables are the set's own */
	/* reads the rings, before targets that ended go: their last samples (with CTX) */
	void (*read_rings)(void *ctx);
	char *cgroup_dir; /* --cgroup's path below its cgroup2 mount, or NULL; the set's from then on */
	/* the first failure that loses data (memory): it ends the run */
	void (*fail)(void *ctx, int err, const char *what);
	void *ctx;
};

/* NULL with errno; CFG->cgroup_dir is freed by then either way. */
struct targets *targets__new(const struct targets_config *cfg);
/* Every target dropped and freed. Accepts NULL. */
void targets__free(struct targets *ts);

/*
 * Checks each of the N PIDS as `check` does and starts sampling it: its
 * layout into the kernel's targets map, its mappings read now. -errno
 * with a message on stderr naming the first process that failed and the
 * reason. With -v, a long add says how far it is once a second.
 */
int targets__add_all(struct targets *ts, const pid_t *pids, int n);
/* Stops sampling PID; WHY ("exited", ...) goes into a note on stderr. */
void targets__remove(struct targets *ts, pid_t pid, const char *why);
/* NULL when PID is not a target. */
struct target *targets__find(const struct targets *ts, pid_t pid);
/* FN on every target. */
void targets__foreach(struct targets *ts, void (*fn)(struct target *t, void *ctx), void *ctx);
/* Targets now, ever added, and added but not described yet. */
int targets__count(const struct targets *ts);
int targets__added(const struct targets *ts);
/* --all: processes found running a Go build it cannot read (one note each file). */
uint64_t targets__unsupported(const struct targets *ts);
/* Probes that failed to attach so far, by enum trace_source; the goroutine-start probe's at COUNT. */
const uint64_t *targets__attach_failures(const struct targets *ts);
/*
 * Every budgeted probe of KIND's (BUDGET_SPAWN: Go < 1.21's goroutine
 * starts; BUDGET_ALLOC: sampled allocations) hits seen and about how many
 * missed while it rested, those of probes gone too (counted apart in
 * GONE's probes, watched and missed), in *WATCHED and *MISSED.
 */
void targets__budget_totals(struct targets *ts, int kind, struct budget_account *gone,
			    uint64_t *watched, double *missed);
int targets__pending(const struct targets *ts);

/* --all: every Go process running now (from /proc), each binary checked once. */
void targets__discover(struct targets *ts);
/* processes' exec callback: PID is looked at by targets__handle_execs, outside any flush. */
void targets__on_exec(void *ctx, pid_t pid);
/* --all: processes that exec'd are what they now run, Go or not. */
void targets__handle_execs(struct targets *ts);
/* Targets added by --all: their name, container and mappings, read until UNTIL_NS. */
void targets__describe_pending(struct targets *ts, uint64_t until_ns);
/* Drops targets that exited or exec'd; their last samples are read first. */
void targets__reap(struct targets *ts);
/*
 * At most once a second: the label sets whose setter exited or left
 * without the probe seeing it are forgotten in the kernel.
 */
void targets__sweep_owners(struct targets *ts);

/* What every target's parts read of it in /proc, read again: its process context, its service. */
void targets__refresh_contexts(struct targets *ts);

/* Every target's per-thread events stopped; targets added later get none. */
void targets__stop_ticks(struct targets *ts);
/*
 * --pid: a target whose threads used CPU the per-thread events should have
 * counted, and that they did not count at all, with that CPU time; NULL
 * while there is none.
 */
struct target *targets__stalled_ticks(struct targets *ts, uint64_t *cpu_ns);
/* Warns of every target that used CPU and had no sample taken (at the end of a run). */
void targets__warn_unsampled(struct targets *ts);
/* --otlp: what a target is, for its resource (otlp_process_fn); CTX is the set. */
bool targets__describe_process(void *ctx, uint32_t pid, struct otlp_process *out);

#endif /* __TARGETS_H */
