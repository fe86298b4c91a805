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
 * What a snapshot asks of the rest of the recording about a goroutine,
 * as the sampler asks the kernel's maps. Either function may be NULL:
 * nothing to look up.
 */
struct wall_lookup {
	/*
	 * The context the traceparent and otel-sdk sources give goroutine
	 * GOID of TGID, started by PARENT (Go >= 1.21; else 0), into OUT,
	 * SAMPLE_F_CTX_CHILD and SAMPLE_F_CTX_ENDED into *FLAGS as the
	 * sampler's sampled_ctx sets them: false when there is none.
	 */
	bool (*context)(void *ctx, uint32_t tgid, uint64_t goid, uint64_t parent,
			struct trace_ctx *out, uint32_t *flags);
	/*
	 * LABELS, which GOID holds: SAMPLE_F_LABELS_ENDED, SAMPLE_F_LABELS_OWN
	 * or 0, as the sampler's labels_judge says
	 */
	uint32_t (*labels_judge)(void *ctx, uint32_t tgid, uint64_t labels, uint64_t goid);
	void *ctx;
};

/*
 * A reader of PID, which runs GB (loaded at BIAS, a PIE's load bias).
 * NULL with errno set: EOPNOTSUPP when GB cannot give the goroutine list.
 */
struct wall_reader *wall_reader__new(pid_t pid, const struct go_binary *gb, uint64_t bias);
void wall_reader__free(struct wall_reader *r);

/* What snapshots found, summed over every reader. */
struct wall_stats {
	uint64_t snapshots; /* of one target each */
	uint64_t goroutines; /* counted: snapshots of a goroutine */
	uint64_t looks; /* at goroutines, each counting the snapshots since its last */
	uint64_t dropped; /* changed while being read: taken again at the next snapshot */
	uint64_t unreadable; /* a read of target memory failed */
	uint64_t reread; /* read in full: new, or changed since the last snapshot */
	uint64_t stride; /* the most snapshots between two looks at one goroutine */
};

/* What one round of snapshots, of every target, may do: set by the caller, spent by readers. */
struct wall_share {
	uint32_t slot; /* the number of wall periods since the recording started */
	uint32_t stride; /* each goroutine is looked at once in STRIDE snapshots */
	uint32_t full; /* goroutines left to read whole again (changed since read) */
};

/*
 * The snapshot of SH->slot at TIME_NS (CLOCK_MONOTONIC, as
 * bpf_ktime_get_ns): live goroutines counted into A, with their state,
 * wait reason, labels, context and request's state (LK) and, unless
 * running, their stacks.
 * Each is looked at once in SH->stride snapshots, neighbours in address
 * order together, and counted as the snapshots since its last count, so
 * that totals hold whatever the stride. A goroutine that cannot be read
 * consistently, or changed when SH->full is spent, is counted at its next
 * look. -ESRCH once the process is gone, -ENOMEM.
 */
int wall_reader__snapshot(struct wall_reader *r, struct aggregate *a, struct wall_share *sh,
			  uint64_t time_ns, const struct wall_lookup *lk, struct wall_stats *st);

/*
 * At the end of a recording: the goroutines the last snapshot did not look
 * at, looked at as of its slot, so that every goroutine's count runs to
 * the end. Returns as wall_reader__snapshot.
 */
int wall_reader__finish(struct wall_reader *r, struct aggregate *a, const struct wall_lookup *lk,
			struct wall_stats *st);

/*
 * Lets A free the records R's goroutines counted into once they are
 * written: before R is freed while A lives on. Settle R first.
 */
void wall_reader__release(struct wall_reader *r, struct aggregate *a);

/* A goroutine with labels, as wall_reader__scan found it; pointers live until FN returns. */
struct wall_held {
	uint64_t goid, g, labels;
	const struct go_label *label; /* its labels, as the sampler reads them */
	uint32_t nlabels;
	bool running; /* on a CPU, or it moved while read: no stack */
	const uint64_t *frames; /* else its stack, leaf first: PCs the frames return to */
	uint32_t nframes;
};
typedef int (*wall_held_fn)(void *ctx, const struct wall_held *h);

/*
 * Every goroutine of the process that has labels, read once and told to
 * FN (which returns 0 to go on). For a reader of its own, which takes no
 * snapshot: -EBUSY after one. -ESRCH once the process is gone, -EFAULT
 * when its goroutine list cannot be read.
 */
int wall_reader__scan(struct wall_reader *r, wall_held_fn fn, void *ctx);

/* The goroutine list's length as last read: what a snapshot may look at. */
uint32_t wall_reader__goroutines(const struct wall_reader *r);

/*
 * Goroutines counted again unread are only counted into A here: before
 * each flush of A, and before its statistics. 0 or -ENOMEM.
 */
int wall_reader__settle(struct wall_reader *r, struct aggregate *a);

#endif /* __WALL_H */
