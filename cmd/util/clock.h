/* SPDX-License-Identifier: GPL-2.0 */
/* clock.h: a clock's time in nanoseconds. */
#ifndef __CLOCK_H
#define __CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ULL

/* CLOCK_MONOTONIC is the clock of bpf_ktime_get_ns(), so that events and the loop compare. */
static inline uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Process PID's CPU time so far, all its threads', into *NS; -errno once it is gone (reaped). */
static inline int process_cpu_ns(pid_t pid, uint64_t *ns)
{
	struct timespec ts;
	clockid_t clk;
	int err;

	err = clock_getcpuclockid(pid, &clk);
	if (err)
		return -err;
	if (clock_gettime(clk, &ts))
		return -errno;
	*ns = (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
	return 0;
}

#endif /* __CLOCK_H */
