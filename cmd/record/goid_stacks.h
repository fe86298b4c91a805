/* SPDX-License-Identifier: GPL-2.0 */
/* goid_stacks.h: each goroutine's latest CPU samples' stacks, for the running goroutines --wall finds. */
#ifndef __GOID_STACKS_H
#define __GOID_STACKS_H

#include <stddef.h>
#include <stdint.h>

struct goid_stacks;

/* GAP_NS: how far in time a CPU sample may lie from the moment it stands for. */
struct goid_stacks *goid_stacks__new(uint64_t gap_ns);
void goid_stacks__free(struct goid_stacks *gs);

/* A CPU sample of goroutine GOID of process TGID at TIME_NS, its N FRAMES leaf first. */
int goid_stacks__note(struct goid_stacks *gs, uint32_t tgid, uint64_t goid, uint64_t time_ns,
		      const uint64_t *frames, size_t n);

/*
 * The frames of the CPU sample of GOID nearest TIME_NS, of the latest two,
 * when it lies within the gap: their number, *FRAMES pointing to them
 * until the next note; 0 when none does.
 */
size_t goid_stacks__find(struct goid_stacks *gs, uint32_t tgid, uint64_t goid, uint64_t time_ns,
			 const uint64_t **frames);

#endif /* __GOID_STACKS_H */
