// SPDX-License-Identifier: GPL-2.0
/* wall.c: --wall's reader of a target: its goroutine list read in ranges, each look counted. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "frame_table.h"
#include "wall.h"
#include "wall_priv.h"

/* far more than any service runs; a larger allglen is a torn read */
#define MAX_GOROUTINES (1U << 22)
/* g structs closer than this are read as one range: one copy beats one more iovec */
#ifndef RANGE_GAP
#define RANGE_GAP 1024
#endif
/* neighbours in address order a strided snapshot looks at together: one range of a few KiB */
#define CHUNK 16
/*
 * wall_reader__scan looks for pprof.Do, near the stack's far end: it reads
 * a stack whole, up to this
 */
#define SCAN_STACK_READ (1024 * 1024)

void wall_reader__free(struct wall_reader *r)
{
	uint32_t i;

	if (!r)
		return;
	for (i = 0; i < r->nallg && r->cold; i++) {
		free(r->cold[i].labels);
		free(r->cold[i].frames);
	}
	free(r->allg);
	free(r->gs);
	free(r->cold);
	free(r->order);
	free(r->snaps);
	free(r->tbuf);
	free(r->wbuf);
	free(r->deep);
	free(r);
}

struct wall_reader *wall_reader__new(pid_t pid, const struct go_binary *gb, uint64_t bias)
{
	const struct go_wall_layout *w = go_binary__wall(gb);
	struct wall_reader *r;

	if (!w || w->g_read > MAX_G_READ) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->pid = pid;
	r->w = w;
	r->bias = bias;
	r->pcln = go_binary__pclntab(gb);
	r->link_register = strcmp(go_binary__arch(gb), "arm64") == 0;
	r->stale_fps = r->pcln && frame_table__needed(gb);
	if (go_binary__layout(gb, &r->l) != 0) {
		free(r);
		errno = EOPNOTSUPP;
		return NULL;
	}
	r->win_len = w->g_read;
	r->stack = r->stack_room;
	r->stack_cap = STACK_READ;
	return r;
}

static int by_addr(const void *pa, const void *pb)
{
	const struct gref *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int grow(struct wall_reader *r, uint32_t n)
{
	uint32_t cap = r->cap ? r->cap : 256;
	void *p;

	if (n <= r->cap)
		return 0;
	while (cap < n)
		cap *= 2;
	if (!(p = realloc(r->allg, cap * sizeof(*r->allg))))
		return -ENOMEM;
	r->allg = p;
	if (!(p = realloc(r->gs, cap * sizeof(*r->gs))))
		return -ENOMEM;
	r->gs = p;
	memset(r->gs + r->cap, 0, (cap - r->cap) * sizeof(*r->gs));
	if (!(p = realloc(r->cold, cap * sizeof(*r->cold))))
		return -ENOMEM;
	r->cold = p;
	memset(r->cold + r->cap, 0, (cap - r->cap) * sizeof(*r->cold));
	if (!(p = realloc(r->order, cap * sizeof(*r->order))))
		return -ENOMEM;
	r->order = p;
	r->cap = cap;
	return 0;
}

/*
 * The goroutine list: allglen, then the new entries of allgs (the
 * runtime appends under a lock and stores allglen last, so the first
 * allglen entries are written). -ESRCH once the process is gone; -EFAULT
 * when it cannot be read (counted as unreadable, every snapshot).
 */
static int read_allgs(struct wall_reader *r, uint32_t slot, uint32_t *n)
{
	uint64_t len, hdr[3];
	uint32_t i, old = r->nallg;
	int ret;

	if ((ret = mem_read(r, &len, 8, r->w->allglen + r->bias)) ||
	    (ret = mem_read(r, hdr, sizeof(hdr), r->w->allgs + r->bias)))
		return ret == -ESRCH ? -ESRCH : -EFAULT;
	if (len > hdr[1])
		len = hdr[1];
	if (len > MAX_GOROUTINES)
		return -EFAULT;
	if (len <= old) {
		*n = old;
		return 0;
	}
	if ((ret = grow(r, len)))
		return ret;
	if ((ret = mem_read(r, r->allg + old, (len - old) * 8, hdr[0] + old * 8)))
		return ret == -ESRCH ? -ESRCH : -EFAULT;
	for (i = old; i < len; i++) {
		r->order[i] = (struct gref){ r->allg[i], i };
		/* made since the last snapshot, or before the first: counted from this one */
		r->gs[i].last = slot - 1;
	}
	r->nallg = len;
	qsort(r->order, len, sizeof(*r->order), by_addr);
	*n = len;
	return 0;
}

/* When the snapshot of SLOT was taken; 0 when none since the last settle was. */
static uint64_t slot_time(const struct wall_reader *r, uint32_t slot)
{
	uint32_t i = slot - r->base;

	return i < r->nsnaps ? r->snaps[i] : 0;
}

/*
 * The times of WG's pending looks, into R's buffer, and the snapshots each
 * counts (N in all: the first counts those since the look before, the
 * others one step each); NULL when a time is not known.
 */
static const uint64_t *pending_times(struct wall_reader *r, const struct wall_g *wg, uint32_t n)
{
	uint32_t k;

	for (k = 0; k < wg->looks; k++) {
		if (!(r->tbuf[k] = slot_time(r, wg->first + k * wg->step)))
			return NULL;
		r->wbuf[k] = k ? wg->step : n - (uint64_t)(wg->looks - 1) * wg->step;
	}
	return r->tbuf;
}

/* Counts what looks left pending for goroutine IDX into A. */
static int settle_one(struct wall_reader *r, struct aggregate *a, uint32_t idx)
{
	struct wall_g *wg = &r->gs[idx];
	struct wall_cold *cold = &r->cold[idx];
	uint32_t n = wg->pending, looks = wg->looks;
	const uint64_t *times = pending_times(r, wg, n);
	uint64_t first = slot_time(r, wg->first), last = slot_time(r, wg->plast);
	const struct sample_event *e;
	int ret;

	wg->pending = wg->looks = 0;
	if (aggregate__repeat(a, &cold->slot, n, looks, first, last, times, r->wbuf, cold->goid))
		return 0;
	/* stale: A was flushed without a settle first; the first look is counted anew */
	e = wall_goroutine__rebuild(r, cold, first);
	if ((ret = aggregate__add_slot(a, e, event_size(e), &cold->slot)))
		return ret;
	wg->gen = cold->slot.gen;
	if (times && r->wbuf[0] > 1)
		aggregate__repeat(a, &cold->slot, r->wbuf[0] - 1, 0, first, first, NULL, NULL,
				  cold->goid);
	if (times && looks > 1)
		aggregate__repeat(a, &cold->slot, n - r->wbuf[0], looks - 1, first, last, times + 1,
				  r->wbuf + 1, cold->goid);
	else if (!times && n > 1)
		aggregate__repeat(a, &cold->slot, n - 1, looks - 1, first, last, NULL, NULL,
				  cold->goid);
	return 0;
}

/*
 * Counts what snapshots left pending into A: goroutines counted again
 * unread only bump a counter of their own, which stays in cache, where
 * reaching their records would miss it thousands of times a snapshot.
 */
int wall_reader__settle(struct wall_reader *r, struct aggregate *a)
{
	uint32_t i;
	int ret;

	for (i = 0; i < r->nallg; i++) {
		if (r->gs[i].looks && (ret = settle_one(r, a, i)))
			return ret;
	}
	/* nothing is pending: the times start over */
	r->nsnaps = 0;
	return 0;
}

/*
 * A look at goroutine IDX at SLOT that found it as it was counted, W
 * snapshots after the last: pending, in a run of looks at one step (a
 * look off the step counts the run first, so that its times stay known).
 */
static int look_again(struct wall_reader *r, struct aggregate *a, uint32_t idx, uint32_t slot,
		      uint32_t w)
{
	struct wall_g *wg = &r->gs[idx];
	int ret;

	if (wg->looks > 1 && slot - wg->plast != wg->step && (ret = settle_one(r, a, idx)))
		return ret;
	if (!wg->looks)
		wg->first = slot;
	else if (wg->looks == 1)
		wg->step = slot - wg->first;
	wg->looks++;
	wg->plast = slot;
	wg->pending += w;
	return 0;
}

/*
 * Goroutine IDX is gone: what it counted is counted, and its record no
 * longer kept for it.
 */
static int forget(struct wall_reader *r, struct aggregate *a, uint32_t idx)
{
	int ret;

	if (r->gs[idx].looks && (ret = settle_one(r, a, idx)))
		return ret;
	r->gs[idx].valid = false;
	aggregate__release_slot(a, &r->cold[idx].slot);
	return 0;
}

void wall_reader__release(struct wall_reader *r, struct aggregate *a)
{
	uint32_t i;

	for (i = 0; r && i < r->nallg; i++) {
		r->gs[i].valid = false;
		aggregate__release_slot(a, &r->cold[i].slot);
	}
}

/* One snapshot's state, as its goroutines are visited. */
struct visit {
	struct aggregate *a;
	uint64_t time_ns, gen;
	uint32_t slot;
	uint32_t *full; /* reads in full left */
	const struct wall_lookup *lk;
	struct wall_stats *st;
	/* wall_reader__scan's: what each goroutine with labels is told to */
	wall_held_fn held;
	void *held_ctx;
};

/*
 * Counts goroutine IDX, whose window is at WIN (NULL: it could not be
 * read), as the snapshots since its last count. One that cannot be read
 * consistently keeps its last count: its snapshots go to the next look.
 */
static int visit_g(struct wall_reader *r, uint32_t idx, const uint8_t *win, struct visit *v)
{
	struct wall_g *wg = &r->gs[idx];
	uint32_t w = v->slot - wg->last;
	const struct sample_event *e;
	struct gsnap s;
	int ret;

	if (!w || w > INT32_MAX)
		return 0;
	if (!win) {
		v->st->unreadable++;
		return 0;
	}
	parse_g(r, win, &s);
	if (!wall_state(s.status)) {
		wg->last = v->slot;
		return forget(r, v->a, idx);
	}
	if (wg->valid && wg->g == r->allg[idx] && wg->key == key_of(&s) &&
	    wg->ctx_sig == wall_goroutine__context_sig(r, &s, v->lk)) {
		/* parked since the last look: counted as it was */
		if (wg->gen == v->gen) {
			if ((ret = look_again(r, v->a, idx, v->slot, w)))
				return ret;
		} else {
			e = wall_goroutine__rebuild(r, &r->cold[idx], v->time_ns);
			if ((ret = aggregate__add_slot(v->a, e, event_size(e), &r->cold[idx].slot)))
				return ret;
			if (w > 1)
				aggregate__repeat(v->a, &r->cold[idx].slot, w - 1, 0, v->time_ns,
						  v->time_ns, NULL, NULL, r->cold[idx].goid);
			wg->gen = r->cold[idx].slot.gen;
		}
		wg->last = v->slot;
		v->st->goroutines += w;
		v->st->looks++;
		return 0;
	}
	/*
	 * a snapshot's reads in full of goroutines that changed are spent: at
	 * its next look (the first read of each is not held back: that is the
	 * first pass, once)
	 */
	if (wg->seen && !*v->full)
		return 0;
	if (wg->seen)
		--*v->full;
	wg->seen = true;
	if (wg->looks && (ret = settle_one(r, v->a, idx)))
		return ret;
	wg->valid = false;
	v->st->reread++;
	ret = wall_goroutine__read(r, idx, &s, v->time_ns, w, v->lk, v->a);
	if (ret == -ENOENT) {
		wg->last = v->slot;
		return forget(r, v->a, idx);
	}
	if (ret == -EAGAIN) {
		v->st->dropped++;
		return 0;
	}
	if (ret)
		return ret;
	wg->last = v->slot;
	v->st->goroutines += w;
	v->st->looks++;
	return 0;
}

/* Reads B's ranges and visits their g structs; a range that failed is read again g by g. */
static int visit_batch(struct wall_reader *r, struct batch *b, struct visit *v)
{
	ssize_t got = b->nio ? process_vm_readv(r->pid, b->local, b->nio, b->remote, b->nio, 0) : 0;
	const uint8_t *win;
	size_t k, base;
	uint32_t j;
	uint64_t at;
	bool whole;
	int ret;

	if (got < 0 && errno == ESRCH)
		return -ESRCH;
	for (k = 0, base = 0; k < b->nio; base += b->local[k].iov_len, k++) {
		/* the ranges lie end to end: GOT bytes of them came */
		whole = got >= 0 && (size_t)got >= base + b->local[k].iov_len;
		for (j = b->first[k]; j < b->end[k]; j++) {
			at = r->order[j].addr - (uint64_t)b->remote[k].iov_base;
			win = (uint8_t *)b->local[k].iov_base + at;
			if (!whole)
				win = mem_read(r, r->gbuf, r->win_len, r->order[j].addr) ?
					      NULL :
					      r->gbuf;
			ret = v->held ? wall_goroutine__scan(r, r->order[j].idx, win, v->held,
							     v->held_ctx) :
					visit_g(r, r->order[j].idx, win, v);
			if (ret)
				return ret;
		}
	}
	b->nio = b->off = 0;
	return 0;
}

/*
 * Visits the g structs at order[from, to): ranges of neighbours, each read
 * into B, which is visited when full.
 */
static int visit_span(struct wall_reader *r, struct batch *b, uint32_t from, uint32_t to,
		      struct visit *v)
{
	uint32_t len = r->win_len, i, j;
	uint64_t start, end;
	int ret;

	for (i = from; i < to;) {
		/* room for one more range of at least one g, or read these now */
		if ((b->nio == IOV_BATCH || b->off + len > BATCH_BYTES) && (ret = visit_batch(r, b, v)))
			return ret;
		start = r->order[i].addr;
		end = start + len;
		for (j = i + 1; j < to && r->order[j].addr <= end + RANGE_GAP &&
				r->order[j].addr + len - start <= BATCH_BYTES - b->off;
		     j++)
			if (r->order[j].addr + len > end)
				end = r->order[j].addr + len;
		b->local[b->nio] = (struct iovec){ r->rbuf + b->off, end - start };
		b->remote[b->nio] = (struct iovec){ (void *)start, end - start };
		b->first[b->nio] = i;
		b->end[b->nio++] = j;
		b->off += end - start;
		i = j;
	}
	return 0;
}

/* Keeps when the snapshot of SLOT was taken, for the times of pending looks. */
static int keep_slot(struct wall_reader *r, struct aggregate *a, uint32_t slot, uint64_t time_ns)
{
	size_t i, cap;
	void *p;
	int ret;

	/* a long pause between snapshots: count what is pending rather than keep empty slots */
	if (r->nsnaps && slot - r->base >= (1U << 20) && (ret = wall_reader__settle(r, a)))
		return ret;
	if (!r->nsnaps)
		r->base = slot;
	i = slot - r->base;
	if (i >= r->capsnaps) {
		for (cap = r->capsnaps ? r->capsnaps : 256; cap <= i; cap *= 2)
			;
		if (!(p = realloc(r->snaps, cap * sizeof(*r->snaps))))
			return -ENOMEM;
		r->snaps = p;
		if (!(p = realloc(r->tbuf, cap * sizeof(*r->tbuf))))
			return -ENOMEM;
		r->tbuf = p;
		if (!(p = realloc(r->wbuf, cap * sizeof(*r->wbuf))))
			return -ENOMEM;
		r->wbuf = p;
		r->capsnaps = cap;
	}
	while (r->nsnaps < i)
		r->snaps[r->nsnaps++] = 0;
	r->snaps[i] = time_ns;
	r->nsnaps = i + 1;
	return 0;
}

/*
 * Every g's window, in address order: g structs lie in a few heap spans,
 * so ranges of neighbours are read in few calls and few iovecs, a batch at
 * a time into a buffer small enough to stay in cache, and each g is
 * visited where it landed. With STRIDE above 1, only every STRIDE-th chunk
 * of CHUNK neighbours, the next chunks at the next slot.
 */
int wall_reader__snapshot(struct wall_reader *r, struct aggregate *a, struct wall_share *sh,
			  uint64_t time_ns, const struct wall_lookup *lk, struct wall_stats *st)
{
	struct visit v = { a, time_ns, aggregate__gen(a), sh->slot, &sh->full, lk, st };
	uint32_t n, c, slot = sh->slot, stride = sh->stride;
	struct batch *b = &r->batch;
	int ret;

	/* a slot taken twice (the clock stepped back) counts nothing new */
	if (r->started && (int32_t)(slot - r->slot) <= 0)
		return 0;
	if ((ret = read_allgs(r, slot, &n))) {
		if (ret == -EFAULT) {
			st->unreadable++;
			return 0;
		}
		return ret;
	}
	if ((ret = keep_slot(r, a, slot, time_ns)))
		return ret;
	st->snapshots++;
	r->slot = slot;
	r->slot_ns = time_ns;
	r->started = true;
	b->nio = b->off = 0;
	if (stride <= 1)
		ret = visit_span(r, b, 0, n, &v);
	for (c = slot % stride * CHUNK; stride > 1 && c < n && !ret; c += stride * CHUNK)
		ret = visit_span(r, b, c, c + CHUNK < n ? c + CHUNK : n, &v);
	return ret ?: visit_batch(r, b, &v);
}

int wall_reader__finish(struct wall_reader *r, struct aggregate *a, const struct wall_lookup *lk,
			struct wall_stats *st)
{
	uint32_t full = UINT32_MAX;
	struct visit v = { a, r->slot_ns, aggregate__gen(a), r->slot, &full, lk, st };
	struct batch *b = &r->batch;
	int ret;

	if (!r->started)
		return 0;
	/* a settle since the last snapshot forgot its time */
	if ((ret = keep_slot(r, a, r->slot, r->slot_ns)))
		return ret;
	b->nio = b->off = 0;
	ret = visit_span(r, b, 0, r->nallg, &v);
	return ret ?: visit_batch(r, b, &v);
}

int wall_reader__scan(struct wall_reader *r, wall_held_fn fn, void *ctx)
{
	struct visit v = { .held = fn, .held_ctx = ctx };
	struct batch *b = &r->batch;
	uint32_t n;
	int ret;

	if (r->started)
		return -EBUSY;
	if ((ret = read_allgs(r, 0, &n)))
		return ret;
	if (!r->deep && !(r->deep = malloc(SCAN_STACK_READ)))
		return -ENOMEM;
	r->stack = r->deep;
	r->stack_cap = SCAN_STACK_READ;
	b->nio = b->off = 0;
	ret = visit_span(r, b, 0, n, &v);
	ret = ret ?: visit_batch(r, b, &v);
	r->stack = r->stack_room;
	r->stack_cap = STACK_READ;
	return ret;
}

uint32_t wall_reader__goroutines(const struct wall_reader *r)
{
	return r->nallg;
}
