/* SPDX-License-Identifier: GPL-2.0 */
/* gomap.h: how Go lays out its maps and label sets, step by step, for the BPF walkers and user space alike. */
#ifndef __GOMAP_H
#define __GOMAP_H

#include "ctxprof.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* A Go string is {ptr, len}; a []string is {array, len, cap}. */
#define GO_STRING_SIZE 16
#define GO_SLICE_SIZE 24

/* hmap.flags: a grow to the same size (to drop overflow buckets) keeps the bucket count */
#define HMAP_SAME_SIZE_GROW 8

/*
 * A walk over a Go <= 1.23 map: nb buckets at buckets, then, while the
 * map grows, the nold old ones not yet evacuated (an evacuated slot looks
 * empty: its entry is found in the new buckets); each bucket with its
 * chain of overflow buckets, of which cur is the next to read.
 *
 * The swiss walk of a Go >= 1.24 header map uses the same fields: nold
 * directory entries at old, the table cur whose nb groups are at buckets;
 * or, with no directory, the one group at buckets.
 */
struct gomap_walk {
	__u64 buckets, old, cur;
	__u32 nb, idx, nold, oidx;
	__s32 err;
	__u32 __pad;
};

/* The word at OFF of a bucket or element buffer of MAX_BUCKET_SIZE bytes; the mask keeps it inside. */
static __always_inline __u64 gomap_word(const __u64 *buf, __u32 off)
{
	return buf[(off & (MAX_BUCKET_SIZE - 1)) / 8];
}

/* The word at OFF of a map's header, read whole (MAP_HEADER_LEN bytes); 0 past it. */
static __always_inline __u64 gomap_header_word(const __u64 *h, __u32 off)
{
	__u32 i = off / 8;

	return i < MAP_HEADER_LEN / 8 ? h[i] : 0;
}

/* The byte at OFF of a map's header; 0 past it. */
static __always_inline __u8 gomap_header_byte(const __u64 *h, __u32 off)
{
	return off < MAP_HEADER_LEN ? ((const __u8 *)h)[off] : 0;
}

/*
 * The bytes of an hmap's header to read: up to the last member the walk
 * needs, never its tail. An hmap may straddle two pages, and a page of the
 * heap that nothing wrote yet is not mapped: BPF, which cannot fault, fails
 * a read that reaches into it. At most MAP_HEADER_LEN.
 */
static __always_inline __u32 gomap_header_len(const struct go_hmap_layout *m)
{
	__u32 n = m->buckets > m->oldbuckets ? m->buckets + 8 : m->oldbuckets + 8;

	if (m->b + 1 > n)
		n = m->b + 1;
	if (m->flags + 1 > n)
		n = m->flags + 1;
	return n < MAP_HEADER_LEN ? n : MAP_HEADER_LEN;
}

/*
 * Starts W over the hmap whose header H (gomap_header_len bytes read, the
 * rest of MAP_HEADER_LEN zero) M describes. Returns 1 when the map has more than 2^MAX_LOG
 * buckets, of which the walk leaves the rest out.
 */
static __always_inline int gomap_start(struct gomap_walk *w, const struct go_hmap_layout *m,
				       const __u64 *h, __u8 max_log)
{
	__u8 B = gomap_header_byte(h, m->b), flags = gomap_header_byte(h, m->flags);
	int cut = B > max_log;

	if (cut)
		B = max_log;
	w->buckets = gomap_header_word(h, m->buckets);
	w->old = gomap_header_word(h, m->oldbuckets);
	w->cur = 0;
	w->idx = 0;
	w->oidx = 0;
	w->err = 0;
	w->nb = 1U << B;
	/* any other grow doubles the map: its old buckets are half as many */
	w->nold = !w->old ? 0 : (flags & HMAP_SAME_SIZE_GROW) ? w->nb : w->nb >> 1;
	return cut;
}

/* The bucket W reads next: the overflow of the last, a new one, an old one; 0 at the end. */
static __always_inline __u64 gomap_next(struct gomap_walk *w, const struct go_hmap_layout *m)
{
	if (w->cur)
		return w->cur;
	if (w->idx < w->nb)
		return w->buckets + (__u64)w->idx++ * m->size;
	if (w->oidx < w->nold)
		return w->old + (__u64)w->oidx++ * m->size;
	return 0;
}

/* After bucket B is read: its overflow bucket is next, if it has one. */
static __always_inline void gomap_done(struct gomap_walk *w, const struct go_hmap_layout *m,
				       const __u64 *b)
{
	w->cur = gomap_word(b, m->overflow);
}

/* Did W stop before the map's end? */
static __always_inline int gomap_left(const struct gomap_walk *w)
{
	return w->cur || w->idx < w->nb || w->oidx < w->nold;
}

/* Is slot S of bucket B in use? Empty and evacuated slots have a tophash below MIN_TOPHASH. */
static __always_inline int gomap_slot_full(const __u64 *b, const struct go_hmap_layout *m, __u32 s)
{
	return ((const __u8 *)b)[(m->tophash + s) & (MAX_BUCKET_SIZE - 1)] >= MIN_TOPHASH;
}

/*
 * Slot S's string key {ptr, len} into KV[0..1], and the first two words
 * of its value (a string's, or a []string's array and length) into
 * KV[2..3]; VALUE_SIZE is the value's size.
 */
static __always_inline void gomap_slot(const __u64 *b, const struct go_hmap_layout *m, __u32 s,
				       __u32 value_size, __u64 kv[4])
{
	__u32 k = m->keys + s * GO_STRING_SIZE, v = m->values + s * value_size;

	kv[0] = gomap_word(b, k);
	kv[1] = gomap_word(b, k + 8);
	kv[2] = gomap_word(b, v);
	kv[3] = gomap_word(b, v + 8);
}

/* Is slot S of a swiss group with control word CTRL full? A full slot's control byte has its top bit clear. */
static __always_inline int swiss_slot_full(__u64 ctrl, __u32 s)
{
	return !(ctrl >> (8 * s) & 0x80);
}

/* Slot S of a swiss group G, as gomap_slot has it. */
static __always_inline void swiss_slot(const __u64 *g, const struct go_header_layout *h, __u32 s,
				       __u64 kv[4])
{
	__u32 slot = h->sg_slots + s * h->ss_size;

	kv[0] = gomap_word(g, slot + h->ss_key);
	kv[1] = gomap_word(g, slot + h->ss_key + 8);
	kv[2] = gomap_word(g, slot + h->ss_elem);
	kv[3] = gomap_word(g, slot + h->ss_elem + 8);
}

/*
 * Starts W over the swiss map whose header H M describes: a map with a
 * directory has dirLen tables; without one, dirPtr is its only group.
 * Returns 0 when the map has nothing to read.
 */
static __always_inline int swiss_start(struct gomap_walk *w, const struct go_header_layout *m,
				       const __u64 *h)
{
	__u64 dir = gomap_header_word(h, m->sm_dir_ptr), len = gomap_header_word(h, m->sm_dir_len);

	if ((__s64)len > 0) {
		w->old = dir;
		w->nold = len;
	} else {
		w->buckets = dir;
	}
	return dir != 0;
}

/*
 * Go >= 1.24 labels: labelMap { list []struct{key, value string} }; of
 * a list N long, how many are read. *CUT is set when some are left out.
 */
static __always_inline __u64 golabels_count(__u64 n, int *cut)
{
	if (n > MAX_LABELS) {
		*cut = 1;
		return MAX_LABELS;
	}
	return n;
}

/* Element I of a label list read into BUF: its key and value strings into KV. */
static __always_inline void golabels_elem(const __u64 *buf, const struct go_layout *l, __u32 i,
					  __u64 kv[4])
{
	__u32 off = i * l->label_size;

	kv[0] = gomap_word(buf, off + l->label_key);
	kv[1] = gomap_word(buf, off + l->label_key + 8);
	kv[2] = gomap_word(buf, off + l->label_value);
	kv[3] = gomap_word(buf, off + l->label_value + 8);
}

#endif /* __GOMAP_H */
