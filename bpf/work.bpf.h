/* SPDX-License-Identifier: GPL-2.0 */
/* work.bpf.h: per-CPU work slots, so that programs that interrupt or preempt each other never share buffers. */
#ifndef __WORK_BPF_H
#define __WORK_BPF_H

#include "ctxprof.h"
#include "gomap.h"

/*
 * Uprobe programs run preemptibly (only migration is disabled): a
 * cpu-clock sample can fire in the middle of one, and another task's
 * uprobe can run on the same CPU while it is preempted. Each run claims a
 * slot of its own for the event it builds and the memory it reads, and
 * gives it back when done. MAX_WORK_SLOTS runs can be in flight on one
 * CPU; a run that finds none free is dropped and counted (STAT_BUSY).
 */
#define MAX_WORK_SLOTS 4 /* work_claim tries each by name */

/*
 * Go frames are small: one read of the stack around SP usually holds
 * several frames, where the kernel's walker reads each frame on its own.
 */
#define STACK_WINDOW 1024

/* a map bucket or a slice's label array, read in one go; padded for masked offsets */
struct read_buf {
	union {
		__u8 data[MAX_BUCKET_SIZE + 16];
		__u64 words[(MAX_BUCKET_SIZE + 16) / 8];
	};
};

/*
 * The state of a walk that bpf_loop steps through. It lives in the map
 * value, not on the BPF stack: the verifier tracks every value on the
 * stack, and would check a step once for each frame count, window count
 * and bucket index it could see, where map memory is simply unknown to it.
 */
struct fp_walk {
	__u64 base; /* user address of win[0] */
	__u64 fp;
	/* frames must lie in [lo, hi): the stack the thread is on */
	__u64 lo, hi;
	/* and may move once to [next_lo, next_hi): from g0 or gsignal to curg's stack */
	__u64 next_lo, next_hi;
	__u32 may_switch;
	__u32 first; /* where in the event the stack starts, in words */
	__u32 got; /* bytes of the window that were read */
	__u32 n; /* frames so far */
	__u32 windows;
	/*
	 * Set by the caller before each walk, from the process's layout:
	 * where the frame_sizes table of process TGID covers its code
	 * (frame_text 0: no table), and how many slots it covers
	 */
	__u32 tgid;
	__u32 late_bp; /* go_layout's, as the ones up to g_status */
	__u64 morestack, morestack_end;
	__u32 sched_pc, sched_caller, sched_bp, g_status;
	__u32 copying; /* on curg's stack, which copystack is moving (morestack_step) */
	__u64 frame_text;
	__u64 frame_slots;
	__u64 sp; /* at the sample */
	__u64 sigreturn; /* where a signal handler returns to, in this process; 0 unknown */
	/*
	 * signal_step's reads, here rather than on the BPF stack, which the
	 * walk's functions share with the program that calls them (512
	 * bytes, each frame rounded up to 32 by Linux 6.1): a signal frame's
	 * FP, LR, SP and PC, and the kernel's frame record above it
	 */
	__u64 sig_regs[4];
	__u64 sig_link[2];
	/*
	 * morestack_step's reads, here for the same reason: curg's g.sched
	 * (PC, caller, BP) and status, and the call before that PC
	 */
	__u64 sched[3];
	__u64 sched_insn;
	__u32 sched_status;
	__u32 pad;
};

/*
 * A search for the traceparent and what it found: in a net/http.Header
 * map, gomap.h's walk; in a grpc stream's first header block, nfields
 * hpack.HeaderFields at fields.
 */
struct hdr_walk {
	struct gomap_walk mw;
	__u64 fields;
	__u32 nfields;
	__u32 found;
	__u32 ended; /* the map's last bucket or group was read */
	__u32 cut; /* not found, with fields left unread */
	struct trace_ctx ctx;
};

struct work {
	struct sample_event e;
	struct read_buf buf;
	__u64 win[STACK_WINDOW / 8]; /* a window of user stack */
	__u64 g; /* the g the thread runs, or 0 */
	__u64 curg; /* its M's user goroutine, or 0 */
	__u64 m; /* g's M, or 0 */
	__u64 labels; /* curg.labels: the label set, immutable once made */
	__u32 cycles; /* runtime.work.cycles when it was read */
	__u32 cycles_ok; /* and whether that read worked */
	struct fp_walk fw;
	struct gomap_walk mw;
	struct hdr_walk hw;
	struct trace_ctx obi; /* the thread's OBI trace, as a context */
	struct trace_ctx tc; /* a context the sampled goroutine took from its parent just now */
};

/* What a bpf_loop step gets: it must point to the BPF stack, where pointers keep their type. */
struct work_ref {
	struct work *w;
	const struct go_layout *l;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_WORK_SLOTS);
	__type(key, __u32);
	__type(value, struct work);
} works SEC(".maps");

/* bit N set: slot N of this CPU is in use */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} work_busy SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* atomic: a program that interrupts another may count at the same time */
static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);

	if (v)
		__sync_fetch_and_add(v, 1);
}

/* Takes slot I when it is free: one atomic read-modify-write, as an interrupt can come between any two instructions. */
static __always_inline bool work_try(__u64 *busy, __u32 i)
{
	return !(__sync_fetch_and_or(busy, 1ULL << i) & (1ULL << i));
}

/* A free slot of this CPU, marked in use, and its number in *SLOT; NULL when all are taken. */
static __always_inline struct work *work_claim(__u32 *slot)
{
	__u32 zero = 0, i;
	__u64 *busy = bpf_map_lookup_elem(&work_busy, &zero);
	struct work *w;

	if (!busy)
		return NULL;
	/* spelled out: the verifier would see a loop around the atomic as endless */
	if (work_try(busy, 0))
		i = 0;
	else if (work_try(busy, 1))
		i = 1;
	else if (work_try(busy, 2))
		i = 2;
	else if (work_try(busy, 3))
		i = 3;
	else
		return NULL;
	w = bpf_map_lookup_elem(&works, &i);
	if (!w)
		__sync_fetch_and_and(busy, ~(1ULL << i));
	*slot = i;
	return w;
}

static __always_inline void work_release(__u32 slot)
{
	__u32 zero = 0;
	__u64 *busy = bpf_map_lookup_elem(&work_busy, &zero);

	if (busy)
		__sync_fetch_and_and(busy, ~(1ULL << slot));
}

#endif /* __WORK_BPF_H */
