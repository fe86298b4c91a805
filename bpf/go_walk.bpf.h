/* SPDX-License-Identifier: GPL-2.0 */
/* go_walk.bpf.h: fsbase -> g -> m -> curg -> labels, one helper per step, for every program that reads Go labels. */
#ifndef __GO_WALK_BPF_H
#define __GO_WALK_BPF_H

#include "arch.bpf.h"
#include "ctxprof.h"
#include "gomap.h"
#include "work.bpf.h"

/* Set by user space between open and load. */
const volatile bool traced_only = false;
/* --traced-only: the trace keys, in the user's order of preference */
const volatile struct label_key trace_keys[MAX_TRACE_KEYS] = {};
const volatile __u32 ntrace_keys = 0;

/* --cgroup: the cgroup v2 ID of the subtree to sample and its depth; 0 for every cgroup */
const volatile __u64 cgroup_id = 0;
const volatile __u32 cgroup_level = 0;

/* Is the current task in the --cgroup subtree? Its ancestor at that depth is the cgroup. */
static __always_inline bool in_cgroup(void)
{
	return !cgroup_id || bpf_get_current_ancestor_cgroup_id(cgroup_level) == cgroup_id;
}

/*
 * A tick of a process that is no target ends at this bit: one load from a
 * page, where a lookup in the targets map would be most of what such a
 * tick costs under --all. User space keeps it (targets.c, mark_target).
 */
__u64 target_bits[TARGET_BITS / 64] SEC(".data.target_bits");

static __always_inline bool maybe_target(__u32 tgid)
{
	return target_bits[tgid / 64 % (TARGET_BITS / 64)] >> (tgid % 64) & 1;
}

/* tgid -> layout of that process's Go runtime; user space sizes it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct target_info);
} targets SEC(".maps");

/*
 * The layout of target T, unless it exec'd, is in the middle of an exec
 * (the new program's memory is in place before the exec tracepoint fires),
 * or is past the end of its exit (no mm).
 */
static __always_inline const struct go_layout *target_layout(const struct target_info *t)
{
	struct task_struct *task = bpf_get_current_task_btf();

	if (t->execed || !task->mm || BPF_CORE_READ_BITFIELD(task, in_execve))
		return NULL;
	return &t->layout;
}

static __always_inline int read_user(void *dst, __u32 size, __u64 src)
{
	return bpf_probe_read_user(dst, size, (const void *)src);
}

/* The 8-byte word at a layout-given offset inside a read_buf; Go aligns them all. */
static __always_inline __u64 buf_word(const struct read_buf *b, __u32 off)
{
	return b->words[(off & (MAX_BUCKET_SIZE - 1)) / 8];
}

/*
 * Folds one label into a running 64-bit hash: lengths, then the words of
 * the zero-padded key and value that hold bytes (usually two to six of
 * the 24), one multiply each. It only tells whether a sample repeats the
 * label set its CPU sent last for the same process.
 */
static __always_inline __u64 hash_label(__u64 h, const struct go_label *lb)
{
	const __u64 *k = (const __u64 *)lb->key, *v = (const __u64 *)lb->value;
	__u32 kw = ((lb->key_len < MAX_KEY_LEN ? lb->key_len : MAX_KEY_LEN) + 7) / 8;
	__u32 vw = ((lb->value_len < MAX_VALUE_LEN ? lb->value_len : MAX_VALUE_LEN) + 7) / 8;
	int i;

	h = (h ^ ((__u64)lb->key_len << 32 | lb->value_len)) * 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < MAX_KEY_LEN / 8; i++) {
		if (i >= kw)
			break;
		h = (h ^ k[i]) * 0x100000001b3ULL;
	}
	for (i = 0; i < MAX_VALUE_LEN / 8; i++) {
		if (i >= vw)
			break;
		h = (h ^ v[i]) * 0x100000001b3ULL;
	}
	return h ^ (h >> 29);
}

#define BYTES(c) ((c) * 0x0101010101010101ULL)

/*
 * 0x80 in each byte of W (all ASCII) that lies in [LO, HI]: adding
 * 0x80 - LO sets a byte's top bit when it is >= LO, adding 0x7f - HI when
 * it is > HI, and neither sum carries into the next byte.
 */
static __always_inline __u64 bytes_in(__u64 w, __u8 lo, __u8 hi)
{
	return (w + BYTES(0x80 - lo)) & ~(w + BYTES(0x7f - hi)) & BYTES(0x80);
}

/* Are the first TRACE_HEX_LEN bytes of LB's value hex digits? Eight at a time. */
static __always_inline bool value_is_hex(const struct go_label *lb)
{
	const __u64 *v = (const __u64 *)lb->value;
	__u64 bad = 0, w;
	int i;

#pragma unroll
	for (i = 0; i < TRACE_HEX_LEN / 8; i++) {
		w = v[i];
		bad |= w & BYTES(0x80);
		/* | 0x20 folds A-F onto a-f, and only them */
		bad |= ~(bytes_in(w, '0', '9') | bytes_in(w | BYTES(0x20), 'a', 'f')) & BYTES(0x80);
	}
	return lb->value_len == TRACE_HEX_LEN && !bad;
}

/* The index of LB's key in trace_keys, or MAX_TRACE_KEYS: key words compared without branches. */
static __always_inline __u32 trace_key_rank(const struct go_label *lb)
{
	const __u64 *k = (const __u64 *)lb->key;
	__u32 rank = MAX_TRACE_KEYS;
	__u64 diff;
	int i, j;

#pragma unroll
	for (j = MAX_TRACE_KEYS - 1; j >= 0; j--) {
		const volatile __u64 *t = (const volatile __u64 *)trace_keys[j].name;

		diff = lb->key_len ^ trace_keys[j].len;
#pragma unroll
		for (i = 0; i < MAX_KEY_LEN / 8; i++)
			diff |= k[i] ^ t[i];
		if (!diff && j < ntrace_keys)
			rank = j;
	}
	return rank;
}

/*
 * The event's next label slot, zero-padded: a short label after a long one
 * never shows old bytes. NULL, with SAMPLE_F_LABELS_CUT, when all are taken.
 */
static __always_inline struct go_label *next_label(struct sample_event *e)
{
	__u32 i = e->nlabels;
	struct go_label *lb;

	if (i >= MAX_LABELS) {
		e->flags |= SAMPLE_F_LABELS_CUT;
		return NULL;
	}
	lb = &e->labels[i];
	__builtin_memset(lb->key, 0, sizeof(lb->key));
	__builtin_memset(lb->value, 0, sizeof(lb->value));
	return lb;
}

/*
 * Appends one label, reading its strings from the target. Global, so the
 * verifier checks it once rather than at every call site.
 */
__noinline int add_label(struct sample_event *e, __u64 kptr, __u64 klen, __u64 vptr, __u64 vlen)
{
	struct go_label *lb;
	__u32 rank;
	__u64 n; /* 64-bit: a 32-bit copy would lose the bound the verifier learns */

	if (!e || !(lb = next_label(e)))
		return 0;
	lb->key_len = klen > 0xffffffffULL ? 0xffffffff : klen;
	lb->value_len = vlen > 0xffffffffULL ? 0xffffffff : vlen;
	n = klen < MAX_KEY_LEN ? klen : MAX_KEY_LEN;
	if (n && bpf_probe_read_user(lb->key, n, (const void *)kptr))
		goto err;
	n = vlen < MAX_VALUE_LEN ? vlen : MAX_VALUE_LEN;
	if (n && bpf_probe_read_user(lb->value, n, (const void *)vptr))
		goto err;
	e->nlabels++;
	e->labels_hash = hash_label(e->labels_hash, lb);
	/* the most preferred trace key present decides, as user space decides */
	if (traced_only) {
		rank = trace_key_rank(lb);
		if (rank < e->trace_rank) {
			e->trace_rank = rank;
			if (value_is_hex(lb))
				e->flags |= SAMPLE_F_TRACE;
			else
				e->flags &= ~SAMPLE_F_TRACE;
		}
	}
	return 0;
err:
	e->flags |= SAMPLE_F_READ_ERR;
	return -1;
}

/* Go >= 1.24: labelMap { list []struct{key, value string} }, sorted by key. */
static __always_inline int read_labels_slice(struct sample_event *e, const struct go_layout *l,
					     __u64 labels, struct read_buf *b)
{
	__u64 hdr[2], n, size, kv[4];
	int cut = 0;
	__u32 i;

	if (read_user(hdr, sizeof(hdr), labels + l->label_list))
		return -1;
	n = golabels_count(hdr[1], &cut);
	if (cut)
		e->flags |= SAMPLE_F_LABELS_CUT;
	if (!n)
		return 0;
	/* user space checked label_size * MAX_LABELS <= MAX_BUCKET_SIZE */
	size = n * l->label_size;
	if (size > MAX_BUCKET_SIZE)
		size = MAX_BUCKET_SIZE;
	if (read_user(b->data, size, hdr[0]))
		return -1;
	for (i = 0; i < MAX_LABELS; i++) {
		if (i >= n)
			break;
		golabels_elem(b->words, l, i, kv);
		add_label(e, kv[0], kv[1], kv[2], kv[3]);
	}
	return 0;
}

/* One bucket per call: bpf_loop keeps the verifier from unrolling buckets times slots. */
static long visit_bucket(__u32 visit, void *arg)
{
	struct work *wk = ((struct work_ref *)arg)->w;
	const struct go_layout *l = ((struct work_ref *)arg)->l;
	struct gomap_walk *w;
	struct read_buf *b;
	__u64 at, kv[4];
	__u32 s, size;

	if (!wk)
		return 1;
	if (!l)
		return 1;
	w = &wk->mw;
	b = &wk->buf;
	at = gomap_next(w, &l->lmap);
	if (!at)
		return 1;
	size = l->lmap.size;
	if (size > MAX_BUCKET_SIZE)
		size = MAX_BUCKET_SIZE;
	if (read_user(b->data, size, at)) {
		w->err = -1;
		return 1;
	}
	for (s = 0; s < BUCKET_SLOTS; s++) {
		if (!gomap_slot_full(b->words, &l->lmap, s))
			continue;
		gomap_slot(b->words, &l->lmap, s, GO_STRING_SIZE, kv);
		add_label(&wk->e, kv[0], kv[1], kv[2], kv[3]);
	}
	gomap_done(w, &l->lmap, b->words);
	return 0;
}

/* Go <= 1.23: *labelMap -> hmap; every bucket, old buckets of a growing map, overflow chains. */
static __always_inline int read_labels_map(struct work *wk, const struct go_layout *l, __u64 labels)
{
	struct work_ref ref = { .w = wk, .l = l };
	struct gomap_walk *w = &wk->mw;
	__u64 hmap = 0, h[MAP_HEADER_LEN / 8];

	/* a failed read leaves hmap 0: it must not pass for an empty set */
	if (read_user(&hmap, sizeof(hmap), labels))
		return -1;
	if (!hmap)
		return 0;
	/* the header in one read, no further than its last member read */
	__builtin_memset(h, 0, sizeof(h));
	if (read_user(h, gomap_header_len(&l->lmap), hmap))
		return -1;
	if (gomap_start(w, &l->lmap, h, MAX_B))
		wk->e.flags |= SAMPLE_F_LABELS_CUT;
	bpf_loop(MAX_BUCKET_VISITS, visit_bucket, &ref, 0);
	if (!w->err && gomap_left(w))
		wk->e.flags |= SAMPLE_F_LABELS_CUT;
	return w->err;
}

/*
 * Fills W's event with the goroutine of the current task of a target with
 * layout L: W->g and W->curg (0 if none), W->labels (curg.labels) and, when
 * L knows where, the GC cycle count; the goid when WANT_GOID. The labels
 * themselves are go_labels' job. Returns 0, or -1 when a read of target
 * memory failed along the way. Global: verified once per program.
 */
__noinline int go_walk(struct work *w, const struct go_layout *l, __u32 want_goid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fsbase, g, m, curg, labels;
	struct sample_event *e;

	if (!w || !l)
		return -1;
	e = &w->e;
	w->g = 0;
	w->curg = 0;
	w->m = 0;
	w->labels = 0;
	w->cycles_ok = 0;
	e->trace_rank = MAX_TRACE_KEYS;
	if (HAS_G_REGISTER && l->tls_g_offset == GO_G_IN_REGISTER) {
		/* the task's user registers: the sample's, or those it entered the kernel with */
		g = TASK_G_REGISTER((struct pt_regs *)bpf_task_pt_regs(task));
	} else {
		fsbase = TASK_TLS_BASE(task);
		if (!fsbase || read_user(&g, sizeof(g), fsbase + l->tls_g_offset))
			return -1;
	}
	/* a thread Go has not adopted (cgo, start-up) has no g yet */
	if (!g)
		return 0;
	w->g = g;
	if (read_user(&m, sizeof(m), g + l->g_m) || !m)
		return -1;
	w->m = m;
	/* on g0 or gsignal, g is not the user goroutine: curg is */
	if (read_user(&curg, sizeof(curg), m + l->m_curg))
		return -1;
	if (!curg)
		return 0;
	w->curg = curg;
	e->flags |= SAMPLE_F_CURG;
	if (want_goid && read_user(&e->goid, sizeof(e->goid), curg + l->g_goid))
		return -1;
	if (read_user(&labels, sizeof(labels), curg + l->g_labels))
		return -1;
	w->labels = labels;
	if (labels && l->gc_cycles)
		w->cycles_ok = !read_user(&w->cycles, sizeof(w->cycles), l->gc_cycles);
	return 0;
}

/* The labels behind W->labels, as go_walk found it: the map's or the slice's. Global, too. */
__noinline int go_labels(struct work *w, const struct go_layout *l)
{
	if (!w || !l || !w->labels)
		return 0;
	if (l->labels_layout == GO_LABELS_SLICE)
		return read_labels_slice(&w->e, l, w->labels, &w->buf);
	if (l->labels_layout == GO_LABELS_MAP)
		return read_labels_map(w, l, w->labels);
	return 0;
}

#endif /* __GO_WALK_BPF_H */
