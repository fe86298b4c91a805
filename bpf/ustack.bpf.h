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
 * The bits of a user address (arm64; all bits elsewhere): a return address
 * that C code signed (pointer authentication) carries a code above them.
 */
const volatile __u64 user_va_mask = ~0ULL;

/*
 * Frames past a window are read as a new window, STACK_WINDOW bytes
 * (work.bpf.h), MAX_STACK_WINDOWS times; past those, a frame record at a
 * time. A proxy's stack of large frames (caddy's reverse_proxy under its
 * middleware, 35 frames) spans more than eight windows, and its root
 * frames are the ones that say which request it serves.
 */
#define MAX_STACK_WINDOWS 8

#define EVENT_WORDS (sizeof(struct sample_event) / 8)

/* where the vDSO's __kernel_rt_sigreturn is, from the vDSO's start (arm64); 0 unknown */
const volatile __u64 sigreturn_off = 0;

/*
 * arm64's signal frame (arch/arm64/kernel/signal.c): the frame record the
 * kernel makes for a handler, which FP points to at the handler's entry,
 * lies right above struct rt_sigframe (siginfo, then ucontext), whose size
 * is fixed while its records fit uc_mcontext.__reserved: no live SVE or
 * SME state, which Go never has. Registers x29, x30, sp, pc from 544 on.
 */
#define RT_SIGFRAME_SIZE 4688
#define SIGFRAME_X29 544
/* the trampoline: mov x8, #__NR_rt_sigreturn; svc #0, and the PC after it */
#define SIGRETURN_LAST 8

/* the signal stack Go allocates a thread (runtime.mpreinit: malg(32 * 1024)) */
#define GSIGNAL_STACK (32 * 1024)

/*
 * how far below the signal frame a handler's prologue may have moved SP
 * before it sets FP: Go's sigtramp makes 192 bytes; C handlers, a few
 * hundred
 */
#define HANDLER_FRAME_MAX 1024

/* the kernel's out-of-line step slots (UPROBE_XOL_SLOT_BYTES), and x86's longest instruction */
#define XOL_SLOT_BYTES 128
#define MAX_INSN_BYTES 15

/*
 * Reads a window at ADDR, up to the stack's known top (a read past a
 * goroutine's stack can meet a page never touched), or failing that (the
 * end of a mapping), or once the windows are spent, just one frame.
 */
static __always_inline bool load_window(struct work *w, __u64 addr)
{
	struct fp_walk *fw = &w->fw;
	__u64 len = STACK_WINDOW;

	fw->base = addr;
	if (fw->windows < MAX_STACK_WINDOWS) {
		fw->windows++;
		if (fw->hi > addr && fw->hi - addr < STACK_WINDOW)
			len = fw->hi - addr;
		if (len >= 16 && len <= STACK_WINDOW &&
		    !bpf_probe_read_user(w->win, len, (const void *)addr)) {
			fw->got = len;
			return true;
		}
	}
	if (!bpf_probe_read_user(w->win, 16, (const void *)addr)) {
		fw->got = 16;
		return true;
	}
	return false;
}

/* one table per binary, shared by every process of it; user space sizes the outer map */
struct frame_table {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
};

/* tgid -> the frame sizes of its program's code, by FRAME_SLOT_BYTES slot */
struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__array(values, struct frame_table);
} frame_sizes SEC(".maps");

/*
 * Go before 1.21 does not move arm64's saved frame pointers when it moves
 * a goroutine's stack (runtime/stack.go, adjustframe: "TODO what about
 * arm64 frame pointer adjustment?"), so each frame made before the move
 * links to the old stack. The caller's frame record is where the frame's
 * size puts it: the record sits 8 bytes below SP, and the caller's SP is
 * SP plus the size. PC is in the function whose record is at fw->fp;
 * returns 0 when its size is not known.
 */
static __always_inline __u64 sized_fp(struct fp_walk *fw, __u64 pc)
{
	__u64 slot, *fs;
	__u32 key;
	void *table;

	if (pc < fw->frame_text)
		return 0;
	slot = (pc - fw->frame_text) >> FRAME_SLOT_SHIFT;
	if (slot >= fw->frame_slots)
		return 0;
	/* a key on the BPF stack: the work slot is plain memory to the verifier here */
	key = fw->tgid;
	table = bpf_map_lookup_elem(&frame_sizes, &key);
	if (!table)
		return 0;
	key = slot / FRAME_SLOTS_PER_ENTRY;
	fs = bpf_map_lookup_elem(table, &key);
	if (!fs)
		return 0;
	return fw->fp + 8 * ((*fs >> 16 * (slot % FRAME_SLOTS_PER_ENTRY)) & 0xffff);
}

/* the walks of process TGID use its frame_sizes table, when L says it has one, and its prologues' shape */
static __always_inline void frame_table(struct work *w, const struct go_layout *l, __u32 tgid)
{
	w->fw.tgid = tgid;
	w->fw.late_bp = l ? l->late_bp : 0;
	w->fw.morestack = l ? l->morestack : 0;
	w->fw.morestack_end = l ? l->morestack_end : 0;
	w->fw.sched_pc = l ? l->sched_pc : 0;
	w->fw.sched_caller = l ? l->sched_caller : 0;
	w->fw.sched_bp = l ? l->sched_bp : 0;
	w->fw.g_status = l ? l->g_status : 0;
	w->fw.frame_text = l ? l->frame_text : 0;
	w->fw.frame_slots = l ? l->frame_slots : 0;
}

/*
 * The function whose frame record is at fw->fp: the frame before the one
 * just put, IDX. Past the leaf, a return address (one byte back is in the
 * call). At the leaf, the leaf itself when the record is its own (FP is
 * SP - 8 once its prologue is done); else it has none yet, or never makes
 * one, and the record is its caller's, whose PC is in LR.
 */
static __always_inline __u64 record_owner(struct work *w, __u32 idx)
{
	struct fp_walk *fw = &w->fw;
	__u64 *out = (__u64 *)&w->e;
	__u32 prev = idx - 1;

	/* idx 0 wraps round, too */
	if (prev >= EVENT_WORDS)
		return 0;
	if (prev > fw->first)
		return out[prev] - 1;
	if (fw->fp == fw->sp - FRAME_BELOW_SP)
		return out[prev];
	return w->e.flags & SAMPLE_F_TOP_WORDS ? w->e.top[1] : 0;
}

/*
 * amd64 Go before 1.21 makes a frame with SUBQ $d, SP; MOVQ BP, d-8(SP);
 * LEAQ d-8(SP), BP, and unmakes it with MOVQ d-8(SP), BP; ADDQ $d, SP
 * (SUBQ $-128, SP, whose immediate fits a byte, where d is 128).
 * At the MOVQ BP and the LEAQ of a prologue, and at an epilogue's ADDQ, SP
 * has moved and BP is still the caller's: the return address lies d above
 * SP. The d that the instruction at IP says; 0 for any other instruction
 * (a probe's trap too), or a frame of one word, which [SP + 8] covers.
 */
static __always_inline __u64 late_bp_delta(__u64 ip)
{
	__u8 b[8];
	__s64 d;

	if (bpf_probe_read_user(b, sizeof(b), (const void *)ip) || b[0] != 0x48)
		return 0;
	if ((b[1] == 0x89 || b[1] == 0x8d) && b[3] == 0x24) {
		/* MOVQ BP, d8/d32(SP) and LEAQ d8/d32(SP), BP: ModRM 6c or ac, SIB 24 */
		if (b[2] == 0x6c)
			d = (__s8)b[4] + 8;
		else if (b[2] == 0xac)
			d = (__s32)(b[4] | b[5] << 8 | b[6] << 16 | (__u32)b[7] << 24) + 8;
		else
			return 0;
	} else if (b[1] == 0x83 && (b[2] == 0xc4 || b[2] == 0xec)) {
		/* ADDQ $imm8, SP, or for 128 bytes SUBQ $-128, SP */
		d = b[2] == 0xc4 ? (__s8)b[3] : -(__s8)b[3];
	} else if (b[1] == 0x81 && b[2] == 0xc4) {
		/* ADDQ $imm32, SP */
		d = (__s32)(b[3] | b[4] << 8 | b[5] << 16 | (__u32)b[6] << 24);
	} else {
		return 0;
	}
	return d > 8 && !(d & 7) ? d : 0;
}

/* the words the leaf repair sends: SAMPLE_F_TOP_FAR's when the leaf sits in a late_bp_delta */
static __always_inline void top_words(struct work *w, __u64 ip, __u64 sp)
{
	__u64 d = LATE_BP && w->fw.late_bp ? late_bp_delta(ip) : 0, ret;

	if (d && !bpf_probe_read_user(&ret, sizeof(ret), (const void *)(sp + d))) {
		w->e.top[0] = d;
		w->e.top[1] = ret & user_va_mask;
		w->e.flags |= SAMPLE_F_TOP_WORDS | SAMPLE_F_TOP_FAR;
		return;
	}
	w->e.top[0] = w->win[FRAME_BELOW_SP / 8] & user_va_mask;
	w->e.top[1] = LEAF_WORD1(w, (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf())) &
		      user_va_mask;
	w->e.flags |= SAMPLE_F_TOP_WORDS;
}

/* puts ADDR as the walk's next frame; false when the event is full */
static __always_inline bool put_frame(struct work *w, __u64 addr)
{
	struct fp_walk *fw = &w->fw;
	__u32 idx = fw->first + fw->n;

	/* checked right where it is used: older verifiers lose the bound in between */
	if (fw->n >= MAX_STACK_DEPTH || idx >= EVENT_WORDS)
		return false;
	((__u64 *)&w->e)[idx] = addr;
	fw->n++;
	return true;
}

/*
 * Go calls duffzero and duffcopy, which make no frame, through a frame
 * record it stores for them DUFF_RECORD bytes below SP. Inside them the
 * record links to the caller's frame: on amd64 right below the return
 * address the call pushed, on arm64 with that address as its own. At the
 * call and the instruction after it, the caller's code runs with FP at
 * the record (its second word stale on amd64, the return address on
 * arm64): the walk starts from the record's saved FP, the caller's own.
 */
static __always_inline __u64 duff_record(struct fp_walk *fw, __u64 ip, __u64 sp, __u64 bp)
{
	__u64 rec[2];

	if (DUFF_CALL_PUSH && bp == sp - DUFF_RECORD + DUFF_CALL_PUSH) {
		fw->lo = bp;
		return bp;
	}
	if (bp != sp - DUFF_RECORD || bpf_probe_read_user(rec, sizeof(rec), (const void *)bp))
		return bp;
	/* arm64: a call is one 4-byte BL */
	if (!DUFF_CALL_PUSH && (rec[1] & user_va_mask) - ip > 4) {
		fw->lo = bp;
		return bp;
	}
	return rec[0];
}

/*
 * Past __kernel_rt_sigreturn, the handler's caller is the code the signal
 * interrupted, whose registers the signal frame at SIGFRAME holds. RECORD
 * is the kernel's frame record above it; the frame counts only if its FP
 * agrees. TRAMP, the trampoline as the handler's caller, goes in first
 * when it is not 0. The PC goes in, then LR: the caller, unless the
 * function has stored it (user space decides, FRAME_MAYBE, where FP cannot
 * tell). A Go handler that injected a call (asyncPreempt,
 * runtime.pushCall) left the call's target as PC and the resumption PC in
 * LR, and the old LR, which the record still holds, at SP. Returns the
 * interrupted FP and *SP, or 0.
 */
static __always_inline __u64 signal_step(struct work *w, __u64 record, __u64 sigframe, __u64 tramp,
					 __u64 *sp)
{
	__u64 *link = w->fw.sig_link, *regs = w->fw.sig_regs, lr, old_lr;

	if (bpf_probe_read_user(link, sizeof(w->fw.sig_link), (const void *)record) ||
	    bpf_probe_read_user(regs, sizeof(w->fw.sig_regs), (const void *)(sigframe + SIGFRAME_X29)) ||
	    regs[0] != link[0] || !regs[3] || (tramp && !put_frame(w, tramp)))
		return 0;
	*sp = regs[2];
	lr = regs[1] & user_va_mask;
	old_lr = link[1] & user_va_mask;
	if (!put_frame(w, (regs[3] & user_va_mask) | FRAME_EXACT) || !lr)
		return regs[0];
	/* FP at the record of a call of duffzero or duffcopy: it holds LR */
	if (regs[0] == regs[2] - DUFF_RECORD)
		return duff_record(&w->fw, regs[3] & user_va_mask, regs[2], regs[0]);
	if (regs[1] != link[1]) {
		/* the call injected: its target, the resumption PC, then the old LR */
		if (put_frame(w, lr) && old_lr)
			put_frame(w, old_lr | FRAME_MAYBE);
		return regs[0];
	}
	/*
	 * LR at PC itself: the signal came right where a call of its own
	 * returned, and the caller is in its frame record, not in LR
	 */
	if (lr == (regs[3] & user_va_mask))
		return regs[0];
	/* a frame that is set up has FP just below SP, but so has a frameless one */
	put_frame(w, regs[0] == regs[2] - FRAME_BELOW_SP ? lr | FRAME_MAYBE : lr);
	return regs[0];
}

/* runtime._Gcopystack: copystack is moving the goroutine's stack */
#define G_COPYSTACK 8

/*
 * The target of the call that returns to PC (amd64: CALL rel32; arm64:
 * BL), or 0. Read into FW (fp_walk.sched_insn), off the BPF stack.
 */
static __always_inline __u64 call_target(struct fp_walk *fw, __u64 pc)
{
#if defined(__TARGET_ARCH_x86)
	__u8 *b = (__u8 *)&fw->sched_insn;

	if (bpf_probe_read_user(b, 5, (const void *)(pc - 5)) || b[0] != 0xe8)
		return 0;
	return pc + (__s32)(b[1] | b[2] << 8 | b[3] << 16 | (__u32)b[4] << 24);
#else
	__u32 insn;

	if (bpf_probe_read_user(&fw->sched_insn, 4, (const void *)(pc - 4)))
		return 0;
	insn = (__u32)fw->sched_insn;
	if ((insn & 0xfc000000) != 0x94000000)
		return 0;
	return pc - 4 + ((__s64)((__s32)(insn << 6) >> 6) << 2);
#endif
}

/*
 * RET returns into runtime.morestack, which a function's stack check
 * called before the function made its frame, and which called newstack
 * on g0. The frame record there links to no frame of curg's (Go 1.21 on
 * loads g0's own BP), and a link that did would skip that function and
 * its caller. morestack left all three in curg's g.sched: the walk goes
 * on from there, on curg's stack, if that PC returns from a call of
 * morestack (else curg is already a goroutine the scheduler picked since).
 * False when it does not go on so.
 */
static __always_inline bool morestack_step(struct work *w, __u64 ret, bool put_ret)
{
	struct fp_walk *fw = &w->fw;
	__u64 pc, caller, bp, to;

	if (!fw->morestack || ret - fw->morestack >= fw->morestack_end - fw->morestack || !w->curg ||
	    bpf_probe_read_user(&fw->sched[0], 8, (const void *)(w->curg + fw->sched_pc)) ||
	    bpf_probe_read_user(&fw->sched[1], 8, (const void *)(w->curg + fw->sched_caller)) ||
	    bpf_probe_read_user(&fw->sched[2], 8, (const void *)(w->curg + fw->sched_bp)) ||
	    bpf_probe_read_user(&fw->sched_status, 4, (const void *)(w->curg + fw->g_status)) ||
	    (SCHED_CALLER_AT_SP &&
	     bpf_probe_read_user(&fw->sched[1], 8, (const void *)fw->sched[1])))
		return false;
	pc = fw->sched[0] & user_va_mask;
	caller = fw->sched[1];
	bp = fw->sched[2];
	to = call_target(fw, pc);
	if (to - fw->morestack >= fw->morestack_end - fw->morestack)
		return false;
	fw->copying = fw->sched_status == G_COPYSTACK;
	if (fw->copying && (bp < fw->next_lo || bp >= fw->next_hi)) {
		/*
		 * copystack has moved g.sched.bp to the new stack and not yet
		 * made the new stack curg's (whose bounds are the old's): the
		 * frames above bp span no more there than they did on the old
		 * stack, and links from them lead into the old one
		 */
		fw->lo = bp;
		fw->hi = bp + (fw->next_hi - fw->next_lo);
	} else {
		fw->lo = fw->next_lo;
		fw->hi = fw->next_hi;
	}
	fw->may_switch = 0;
	fw->fp = bp;
	caller &= user_va_mask;
	if ((!put_ret || put_frame(w, ret)) && put_frame(w, pc) && caller)
		put_frame(w, caller);
	return true;
}

/*
 * newstack before it makes its frame: its return address into morestack
 * is at SP or in LR, where only the leaf repair looks, and BP is g0's.
 * The walk puts that address, which then needs no repair, and goes on
 * from curg's g.sched as morestack_step does. Past newstack's first
 * instructions SP holds its locals, and arm64's LR, if it still points
 * into morestack, is in the frame record too: the walk from there does
 * not meet it again (morestack_step closes the move to curg's stack).
 */
static __always_inline void morestack_leaf(struct work *w)
{
	/* morestack_step looks no further unless the address lies in morestack */
	if (w->fw.may_switch && !(w->e.flags & SAMPLE_F_TOP_FAR))
		morestack_step(w, w->e.top[ENTRY_RET_TOP], true);
}

/*
 * The walk goes on, from FP, on the stack the interrupted code ran on
 * (SP): curg's, where a goroutine's own code runs (the one move the walk
 * may make), or g0's, as the runtime's code does, from which the link
 * into curg's stack stays open. False when SP is on neither.
 */
static __always_inline bool signal_stack(struct work *w, __u64 sp, __u64 fp)
{
	struct fp_walk *fw = &w->fw;
	__u64 g0, bounds[2];

	/*
	 * A tick in the handler's first or last lines, where g is still the
	 * interrupted code's (sigtrampgo sets gsignal after it starts, and g
	 * back before it returns), found SP on no stack of g's: the move into
	 * curg's stack was never offered, and is now, from the code the
	 * signal interrupted (on g0, the way out of systemstack)
	 */
	if (!fw->may_switch && !fw->next_hi && w->curg &&
	    !bpf_probe_read_user(bounds, sizeof(bounds), (const void *)w->curg)) {
		fw->next_lo = bounds[0];
		fw->next_hi = bounds[1];
		fw->may_switch = 1;
	}
	if (fw->may_switch && sp >= fw->next_lo && sp < fw->next_hi) {
		fw->lo = fw->next_lo;
		fw->hi = fw->next_hi;
		fw->may_switch = 0;
	} else if (w->m && !bpf_probe_read_user(&g0, sizeof(g0), (const void *)w->m) && g0 &&
		   !bpf_probe_read_user(bounds, sizeof(bounds), (const void *)g0) &&
		   bounds[0] <= sp && sp < bounds[1]) {
		fw->lo = sp - FRAME_BELOW_SP;
		fw->hi = bounds[1];
		/*
		 * code on g0 that has not set up a frame of its own leaves FP
		 * in the caller on curg's stack: runtime.walltime calls the
		 * vDSO on g0, and a signal may land at the callee's first
		 * instructions
		 */
		if (fw->may_switch && (fp < fw->lo || fp >= fw->hi) && fp >= fw->next_lo &&
		    fp < fw->next_hi) {
			fw->lo = fw->next_lo;
			fw->hi = fw->next_hi;
			fw->may_switch = 0;
		}
	} else {
		return false;
	}
	/* inside duffzero or duffcopy, FP is at a record below SP (duff_record) */
	if (fp == sp - DUFF_RECORD && fp < fw->lo)
		fw->lo = fp;
	fw->fp = fp;
	return true;
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
	ret = w->win[off + 1] & user_va_mask;
	if (!ret)
		return 1;
	idx = fw->first + n;
	if (idx >= EVENT_WORDS)
		return 1;
	out = (__u64 *)&w->e;
	out[idx] = ret;
	fw->n = n + 1;
	/* else the kernel's record leads on, LR standing for the interrupted code */
	if (SIGNAL_FRAMES && fw->sigreturn && ret == fw->sigreturn) {
		__u64 sp, fp = signal_step(w, next, next - RT_SIGFRAME_SIZE, 0, &sp);

		if (fp && signal_stack(w, sp, fp))
			return 0;
		if (fp)
			next = fp;
	}
	if (fw->may_switch && morestack_step(w, ret, false))
		return 0;
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
	/*
	 * copystack has moved curg's stack, and until adjustframe mends them,
	 * frame records on the new one link into the old, which stays whole
	 * until it is freed: the walk goes on there, once. The old stack is
	 * curg's still (morestack_step), or else at most twice the new one's
	 * size (a shrink halves it). A process with a frame_sizes table (arm64
	 * before Go 1.21, which mends no link) goes on by the frame's size
	 * instead, on the new stack.
	 */
	if (fw->copying && next && (next < fw->lo || next >= fw->hi) &&
	    !(FRAME_SIZES && fw->frame_text)) {
		if (next >= fw->next_lo && next < fw->next_hi) {
			fw->lo = fw->next_lo;
			fw->hi = fw->next_hi;
		} else {
			fw->hi = next + 2 * (fw->hi - fw->lo);
			fw->lo = next;
		}
		fw->copying = 0;
		fw->fp = next;
		return 0;
	}
	/* only arm64's Go ever leaves a stale link (user space makes no table elsewhere) */
	if (FRAME_SIZES && fw->frame_text) {
		next = sized_fp(fw, record_owner(w, idx));
		if (next > fw->fp && next < fw->hi) {
			fw->fp = next;
			return 0;
		}
	}
	return 1;
}

/*
 * Fills W's event, from word FIRST on, with the user PC IP and the return
 * addresses up the frame-pointer chain from BP, leaf first; returns the
 * number of frames.
 *
 * W->g is the goroutine the thread runs, W->m its M and W->curg the M's
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
	__u64 bounds[2], g_bounds[2], g0, *out;
	__u32 off_g = 0, g_ok;
	bool sig_leaf = false;

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
	/* no move offered yet: signal_stack may still offer one */
	fw->next_lo = 0;
	fw->next_hi = 0;
	fw->copying = 0;
	fw->sigreturn = 0;
	if (SIGNAL_FRAMES && sigreturn_off) {
		/* loads through BTF pointers, not helper calls: this runs on every sample */
		struct mm_struct *mm = bpf_get_current_task_btf()->mm;
		__u64 vdso = mm ? (__u64)mm->context.vdso : 0;

		if (vdso)
			fw->sigreturn = vdso + sigreturn_off;
	}
	/*
	 * In the trampoline itself (rt_sigreturn, mostly), SP is still the
	 * signal frame and FP the kernel's record: the walk goes on from the
	 * interrupted code, whose own leaf needs no repair.
	 */
	if (SIGNAL_FRAMES && fw->sigreturn && ip - fw->sigreturn <= SIGRETURN_LAST) {
		/*
		 * the record by SP: inside rt_sigreturn the kernel may have put
		 * back the interrupted FP already, and not yet SP
		 */
		__u64 isp, ifp = signal_step(w, sp + RT_SIGFRAME_SIZE, sp, 0, &isp);

		if (ifp) {
			sp = isp;
			bp = ifp;
			sig_leaf = true;
		}
	} else if (SIGNAL_FRAMES && fw->sigreturn &&
		   (bp == sp + RT_SIGFRAME_SIZE ||
		    (bp - sp - RT_SIGFRAME_SIZE <= HANDLER_FRAME_MAX &&
		     (LEAF_WORD1(w, (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf())) &
		      user_va_mask) == fw->sigreturn))) {
		/*
		 * A handler's first instructions, before it points FP at a
		 * record of its own: FP is the kernel's record right above the
		 * signal frame, and LR the trampoline. SP is the signal frame,
		 * or below it once the prologue has moved SP (Go's stores LR
		 * as it does, two instructions before it sets FP). A tick while
		 * the kernel sets up the frame finds the handler's PC with LR
		 * not yet set: SP, unmoved, says so there. The trampoline is
		 * the handler's caller, and the walk goes on from the
		 * interrupted code; read by FP, the record's LR would stand for
		 * that code and its frame follow.
		 */
		__u64 isp, ifp = signal_step(w, bp, bp - RT_SIGFRAME_SIZE, fw->sigreturn, &isp);

		if (ifp) {
			sp = isp;
			bp = ifp;
			sig_leaf = true;
		}
	}
	fw->sp = sp;
	/*
	 * A live frame lies above the stack pointer (arm64 Go code saves FP
	 * 8 bytes below it, and LR at it). C code without frame
	 * pointers (libc in cgo programs) leaves anything in BP; following it
	 * below SP would report dead frames of earlier calls.
	 */
	fw->lo = sp - FRAME_BELOW_SP;
	bp = duff_record(fw, ip, sp, bp);
	fw->hi = ~0ULL;
	g_ok = w->g && !bpf_probe_read_user(g_bounds, sizeof(g_bounds), (const void *)w->g);
	if (g_ok && g_bounds[0] <= sp && sp < g_bounds[1])
		fw->hi = g_bounds[1];
	/*
	 * A user goroutine runs on its own stack, except where Go moves SP to
	 * g0's stack and leaves g alone: to call the vDSO (every clock read),
	 * and in the instructions of gogo between making the goroutine g and
	 * moving SP onto its stack. Frames on g0 belong to the sample; the
	 * link out of them is followed only into curg's stack, as from g0
	 * itself (so not through gogo's mcall to the goroutine the scheduler
	 * left). g0 is runtime.m's first member in every Go version.
	 */
	if (w->g && w->g == w->curg && fw->hi == ~0ULL) {
		if (!g_ok)
			return 1;
		if (w->m && !bpf_probe_read_user(&g0, sizeof(g0), (const void *)w->m) && g0 &&
		    !bpf_probe_read_user(bounds, sizeof(bounds), (const void *)g0) &&
		    bounds[0] <= sp && sp < bounds[1])
			fw->hi = bounds[1];
		else
			/*
			 * neither: a signal's handler before it makes gsignal g
			 * (sigtramp, cgoSigtramp), or after it makes the goroutine
			 * g again (the restorer). SP is on the signal stack, which
			 * Go allocates GSIGNAL_STACK bytes; the handler's frames
			 * lie there, and link to the goroutine's.
			 */
			fw->hi = sp + GSIGNAL_STACK;
		/* curg is g: its bounds are read already */
		bounds[0] = g_bounds[0];
		bounds[1] = g_bounds[1];
		off_g = 1;
	}
	if (w->curg && fw->hi != ~0ULL &&
	    (off_g || (w->curg != w->g &&
		       !bpf_probe_read_user(bounds, sizeof(bounds), (const void *)w->curg)))) {
		fw->next_lo = bounds[0];
		fw->next_hi = bounds[1];
		fw->may_switch = 1;
		/*
		 * Between the move to g0's stack and the first frame made there
		 * (in systemstack, in Go's clock code, at a vDSO function's
		 * entry), BP is still the goroutine's.
		 */
		if (bp >= bounds[0] && bp < bounds[1] && !(bp >= fw->lo && bp < fw->hi)) {
			fw->lo = bounds[0];
			fw->hi = bounds[1];
			fw->may_switch = 0;
		}
	}
	fw->fp = bp;
	/* the window at SP usually holds the first frames, and the leaf's own */
	if (!load_window(w, (sp - FRAME_BELOW_SP) & ~7ULL)) {
		fw->got = 0;
	} else if (leaf_repair && !sig_leaf && !(sp & 7)) {
		w->e.sp = sp;
		w->e.bp = bp;
		top_words(w, ip, sp);
		morestack_leaf(w);
	}
	bpf_loop(MAX_STACK_DEPTH, fp_step, &ref, 0);
	return fw->n;
}

/*
 * While the kernel steps a probed instruction out of line, the PC is in
 * the [uprobes] page, in the slot that holds a copy of it: the sample is
 * of that instruction, at its own address in the probed function. SP and
 * BP are the function's there, so the walk and the leaf repair go on as
 * from the probed address.
 */
static __always_inline __u64 probed_ip(struct task_struct *task, __u64 ip)
{
	struct uprobe_task *ut;
	__u64 xol;

	if (!bpf_core_field_exists(task->utask))
		return ip;
	ut = BPF_CORE_READ(task, utask);
	if (!ut)
		return ip;
	xol = BPF_CORE_READ(ut, xol_vaddr);
	/* a slot holds one instruction, and what the kernel adds after it */
	if (!xol || ip < xol || ip - xol >= XOL_SLOT_BYTES)
		return ip;
	return BPF_CORE_READ(ut, vaddr) + (ip - xol < MAX_INSN_BYTES ? ip - xol : 0);
}

struct user_regs {
	__u64 ip, sp, bp;
};

/* A perf sample's user registers: its own, or the task's when the CPU was in the kernel. */
static __always_inline void sample_user_regs(struct bpf_perf_event_data *ctx, struct user_regs *r)
{
	if (PERF_USER_MODE(ctx)) {
		r->ip = REG_IP(&ctx->regs);
		r->sp = REG_SP(&ctx->regs);
		r->bp = REG_FP(&ctx->regs);
	} else {
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		/* named as the registers: the macro's field names are its parameters' */
		__u64 ip, sp, bp;

		READ_TASK_USER_REGS(regs, ip, sp, bp);
		r->ip = ip;
		r->sp = sp;
		r->bp = bp;
	}
}

/* walk_user_stack for a perf sample, from its user registers R (sample_user_regs). */
static __always_inline int read_user_stack(struct work *w, const struct user_regs *r, __u32 first)
{
	return walk_user_stack(w, probed_ip(bpf_get_current_task_btf(), r->ip), r->sp, r->bp, first);
}

#endif /* __USTACK_BPF_H */
