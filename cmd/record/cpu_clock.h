/* SPDX-License-Identifier: GPL-2.0 */
/* cpu_clock.h: the sampler's cpu-clock perf events, on a CPU or on a thread, and the program they run. */
#ifndef __CPU_CLOCK_H
#define __CPU_CLOCK_H

#include <stdint.h>

struct bpf_link;
struct bpf_program;

/*
 * PROG on a cpu-clock event every PERIOD_NS: on CPU for every task (PID
 * -1) or a cgroup's (PID its directory's fd, FLAGS PERF_FLAG_PID_CGROUP),
 * or, with CPU -1, on thread PID on every CPU, inherited by the threads
 * and children it makes from then on. The event's fd (owned by *LINK, read
 * for the time it counted), or -errno: -ESRCH for a thread that is gone,
 * -ENODEV for a CPU that cannot have one.
 */
int cpu_clock__attach(struct bpf_program *prog, int pid, int cpu, uint64_t period_ns,
		      unsigned long flags, struct bpf_link **link);

#endif /* __CPU_CLOCK_H */
