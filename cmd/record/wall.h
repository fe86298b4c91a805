/* SPDX-License-Identifier: GPL-2.0 */
/* wall.h: every goroutine of a target, read from user space without stopping it, for --wall. */
#ifndef __WALL_H
#define __WALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/ctxprof.h"
#include "offsets/go_binary.h"
#include "aggregate.h"

struct wall_reader;

/*
 * The context the traceparent and otel-sdk sources keep for goroutine GOID
 * of TGID, as the kernel's trace_ctxs map held it at this snapshot: false
 * when it holds none.
 */
typedef bool (*wall_ctx_fn)(void *ctx, uint32_t tgid, uint64_t goid, struct trace_ctx *out);

/*
 * A reader of PID, which runs GB (loaded at BIAS, a PIE's load bias).
 * NULL with errno set: EOPNOTSUPP when GB cannot give the goroutine list.
 */
struct wall_reader *wall_reader__new(pid_t pid, const struct go_binary *gb, uint64_t bias);
void wall_reader__free(struct wall_reader *r);

/* What snapshots found, summed over every reader. */
struct wall_stats {
	uint64_t snapshots; /* of one target each */
	uint64_t goroutines; /* counted */
	uint64_t dropped; /* changed while being read: taken again at the next snapshot */
	uint64_t unreadable; /* a read of target memory failed */
	uint64_t reread; /* read in full: new, or changed since the last snapshot */
};

/*
 * One snapshot: every live goroutine counted once into A at TIME_NS
 * (CLOCK_MONOTONIC, as bpf_ktime_get_ns), with its state, wait reason,
 * labels, context (CTX) and, unless it is running, its stack. -ESRCH once
 * the process is gone, -ENOMEM; a goroutine that cannot be read
 * consistently is left out and counted in ST.
 */
int wall_reader__snapshot(struct wall_reader *r, struct aggregate *a, uint64_t time_ns,
			  wall_ctx_fn ctx_fn, void *ctx, struct wall_stats *st);

/*
 * Goroutines counted again unread are only counted into A here: before
 * each flush of A, and before its statistics. 0 or -ENOMEM.
 */
int wall_reader__settle(struct wall_reader *r, struct aggregate *a);

#endif /* __WALL_H */
