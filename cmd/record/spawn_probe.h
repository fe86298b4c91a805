/* SPDX-License-Identifier: GPL-2.0 */
/* spawn_probe.h: Go before 1.21: the probe where goroutines start, held to a number of hits a second. */
#ifndef __SPAWN_PROBE_H
#define __SPAWN_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct spawn_probe;

struct spawn_probe_stats {
	uint64_t watched; /* goroutine starts it saw */
	uint64_t on_ns; /* time it was attached */
	uint64_t paused_ns; /* time it rested, its second's budget spent */
	double missed; /* about how many goroutines started meanwhile, at the rate it saw last */
	bool failed; /* it could not be attached again: it rests for good */
};

/*
 * PROG as a uprobe with COOKIE at OFFSET of PATH, for PID alone, watching
 * at most MAX_PER_SEC goroutine starts a second; BUDGETS_FD is the kernel's
 * spawn_budgets map. 0 with *OUT, or -errno.
 */
int spawn_probe__attach(struct bpf_program *prog, int budgets_fd, pid_t pid, const char *path,
			uint64_t offset, uint64_t cookie, unsigned int max_per_sec,
			struct spawn_probe **out);
/* The kernel said its budget ran out: it rests until its second is over. */
void spawn_probe__spent(struct spawn_probe *sp);
/*
 * Its budget refilled when its second is over, and the probe attached
 * again if it rested; a failure to is said once on stderr, and it rests
 * for good.
 */
void spawn_probe__tick(struct spawn_probe *sp);
void spawn_probe__stats(const struct spawn_probe *sp, struct spawn_probe_stats *st);
/* Detached, its budget deleted. Accepts NULL. */
void spawn_probe__free(struct spawn_probe *sp);

#endif /* __SPAWN_PROBE_H */
