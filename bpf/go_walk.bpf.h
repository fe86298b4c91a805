/* SPDX-License-Identifier: GPL-2.0 */
/* go_walk.bpf.h: fsbase -> g -> m -> curg -> labels, one helper per step, for every program that reads Go labels. */
#ifndef __GO_WALK_BPF_H
#define __GO_WALK_BPF_H

#include "ctxprof.h"

/* Set by user space between open and load. */
const volatile struct label_key trace_keys[MAX_TRACE_KEYS] = {};
const volatile __u32 ntrace_keys = 0;
const volatile struct label_key span_keys[MAX_SPAN_KEYS] = {};
const volatile __u32 nspan_keys = 0;

/* tgid -> layout of that process's Go runtime, and its file; user space sizes it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct target_info);
} targets SEC(".maps");

/* The file the current process runs, as the kernel names it. */
static __always_inline bool current_exe(struct exe_key *key)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct inode *inode = BPF_CORE_READ(task, mm, exe_file, f_inode);

	if (!inode)
		return false;
	key->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	key->ino = BPF_CORE_READ(inode, i_ino);
	return true;
}

/* The layout of target T, unless the process no longer runs the file it was added with (exec). */
static __always_inline const struct go_layout *target_layout(const struct target_info *t)
{
	struct exe_key exe;

	if (!current_exe(&exe) || exe.dev != t->exe.dev || exe.ino != t->exe.ino)
		return NULL;
	return &t->layout;
}

/* one event under construction per CPU: too big for the BPF stack */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_event);
} scratch SEC(".maps");

/* a map bucket or a slice's label array, read in one go; padded for masked offsets */
struct read_buf {
	union {
		__u8 data[MAX_BUCKET_SIZE + 16];
		__u64 words[(MAX_BUCKET_SIZE + 16) / 8];
	};
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct read_buf);
} read_bufs SEC(".maps");

static __always_inline int read_user(void *dst, __u32 size, __u64 src)
{
	return bpf_probe_read_user(dst, size, (const void *)src);
}

/* The 8-byte word at a layout-given offset inside a read_buf; Go aligns them all. */
static __always_inline __u64 buf_word(const struct read_buf *b, __u32 off)
{
	return b->words[(off & (MAX_BUCKET_SIZE - 1)) / 8];
}

static __always_inline __u64 mix(__u64 h, __u64 w)
{
	h ^= w;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/*
 * Folds one label into a running 64-bit hash, a word at a time: lengths, the
 * zero-padded key, and the value's words up to its length, the last masked.
 */
static __always_inline __u64 hash_label(__u64 h, const struct go_label *lb)
{
	const __u64 *k = (const __u64 *)lb->key, *v = (const __u64 *)lb->value;
	__u32 n = lb->value_len < MAX_VALUE_LEN ? lb->value_len : MAX_VALUE_LEN, i;

	h = mix(h, (__u64)lb->key_len << 32 | lb->value_len);
#pragma unroll
	for (i = 0; i < MAX_KEY_LEN / 8; i++)
		h = mix(h, k[i]);
	for (i = 0; i < MAX_VALUE_LEN / 8; i++) {
		if (i * 8 >= n)
			break;
		h = mix(h, (i + 1) * 8 <= n ? v[i] : v[i] & ((1ULL << ((n - i * 8) * 8)) - 1));
	}
	return h;
}

/*
 * Appends one label, reading its strings from the target. Global, so the
 * verifier checks it once rather than at every call site. Keys and values
 * are zero-padded: a short label after a long one never shows old bytes.
 */
__noinline int add_label(struct sample_event *e, __u64 kptr, __u64 klen, __u64 vptr, __u64 vlen)
{
	struct go_label *lb;
	__u32 i, n;

	if (!e)
		return 0;
	i = e->nlabels;
	if (i >= MAX_LABELS) {
		e->flags |= SAMPLE_F_LABELS_CUT;
		return 0;
	}
	lb = &e->labels[i];
	/* keys compare as zero-padded words; values are used only up to value_len */
	__builtin_memset(lb->key, 0, sizeof(lb->key));
	lb->key_len = klen > 0xffffffffULL ? 0xffffffff : klen;
	lb->value_len = vlen > 0xffffffffULL ? 0xffffffff : vlen;
	n = klen < MAX_KEY_LEN ? klen : MAX_KEY_LEN;
	if (n && bpf_probe_read_user(lb->key, n, (const void *)kptr))
		goto err;
	n = vlen < MAX_VALUE_LEN ? vlen : MAX_VALUE_LEN;
	if (n && bpf_probe_read_user(lb->value, n, (const void *)vptr))
		goto err;
	e->nlabels = i + 1;
	e->labels_hash = hash_label(e->labels_hash, lb);
	return 0;
err:
	e->flags |= SAMPLE_F_READ_ERR;
	return -1;
}

/* Go >= 1.24: labelMap { list []struct{key, value string} }, sorted by key. */
static __always_inline int read_labels_slice(struct sample_event *e, const struct go_layout *l,
					     __u64 labels, struct read_buf *b)
{
	__u64 hdr[2], n, off, size;
	__u32 i;

	if (read_user(hdr, sizeof(hdr), labels + l->label_list))
		return -1;
	n = hdr[1];
	if (n > MAX_LABELS) {
		e->flags |= SAMPLE_F_LABELS_CUT;
		n = MAX_LABELS;
	}
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
		off = i * l->label_size;
		add_label(e, buf_word(b, off + l->label_key), buf_word(b, off + l->label_key + 8),
			  buf_word(b, off + l->label_value), buf_word(b, off + l->label_value + 8));
	}
	return 0;
}

struct map_walk {
	struct sample_event *e;
	const struct go_layout *l;
	struct read_buf *b;
	__u64 buckets, old, cur;
	__u32 nb, nold, idx, oidx;
	int err;
};

/* One bucket per call: bpf_loop keeps the verifier from unrolling buckets times slots. */
static long visit_bucket(__u32 visit, void *arg)
{
	struct map_walk *w = arg;
	const struct go_layout *l = w->l;
	struct read_buf *b = w->b;
	__u64 koff, voff;
	__u32 s, size;

	if (!w->cur) {
		if (w->idx < w->nb)
			w->cur = w->buckets + (__u64)w->idx++ * l->bucket_size;
		else if (w->oidx < w->nold)
			w->cur = w->old + (__u64)w->oidx++ * l->bucket_size;
		else
			return 1;
	}
	size = l->bucket_size;
	if (size > MAX_BUCKET_SIZE)
		size = MAX_BUCKET_SIZE;
	if (read_user(b->data, size, w->cur)) {
		w->err = -1;
		return 1;
	}
	for (s = 0; s < BUCKET_SLOTS; s++) {
		/* evacuated slots of an old bucket are < MIN_TOPHASH too */
		if (b->data[(l->bucket_tophash + s) & (MAX_BUCKET_SIZE - 1)] < MIN_TOPHASH)
			continue;
		koff = l->bucket_keys + s * 16;
		voff = l->bucket_values + s * 16;
		add_label(w->e, buf_word(b, koff), buf_word(b, koff + 8), buf_word(b, voff),
			  buf_word(b, voff + 8));
	}
	w->cur = buf_word(b, l->bucket_overflow);
	return 0;
}

/* Go <= 1.23: *labelMap -> hmap; every bucket, old buckets of a growing map, overflow chains. */
static __always_inline int read_labels_map(struct sample_event *e, const struct go_layout *l,
					   __u64 labels, struct read_buf *b)
{
	struct map_walk w = { .e = e, .l = l, .b = b };
	__u64 hmap;
	__u8 B, flags;

	if (read_user(&hmap, sizeof(hmap), labels) || !hmap)
		return hmap ? -1 : 0;
	if (read_user(&B, 1, hmap + l->hmap_b) || read_user(&flags, 1, hmap + l->hmap_flags) ||
	    read_user(&w.buckets, 8, hmap + l->hmap_buckets) ||
	    read_user(&w.old, 8, hmap + l->hmap_oldbuckets))
		return -1;
	if (B > MAX_B) {
		e->flags |= SAMPLE_F_LABELS_CUT;
		B = MAX_B;
	}
	w.nb = 1U << B;
	/* sameSizeGrow (flag 8) keeps the bucket count; otherwise old has half */
	w.nold = !w.old ? 0 : (flags & 8) ? w.nb : w.nb >> 1;
	bpf_loop(MAX_BUCKET_VISITS, visit_bucket, &w, 0);
	if (!w.err && (w.cur || w.idx < w.nb || w.oidx < w.nold))
		e->flags |= SAMPLE_F_LABELS_CUT;
	return w.err;
}

static __always_inline int hexval(__u8 c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Packs exactly 2*NBYTES hex digits into OUT; false on anything else. */
static __always_inline bool pack_hex(const struct go_label *lb, __u8 *out, __u32 nbytes)
{
	int hi, lo;
	__u32 i;

	if (lb->value_len != 2 * nbytes)
		return false;
	for (i = 0; i < TRACE_ID_LEN; i++) {
		if (i >= nbytes)
			break;
		hi = hexval(lb->value[2 * i]);
		lo = hexval(lb->value[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = hi << 4 | lo;
	}
	return true;
}

static __always_inline bool key_is(const struct go_label *lb, const volatile struct label_key *k)
{
	const __u64 *a = (const __u64 *)lb->key;
	const volatile __u64 *b = (const volatile __u64 *)k->name;
	int i;

	if (lb->key_len != k->len)
		return false;
#pragma unroll
	for (i = 0; i < MAX_KEY_LEN / 8; i++) {
		if (a[i] != b[i])
			return false;
	}
	return true;
}

/* Index of the first label whose key is KEYS[k] for the lowest k, or -1. */
static __always_inline int find_key(struct sample_event *e, const volatile struct label_key *keys,
				    __u32 nkeys, __u32 maxkeys)
{
	__u32 k, i;

	for (k = 0; k < maxkeys; k++) {
		if (k >= nkeys)
			break;
		for (i = 0; i < MAX_LABELS; i++) {
			if (i >= e->nlabels)
				break;
			if (key_is(&e->labels[i], &keys[k]))
				return i;
		}
	}
	return -1;
}

/*
 * Trace and span IDs from the labels, in the key order the user gave.
 * Global, so that its loops are verified once, not on every path that reaches it.
 */
__noinline int find_ids(struct sample_event *e)
{
	int i;

	if (!e)
		return 0;
	i = find_key(e, trace_keys, ntrace_keys, MAX_TRACE_KEYS);
	if (i >= 0 && i < MAX_LABELS) {
		if (pack_hex(&e->labels[i], e->trace_id, TRACE_ID_LEN))
			e->flags |= SAMPLE_F_TRACE;
		else
			e->flags |= SAMPLE_F_TRACE_RAW;
	}
	i = find_key(e, span_keys, nspan_keys, MAX_SPAN_KEYS);
	if (i >= 0 && i < MAX_LABELS && pack_hex(&e->labels[i], e->span_id, SPAN_ID_LEN))
		e->flags |= SAMPLE_F_SPAN;
	return 0;
}

/*
 * Fills E's goroutine fields for the current task of a target with layout L,
 * and G_OUT and CURG_OUT with the running g and m.curg (left alone if none);
 * the goid only when WANT_GOID (a constant: sampled records do not carry it,
 * and every read counts at 999 Hz). Returns 0, or -1 when a read of target
 * memory failed along the way.
 */
static __always_inline int go_read_goroutine(struct sample_event *e, const struct go_layout *l,
					     const bool want_goid, __u64 *g_out, __u64 *curg_out)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fsbase, g, m, curg, labels;
	struct read_buf *b;
	__u32 zero = 0;
	int ret = 0;

	fsbase = task->thread.fsbase;
	if (!fsbase || read_user(&g, sizeof(g), fsbase + l->tls_g_offset))
		return -1;
	/* a thread Go has not adopted (cgo, start-up) has no g yet */
	if (!g)
		return 0;
	*g_out = g;
	if (read_user(&m, sizeof(m), g + l->g_m) || !m)
		return -1;
	/* on g0 or gsignal, g is not the user goroutine: curg is */
	if (read_user(&curg, sizeof(curg), m + l->m_curg))
		return -1;
	if (!curg)
		return 0;
	*curg_out = curg;
	e->flags |= SAMPLE_F_CURG;
	if (want_goid && read_user(&e->goid, sizeof(e->goid), curg + l->g_goid))
		return -1;
	if (read_user(&labels, sizeof(labels), curg + l->g_labels))
		return -1;
	if (!labels)
		return 0;
	b = bpf_map_lookup_elem(&read_bufs, &zero);
	if (!b)
		return -1;
	if (l->labels_layout == GO_LABELS_SLICE)
		ret = read_labels_slice(e, l, labels, b);
	else if (l->labels_layout == GO_LABELS_MAP)
		ret = read_labels_map(e, l, labels, b);
	find_ids(e);
	return ret;
}

#endif /* __GO_WALK_BPF_H */
