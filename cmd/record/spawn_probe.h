/* SPDX-License-Identifier: GPL-2.0 */
/* spawn_probe.h: Go before 1.21: the probe where goroutines start, held to a share of its process's CPU. */
#ifndef __SPAWN_PROBE_H
#define __SPAWN_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct spawn_probe;

/* The starts a second a probe may always watch, however idle its process: a few requests' worth. */
#define SPAWN_MIN_PER_SEC 100

/* What a goroutine-start probe may spend. */
struct spawn_policy {
	double share; /* of its process's CPU time, 0 to 1 */
	unsigned int max_per_sec; /* starts a second, besides; UINT_MAX: no cap */
	uint64_t trap_ns; /* a hit's price but its program's own time (spawn_probe__trap_ns) */
};

struct spawn_probe_stats {
	uint64_t watched; /* goroutine starts it saw */
	uint64_t on_ns; /* time it was attached */
	uint64_t paused_ns; /* time it rested, its period's budget spent */
	double missed; /* about how many goroutines started meanwhile, at the rate it saw last */
	uint64_t price_ns; /* a hit's price, trap and program: the last measured */
	/* to its last period's end: the hits, what they cost, and its process's CPU time since it came on */
	uint64_t counted, spent_ns, cpu_ns;
	uint64_t allowed; /* the last budget, as starts a second */
	bool capped; /* that budget was --max-goroutine-starts', not the share's */
	bool failed; /* it could not be attached again: it rests for good */
};

/*
 * The price of a uprobe hit on this machine but its program's time, as
 * PROG with COOKIE costs a process it does nothing for: measured once on a
 * function of ctxprof-go's own, the median call after the caches are
 * cooled against the same calls unprobed. 0 when the probe could not be
 * attached.
 */
uint64_t spawn_probe__trap_ns(const struct bpf_program *prog, uint64_t cookie);

/*
 * PROG as a uprobe with COOKIE at OFFSET of PATH, for PID alone, watching
 * what POLICY allows; BUDGETS_FD is the kernel's spawn_budgets
 * map. 0 with *OUT, or -errno.
 */
int spawn_probe__attach(struct bpf_program *prog, int budgets_fd, pid_t pid, const char *path,
			uint64_t offset, uint64_t cookie, const struct spawn_policy *policy,
			struct spawn_probe **out);
/* The kernel said its budget ran out: it rests until its period is over. */
void spawn_probe__spent(struct spawn_probe *sp);
/*
 * Its budget for the next period when this one is over (a tenth of a
 * second; a second under a cap), from its process's CPU time in this one
 * and the price of a hit, and the probe
 * attached again if it rested; a failure to is said once on stderr, and
 * it rests for good.
 */
void spawn_probe__tick(struct spawn_probe *sp);
void spawn_probe__stats(const struct spawn_probe *sp, struct spawn_probe_stats *st);
/* Detached, its budget deleted. Accepts NULL. */
void spawn_probe__free(struct spawn_probe *sp);

#endif /* __SPAWN_PROBE_H */
