/* SPDX-License-Identifier: GPL-2.0 */
/* traceparent.bpf.h: the W3C traceparent of the request a goroutine serves, kept by goid for the sampler. */
#ifndef __TRACEPARENT_BPF_H
#define __TRACEPARENT_BPF_H

#include "budget.bpf.h"
#include "go_walk.bpf.h"
#include "spans.bpf.h"

/* --trace-sources with neither traceparent nor otel-sdk: the sampler never looks */
const volatile bool want_contexts = true;
/*
 * An HTTP/1.1 request's end is probed ((*response).finishRequest): --wall's
 * spans need their ends, and arm64 keeps no return address where a later
 * call surely overwrites it. Otherwise the sampler asks the handler's
 * frame whether it returned (handler_state).
 */
const volatile bool request_ends = true;

/* the epoch of E, without its state */
static __always_inline __u64 epoch_of(__u64 e)
{
	return e & ~EPOCH_STATE;
}

static __always_inline __u64 epoch_state(__u64 e)
{
	return e & EPOCH_STATE;
}

/* runtime.g begins with its stack {lo, hi} (go_dwarf.c checks) */
#define G_STACK_HI 8

/* {tgid, goid} -> the request's traceparent; user space sizes it */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct goid_key);
	__type(value, struct trace_ctx);
} trace_ctxs SEC(".maps");

/*
 * {tgid, goid} -> the context a goroutine took from the one that started
 * it, once a sample has seen it: kept apart, so that a fan-out's churn
 * never evicts a request's own.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, struct goid_key);
	__type(value, struct trace_ctx);
} spawn_ctxs SEC(".maps");

/* the contexts goroutines took as they started, before a sample saw them (struct spawn_slot) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SPAWN_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct spawn_slot);
} spawn_slots SEC(".maps");

/* tgid -> its goroutine-start probe's budget; user space sizes it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct probe_budget);
} spawn_budgets SEC(".maps");


/*
 * grpc streams whose headers carried a traceparent, until their handler
 * starts on a goroutine of its own; user space sizes it
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct grpc_stream_key);
	__type(value, struct trace_ctx);
} grpc_streams SEC(".maps");

/* "Traceparent", as net/http canonicalizes it, in two little-endian words */
#define TP_KEY_LEN 11
#define TP_KEY_LO 0x7261706563617254ULL /* "Tracepar" */
#define TP_KEY_HI 0x746e65ULL /* "ent" */
/* HTTP/2 and gRPC metadata names are lowercase */
#define TP_KEY_LO_LOWER 0x7261706563617274ULL /* "tracepar" */

/*
 * Is the string at PTR, LEN bytes long, the header name (in FIRST's case)?
 * Most names differ in length, so most cost no read.
 */
static __always_inline bool is_tp_name(__u64 ptr, __u64 len, __u64 first)
{
	__u64 k[2] = {};

	if (len != TP_KEY_LEN || bpf_probe_read_user(k, TP_KEY_LEN, (const void *)ptr))
		return false;
	return k[0] == first && k[1] == TP_KEY_HI;
}

static __always_inline bool is_tp_key(__u64 ptr, __u64 len)
{
	return is_tp_name(ptr, len, TP_KEY_LO);
}

/* The first value of a []string at VALS (its array pointer and length) into W's context. */
static __always_inline int take_value(struct hdr_walk *w, __u64 vals, __u64 n)
{
	__u64 s[2];

	if (!n || bpf_probe_read_user(s, sizeof(s), (const void *)vals))
		return -1;
	/* shorter is no traceparent; longer is a later version's, whose first 55 are the same */
	if (s[1] < TRACEPARENT_LEN ||
	    bpf_probe_read_user(w->ctx.traceparent, TRACEPARENT_LEN, (const void *)s[0]))
		return -1;
	w->ctx.traceparent[TRACEPARENT_LEN] = 0;
	w->ctx.source = TRACE_CTX_HEADER;
	__builtin_memset(w->ctx.span_id, 0, sizeof(w->ctx.span_id));
	w->found = 1;
	return 0;
}

/*
 * The next group of a Go >= 1.24 header map: a small map's only group, or
 * each group of each table its directory names (a table spans several
 * adjacent directory entries: each is read once). 0 when none is left.
 */
static __always_inline __u64 next_group(struct gomap_walk *w, const struct go_layout *l)
{
	__u64 tab, groups[2];
	int i;

	if (!w->nold) /* a small map: buckets is its group */
		return w->idx++ ? 0 : w->buckets;
	for (i = 0; i < MAX_HDR_DIR && w->idx >= w->nb; i++) {
		if (w->oidx >= w->nold)
			return 0;
		if (bpf_probe_read_user(&tab, 8, (const void *)(w->old + (__u64)w->oidx++ * 8)) ||
		    !tab) {
			w->err = -1;
			return 0;
		}
		if (tab == w->cur)
			continue;
		w->cur = tab;
		if (bpf_probe_read_user(&groups[0], 8, (const void *)(tab + l->hdr.st_groups)) ||
		    bpf_probe_read_user(&groups[1], 8, (const void *)(tab + l->hdr.st_mask))) {
			w->err = -1;
			return 0;
		}
		w->buckets = groups[0];
		w->nb = groups[1] + 1;
		w->idx = 0;
	}
	if (w->idx >= w->nb)
		return 0;
	return w->buckets + (__u64)w->idx++ * l->hdr.sg_size;
}

/* One bucket or group per call, so that bpf_loop keeps the verifier from unrolling them all. */
static long visit_header_block(__u32 visit, void *arg)
{
	struct work *wk = ((struct work_ref *)arg)->w;
	const struct go_layout *l = ((struct work_ref *)arg)->l;
	bool swiss;
	__u64 at, ctrl, kv[4];
	struct hdr_walk *w;
	struct read_buf *b;
	__u32 s, size;

	if (!wk || !l)
		return 1;
	w = &wk->hw;
	b = &wk->buf;
	swiss = l->hdr.map == GO_MAP_SWISS;
	at = swiss ? next_group(&w->mw, l) : gomap_next(&w->mw, &l->hdr.hmap);
	if (!at) {
		w->ended = 1;
		return 1;
	}
	size = swiss ? l->hdr.sg_size : l->hdr.hmap.size;
	if (size > MAX_BUCKET_SIZE)
		size = MAX_BUCKET_SIZE;
	if (bpf_probe_read_user(b->data, size, (const void *)at)) {
		w->mw.err = -1;
		return 1;
	}
	ctrl = swiss ? gomap_word(b->words, l->hdr.sg_ctrl) : 0;
	for (s = 0; s < BUCKET_SLOTS; s++) {
		if (swiss) {
			if (!swiss_slot_full(ctrl, s))
				continue;
			swiss_slot(b->words, &l->hdr, s, kv);
		} else {
			if (!gomap_slot_full(b->words, &l->hdr.hmap, s))
				continue;
			gomap_slot(b->words, &l->hdr.hmap, s, GO_SLICE_SIZE, kv);
		}
		if (is_tp_key(kv[0], kv[1])) {
			take_value(w, kv[2], kv[3]);
			return 1;
		}
	}
	if (!swiss)
		gomap_done(&w->mw, &l->hdr.hmap, b->words);
	return 0;
}

/* Looks for the Traceparent header in the net/http.Header map at HDR; W->hw says what was found. */
static __always_inline int find_traceparent(struct work *wk, const struct go_layout *l, __u64 hdr)
{
	struct work_ref ref = { .w = wk, .l = l };
	struct hdr_walk *w = &wk->hw;
	__u64 h[MAP_HEADER_LEN / 8];
	int cut = 0;

	__builtin_memset(w, 0, sizeof(*w));
	if (!hdr)
		return 0;
	/* the map header in one read: user space checked the members lie in it */
	__builtin_memset(h, 0, sizeof(h));
	if (bpf_probe_read_user(h, l->hdr.map == GO_MAP_SWISS ? sizeof(h) :
						      gomap_header_len(&l->hdr.hmap), (const void *)hdr))
		return -1;
	if (l->hdr.map == GO_MAP_SWISS) {
		if (!swiss_start(&w->mw, &l->hdr, h))
			return 0;
	} else {
		/* more than 2^MAX_HDR_B buckets: the traceparent may be among those left */
		cut = gomap_start(&w->mw, &l->hdr.hmap, h, MAX_HDR_B);
		if (!w->mw.buckets)
			return 0;
	}
	/* a request's headers are most often one bucket or group: no loop for that one */
	if (!visit_header_block(0, &ref))
		bpf_loop(MAX_HDR_VISITS - 1, visit_header_block, &ref, 0);
	w->cut = !w->found && (cut || !w->ended);
	return w->mw.err;
}

/* A request whose header holds no traceparent, or none among the fields read */
static __always_inline void count_bare(const struct work *wk)
{
	stat_inc(wk->hw.cut ? STAT_HTTP_CUT : STAT_HTTP_BARE);
}

/* One header field of a grpc stream's first block per call. */
static long visit_grpc_field(__u32 i, void *arg)
{
	struct work *wk = ((struct work_ref *)arg)->w;
	const struct go_layout *l = ((struct work_ref *)arg)->l;
	struct hdr_walk *w;
	__u64 f[5];

	if (!wk || !l)
		return 1;
	w = &wk->hw;
	if (i >= w->nfields)
		return 1;
	/* {Name, Value string; Sensitive bool}: user space checked it fits 40 bytes */
	if (bpf_probe_read_user(f, sizeof(f), (const void *)(w->fields + (__u64)i * l->grpc.hf_size))) {
		w->mw.err = -1;
		return 1;
	}
	if (!is_tp_name(f[(l->grpc.hf_name / 8) & 3], f[((l->grpc.hf_name / 8) + 1) & 3],
			TP_KEY_LO_LOWER))
		return 0;
	/* the value string's header, as take_value reads a []string's first element */
	take_value(w, w->fields + (__u64)i * l->grpc.hf_size + l->grpc.hf_value, 1);
	return 1;
}

/*
 * A grpc stream's headers, on its connection's reader goroutine: a
 * traceparent among them waits, keyed by transport and stream ID, for the
 * stream's handler to start.
 */
static __always_inline int grpc_headers(struct pt_regs *ctx, struct work *wk,
					const struct go_layout *l, __u32 tgid)
{
	struct work_ref ref = { .w = wk, .l = l };
	struct grpc_stream_key key = { .tgid = tgid };
	__u64 t = GO_ARG1(ctx), frame = GO_ARG4(ctx), hf, fields[2];
	struct hdr_walk *w = &wk->hw;

	__builtin_memset(w, 0, sizeof(*w));
	if (!t || !frame || bpf_probe_read_user(&hf, 8, (const void *)frame) || !hf ||
	    bpf_probe_read_user(&key.stream_id, 4, (const void *)(hf + l->grpc.fh_stream_id)) ||
	    bpf_probe_read_user(fields, sizeof(fields), (const void *)(frame + l->grpc.mhf_fields)))
		return -1;
	key.transport = t;
	w->fields = fields[0];
	w->nfields = fields[1] < MAX_GRPC_FIELDS ? fields[1] : MAX_GRPC_FIELDS;
	bpf_loop(MAX_GRPC_FIELDS, visit_grpc_field, &ref, 0);
	if (w->mw.err)
		return -1;
	if (w->found)
		bpf_map_update_elem(&grpc_streams, &key, &w->ctx, BPF_ANY);
	return 0;
}

/*
 * The key of the goroutine a probe fires on: R14 (arm64: R28) holds its
 * g at a Go function's entry, and g.goid is GOID_OFF into it. -1 when it
 * cannot be read.
 */
static __always_inline int goroutine_key(struct pt_regs *ctx, __u64 goid_off, __u32 tgid,
					 struct goid_key *key)
{
	__u64 g = GO_G(ctx);

	key->tgid = tgid;
	key->__pad = 0;
	return !g || !goid_off || read_user(&key->goid, sizeof(key->goid), g + goid_off) ? -1 : 0;
}

/* Where a request's handler is, as handler_state sees it */
enum handler_state {
	HANDLER_IN, /* still serving it, or not watched */
	HANDLER_AT, /* entering or leaving: no request of its own just now */
	HANDLER_LEFT, /* returned: the request is over */
};

/*
 * Has the handler of C, a request whose end no probe sees, returned? G is
 * the goroutine that serves it; SP, when it runs on this CPU, the user
 * stack pointer. Stack growth moves a stack whole, so the frame keeps its
 * distance from the top. Once the handler has returned, the caller's next
 * call pushes its own return address there. Until that call, the
 * caller's SP lies above it; so does the next request's, until the probe
 * at its handler's entry has run (it traps there, and the call pushed the
 * same address again), and the handler's last instruction's: those few
 * samples go without a request, rather than with the one before. A word
 * that cannot be read ends the request too.
 */
static __always_inline enum handler_state handler_state(const struct trace_ctx *c, __u64 g,
							__u64 sp)
{
	__u64 hi, word, at;

	if (!c->ret)
		return HANDLER_IN;
	if (read_user(&hi, sizeof(hi), g + G_STACK_HI))
		return HANDLER_LEFT;
	at = hi - c->depth;
	if (sp >= at && sp < hi)
		return HANDLER_AT;
	return read_user(&word, sizeof(word), at) || word != c->ret ? HANDLER_LEFT : HANDLER_IN;
}

/*
 * Watches the handler's frame of the request in C, which the probe at
 * the handler's entry found (SP at the return address, g in its
 * register): unless its end is probed.
 */
static __always_inline void watch_handler(struct pt_regs *ctx, struct trace_ctx *c)
{
	__u64 sp = REG_SP(ctx), g = GO_G(ctx), hi;

	c->ret = 0;
	c->g = 0;
	c->depth = 0;
	if (!RETURN_AT_SP || request_ends ||
	    read_user(&hi, sizeof(hi), g + G_STACK_HI) || hi <= sp || hi - sp > 0xffffffffULL ||
	    read_user(&c->ret, sizeof(c->ret), sp)) {
		c->ret = 0;
		return;
	}
	c->g = g;
	c->depth = hi - sp;
}

/* Do A and B name the same trace? Their 32 hex digits, after "00-". */
static __always_inline bool same_trace(const struct trace_ctx *a, const struct trace_ctx *b)
{
	__u8 diff = 0;
	int i;

#pragma unroll
	for (i = 3; i < 3 + TRACE_HEX_LEN; i++)
		diff |= a->traceparent[i] ^ b->traceparent[i];
	return !diff;
}

/*
 * C becomes KEY's goroutine's context; NULL: it has none from now on. A
 * new request is a new epoch; so is a span of another trace than the
 * goroutine's, where a span of the same one (NESTED) continues it. The
 * epoch that ends and the one that begins are spans (SPANS false: a
 * request whose end no probe sees, a grpc stream's).
 */
static __always_inline void set_goroutine_ctx(const struct goid_key *key, struct trace_ctx *c,
					      bool nested, bool spans)
{
	const struct trace_ctx *cur = bpf_map_lookup_elem(&trace_ctxs, key);

	if (c) {
		c->origin = 0;
		c->epoch = nested && cur && epoch_state(cur->epoch) == EPOCH_READ &&
					   same_trace(cur, c) ?
				   cur->epoch :
				   0;
	}
	if (cur && (!c || !c->epoch))
		span_note(SPAN_END, key->tgid, key->goid, cur->epoch, cur->source, NULL);
	if (!c) {
		bpf_map_delete_elem(&trace_ctxs, key);
		return;
	}
	if (!c->epoch) {
		c->epoch = epoch_of(bpf_ktime_get_ns());
		if (spans)
			span_note(SPAN_BEGIN, key->tgid, key->goid, c->epoch, c->source,
				  c->traceparent + 3);
	}
	bpf_map_update_elem(&trace_ctxs, key, c, BPF_ANY);
}

/* The traceparent of request REQ into WK->hw (found: hw.found); -1 when its header cannot be read. */
static __always_inline int read_request(struct work *wk, const struct go_layout *l, __u64 req)
{
	__u64 hdr;

	wk->hw.found = 0;
	if (!req || read_user(&hdr, sizeof(hdr), req + l->hdr.req_header))
		return -1;
	return find_traceparent(wk, l, hdr) < 0 ? -1 : 0;
}

/*
 * C, a goroutine's own context, is a request whose header is still to be
 * read: it is read now, on that goroutine's CPU, so that nothing else
 * writes C meanwhile but a child's mark that it has none. The bytes go in
 * before the state that says they are there. True when C has a
 * traceparent now.
 */
static __always_inline bool resolve_own(struct work *wk, const struct go_layout *l,
					struct trace_ctx *c)
{
	__u64 e = c->epoch, old;

	if (epoch_state(e) != EPOCH_PENDING)
		return epoch_state(e) == EPOCH_READ;
	if (read_request(wk, l, c->req) < 0) {
		stat_inc(STAT_HTTP_ERR);
		__sync_val_compare_and_swap(&c->epoch, e, epoch_of(e) | EPOCH_NONE);
		return false;
	}
	if (!wk->hw.found) {
		if (__sync_val_compare_and_swap(&c->epoch, e, epoch_of(e) | EPOCH_NONE) == e)
			count_bare(wk);
		return false;
	}
	__builtin_memcpy(c->traceparent, wk->hw.ctx.traceparent, sizeof(c->traceparent));
	c->source = TRACE_CTX_HEADER;
	/*
	 * A sample that interrupted this read may have read the same header
	 * and said so first: the request is read all the same
	 */
	old = __sync_val_compare_and_swap(&c->epoch, e, epoch_of(e));
	return old == e || old == epoch_of(e);
}

/*
 * COPY, a context a child took while its request's header was unread,
 * whose request still lives (the caller checked): read it into the copy.
 * OWNER, when known, is the request's own context: a header without one
 * marks it, once, so that the request counts once as bare.
 */
static __always_inline bool resolve_copy(struct work *wk, const struct go_layout *l,
					 struct trace_ctx *copy, struct trace_ctx *owner)
{
	__u64 e = copy->epoch;

	if (read_request(wk, l, copy->req) < 0) {
		stat_inc(STAT_HTTP_ERR);
		return false;
	}
	if (!wk->hw.found) {
		if (owner && __sync_val_compare_and_swap(&owner->epoch, e,
							 epoch_of(e) | EPOCH_NONE) == e)
			count_bare(wk);
		return false;
	}
	__builtin_memcpy(copy->traceparent, wk->hw.ctx.traceparent, sizeof(copy->traceparent));
	copy->source = TRACE_CTX_HEADER;
	copy->epoch = epoch_of(e);
	return true;
}

/* resolve_own with a work slot of its own; true when C has a traceparent. */
static __always_inline bool resolve_here(const struct go_layout *l, struct trace_ctx *c)
{
	struct work *w;
	__u32 slot;
	bool found;

	if (epoch_state(c->epoch) != EPOCH_PENDING)
		return epoch_state(c->epoch) == EPOCH_READ;
	w = work_claim(&slot);
	if (!w) {
		stat_inc(STAT_BUSY);
		return false;
	}
	found = resolve_own(w, l, c);
	work_release(slot);
	return found;
}

/*
 * Has the handler of O, goroutine GOID's own request, returned? Its g may
 * serve another goroutine by now (Go reuses them): then it has.
 */
static __always_inline bool origin_left(const struct go_layout *l, const struct trace_ctx *o,
					__u64 goid)
{
	__u64 now;

	return read_user(&now, sizeof(now), o->g + l->g_goid) || now != goid ||
	       handler_state(o, o->g, 0) != HANDLER_IN;
}

/* Has the request of C, a context taken from the goroutine that started one, ended there? */
static __always_inline bool ctx_ended(const struct go_layout *l, __u32 tgid,
				      const struct trace_ctx *c)
{
	struct goid_key key = { .tgid = tgid, .goid = c->origin };
	const struct trace_ctx *o = bpf_map_lookup_elem(&trace_ctxs, &key);
	__u64 e;

	if (!o)
		return true;
	/* read again after the frame: the origin may rewrite O for its next request meanwhile */
	e = o->epoch;
	return epoch_of(e) != epoch_of(c->epoch) || epoch_state(e) == EPOCH_NONE ||
	       (o->ret && origin_left(l, o, c->origin)) || o->epoch != e;
}

/* KEY's goroutine takes C, unless another writer holds its slot just now */
static __always_inline void spawn_slot_put(const struct goid_key *key, const struct trace_ctx *c)
{
	__u32 i = spawn_slot_index(key->tgid, key->goid);
	struct spawn_slot *s = bpf_map_lookup_elem(&spawn_slots, &i);
	__u64 seq;

	if (!s)
		return;
	seq = s->seq;
	if ((seq & 1) || __sync_val_compare_and_swap(&s->seq, seq, seq + 1) != seq)
		return;
	s->key = *key;
	__builtin_memcpy(&s->ctx, c, sizeof(s->ctx));
	__sync_fetch_and_add(&s->seq, 1);
}

/*
 * KEY's context as it started, into OUT: false when its slot holds
 * another goroutine's, or is being written. TAKE: the slot is emptied,
 * its context moving into spawn_ctxs.
 */
static __always_inline bool spawn_slot_get(const struct goid_key *key, struct trace_ctx *out,
					   bool take)
{
	__u32 i = spawn_slot_index(key->tgid, key->goid);
	struct spawn_slot *s = bpf_map_lookup_elem(&spawn_slots, &i);
	__u64 seq;

	if (!s)
		return false;
	seq = __sync_fetch_and_or(&s->seq, 0);
	if ((seq & 1) || s->key.goid != key->goid || s->key.tgid != key->tgid)
		return false;
	if (take) {
		if (__sync_val_compare_and_swap(&s->seq, seq, seq + 1) != seq)
			return false;
		__builtin_memcpy(out, &s->ctx, sizeof(*out));
		s->key.goid = 0;
		__sync_fetch_and_add(&s->seq, 1);
		return true;
	}
	__builtin_memcpy(out, &s->ctx, sizeof(*out));
	return __sync_fetch_and_or(&s->seq, 0) == seq;
}

/*
 * A goroutine starts (Go before 1.21, which keeps no g.parentGoid): it
 * takes the context of the goroutine that starts it, its own or one it
 * took in turn, so that a request's fan-out, and theirs, carry its trace
 * ID. newproc's closure runs on g0: the starter is m.curg; the new g is
 * runqput's second argument. The context is copied first: an LRU map may
 * reuse the very element an update evicts.
 */
static __always_inline int spawn_ctx(struct pt_regs *ctx, const struct go_layout *l, __u32 tgid)
{
	struct goid_key key = { .tgid = tgid };
	__u64 g = GO_G(ctx), newg = GO_ARG2(ctx), m, curg;
	struct trace_ctx *c;
	struct trace_ctx copy;

	if (!g || !newg || bpf_probe_read_user(&m, 8, (const void *)(g + l->g_m)) || !m ||
	    bpf_probe_read_user(&curg, 8, (const void *)(m + l->m_curg)) || !curg ||
	    bpf_probe_read_user(&key.goid, 8, (const void *)(curg + l->g_goid)))
		return -1;
	c = bpf_map_lookup_elem(&trace_ctxs, &key);
	/* a request whose handler returned starts nothing (the next one's reader) */
	if (c && handler_state(c, curg, 0) != HANDLER_IN)
		return 0;
	/* the child gets the trace ID itself: this is the starter's CPU, where its request is read */
	if (c && !resolve_here(l, c))
		c = NULL;
	if (c) {
		__builtin_memcpy(&copy, c, sizeof(copy));
		/* its own: the child's lives as long as the starter serves this request */
		copy.origin = key.goid;
	} else if ((c = bpf_map_lookup_elem(&spawn_ctxs, &key))) {
		/* one it took in turn: the same request, the same origin */
		__builtin_memcpy(&copy, c, sizeof(copy));
	} else if (!spawn_slot_get(&key, &copy, false)) {
		return 0;
	}
	if (bpf_probe_read_user(&key.goid, 8, (const void *)(newg + l->g_goid)) || !key.goid)
		return -1;
	spawn_slot_put(&key, &copy);
	return 0;
}

/* spawn_ctx, its hit counted down from its process's budget, and its time added up there */
static __always_inline void spawn(struct pt_regs *ctx, const struct go_layout *l, __u32 tgid)
{
	__u64 t0 = bpf_ktime_get_ns();
	struct probe_budget *b = budget_spend(&spawn_budgets, tgid, BUDGET_SPAWN);

	spawn_ctx(ctx, l, tgid);
	budget_time(b, t0);
}

/*
 * A grpc stream's handler starts on the current goroutine: the stream's
 * traceparent, or none, becomes its context. The ServerTransport
 * interface's data word is the *http2Server its headers came through.
 */
static __always_inline int grpc_stream(struct pt_regs *ctx, const struct go_layout *l,
				       const struct goid_key *key)
{
	struct grpc_stream_key skey = { .tgid = key->tgid, .transport = GO_ARG3(ctx) };
	__u64 stream = GO_ARG4(ctx);
	struct trace_ctx *c;

	if (!stream ||
	    bpf_probe_read_user(&skey.stream_id, 4, (const void *)(stream + l->grpc.stream_id))) {
		stat_inc(STAT_HTTP_ERR);
		set_goroutine_ctx(key, NULL, false, true);
		return -1;
	}
	c = bpf_map_lookup_elem(&grpc_streams, &skey);
	set_goroutine_ctx(key, c, false, false);
	if (c)
		bpf_map_delete_elem(&grpc_streams, &skey);
	return 0;
}

static __always_inline __u8 hex_digit(__u8 d)
{
	return d < 10 ? '0' + d : 'a' - 10 + d;
}

/* "00-TRACE-SPAN-01" into C: an SDK span's IDs in the traceparent form user space reads. */
static __always_inline void format_ctx(struct trace_ctx *c, const __u8 *trace, const __u8 *span,
				       __u32 source)
{
	int i;

	c->traceparent[0] = '0';
	c->traceparent[1] = '0';
	c->traceparent[2] = '-';
#pragma unroll
	for (i = 0; i < 16; i++) {
		c->traceparent[3 + 2 * i] = hex_digit(trace[i] >> 4);
		c->traceparent[4 + 2 * i] = hex_digit(trace[i] & 15);
	}
	c->traceparent[35] = '-';
#pragma unroll
	for (i = 0; i < 8; i++) {
		c->traceparent[36 + 2 * i] = hex_digit(span[i] >> 4);
		c->traceparent[37 + 2 * i] = hex_digit(span[i] & 15);
		c->span_id[i] = span[i];
	}
	c->traceparent[52] = '-';
	c->traceparent[53] = '0';
	c->traceparent[54] = '1';
	c->traceparent[55] = 0;
	c->source = source;
	c->ret = 0;
	c->g = 0;
	c->depth = 0;
}

/* A trace.SpanContext's trace ID and span ID, at SC, into IDS[0..16) and IDS[16..24). */
static __always_inline int read_span_ids(__u64 sc, const struct go_layout *l, __u8 *ids)
{
	return bpf_probe_read_user(ids, 16, (const void *)(sc + l->otel.sc_trace)) ||
	       bpf_probe_read_user(ids + 16, 8, (const void *)(sc + l->otel.sc_span));
}

/*
 * A recording span starts on the current goroutine: it becomes the
 * goroutine's context, until it ends. Its SpanContext argument is on the
 * stack (it holds arrays, which Go's register ABI never assigns).
 */
static __always_inline int otel_start(struct pt_regs *ctx, struct work *wk,
				      const struct go_layout *l, const struct goid_key *key)
{
	struct trace_ctx *cur = bpf_map_lookup_elem(&trace_ctxs, key);
	__u8 ids[24];

	/* a span of the request the goroutine serves continues it: its header is read first */
	if (cur)
		resolve_own(wk, l, cur);
	if (read_span_ids(REG_SP(ctx) + l->otel.start_sc, l, ids))
		return -1;
	format_ctx(&wk->hw.ctx, ids, ids + 16, TRACE_CTX_OTEL);
	set_goroutine_ctx(key, &wk->hw.ctx, true, true);
	return 0;
}

/*
 * A recording span ends (its first argument is the *recordingSpan). When
 * it is the current goroutine's context, the goroutine returns to the
 * span's parent: a local span, or the remote caller a traceparent named;
 * a root span leaves none. A span ended on another goroutine changes
 * nothing.
 */
static __always_inline int otel_end(struct pt_regs *ctx, struct work *wk,
				    const struct go_layout *l, const struct goid_key *key)
{
	__u64 span = GO_ARG1(ctx), id, parent;
	const struct trace_ctx *c;
	__u8 ids[24], remote = 0;
	__u64 *w = (__u64 *)ids;

	if (!span ||
	    bpf_probe_read_user(&id, 8, (const void *)(span + l->otel.span_ctx + l->otel.sc_span)))
		return -1;
	c = bpf_map_lookup_elem(&trace_ctxs, key);
	if (!c || c->source != TRACE_CTX_OTEL || *(const __u64 *)c->span_id != id)
		return 0;
	parent = span + l->otel.span_parent;
	if (read_span_ids(parent, l, ids) ||
	    bpf_probe_read_user(&remote, 1, (const void *)(parent + l->otel.sc_remote)) ||
	    !(w[0] | w[1]) || !w[2]) {
		set_goroutine_ctx(key, NULL, false, true);
		return 0;
	}
	format_ctx(&wk->hw.ctx, ids, ids + 16, remote ? TRACE_CTX_HEADER : TRACE_CTX_OTEL);
	set_goroutine_ctx(key, &wk->hw.ctx, true, true);
	return 0;
}

/*
 * A request starts being served on the current goroutine (R14, R28 hold g at
 * a Go function's entry): its traceparent, or none, becomes that
 * goroutine's context, replacing what an earlier request on the same
 * connection left. The cookie says where the *http.Request is.
 */
static __always_inline int http_begin(struct pt_regs *ctx, struct work *wk,
				      const struct go_layout *l, const struct goid_key *key)
{
	__u32 cookie = PROBE_KIND(bpf_get_attach_cookie(ctx));
	/* both read: the context allows no computed offsets */
	__u64 rcx = GO_ARG3(ctx), rdi = GO_ARG4(ctx), req, hdr;

	barrier_var(rcx);
	req = cookie == HTTP_PROBE_REQ_RCX ? rcx : rdi;
	if (!req || bpf_probe_read_user(&hdr, 8, (const void *)(req + l->hdr.req_header)) ||
	    find_traceparent(wk, l, hdr) < 0) {
		stat_inc(STAT_HTTP_ERR);
		set_goroutine_ctx(key, NULL, false, true);
		return -1;
	}
	if (!wk->hw.found)
		count_bare(wk);
	else
		watch_handler(ctx, &wk->hw.ctx);
	set_goroutine_ctx(key, wk->hw.found ? &wk->hw.ctx : NULL, false, true);
	return 0;
}

/*
 * The same, when no span needs the request's trace ID as it begins: its
 * header is read when a sample first needs it (resolve_own, resolve_copy),
 * and most requests are never sampled. A connection's next request
 * rewrites its goroutine's element in place, its epoch 0 meanwhile for
 * readers on other CPUs, then the one before plus a step: an epoch only
 * has to differ from the goroutine's earlier ones, and a clock read is a
 * helper call, most of what a hit costs. A goroutine without one gets one.
 */
static __always_inline int http_begin_lazy(struct pt_regs *ctx, __u32 tgid, __u32 cookie,
					   __u64 goid_off)
{
	__u64 rcx = GO_ARG3(ctx), rdi = GO_ARG4(ctx), req, old;
	struct goid_key key;
	struct trace_ctx *c, n;

	barrier_var(rcx);
	req = cookie == HTTP_PROBE_REQ_RCX ? rcx : rdi;
	if (goroutine_key(ctx, goid_off, tgid, &key))
		return 0;
	c = bpf_map_lookup_elem(&trace_ctxs, &key);
	if (c) {
		old = __sync_lock_test_and_set(&c->epoch, 0);
		watch_handler(ctx, c);
		c->req = req;
		c->origin = 0;
		c->source = TRACE_CTX_HEADER;
		__sync_lock_test_and_set(&c->epoch, (epoch_of(old) ?: epoch_of(bpf_ktime_get_ns())) +
							    EPOCH_STATE + 1 + EPOCH_PENDING);
		return 0;
	}
	__builtin_memset(&n, 0, sizeof(n));
	watch_handler(ctx, &n);
	n.req = req;
	n.source = TRACE_CTX_HEADER;
	n.epoch = epoch_of(bpf_ktime_get_ns()) | EPOCH_PENDING;
	bpf_map_update_elem(&trace_ctxs, &key, &n, BPF_ANY);
	return 0;
}

/* An HTTP/1.1 request's end, without spans: its goroutine keeps its element, with no context. */
static __always_inline void http_end_lazy(const struct goid_key *key)
{
	struct trace_ctx *c = bpf_map_lookup_elem(&trace_ctxs, key);

	if (c)
		__sync_lock_test_and_set(&c->epoch, epoch_of(c->epoch) | EPOCH_NONE);
}

/*
 * Appends C as the event's last label, its key naming its source
 * ("traceparent" or "otel-sdk"), and says so (SAMPLE_F_TRACEPARENT); with
 * the label slots full it is left out, as a label would be. Global, as
 * add_label is.
 */
__noinline int add_traceparent(struct sample_event *e, const struct trace_ctx *c)
{
	struct go_label *lb;

	if (!e || !c || !(lb = next_label(e)))
		return 0;
	/* the key names the source */
	if (c->source == TRACE_CTX_OTEL) {
		__builtin_memcpy(lb->key, "otel-sdk", 8);
		lb->key_len = 8;
	} else if (c->source == TRACE_CTX_OBI) {
		__builtin_memcpy(lb->key, "obi", 3);
		lb->key_len = 3;
	} else {
		__builtin_memcpy(lb->key, "traceparent", 11);
		lb->key_len = 11;
	}
	lb->value_len = TRACEPARENT_LEN;
	__builtin_memcpy(lb->value, c->traceparent, TRACEPARENT_LEN);
	e->nlabels++;
	e->labels_hash = hash_label(e->labels_hash, lb);
	e->flags |= SAMPLE_F_TRACEPARENT;
	if (traced_only)
		e->flags |= SAMPLE_F_TRACE;
	return 0;
}

/*
 * The sampled goroutine's request context: its own (GOID, which go_walk
 * read); else the one it took from the goroutine that started it (spawn,
 * before Go 1.21) or, on Go >= 1.21, that goroutine's own (one level: a
 * handler's goroutines), which it keeps from then on, as spawn would have
 * given it: once that goroutine has moved on, the request it was started
 * for is over. SP, the sample's user stack pointer, tells a handler that
 * has just returned. FLAGS get SAMPLE_F_CTX_CHILD and SAMPLE_F_CTX_ENDED.
 */
static __always_inline const struct trace_ctx *sampled_ctx(struct work *w,
							    const struct go_layout *l, __u32 tgid,
							    __u64 curg, __u64 goid, __u64 sp,
							    __u32 *flags)
{
	struct goid_key key = { .tgid = tgid, .goid = goid };
	struct trace_ctx *c, *copy = &w->tc, *owner;
	__u64 parent, e;
	bool ended;

	if (!want_contexts || (!l->hdr.map && !l->grpc.ok && !l->otel.ok) || !curg)
		return NULL;
	c = bpf_map_lookup_elem(&trace_ctxs, &key);
	/* epoch 0: the begin probe this sample interrupted is rewriting it (a uprobe's program can be) */
	if (c && !c->epoch)
		return NULL;
	if (c && epoch_state(c->epoch) != EPOCH_NONE) {
		switch (handler_state(c, curg, sp)) {
		case HANDLER_AT:
			/* perhaps in the trap of the next request's probe, after its program */
			return NULL;
		case HANDLER_LEFT:
			/* the goroutine serves none until its next request */
			__sync_lock_test_and_set(&c->epoch, epoch_of(c->epoch) | EPOCH_NONE);
			break;
		default:
			if (resolve_own(w, l, c))
				return c;
		}
	}
	c = bpf_map_lookup_elem(&spawn_ctxs, &key);
	/* first seen: its context moves from the start's slot, to be kept while it is sampled */
	if (!c && spawn_slot_get(&key, copy, true)) {
		bpf_map_update_elem(&spawn_ctxs, &key, copy, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&spawn_ctxs, &key) ?: copy;
	}
	if (c) {
		if (epoch_state(c->epoch) == EPOCH_NONE)
			return NULL;
		ended = ctx_ended(l, tgid, c);
		/* its request's header, unread when it was started: now, or never once it ended */
		if (epoch_state(c->epoch) == EPOCH_PENDING) {
			key.goid = c->origin;
			owner = bpf_map_lookup_elem(&trace_ctxs, &key);
			if (ended || !resolve_copy(w, l, c, owner)) {
				c->epoch = epoch_of(c->epoch) | EPOCH_NONE;
				return NULL;
			}
		}
		*flags |= SAMPLE_F_CTX_CHILD | (ended ? SAMPLE_F_CTX_ENDED : 0);
		return c;
	}
	if (!l->g_parent_goid ||
	    bpf_probe_read_user(&parent, 8, (const void *)(curg + l->g_parent_goid)) || !parent)
		return NULL;
	key.goid = parent;
	c = bpf_map_lookup_elem(&trace_ctxs, &key);
	if (!c)
		return NULL;
	/* the parent may be rewriting it for its next request: a copy between two equal epochs */
	e = __sync_fetch_and_or(&c->epoch, 0);
	__builtin_memcpy(copy, c, sizeof(*copy));
	if (!e || __sync_fetch_and_or(&c->epoch, 0) != e || epoch_state(e) == EPOCH_NONE)
		return NULL;
	copy->epoch = e;
	if ((copy->ret && origin_left(l, copy, parent)) ||
	    (epoch_state(e) == EPOCH_PENDING && !resolve_copy(w, l, copy, c)))
		return NULL;
	*flags |= SAMPLE_F_CTX_CHILD;
	copy->origin = parent;
	key.goid = goid;
	bpf_map_update_elem(&spawn_ctxs, &key, copy, BPF_NOEXIST);
	return copy;
}

#endif /* __TRACEPARENT_BPF_H */
