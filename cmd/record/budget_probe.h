/* SPDX-License-Identifier: GPL-2.0 */
/* budget_probe.h: a uprobe in one process held to a share of its CPU: the goroutine-start probe, --alloc's. */
#ifndef __SPAWN_PROBE_H
#define __SPAWN_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct budget_probe;


/* a budgeted probe's kernel side: its budgets map, budget_refill, its BUDGET_* kind */
struct budget_kernel {
	int budgets_fd, refill_fd;
	uint32_t kind;
};

/* What a budgeted probe may spend, and what it is called when it says so. */
struct budget_policy {
	const char *name; /* "goroutine-start probe" */
	const char *hits; /* what a hit is, counted: "starts" */
	const char *loss; /* what is lost without it: "the goroutines it starts ... carry no trace ID" */
	const char *paid; /* the other probes' hits its share pays for (PROBE_PAID), or NULL */
	double share; /* of its process's CPU time, 0 to 1 */
	unsigned int min_per_sec; /* hits a second it may always take, however idle its process */
	unsigned int max_per_sec; /* starts a second, besides; UINT_MAX: no cap */
	uint64_t trap_ns; /* a hit's price but its program's own time (budget_probe__trap_ns) */
};

/*
 * What every probe of one kind gone saw and missed, so that the statistics
 * count processes that exited; and a trap's price, measured once.
 */
struct budget_account {
	uint64_t trap_ns;
	bool trap_measured;
	uint64_t probes, watched; /* of probes gone */
	double missed;
};

/*
 * A hit's trap but its program's time, as PROG with COOKIE costs: measured
 * the first time ACC is asked (budget_probe__trap_ns), said with VERBOSE.
 */
uint64_t budget_account__trap_ns(struct budget_account *acc, const struct bpf_program *prog,
				 uint64_t cookie, bool verbose);
/* What probe SP saw and missed, added to ACC as it goes. Accepts a NULL ACC. */
void budget_account__add(struct budget_account *acc, const struct budget_probe *sp);

struct budget_probe_stats {
	uint64_t watched; /* goroutine starts it saw */
	uint64_t on_ns; /* time it was attached */
	uint64_t paused_ns; /* time it rested, its period's budget spent */
	double missed; /* about how many goroutines started meanwhile, at the rate it saw last */
	uint64_t price_ns; /* a hit's price, trap and program: the last measured */
	uint64_t paid; /* other probes' hits its share paid for */
	/*
	 * to its last period's end: the hits and those, what they cost,
	 * and its process's CPU time since it came on
	 */
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
uint64_t budget_probe__trap_ns(const struct bpf_program *prog, uint64_t cookie);

/*
 * PROG as a uprobe with COOKIE at OFFSET of PATH, for PID alone, watching
 * what POLICY allows; K is its budgets' kernel side. 0 with *OUT, or
 * -errno.
 */
int budget_probe__attach(struct bpf_program *prog, const struct budget_kernel *k, pid_t pid,
			 const char *path, uint64_t offset, uint64_t cookie,
			 const struct budget_policy *policy, struct budget_probe **out);
/* The kernel said its budget ran out: it rests until its period is over. */
void budget_probe__spent(struct budget_probe *sp);
/*
 * Its budget for the next period when this one is over (a tenth of a
 * second; a second under a cap), from its process's CPU time in this one
 * and the price of a hit, and the probe
 * attached again if it rested; a failure to is said once on stderr, and
 * it rests for good.
 */
void budget_probe__tick(struct budget_probe *sp);
void budget_probe__stats(const struct budget_probe *sp, struct budget_probe_stats *st);
/* -v's line for PID (COMM): what it saw, and what its hits cost the process against its share. */
void budget_probe__say_cost(const struct budget_probe *sp, pid_t pid, const char *comm);
/* Detached, its budget deleted. Accepts NULL. */
void budget_probe__free(struct budget_probe *sp);

#endif /* __SPAWN_PROBE_H */
