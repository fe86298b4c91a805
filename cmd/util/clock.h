/* SPDX-License-Identifier: GPL-2.0 */
/* clock.h: a clock's time in nanoseconds. */
#ifndef __CLOCK_H
#define __CLOCK_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ULL

/* CLOCK_MONOTONIC is the clock of bpf_ktime_get_ns(), so that events and the loop compare. */
static inline uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

#endif /* __CLOCK_H */
