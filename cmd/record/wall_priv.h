/* SPDX-License-Identifier: GPL-2.0 */
/* wall_priv.h: what wall.c and wall_goroutine.c share; no other module includes it. */
#ifndef __WALL_PRIV_H
#define __WALL_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "bpf/ctxprof.h"
#include "cmd/util/procfs.h"
#include "aggregate.h"
#include "wall.h"

/* the ranges read in one call: as much as stays in a core's cache while visited */
#define BATCH_BYTES (128 * 1024)
#define IOV_BATCH 1024
/* a parked goroutine's frames, from its saved SP up: deeper ones lose their outer frames */
#define STACK_READ (32 * 1024)
/* the members read lie in a g's first bytes; a layout past this is refused */
#define MAX_G_READ 1024

/* One goroutine's members, as one read found them. */
struct gsnap {
	uint64_t goid, labels, parent;
	uint64_t lo, hi, sp, pc, bp, lr, syscallsp, syscallpc;
	uint32_t status, reason;
};

/*
 * A goroutine as the last snapshot counted it, by its index in allgs: the
 * runtime only appends to allgs and reuses a dead g in place, so index and
 * address stay paired. When nothing it was counted by has changed, it is
 * counted again without reading its labels or stack. A look counts the
 * snapshots since the one before (every snapshot looks at every goroutine
 * unless there are too many: then each looks at a rotating share). What
 * every snapshot looks at fits a cache line; the rest is in struct wall_cold.
 */
struct wall_g {
	uint64_t g;
	uint64_t key; /* key_of() the members it was counted by */
	uint64_t ctx_sig; /* of the trace context it carried, 0 for none */
	uint64_t gen; /* of its slot: an older one is stale */
	uint32_t last; /* the slot of the snapshot that last counted it, or found it not live */
	/*
	 * Looks again since the last settle, not yet in the aggregate: at
	 * slots first, first + step, ... plast, PENDING snapshots in all
	 */
	uint32_t looks, first, step, plast, pending;
	bool valid;
	bool seen; /* read whole before: a read again is one a snapshot limits */
};

/* What a goroutine was counted by, for counting it again unread. */
struct wall_cold {
	uint64_t goid;
	uint32_t wall; /* state | reason << 8 */
	struct agg_slot slot;
	uint32_t flags, nlabels, nframes; /* the event it was counted by */
	struct go_label *labels;
	uint64_t *frames;
};

struct gref {
	uint64_t addr;
	uint32_t idx;
};

/* The ranges of g windows one process_vm_readv reads: range K holds order[first[K], end[K]). */
struct batch {
	struct iovec local[IOV_BATCH], remote[IOV_BATCH];
	uint32_t first[IOV_BATCH], end[IOV_BATCH];
	size_t nio, off;
};

struct wall_reader {
	pid_t pid;
	const struct go_wall_layout *w;
	struct go_layout l;
	const struct gopclntab *pcln;
	uint64_t bias;
	bool link_register; /* arm64: a frame keeps its return address at its SP */
	bool stale_fps; /* arm64, Go before 1.21: a moved stack's saved frame pointers are the old stack's */
	uint32_t nallg; /* entries of allgs read so far */
	uint64_t *allg;
	struct wall_g *gs;
	struct wall_cold *cold;
	struct gref *order; /* the g addresses in address order, for ranged reads */
	uint32_t cap;
	/*
	 * The window of a g each snapshot reads: from its start (g.stack,
	 * which a full read needs, so that it can begin from the window) to
	 * its last member read.
	 */
	uint32_t win_len;
	/* the slot of the last snapshot, and its time; false before the first */
	uint32_t slot;
	uint64_t slot_ns;
	bool started;
	/*
	 * The times of the snapshots since the last settle, by slot from BASE
	 * (0 for a slot no snapshot took): when pending looks were taken
	 */
	uint64_t *snaps, *tbuf, *wbuf; /* wbuf: the snapshots each pending look counts */
	uint32_t base;
	size_t nsnaps, capsnaps;
	uint8_t gbuf[MAX_G_READ]; /* a g read on its own: its range failed, or after its stack */
	uint8_t rbuf[BATCH_BYTES]; /* one batch of ranges as read */
	struct batch batch;
	struct sample_event ev;
	/* where the key and value of each label of ev lie in the target, for read_rest */
	uint64_t strs[MAX_LABELS][2];
	/* the labels' strings, the stack and the g again: one read */
	struct iovec slocal[2 * MAX_LABELS + 2], sremote[2 * MAX_LABELS + 2];
	uint8_t *stack; /* stack_room, or in wall_reader__scan deep */
	size_t stack_cap;
	uint8_t *deep; /* SCAN_STACK_READ bytes, for scans */
	uint8_t stack_room[STACK_READ];
};

static inline int mem_read(const struct wall_reader *r, void *dst, size_t len, uint64_t addr)
{
	return procfs__read_mem(r->pid, addr, dst, len);
}

static inline uint64_t u64_at(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* The members of a g whose bytes are at B. */
static inline void parse_g(const struct wall_reader *r, const uint8_t *b, struct gsnap *s)
{
	const struct go_wall_offsets *o = &r->w->off;
	uint32_t status;

	s->lo = u64_at(b, 0);
	s->hi = u64_at(b, 8);
	s->goid = u64_at(b, r->l.g_goid);
	s->labels = u64_at(b, r->l.g_labels);
	s->parent = r->l.g_parent_goid ? u64_at(b, r->l.g_parent_goid) : 0;
	s->sp = u64_at(b, o->g_sched + o->gobuf_sp);
	s->pc = u64_at(b, o->g_sched + o->gobuf_pc);
	s->bp = u64_at(b, o->g_sched + o->gobuf_bp);
	s->lr = u64_at(b, o->g_sched + o->gobuf_lr);
	s->syscallsp = u64_at(b, o->g_syscallsp);
	s->syscallpc = u64_at(b, o->g_syscallpc);
	memcpy(&status, b + o->g_status, 4);
	s->status = status;
	s->reason = b[o->g_waitreason];
}

/* What the snapshot counts the goroutine as; 0 for one that is not live. */
static inline uint32_t wall_state(uint32_t status)
{
	switch (status & ~GO_G_SCAN) {
	case GO_G_RUNNING:
	case GO_G_COPYSTACK:
		return WALL_RUNNING;
	case GO_G_RUNNABLE:
	case GO_G_PREEMPTED:
		return WALL_RUNNABLE;
	case GO_G_SYSCALL:
		return WALL_SYSCALL;
	case GO_G_WAITING:
	case GO_G_LEAKED:
		return WALL_WAITING;
	default:
		return 0;
	}
}

/*
 * The members that, unchanged, mean the goroutine has not run since: its
 * stack and labels stand (a stack moved by copystack has a new sched.sp
 * too). Hashed into one word, so that the snapshot compares one.
 */
static inline uint64_t key_of(const struct gsnap *s)
{
	const uint64_t w[] = { s->goid, s->labels, s->parent, s->sp, s->pc, s->bp, s->syscallsp,
			       s->syscallpc, (uint64_t)s->status << 32 | s->reason };
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		h = (h ^ w[i]) * 0x100000001b3ULL;
	return h ^ h >> 29;
}

static inline size_t event_size(const struct sample_event *e)
{
	return offsetof(struct sample_event, labels) + e->nlabels * sizeof(struct go_label) +
	       e->stack_bytes;
}

/* wall_goroutine.c's, which wall.c's visits call: one goroutine read whole, or counted again. */

/*
 * Goroutine IDX, as its window GS found it, read whole and counted into A
 * as W snapshots at TIME_NS. -ENOENT: not live; -EAGAIN: it ran while read.
 */
int wall_goroutine__read(struct wall_reader *r, uint32_t idx, const struct gsnap *gs,
			 uint64_t time_ns, uint32_t w, const struct wall_lookup *lk,
			 struct aggregate *a);
/* A hash of the trace context S's goroutine carries as LK tells it; 0 for none. */
uint64_t wall_goroutine__context_sig(struct wall_reader *r, const struct gsnap *s,
				     const struct wall_lookup *lk);
/* The event WG was last counted by, as at TIME_NS; it lives until R's next event. */
const struct sample_event *wall_goroutine__rebuild(struct wall_reader *r,
						   const struct wall_cold *wg, uint64_t time_ns);
/* Goroutine IDX (its window at WIN, NULL if unread) told to FN if it has labels: FN's return. */
int wall_goroutine__scan(struct wall_reader *r, uint32_t idx, const uint8_t *win, wall_held_fn fn,
			 void *ctx);

#endif /* __WALL_PRIV_H */
