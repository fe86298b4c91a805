/* SPDX-License-Identifier: GPL-2.0 */
/* wall_snap.h: --wall's snapshots: every target's goroutines, wall_hz times a second, within a budget of looks. */
#ifndef __WALL_SNAP_H
#define __WALL_SNAP_H

#include <stdint.h>

#include "wall.h"

struct aggregate;
struct sampler_bpf;
struct targets;
struct wall_snap;

/* Snapshots of TS's targets at HZ, counted into AGG. NULL with errno. */
struct wall_snap *wall_snap__new(const struct sampler_bpf *bpf, struct aggregate *agg,
				 struct targets *ts, unsigned long hz);
/* Accepts NULL. */
void wall_snap__free(struct wall_snap *w);
/*
 * The goroutines of every target, in the snapshot of SLOT (wall periods
 * since the start); all of them unless they are more than a snapshot's
 * budget of looks, then a rotating part. -errno when counts were lost.
 */
int wall_snap__take(struct wall_snap *w, uint32_t slot);
/* What snapshots counted, into the aggregate; before every flush. -errno as above. */
int wall_snap__settle(struct wall_snap *w);
/*
 * At the end: goroutines the last snapshot did not look at (it looked at
 * a share) are looked at as of it, so that each one's count runs to the
 * end of the recording. -errno as above.
 */
int wall_snap__finish(struct wall_snap *w);
/* What the snapshots found, and the CPU time this process spent on them. */
const struct wall_stats *wall_snap__stats(const struct wall_snap *w, uint64_t *cpu_ns);

#endif /* __WALL_SNAP_H */
