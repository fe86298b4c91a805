// SPDX-License-Identifier: GPL-2.0
/* wall.c: every goroutine of a target, read from user space without stopping it, for --wall. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "bpf/gomap.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/procfs.h"
#include "offsets/gopclntab.h"
#include "frame_table.h"
#include "wall.h"

/* far more than any service runs; a larger allglen is a torn read */
#define MAX_GOROUTINES (1U << 22)
/* g structs closer than this are read as one range: one copy beats one more iovec */
#ifndef RANGE_GAP
#define RANGE_GAP 1024
#endif
/* the ranges read in one call: as much as stays in a core's cache while visited */
#define BATCH_BYTES (128 * 1024)
#define IOV_BATCH 1024
/* neighbours in address order a strided snapshot looks at together: one range of a few KiB */
#define CHUNK 16
/* a parked goroutine's frames, from its saved SP up: deeper ones lose their outer frames */
#define STACK_READ (32 * 1024)
/*
 * wall_reader__scan looks for pprof.Do, near the stack's far end: it reads
 * a stack whole, up to this
 */
#define SCAN_STACK_READ (1024 * 1024)
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

static int mem_read(const struct wall_reader *r, void *dst, size_t len, uint64_t addr)
{
	return procfs__read_mem(r->pid, addr, dst, len);
}

static uint64_t u64_at(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* The members of a g whose bytes are at B. */
static void parse_g(const struct wall_reader *r, const uint8_t *b, struct gsnap *s)
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
static uint32_t wall_state(uint32_t status)
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

static uint32_t wall_word(const struct wall_reader *r, const struct gsnap *s)
{
	uint32_t state = wall_state(s->status);
	uint32_t reason = state == WALL_WAITING && s->reason < r->w->nreasons ? s->reason :
										  WALL_REASON_NONE;

	return state | reason << 8;
}

/*
 * The members that, unchanged, mean the goroutine has not run since: its
 * stack and labels stand (a stack moved by copystack has a new sched.sp
 * too). Hashed into one word, so that the snapshot compares one.
 */
static uint64_t key_of(const struct gsnap *s)
{
	const uint64_t w[] = { s->goid, s->labels, s->parent, s->sp, s->pc, s->bp, s->syscallsp,
			       s->syscallpc, (uint64_t)s->status << 32 | s->reason };
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		h = (h ^ w[i]) * 0x100000001b3ULL;
	return h ^ h >> 29;
}

/* Unlike key_of, exact: for a goroutine read twice in a row. */
static bool same_g(const struct gsnap *a, const struct gsnap *b)
{
	return a->goid == b->goid && a->status == b->status && a->reason == b->reason &&
	       a->labels == b->labels && a->parent == b->parent && a->sp == b->sp &&
	       a->pc == b->pc && a->bp == b->bp && a->syscallsp == b->syscallsp &&
	       a->syscallpc == b->syscallpc;
}

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

/* Appends a label to E, its strings to be read by read_rest. */
static int add_label(struct wall_reader *r, struct sample_event *e, uint64_t kptr, uint64_t klen,
		     uint64_t vptr, uint64_t vlen)
{
	struct go_label *lb;

	if (e->nlabels >= MAX_LABELS) {
		e->flags |= SAMPLE_F_LABELS_CUT;
		return 0;
	}
	lb = &e->labels[e->nlabels];
	memset(lb, 0, sizeof(*lb));
	lb->key_len = klen > UINT32_MAX ? UINT32_MAX : klen;
	lb->value_len = vlen > UINT32_MAX ? UINT32_MAX : vlen;
	r->strs[e->nlabels][0] = kptr;
	r->strs[e->nlabels][1] = vptr;
	e->nlabels++;
	return 0;
}

/* Go >= 1.24: labelMap { list []struct{key, value string} } */
static int read_labels_slice(struct wall_reader *r, struct sample_event *e, uint64_t labels)
{
	const struct go_layout *l = &r->l;
	__u64 buf[MAX_BUCKET_SIZE / 8], kv[4];
	uint64_t hdr[2], n, i;
	int cut = 0, ret;

	if (mem_read(r, hdr, sizeof(hdr), labels + l->label_list))
		return -EFAULT;
	n = golabels_count(hdr[1], &cut);
	if (cut)
		e->flags |= SAMPLE_F_LABELS_CUT;
	if (!n)
		return 0;
	if (n * l->label_size > sizeof(buf) || mem_read(r, buf, n * l->label_size, hdr[0]))
		return -EFAULT;
	for (i = 0; i < n; i++) {
		golabels_elem(buf, l, i, kv);
		ret = add_label(r, e, kv[0], kv[1], kv[2], kv[3]);
		if (ret)
			return ret;
	}
	return 0;
}

/* Go <= 1.23: *labelMap -> hmap; every bucket, a growing map's old ones, overflow chains. */
static int read_labels_map(struct wall_reader *r, struct sample_event *e, uint64_t labels)
{
	const struct go_layout *l = &r->l;
	__u64 buf[MAX_BUCKET_SIZE / 8], h[MAP_HEADER_LEN / 8], kv[4];
	uint64_t hmap, at;
	struct gomap_walk w;
	uint32_t visits, s;
	int ret;

	if (mem_read(r, &hmap, 8, labels))
		return -EFAULT;
	if (!hmap)
		return 0;
	if (l->lmap.size > sizeof(buf) || mem_read(r, h, sizeof(h), hmap))
		return -EFAULT;
	if (gomap_start(&w, &l->lmap, h))
		e->flags |= SAMPLE_F_LABELS_CUT;
	for (visits = 0; visits < MAX_BUCKET_VISITS; visits++) {
		at = gomap_next(&w, &l->lmap);
		if (!at)
			return 0;
		if (mem_read(r, buf, l->lmap.size, at))
			return -EFAULT;
		for (s = 0; s < BUCKET_SLOTS; s++) {
			if (!gomap_slot_full(buf, &l->lmap, s))
				continue;
			gomap_slot(buf, &l->lmap, s, GO_STRING_SIZE, kv);
			ret = add_label(r, e, kv[0], kv[1], kv[2], kv[3]);
			if (ret)
				return ret;
		}
		gomap_done(&w, &l->lmap, buf);
	}
	if (gomap_left(&w))
		e->flags |= SAMPLE_F_LABELS_CUT;
	return 0;
}

/*
 * The trace context of the request or span the goroutine serves, or of
 * the one that started it, appended to E as the sampler appends it, with
 * the flags it sets, and whether its labels are a request's that ended.
 * Returns a hash of what it added, 0 when nothing.
 */
static uint64_t add_context(struct wall_reader *r, struct sample_event *e, const struct gsnap *s,
			    const struct wall_lookup *lk)
{
	const uint32_t judged = SAMPLE_F_LABELS_JUDGED | SAMPLE_F_LABELS_ENDED | SAMPLE_F_LABELS_OWN;
	uint32_t flags = 0;
	struct trace_ctx tc;
	struct go_label *lb;

	if (s->labels && lk->labels_judge)
		e->flags |= lk->labels_judge(lk->ctx, r->pid, s->labels, s->goid);
	if (!lk->context || !lk->context(lk->ctx, r->pid, s->goid, s->parent, &tc, &flags))
		return e->flags & judged;
	e->flags |= flags;
	if (e->nlabels >= MAX_LABELS) {
		e->flags |= SAMPLE_F_LABELS_CUT;
		return e->flags & judged;
	}
	lb = &e->labels[e->nlabels++];
	memset(lb, 0, sizeof(*lb));
	if (tc.source == TRACE_CTX_OTEL) {
		memcpy(lb->key, "otel-sdk", 8);
		lb->key_len = 8;
	} else {
		memcpy(lb->key, "traceparent", 11);
		lb->key_len = 11;
	}
	lb->value_len = TRACEPARENT_LEN;
	memcpy(lb->value, tc.traceparent, TRACEPARENT_LEN);
	e->flags |= SAMPLE_F_TRACEPARENT;
	/* odd, with a context; the flags that judge its request apart */
	return (hash_bytes(lb, sizeof(*lb)) ^
		(uint64_t)(e->flags & (SAMPLE_F_CTX_CHILD | SAMPLE_F_CTX_ENDED | judged)) << 32) |
	       1;
}

/* Only what the hash of the context takes: for goroutines counted again unread. */
static uint64_t context_sig(struct wall_reader *r, const struct gsnap *s,
			    const struct wall_lookup *lk)
{
	struct sample_event *e = &r->ev;

	e->nlabels = 0;
	e->flags = 0;
	return add_context(r, e, s, lk);
}

/*
 * The frame pointer of the function a syscall's goroutine stopped in:
 * before Go 1.23 save() kept none, so it comes from the SP entersyscall's
 * caller left and that function's frame size at PC, in .gopclntab (which
 * every release has, so it is taken first). An assembly caller without a
 * frame (Go 1.18's syscall.Syscall; from 1.19 it is Go code with one) is
 * stepped over: its return address is at SP + its delta. Frames found on
 * the way go into FRAMES; returns 0 when there is no frame pointer to follow.
 */
static uint64_t syscall_fp(const struct wall_reader *r, const uint8_t *stack, uint64_t base,
			   uint64_t len, uint64_t pc, uint64_t sp, uint64_t *frames, uint32_t *n)
{
	struct gopclntab_func fn;
	int32_t delta;
	int i;

	for (i = 0; i < 4 && r->pcln && *n < MAX_STACK_DEPTH; i++) {
		/* a return address: the call's own SP delta is the one before it */
		if (gopclntab__lookup(r->pcln, pc - 1 - r->bias, &fn) != 0 ||
		    gopclntab__sp_delta(r->pcln, &fn, pc - 1 - r->bias, &delta) != 0 || delta < 0)
			return 0;
		/*
		 * arm64: a frame saves LR at its SP and FP just below; a
		 * frameless caller's return address was in LR, now lost
		 */
		if (r->link_register)
			return delta > 0 ? sp - 8 : 0;
		if (delta >= 8)
			return sp + delta - 8;
		if (sp < base || sp + delta + 8 > base + len)
			return 0;
		pc = u64_at(stack, sp + delta - base);
		if (!pc)
			return 0;
		frames[(*n)++] = pc;
		sp += delta + 8;
	}
	return 0;
}

/* Where a goroutine's frames start, and the part of its own stack they lie in. */
struct walk {
	uint64_t pc, sp, fp, lr;
	uint64_t base, len; /* len 0: no stack to read */
	bool syscall_bp;
};

/* Where the goroutine stopped: its saved sched, or for a syscall where entersyscall was called. */
static void walk_start(const struct wall_reader *r, const struct gsnap *s, uint32_t state,
		       struct walk *w)
{
	*w = (struct walk){ .pc = s->pc, .sp = s->sp, .fp = s->bp, .lr = s->lr };
	if (state == WALL_SYSCALL) {
		/*
		 * Go >= 1.23 saves entersyscall's caller's frame pointer; before,
		 * sched.bp may be one a systemstack switch in reentersyscall left
		 */
		w->syscall_bp = !r->pcln && s->pc == s->syscallpc && s->bp >= s->syscallsp;
		w->pc = s->syscallpc;
		w->sp = s->syscallsp;
		w->lr = 0;
	}
	if (w->pc && w->sp >= s->lo && w->sp < s->hi) {
		/* arm64's frame record, saved FP then LR, starts 8 bytes below SP */
		w->base = r->link_register && w->sp - 8 >= s->lo ? w->sp - 8 : w->sp;
		w->len = s->hi - w->base < r->stack_cap ? s->hi - w->base : r->stack_cap;
	}
}

/*
 * E's label strings (its first NSTR labels, cut as the sampler cuts them),
 * W's stack and then the g at G (into AFTER), in one read: the g last, so
 * that a goroutine that ran meanwhile is seen to have. A stack that cannot
 * be read is left out (W->len 0) rather than the goroutine.
 */
static int read_rest(struct wall_reader *r, struct sample_event *e, uint32_t nstr, struct walk *w,
		     uint64_t g, struct gsnap *after)
{
	size_t n = 0, want = 0, len, nlab;
	ssize_t got;
	uint32_t i;

	for (i = 0; i < nstr; i++) {
		struct go_label *lb = &e->labels[i];

		if ((len = lb->key_len < MAX_KEY_LEN ? lb->key_len : MAX_KEY_LEN)) {
			r->slocal[n] = (struct iovec){ lb->key, len };
			r->sremote[n++] = (struct iovec){ (void *)r->strs[i][0], len };
			want += len;
		}
		if ((len = lb->value_len < MAX_VALUE_LEN ? lb->value_len : MAX_VALUE_LEN)) {
			r->slocal[n] = (struct iovec){ lb->value, len };
			r->sremote[n++] = (struct iovec){ (void *)r->strs[i][1], len };
			want += len;
		}
	}
	nlab = n;
	for (;;) {
		n = nlab;
		if (w->len) {
			r->slocal[n] = (struct iovec){ r->stack, w->len };
			r->sremote[n++] = (struct iovec){ (void *)w->base, w->len };
		}
		r->slocal[n] = (struct iovec){ r->gbuf, r->w->g_read };
		r->sremote[n++] = (struct iovec){ (void *)g, r->w->g_read };
		got = process_vm_readv(r->pid, r->slocal, n, r->sremote, n, 0);
		if (got >= 0 && (size_t)got == want + w->len + r->w->g_read)
			break;
		/* the strings came, the stack did not: its first frame only */
		if (!w->len || got < 0 || (size_t)got < want)
			return -EFAULT;
		w->len = 0;
	}
	parse_g(r, r->gbuf, after);
	return 0;
}

/*
 * The caller of a function parked before it made its frame: the
 * stack-growth check at its entry (morestack saves that function's PC and
 * SP), or a goroutine not yet run. The frame pointer is still the caller's,
 * whose record holds the caller's own return address, so the caller itself
 * is only in the return address: at SP on amd64, in gobuf.lr on arm64. As
 * the runtime's unwinder does, a frame size of 0 at PC says which case it is.
 */
static uint64_t entry_caller(const struct wall_reader *r, const struct walk *w, uint64_t *frames)
{
	struct gopclntab_func fn;
	int32_t delta;

	if (!r->pcln || gopclntab__lookup(r->pcln, w->pc - r->bias, &fn) != 0 ||
	    gopclntab__sp_delta(r->pcln, &fn, w->pc - r->bias, &delta) != 0 || delta != 0)
		return 0;
	/*
	 * A leaf is named as a return address, one byte back; a goroutine
	 * not yet run resumes at its function's first byte, not after a call
	 */
	if (w->pc - r->bias == fn.entry)
		frames[0] = w->pc + 1;
	if (r->link_register)
		return w->lr;
	return w->len >= 8 ? u64_at(r->stack, w->sp - w->base) : 0;
}

/*
 * Where the caller's frame record is when the record at FP, of the
 * function at PC, links elsewhere: arm64 Go before 1.21 left it linking
 * to the stack the goroutine had before its stack was moved (as the
 * sampler's sized_fp, ustack.bpf.h). 0 when not known.
 */
static uint64_t sized_fp(const struct wall_reader *r, uint64_t fp, uint64_t pc)
{
	struct gopclntab_func fn;
	uint32_t size;

	if (!r->stale_fps || !pc || gopclntab__lookup(r->pcln, pc - r->bias, &fn) != 0 ||
	    gopclntab__frame_size(r->pcln, &fn, &size) != 0)
		return 0;
	return fp + size;
}

/* Frame pointers from W's start through the stack as read_rest read it. */
static uint32_t walk_frames(struct wall_reader *r, const struct walk *w, uint32_t state,
			    uint64_t *frames)
{
	uint64_t fp = w->fp, base = w->base, len = w->len, next, ret, owner;
	uint32_t n = 0;

	if (!w->pc || !w->sp)
		return 0;
	frames[n++] = w->pc;
	if (!len)
		return n;
	if (state == WALL_SYSCALL && !w->syscall_bp)
		fp = syscall_fp(r, r->stack, base, len, w->pc, w->sp, frames, &n);
	else if (state != WALL_SYSCALL && (ret = entry_caller(r, w, frames)))
		frames[n++] = ret;
	/* the function whose record is at FP: past the first frame, a return address's */
	owner = n > 1 ? frames[n - 1] - 1 : fp == w->sp - 8 ? w->pc : 0;
	while (n < MAX_STACK_DEPTH && fp >= base && fp + 16 <= base + len && !(fp & 7)) {
		next = u64_at(r->stack, fp - base);
		ret = u64_at(r->stack, fp - base + 8);
		if (!ret)
			break;
		frames[n++] = ret;
		if (next <= fp || next + 16 > base + len)
			next = sized_fp(r, fp, owner);
		if (next <= fp)
			break;
		fp = next;
		owner = ret - 1;
	}
	return n;
}

static size_t event_size(const struct sample_event *e)
{
	return offsetof(struct sample_event, labels) + e->nlabels * sizeof(struct go_label) +
	       e->stack_bytes;
}

/* Keeps what G was counted by, so that it can be counted again unread. */
static int remember(struct wall_cold *wg, const struct sample_event *e)
{
	const uint64_t *frames = (const uint64_t *)&e->labels[e->nlabels];
	void *labels = NULL, *stack = NULL;

	if (e->nlabels && !(labels = malloc(e->nlabels * sizeof(*e->labels))))
		return -ENOMEM;
	if (e->stack_bytes && !(stack = malloc(e->stack_bytes))) {
		free(labels);
		return -ENOMEM;
	}
	if (labels)
		memcpy(labels, e->labels, e->nlabels * sizeof(*e->labels));
	if (stack)
		memcpy(stack, frames, e->stack_bytes);
	free(wg->labels);
	free(wg->frames);
	wg->labels = labels;
	wg->frames = stack;
	wg->nlabels = e->nlabels;
	wg->nframes = e->stack_bytes / 8;
	wg->flags = e->flags;
	return 0;
}

/* R's event, its header filled for goroutine GOID found as WALL at TIME_NS, and no labels yet. */
static struct sample_event *start_event(struct wall_reader *r, uint64_t time_ns, uint64_t goid,
					uint32_t wall, uint32_t flags)
{
	struct sample_event *e = &r->ev;

	memset(e, 0, offsetof(struct sample_event, labels));
	e->time_ns = time_ns;
	e->tgid = r->pid;
	e->goid = goid;
	e->origin = ORIGIN_WALL;
	e->wall = wall;
	e->flags = flags;
	return e;
}

/* The event G was last counted by, rebuilt from what remember() kept. */
static const struct sample_event *rebuild(struct wall_reader *r, const struct wall_cold *wg,
					  uint64_t time_ns)
{
	struct sample_event *e = start_event(r, time_ns, wg->goid, wg->wall, wg->flags);

	e->nlabels = wg->nlabels;
	e->stack_bytes = wg->nframes * 8;
	if (wg->nlabels)
		memcpy(e->labels, wg->labels, wg->nlabels * sizeof(*e->labels));
	if (wg->nframes)
		memcpy(&e->labels[wg->nlabels], wg->frames, e->stack_bytes);
	return e;
}

/*
 * A goroutine new or changed since the last snapshot, as its window S
 * found it: its labels, context and stack read, then its g read again.
 * Anything that moved meanwhile means it ran: dropped (-EAGAIN), to be
 * read at the next look. Counted as W snapshots.
 */
static int read_goroutine(struct wall_reader *r, uint32_t idx, const struct gsnap *gs,
			  uint64_t time_ns, uint32_t w, const struct wall_lookup *lk,
			  struct aggregate *a)
{
	struct wall_g *wg = &r->gs[idx];
	struct wall_cold *cold = &r->cold[idx];
	struct gsnap s = *gs, s2;
	struct sample_event *e;
	uint32_t wall, state, nstr;
	struct walk wk;
	uint64_t sig;
	int ret;

	wall = wall_word(r, &s);
	state = wall & 0xff;
	if (!state)
		return -ENOENT;
	e = start_event(r, time_ns, s.goid, wall, SAMPLE_F_CURG);
	if (s.labels) {
		ret = r->l.labels_layout == GO_LABELS_SLICE ? read_labels_slice(r, e, s.labels) :
			      r->l.labels_layout == GO_LABELS_MAP ? read_labels_map(r, e, s.labels) :
								    0;
		if (ret)
			return -EAGAIN;
	}
	nstr = e->nlabels;
	sig = add_context(r, e, &s, lk);
	/* a running goroutine's CPU samples say where it runs */
	memset(&wk, 0, sizeof(wk));
	if (state != WALL_RUNNING)
		walk_start(r, &s, state, &wk);
	if (read_rest(r, e, nstr, &wk, r->allg[idx], &s2))
		return -EAGAIN;
	if (state != WALL_RUNNING)
		e->stack_bytes = 8 * walk_frames(r, &wk, state, (uint64_t *)&e->labels[e->nlabels]);
	if (state == WALL_RUNNING ? s2.goid != s.goid || s2.status != s.status ||
					    s2.labels != s.labels :
				    !same_g(&s, &s2) || s2.lo != s.lo || s2.hi != s.hi)
		return -EAGAIN;
	ret = aggregate__add_slot(a, e, event_size(e), &cold->slot);
	if (ret)
		return ret;
	if (w > 1)
		aggregate__repeat(a, &cold->slot, w - 1, 0, time_ns, time_ns, NULL, NULL, s.goid);
	if ((ret = remember(cold, e)))
		return ret;
	cold->goid = s.goid;
	cold->wall = wall;
	wg->g = r->allg[idx];
	wg->key = key_of(&s);
	wg->ctx_sig = sig;
	wg->gen = cold->slot.gen;
	wg->valid = true;
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
	e = rebuild(r, cold, first);
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

static int visit_g(struct wall_reader *r, uint32_t idx, const uint8_t *win, struct visit *v);
static int scan_g(struct wall_reader *r, uint32_t idx, const uint8_t *win, struct visit *v);

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
	    wg->ctx_sig == context_sig(r, &s, v->lk)) {
		/* parked since the last look: counted as it was */
		if (wg->gen == v->gen) {
			if ((ret = look_again(r, v->a, idx, v->slot, w)))
				return ret;
		} else {
			e = rebuild(r, &r->cold[idx], v->time_ns);
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
	ret = read_goroutine(r, idx, &s, v->time_ns, w, v->lk, v->a);
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
			ret = v->held ? scan_g(r, r->order[j].idx, win, v) :
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

/*
 * A goroutine with labels, as wall_reader__scan finds it: its labels and
 * strings, and unless it runs, its stack, read as a snapshot reads them.
 * A goroutine that moved meanwhile is told as running (no stack).
 */
static int scan_g(struct wall_reader *r, uint32_t idx, const uint8_t *win, struct visit *v)
{
	struct wall_held h = { .g = r->allg[idx] };
	struct sample_event *e;
	struct gsnap s, s2;
	uint32_t state;
	struct walk wk;
	int ret;

	if (!win)
		return 0;
	parse_g(r, win, &s);
	state = wall_state(s.status);
	if (!state || !s.labels)
		return 0;
	e = start_event(r, 0, s.goid, 0, 0);
	ret = r->l.labels_layout == GO_LABELS_SLICE ? read_labels_slice(r, e, s.labels) :
	      r->l.labels_layout == GO_LABELS_MAP   ? read_labels_map(r, e, s.labels) :
						      -EFAULT;
	memset(&wk, 0, sizeof(wk));
	if (state != WALL_RUNNING)
		walk_start(r, &s, state, &wk);
	if (ret || read_rest(r, e, e->nlabels, &wk, h.g, &s2) || s2.labels != s.labels ||
	    s2.goid != s.goid)
		return 0;
	h.goid = s.goid;
	h.labels = s.labels;
	h.label = e->labels;
	h.nlabels = e->nlabels;
	h.running = state == WALL_RUNNING || !same_g(&s, &s2);
	if (!h.running) {
		h.frames = (const uint64_t *)&e->labels[e->nlabels];
		h.nframes = walk_frames(r, &wk, state, (uint64_t *)h.frames);
	}
	return v->held(v->held_ctx, &h);
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
