/* SPDX-License-Identifier: GPL-2.0 */
/* part_spawn.h: Go < 1.21: the goroutine-start probe in a target, within its share of the target's CPU. */
#ifndef __PART_SPAWN_H
#define __PART_SPAWN_H

#include <stdbool.h>

#include "part.h"

struct budget_probe_stats;

/* Its budget ran out (the kernel said so): the probe rests until the next refill. */
void spawn_part__spent(struct part_ctx *c);
/* Its probe's statistics; false when it has none. */
bool spawn_part__stats(const struct part_ctx *c, struct budget_probe_stats *st);

#endif /* __PART_SPAWN_H */
