// SPDX-License-Identifier: GPL-2.0
/* cpu_clock.c: the sampler's cpu-clock perf events, on a CPU or on a thread, and the program they run. */
#include <errno.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>

#include "cpu_clock.h"

int cpu_clock__attach(struct bpf_program *prog, int pid, int cpu, uint64_t period_ns,
		      unsigned long flags, struct bpf_link **link)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = period_ns,
		.inherit = cpu < 0,
	};
	int fd, err;

	fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC | flags);
	if (fd < 0)
		return -errno;
	*link = bpf_program__attach_perf_event(prog, fd);
	if (!*link) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
