/* SPDX-License-Identifier: GPL-2.0 */
/* ustack.bpf.h: the user stack of the current thread by its frame-pointer chain, read a window at a time. */
#ifndef __USTACK_BPF_H
#define __USTACK_BPF_H

#include "arch.bpf.h"
#include "ctxprof.h"
#include "work.bpf.h"

/* send the words at SP, from which user space puts back a frameless leaf's caller */
const volatile bool leaf_repair = true;

/*
 * Frames past a window are read as a new window: at most MAX_STACK_WINDOWS
 * of them, STACK_WINDOW bytes each (work.bpf.h).
 */
#define MAX_STACK_WINDOWS 8

#define EVENT_WORDS (sizeof(struct sample_event) / 8)

/*
 * Reads a window at ADDR, up to the stack's known top (a read past a
 * goroutine's stack can meet a page never touched), or failing that (the
 * end of a mapping) just one frame.
 */
static __always_inline bool load_window(struct work *w, __u64 addr)
{
	struct fp_walk *fw = &w->fw;
	__u64 len = STACK_WINDOW;

	if (fw->windows >= MAX_STACK_WINDOWS)
		return false;
	fw->windows++;
	fw->base = addr;
	if (fw->hi > addr && fw->hi - addr < STACK_WINDOW)
		len = fw->hi - addr;
	if (len >= 16 && len <= STACK_WINDOW &&
	    !bpf_probe_read_user(w->win, len, (const void *)addr)) {
		fw->got = len;
		return true;
	}
	if (!bpf_probe_read_user(w->win, 16, (const void *)addr)) {
		fw->got = 16;
		return true;
	}
	return false;
}

/* One frame: [fp] is the caller's frame pointer, [fp + 8] the return address. */
static long fp_step(__u32 i, void *arg)
{
	struct work *w = ((struct work_ref *)arg)->w;
	struct fp_walk *fw;
	__u64 off, next, ret, *out;
	__u32 n, idx;

	if (!w)
		return 1;
	fw = &w->fw;
	n = fw->n;

	if (n >= MAX_STACK_DEPTH || fw->fp & 7 || fw->fp < fw->lo || fw->fp > fw->hi - 16)
		return 1;
	if (fw->fp < fw->base || fw->fp + 16 > fw->base + fw->got) {
		if (!load_window(w, fw->fp))
			return 1;
	}
	off = (fw->fp - fw->base) / 8;
	if (off > STACK_WINDOW / 8 - 2)
		return 1;
	next = w->win[off];
	ret = w->win[off + 1];
	if (!ret)
		return 1;
	idx = fw->first + n;
	if (idx >= EVENT_WORDS)
		return 1;
	out = (__u64 *)&w->e;
	out[idx] = ret;
	fw->n = n + 1;
	/* callers sit higher on the same stack */
	if (next > fw->fp && next < fw->hi) {
		fw->fp = next;
		return 0;
	}
	/*
	 * systemstack, mcall and signal handlers link the frames of g0 or
	 * gsignal to a goroutine's. Follow that link only into curg's stack:
	 * in the scheduler, mcall's link leads to the goroutine that was
	 * running before curg, whose frames are not curg's work.
	 */
	if (fw->may_switch && next >= fw->next_lo && next < fw->next_hi) {
		fw->lo = fw->next_lo;
		fw->hi = fw->next_hi;
		fw->may_switch = 0;
		fw->fp = next;
		return 0;
	}
	return 1;
}

/*
 * Fills W's event, from word FIRST on, with the user PC IP and the return
 * addresses up the frame-pointer chain from BP, leaf first; returns the
 * number of frames.
 *
 * W->g is the goroutine whose stack the thread is on and W->curg the M's
 * user goroutine (0 when unknown); their stack bounds (g.stack, at offset
 * 0 of runtime.g) keep the walk on stacks that belong to this event.
 * Without them, frames must only lie above SP. With leaf_repair, the event
 * gets SP, BP and the words at SP, for user space to repair the walk's
 * first step. Global: verified once per program.
 */
__noinline int walk_user_stack(struct work *w, __u64 ip, __u64 sp, __u64 bp, __u32 first)
{
	struct work_ref ref = { .w = w };
	struct fp_walk *fw;
	__u64 bounds[2], *out;

	if (!w || !ip || first >= EVENT_WORDS)
		return 0;
	fw = &w->fw;
	out = (__u64 *)&w->e;
	out[first] = ip;
	fw->first = first;
	fw->n = 1;
	fw->windows = 0;
	fw->base = 0;
	fw->got = 0;
	fw->may_switch = 0;
	/*
	 * A live frame lies above the stack pointer (arm64 Go code saves FP
	 * 8 bytes below it, and LR at it). C code without frame
	 * pointers (libc in cgo programs) leaves anything in BP; following it
	 * below SP would report dead frames of earlier calls.
	 */
	fw->lo = sp - FRAME_BELOW_SP;
	fw->hi = ~0ULL;
	if (w->g && !bpf_probe_read_user(bounds, sizeof(bounds), (const void *)w->g) &&
	    bounds[0] <= sp && sp < bounds[1])
		fw->hi = bounds[1];
	/*
	 * A user goroutine runs on its own stack, except in the instructions
	 * of gogo between making it g and moving SP onto its stack: there the
	 * chain is g0's, and leads through mcall to the goroutine the
	 * scheduler left, whose frames are not curg's work. Only the leaf.
	 */
	if (w->g && w->g == w->curg && fw->hi == ~0ULL)
		return 1;
	if (w->curg && w->curg != w->g && fw->hi != ~0ULL &&
	    !bpf_probe_read_user(bounds, sizeof(bounds), (const void *)w->curg)) {
		fw->next_lo = bounds[0];
		fw->next_hi = bounds[1];
		fw->may_switch = 1;
	}
	fw->fp = bp;
	/* the window at SP usually holds the first frames, and the leaf's own */
	if (!load_window(w, (sp - FRAME_BELOW_SP) & ~7ULL)) {
		fw->got = 0;
	} else if (leaf_repair && !(sp & 7)) {
		w->e.sp = sp;
		w->e.bp = bp;
		w->e.top[0] = w->win[FRAME_BELOW_SP / 8];
		w->e.top[1] = LEAF_WORD1(
			w, (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf()));
		w->e.flags |= SAMPLE_F_TOP_WORDS;
	}
	bpf_loop(MAX_STACK_DEPTH, fp_step, &ref, 0);
	return fw->n;
}

/*
 * walk_user_stack for a perf sample: its registers, or the task's user
 * registers when the CPU was in the kernel.
 */
static __always_inline int read_user_stack(struct bpf_perf_event_data *ctx, struct work *w,
					   __u32 first)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 ip, sp, bp;

	if (PERF_USER_MODE(ctx)) {
		ip = REG_IP(&ctx->regs);
		sp = REG_SP(&ctx->regs);
		bp = REG_FP(&ctx->regs);
	} else {
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

		READ_TASK_USER_REGS(regs, ip, sp, bp);
	}
	return walk_user_stack(w, ip, sp, bp, first);
}

#endif /* __USTACK_BPF_H */
