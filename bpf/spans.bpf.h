/* SPDX-License-Identifier: GPL-2.0 */
/* spans.bpf.h: when a goroutine takes up a request and leaves it, for the request's elapsed time. */
#ifndef __SPANS_BPF_H
#define __SPANS_BPF_H

#include "ctxprof.h"
#include "work.bpf.h"

/* --wall: spans are sent, for the request records beside the wall records */
const volatile bool want_spans = false;

/* Spans' begins and ends: two a request, read with the samples; a page when unused */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
} spans SEC(".maps");

/*
 * A span's begin (TRACE: its 32 hex digits) or end, of goroutine GOID's
 * request EPOCH. A span lost to a full ring is counted, and leaves its
 * request uncounted.
 */
static __always_inline void span_note(__u32 kind, __u32 tgid, __u64 goid, __u64 epoch, __u32 source,
				      const __u8 *trace)
{
	struct span_event *s;

	if (!want_spans)
		return;
	if (!(s = bpf_ringbuf_reserve(&spans, sizeof(*s), 0))) {
		stat_inc(STAT_SPANS_LOST);
		return;
	}
	s->time_ns = bpf_ktime_get_ns();
	s->goid = goid;
	s->epoch = epoch;
	s->tgid = tgid;
	s->kind = kind;
	s->source = source;
	if (!trace || bpf_probe_read_kernel(s->trace, sizeof(s->trace), trace))
		__builtin_memset(s->trace, 0, sizeof(s->trace));
	/* as samples: user space reads on its timer, woken only before the ring fills */
	bpf_ringbuf_submit(s, bpf_ringbuf_query(&spans, BPF_RB_AVAIL_DATA) >
					   bpf_ringbuf_query(&spans, BPF_RB_RING_SIZE) / 2 ?
				      BPF_RB_FORCE_WAKEUP :
				      BPF_RB_NO_WAKEUP);
}

#endif /* __SPANS_BPF_H */
