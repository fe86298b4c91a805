/* SPDX-License-Identifier: GPL-2.0 */
/* obi.bpf.h: the trace OBI (OpenTelemetry eBPF Instrumentation) says a thread works for, from its pinned traces_ctx_v1. */
#ifndef __OBI_BPF_H
#define __OBI_BPF_H

#include "traceparent.bpf.h"
#include "work.bpf.h"

/* --trace-sources with obi, and its map in place: the sampler looks */
const volatile bool want_obi = false;

/*
 * OBI's map, shared by fd: user space reuses the pinned one, or creates and
 * pins it when OBI has not yet (the first one up creates it); without the
 * obi source, a map of one entry no one writes.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, OBI_MAP_ENTRIES);
	__type(key, __u64);
	__type(value, struct obi_ctx_info);
} traces_ctx_v1 SEC(".maps");

/*
 * The sampled thread's OBI trace as a traceparent ("00-TRACE-SPAN-01") in
 * W's slot for it, so that it travels as a request's context does; NULL
 * when OBI has none for the thread.
 */
static __always_inline const struct trace_ctx *obi_ctx(struct work *w, __u64 pid_tgid)
{
	const struct obi_ctx_info *o;
	struct trace_ctx *c = &w->obi;

	if (!want_obi || !(o = bpf_map_lookup_elem(&traces_ctx_v1, &pid_tgid)))
		return NULL;
	format_ctx(c, o->trace_id, o->span_id, TRACE_CTX_OBI);
	return c;
}

#endif /* __OBI_BPF_H */
