// SPDX-License-Identifier: GPL-2.0
/* ctxprof.bpf.c: CPU samples of target Go processes, each with its goroutine's labels and user stack. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "go_walk.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool traced_only = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* user space sizes it from the CPU count */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		(*v)++;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, zero = 0, n;
	struct sample_event *e;
	struct go_layout *l;
	long len;

	l = bpf_map_lookup_elem(&targets, &tgid);
	if (!l)
		return 0;
	stat_inc(STAT_SAMPLES);
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	e->time_ns = bpf_ktime_get_ns();
	e->tgid = tgid;
	e->tid = (__u32)pid_tgid;
	e->goid = 0;
	e->flags = 0;
	e->nlabels = 0;
	__builtin_memset(e->trace_id, 0, sizeof(e->trace_id));
	__builtin_memset(e->span_id, 0, sizeof(e->span_id));

	if (go_read_goroutine(e, l) < 0) {
		e->flags |= SAMPLE_F_READ_ERR;
		stat_inc(STAT_READ_ERR);
	}
	if (traced_only && !(e->flags & SAMPLE_F_TRACE)) {
		stat_inc(STAT_FILTERED);
		return 0;
	}
	len = bpf_get_stack(ctx, e->stack, sizeof(e->stack), BPF_F_USER_STACK);
	e->stack_bytes = len > 0 ? len : 0;

	n = e->nlabels;
	if (n > MAX_LABELS)
		n = MAX_LABELS;
	if (bpf_ringbuf_output(&events, e,
			       offsetof(struct sample_event, labels) + n * sizeof(struct go_label), 0))
		stat_inc(STAT_LOST_RINGBUF);
	else
		stat_inc(STAT_SENT);
	return 0;
}
