/* SPDX-License-Identifier: GPL-2.0 */
/* ustack.bpf.h: the user stack of the current thread by its frame-pointer chain, read a window at a time. */
#ifndef __USTACK_BPF_H
#define __USTACK_BPF_H

#include "ctxprof.h"

/*
 * Go keeps frame pointers, and its frames are small: one read of the stack
 * around SP usually holds several frames, where the kernel's walker reads
 * each frame on its own. Frames past a window are read as a new window; at
 * most MAX_STACK_WINDOWS of them, STACK_WINDOW bytes each.
 */
#define STACK_WINDOW 1024
#define MAX_STACK_WINDOWS 8

struct stack_window {
	__u64 w[STACK_WINDOW / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct stack_window);
} stack_windows SEC(".maps");

struct fp_walk {
	__u64 *out; /* a map value of OUT_WORDS words */
	__u32 first; /* where in OUT the stack starts, in words */
	__u32 out_words;
	struct stack_window *win;
	__u64 base; /* user address of win->w[0] */
	__u64 fp;
	/* frames must lie in [lo, hi): the stack the thread is on */
	__u64 lo, hi;
	/* and may move once to [next_lo, next_hi): from g0 or gsignal to curg's stack */
	__u64 next_lo, next_hi;
	bool may_switch;
	__u32 got; /* bytes of the window that were read */
	__u32 n;
	__u32 windows;
};

/* Reads a window at ADDR, or failing that (the end of a mapping) just one frame. */
static __always_inline bool load_window(struct fp_walk *w, __u64 addr)
{
	if (w->windows >= MAX_STACK_WINDOWS)
		return false;
	w->windows++;
	w->base = addr;
	if (!bpf_probe_read_user(w->win->w, STACK_WINDOW, (const void *)addr)) {
		w->got = STACK_WINDOW;
		return true;
	}
	if (!bpf_probe_read_user(w->win->w, 16, (const void *)addr)) {
		w->got = 16;
		return true;
	}
	return false;
}

/* One frame: [fp] is the caller's frame pointer, [fp + 8] the return address. */
static long fp_step(__u32 i, void *arg)
{
	struct fp_walk *w = arg;
	__u64 off, next, ret;
	__u32 n = w->n, idx;

	if (n >= MAX_STACK_DEPTH || w->fp & 7 || w->fp < w->lo || w->fp > w->hi - 16)
		return 1;
	if (w->fp < w->base || w->fp + 16 > w->base + w->got) {
		if (!load_window(w, w->fp))
			return 1;
	}
	off = (w->fp - w->base) / 8;
	if (off > STACK_WINDOW / 8 - 2)
		return 1;
	next = w->win->w[off];
	ret = w->win->w[off + 1];
	if (!ret)
		return 1;
	idx = w->first + n;
	if (idx >= w->out_words)
		return 1;
	w->out[idx] = ret;
	w->n = n + 1;
	/* callers sit higher on the same stack */
	if (next > w->fp && next < w->hi) {
		w->fp = next;
		return 0;
	}
	/*
	 * systemstack, mcall and signal handlers link the frames of g0 or
	 * gsignal to a goroutine's. Follow that link only into curg's stack:
	 * in the scheduler, mcall's link leads to the goroutine that was
	 * running before curg, whose frames are not curg's work.
	 */
	if (w->may_switch && next >= w->next_lo && next < w->next_hi) {
		w->lo = w->next_lo;
		w->hi = w->next_hi;
		w->may_switch = false;
		w->fp = next;
		return 0;
	}
	return 1;
}

/*
 * Fills OUT[FIRST...] (OUT holding OUT_WORDS words) with the user PC IP and
 * the return addresses up the frame-pointer chain from BP, leaf first;
 * returns the number of frames.
 *
 * G is the goroutine whose stack the thread is on and CURG the M's user
 * goroutine (0 when unknown); their stack bounds (g.stack, at offset 0 of
 * runtime.g) keep the walk on stacks that belong to this sample. Without
 * them, frames must only lie above SP. E, when not NULL, gets SP, BP and
 * the words at SP, for user space to repair the walk's first step.
 */
static __always_inline __u32 walk_user_stack(__u64 ip, __u64 sp, __u64 bp, __u64 *out,
					     __u32 first, __u32 out_words, __u64 g, __u64 curg,
					     struct sample_event *e)
{
	struct fp_walk w = { .out = out, .first = first, .out_words = out_words };
	__u64 bounds[2];
	__u32 zero = 0;

	if (!ip || first >= out_words)
		return 0;
	w.win = bpf_map_lookup_elem(&stack_windows, &zero);
	if (!w.win)
		return 0;
	out[first] = ip;
	w.n = 1;
	/*
	 * A live frame lies above the stack pointer. C code without frame
	 * pointers (libc in cgo programs) leaves anything in BP; following it
	 * below SP would report dead frames of earlier calls.
	 */
	w.lo = sp;
	w.hi = ~0ULL;
	if (g && !bpf_probe_read_user(bounds, sizeof(bounds), (const void *)g) &&
	    bounds[0] <= sp && sp < bounds[1])
		w.hi = bounds[1];
	if (curg && curg != g && w.hi != ~0ULL &&
	    !bpf_probe_read_user(bounds, sizeof(bounds), (const void *)curg)) {
		w.next_lo = bounds[0];
		w.next_hi = bounds[1];
		w.may_switch = true;
	}
	w.fp = bp;
	/* the window at SP usually holds the first frames, and the leaf's own */
	if (!load_window(&w, sp & ~7ULL)) {
		w.got = 0;
	} else if (e && !(sp & 7)) {
		e->sp = sp;
		e->bp = bp;
		e->top[0] = w.win->w[0];
		e->top[1] = w.win->w[1];
		e->flags |= SAMPLE_F_TOP_WORDS;
	}
	bpf_loop(MAX_STACK_DEPTH, fp_step, &w, 0);
	return w.n;
}

/*
 * walk_user_stack for a perf sample: its registers, or the task's user
 * registers when the CPU was in the kernel.
 */
static __always_inline __u32 read_user_stack(struct bpf_perf_event_data *ctx, __u64 *out,
					     __u32 first, __u32 out_words, __u64 g, __u64 curg,
					     struct sample_event *e)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 ip, sp, bp;

	/*
	 * cs, word 17 of x86-64's pt_regs (after 15 registers, orig_ax and ip),
	 * shares its slot with wider fields: the context allows only 8-byte reads.
	 */
	if (((const __u64 *)ctx)[17] & 3) {
		ip = ctx->regs.ip;
		sp = ctx->regs.sp;
		bp = ctx->regs.bp;
	} else {
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

		ip = BPF_CORE_READ(regs, ip);
		sp = BPF_CORE_READ(regs, sp);
		bp = BPF_CORE_READ(regs, bp);
	}
	return walk_user_stack(ip, sp, bp, out, first, out_words, g, curg, e);
}

#endif /* __USTACK_BPF_H */
