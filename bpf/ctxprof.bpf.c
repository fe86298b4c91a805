// SPDX-License-Identifier: GPL-2.0
/* ctxprof.bpf.c: CPU samples of target Go processes, each with its goroutine's labels and user stack. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "go_walk.bpf.h"
#include "ustack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool traced_only = false;
/* send the words at SP, from which user space puts back a frameless leaf's caller */
const volatile bool leaf_repair = true;

/*
 * One ring buffer per CPU: a shared one costs every sample a lock and a
 * producer position bouncing between CPUs. User space creates the inner
 * rings, one per possible CPU, and sizes them.
 */
struct ringbuf {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct ringbuf);
} events SEC(".maps");

/* the label set this CPU sent last, so that repeats go out without their labels */
struct last_labels {
	__u64 hash;
	__u32 tgid;
	__u32 gen;
	__u32 flags;
	__u32 nlabels;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct last_labels);
} last_sent SEC(".maps");

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

/* The fields every event sets before the walk; the scratch event keeps the last one's otherwise. */
static __always_inline void start_event(struct sample_event *e, __u64 pid_tgid, __u32 origin)
{
	e->time_ns = bpf_ktime_get_ns();
	e->tgid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->goid = 0;
	e->flags = 0;
	e->nlabels = 0;
	e->labels_hash = 0;
	e->origin = origin;
	e->sp = 0;
	e->bp = 0;
	__builtin_memset(e->trace_id, 0, sizeof(e->trace_id));
	__builtin_memset(e->span_id, 0, sizeof(e->span_id));
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, zero = 0, n;
	struct last_labels *last;
	__u64 g = 0, curg = 0;
	struct sample_event *e;
	void *ring;
	const struct target_info *t;
	const struct go_layout *l;
	__u64 wakeup;
	bool repeat;
	long len;

	t = bpf_map_lookup_elem(&targets, &tgid);
	if (!t)
		return 0;
	l = target_layout(t);
	if (!l) {
		stat_inc(STAT_EXECED);
		return 0;
	}
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	start_event(e, pid_tgid, ORIGIN_SAMPLING);

	if (go_read_goroutine(e, l, false, &g, &curg) < 0) {
		e->flags |= SAMPLE_F_READ_ERR;
		stat_inc(STAT_READ_ERR);
	}
	if (traced_only && !(e->flags & SAMPLE_F_TRACE)) {
		stat_inc(STAT_FILTERED);
		return 0;
	}
	last = bpf_map_lookup_elem(&last_sent, &zero);
	if (!last)
		return 0;
	e->cpu = bpf_get_smp_processor_id();
	ring = bpf_map_lookup_elem(&events, &e->cpu);
	if (!ring) {
		stat_inc(STAT_LOST_RINGBUF);
		return 0;
	}
	/* a failed walk may have read half a set: always send it whole */
	repeat = !(e->flags & SAMPLE_F_READ_ERR) && last->tgid == tgid &&
		 last->hash == e->labels_hash && last->nlabels == e->nlabels &&
		 last->flags == (e->flags & (SAMPLE_F_TRACE | SAMPLE_F_SPAN | SAMPLE_F_LABELS_CUT));
	if (repeat) {
		e->flags |= SAMPLE_F_SAME_LABELS;
		e->gen = last->gen;
		n = 0;
	} else {
		e->gen = last->gen + 1;
		n = e->nlabels;
		if (n > MAX_LABELS)
			n = MAX_LABELS;
	}
	e->nlabels = n;

	/* the stack goes right after the labels, so that only filled bytes are sent */
	len = read_user_stack(ctx, (__u64 *)e,
			      (offsetof(struct sample_event, labels) + n * sizeof(struct go_label)) / 8,
			      sizeof(*e) / 8, g, curg, leaf_repair ? e : NULL) * 8;
	if (len > sizeof(e->stack_room))
		len = sizeof(e->stack_room);
	e->stack_bytes = len;
	/*
	 * No wakeup per sample: user space polls on a timer, which costs far
	 * less. But when the ring is half full (many targets, whose label sets
	 * rarely repeat, make big events), wake it before samples are lost.
	 */
	wakeup = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) > bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / 2 ?
			 BPF_RB_FORCE_WAKEUP :
			 BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(ring, e,
			       offsetof(struct sample_event, labels) + n * sizeof(struct go_label) + len,
			       wakeup)) {
		stat_inc(STAT_LOST_RINGBUF);
		return 0;
	}
	/* only a set that reached user space can be repeated by reference */
	if (!repeat && !(e->flags & SAMPLE_F_READ_ERR)) {
		last->hash = e->labels_hash;
		last->tgid = tgid;
		last->gen = e->gen;
		last->nlabels = n;
		last->flags = e->flags & (SAMPLE_F_TRACE | SAMPLE_F_SPAN | SAMPLE_F_LABELS_CUT);
	}
	return 0;
}

/*
 * Custom traces: another eBPF program stores a context value here and
 * tail-calls custom__generic. Names and types are a contract (design.md).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} custom_context_map SEC(".maps");

/* Go layouts by executable file, for processes that are not --pid targets (--uprobe) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct exe_key);
	__type(value, struct go_layout);
} exe_layouts SEC(".maps");

static __always_inline const struct go_layout *layout_of(__u32 tgid)
{
	const struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);
	const struct go_layout *l = t ? target_layout(t) : NULL;
	struct exe_key key;

	if (l)
		return l;
	if (!current_exe(&key))
		return NULL;
	return bpf_map_lookup_elem(&exe_layouts, &key);
}

/*
 * One event at an exact moment: its context, the user stack and, in a Go
 * process whose layout is known, the goroutine's labels and goid. Sent
 * whole (no label set by reference), with the ring's own wakeup policy so
 * that user space names a short-lived process's frames while it lives.
 */
static __always_inline int emit_event(struct pt_regs *regs, __u32 origin, __u64 context)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, zero = 0, n;
	const struct go_layout *l;
	__u64 g = 0, curg = 0;
	struct sample_event *e;
	void *ring;
	long len;

	stat_inc(STAT_EVENTS);
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e) {
		stat_inc(STAT_EVENTS_LOST);
		return 0;
	}
	start_event(e, pid_tgid, origin);
	e->gen = 0;
	e->context = context;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	l = layout_of(tgid);
	if (l && go_read_goroutine(e, l, true, &g, &curg) < 0)
		e->flags |= SAMPLE_F_READ_ERR;
	n = e->nlabels;
	if (n > MAX_LABELS)
		n = MAX_LABELS;
	e->nlabels = n;
	e->cpu = bpf_get_smp_processor_id();
	len = walk_user_stack(PT_REGS_IP(regs), PT_REGS_SP(regs), PT_REGS_FP(regs), (__u64 *)e,
			      (offsetof(struct sample_event, labels) + n * sizeof(struct go_label)) / 8,
			      sizeof(*e) / 8, g, curg, leaf_repair ? e : NULL) * 8;
	if (len > sizeof(e->stack_room))
		len = sizeof(e->stack_room);
	e->stack_bytes = len;
	ring = bpf_map_lookup_elem(&events, &e->cpu);
	if (!ring ||
	    bpf_ringbuf_output(ring, e,
			       offsetof(struct sample_event, labels) + n * sizeof(struct go_label) + len, 0))
		stat_inc(STAT_EVENTS_LOST);
	return 0;
}

/* The tail-call entry point: a uprobe-type program, so that uprobe programs can call it. */
SEC("uprobe")
int custom__generic(struct pt_regs *ctx)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&custom_context_map, &zero);

	return emit_event(ctx, ORIGIN_CUSTOM, v ? *v : 0);
}

/* --uprobe on a Go function: the first integer argument is in RAX (Go's register ABI). */
SEC("uprobe")
int uprobe_go(struct pt_regs *ctx)
{
	return emit_event(ctx, ORIGIN_UPROBE, ctx->ax);
}

/* --uprobe on a C function: the first integer argument is in RDI. */
SEC("uprobe")
int uprobe_c(struct pt_regs *ctx)
{
	return emit_event(ctx, ORIGIN_UPROBE, ctx->di);
}
