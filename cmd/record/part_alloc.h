/* SPDX-License-Identifier: GPL-2.0 */
/* part_alloc.h: --alloc: a probe where a target's runtime samples an allocation, within its share of the target's CPU. */
#ifndef __PART_ALLOC_H
#define __PART_ALLOC_H

#include <stdbool.h>

#include "part.h"

struct budget_probe_stats;

/* Its budget ran out (the kernel said so): the probe rests until the next refill. */
void alloc_part__spent(struct part_ctx *c);
/* Its probe's statistics; false when it has none. */
bool alloc_part__stats(const struct part_ctx *c, struct budget_probe_stats *st);

#endif /* __PART_ALLOC_H */
