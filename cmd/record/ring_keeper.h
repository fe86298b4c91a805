/* SPDX-License-Identifier: GPL-2.0 */
/* ring_keeper.h: the rings read on a clock by a thread of their own while the loop is busy elsewhere, their events kept for it. */
#ifndef __RING_KEEPER_H
#define __RING_KEEPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ring_buffer;
struct ring_keeper;

/*
 * Replays one kept event, of the ring KIND the keeper was told: the
 * callback the ring has, as the loop would have called it.
 */
typedef int (*ring_keeper_fn)(void *ctx, uint32_t kind, void *data, size_t size);

/*
 * A thread that, whenever RB has not been read for PERIOD_NS, reads it
 * and keeps its events (up to MAX_BYTES; past it they are counted as
 * lost); REALTIME: at SCHED_FIFO where it may. RB's callbacks ask
 * ring_keeper__keeping() first. NULL with errno.
 */
struct ring_keeper *ring_keeper__new(struct ring_buffer *rb, uint64_t period_ns, size_t max_bytes,
				     bool realtime);
/* The thread stopped: what it kept is still replayed by ring_keeper__enter. NULL is fine. */
void ring_keeper__stop(struct ring_keeper *k);
/* Stopped, and the events it kept and not replayed dropped. NULL is fine. */
void ring_keeper__free(struct ring_keeper *k);

/*
 * The loop's reads of RB go between these: the events the keeper kept
 * meanwhile are replayed through FN first, in the order they came, so
 * that what the loop reads next is later. Returns FN's first error.
 */
int ring_keeper__enter(struct ring_keeper *k, ring_keeper_fn fn, void *ctx);
void ring_keeper__leave(struct ring_keeper *k);

/* Called from RB's callbacks: true on the keeper's thread, which must keep the event. */
bool ring_keeper__keeping(void);
/* Keeps an event of ring KIND; 0, or -ENOMEM (counted as lost). */
int ring_keeper__keep(struct ring_keeper *k, uint32_t kind, const void *data, size_t size);

struct ring_keeper_stats {
	uint64_t reads; /* times the keeper read the rings */
	uint64_t kept; /* events it kept, replayed since */
	uint64_t lost; /* events it could not keep */
	uint64_t max_bytes; /* the most it held at once */
	bool realtime; /* it runs SCHED_FIFO */
	int realtime_err; /* else why not: an errno; 0 when not asked */
};
void ring_keeper__stats(struct ring_keeper *k, struct ring_keeper_stats *out);

#endif /* __RING_KEEPER_H */
