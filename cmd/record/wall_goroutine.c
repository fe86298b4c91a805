// SPDX-License-Identifier: GPL-2.0
/* wall_goroutine.c: one goroutine read whole for --wall: labels, context, stack, and its event. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "bpf/gomap.h"
#include "cmd/util/hashmap.h"
#include "offsets/gopclntab.h"
#include "wall_priv.h"

static uint32_t wall_word(const struct wall_reader *r, const struct gsnap *s)
{
	uint32_t state = wall_state(s->status);
	uint32_t reason = state == WALL_WAITING && s->reason < r->w->nreasons ? s->reason :
										  WALL_REASON_NONE;

	return state | reason << 8;
}

/* Unlike key_of, exact: for a goroutine read twice in a row. */
static bool same_g(const struct gsnap *a, const struct gsnap *b)
{
	return a->goid == b->goid && a->status == b->status && a->reason == b->reason &&
	       a->labels == b->labels && a->parent == b->parent && a->sp == b->sp &&
	       a->pc == b->pc && a->bp == b->bp && a->syscallsp == b->syscallsp &&
	       a->syscallpc == b->syscallpc;
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
	if (l->lmap.size > sizeof(buf))
		return -EFAULT;
	/* as far as the walk reads, as BPF does */
	memset(h, 0, sizeof(h));
	if (mem_read(r, h, gomap_header_len(&l->lmap), hmap))
		return -EFAULT;
	if (gomap_start(&w, &l->lmap, h, MAX_B))
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
uint64_t wall_goroutine__context_sig(struct wall_reader *r, const struct gsnap *s,
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
const struct sample_event *wall_goroutine__rebuild(struct wall_reader *r,
						   const struct wall_cold *wg, uint64_t time_ns)
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
int wall_goroutine__read(struct wall_reader *r, uint32_t idx, const struct gsnap *gs,
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

/*
 * A goroutine with labels, as wall_reader__scan finds it: its labels and
 * strings, and unless it runs, its stack, read as a snapshot reads them.
 * A goroutine that moved meanwhile is told as running (no stack).
 */
int wall_goroutine__scan(struct wall_reader *r, uint32_t idx, const uint8_t *win, wall_held_fn fn,
			 void *ctx)
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
	return fn(ctx, &h);
}
