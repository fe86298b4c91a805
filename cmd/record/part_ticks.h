/* SPDX-License-Identifier: GPL-2.0 */
/* part_ticks.h: --pid: the sampler's cpu-clock event on each of a target's threads. */
#ifndef __PART_TICKS_H
#define __PART_TICKS_H

#include <stdbool.h>
#include <stdint.h>

#include "part.h"

/* Its events stopped: no sample of it is taken after this. */
void ticks_part__stop(struct part_ctx *c);
/*
 * Its threads used CPU the events should have counted, DUE_NS of it by
 * CPU_SEEN_NS (its CPU time when last seen alive), and they counted none:
 * the kernel does not run them. *CPU_NS: what they missed.
 */
bool ticks_part__stalled(struct part_ctx *c, uint64_t cpu_seen_ns, uint64_t due_ns,
			 uint64_t *cpu_ns);

#endif /* __PART_TICKS_H */
