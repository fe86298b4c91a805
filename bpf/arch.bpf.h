/* SPDX-License-Identifier: GPL-2.0 */
/* arch.bpf.h: where each architecture keeps what the programs read: the TLS base, g, arguments, user registers. */
#ifndef __ARCH_BPF_H
#define __ARCH_BPF_H

/*
 * R is a struct pt_regs (a uprobe's context) or a perf sample's regs;
 * every field is named as both spell it. Go's register ABI passes integer
 * arguments in order (amd64: RAX, RBX, RCX, RDI, ...; arm64: R0, R1, ...):
 * GO_ARG(R, N) is the Nth, from 1.
 */
#if defined(__TARGET_ARCH_x86)
#define GO_ARG1(r) ((r)->ax)
#define GO_ARG2(r) ((r)->bx)
#define GO_ARG3(r) ((r)->cx)
#define GO_ARG4(r) ((r)->di)
/* g at a Go function's entry */
#define GO_G(r) ((r)->r14)
#define C_ARG1(r) ((r)->di)
#define REG_IP(r) ((r)->ip)
#define REG_SP(r) ((r)->sp)
#define REG_FP(r) ((r)->bp)
/* at a function's entry the call's return address is at SP (traceparent.bpf.h) */
#define RETURN_AT_SP 1
/* at the JBE of Go's stack check: taken (morestack) with CF or ZF set */
#define STACK_CHECK_FAILS(r) (((r)->flags & 0x41) != 0)
/* the TLS block's base: Go's g sits at a negative offset from it (variant II) */
#define TASK_TLS_BASE(t) ((t)->thread.fsbase)
/* amd64's Go always keeps g in TLS too: no need for its register (R14) */
#define HAS_G_REGISTER 0
#define TASK_G_REGISTER(r) 0
/* the second word the leaf repair sends: the one above SP (no link register) */
#define LEAF_WORD1(w, r) ((w)->win[1])
/* at a function's first instruction, its return address: the word at SP, top[0] */
#define ENTRY_RET_TOP 0
/* a frame's record (saved BP, return address) lies at or above SP */
#define FRAME_BELOW_SP 0
/*
 * Go calls duffzero and duffcopy with BP at a record it stores 16 bytes
 * below SP, and the call pushes the return address (ustack.bpf.h)
 */
#define DUFF_RECORD 16
#define DUFF_CALL_PUSH 8
/* Go moves saved frame pointers with a goroutine's stack: no frame_sizes walk */
#define FRAME_SIZES 0
/* Go before 1.21 moves SP before it saves BP (ustack.bpf.h, late_bp_delta) */
#define LATE_BP 1
/* morestack's caller's caller: the return address its call pushed, at g.sched.sp */
#define SCHED_CALLER_AT_SP 1
/* Go's handlers return through its own restorer, not the vDSO's: no signal frame step */
#define SIGNAL_FRAMES 0
/*
 * Was a perf sample's CPU in user mode? cs, word 17 of x86-64's pt_regs
 * (after 15 registers, orig_ax and ip), shares its slot with wider fields:
 * the context allows only 8-byte reads.
 */
#define PERF_USER_MODE(ctx) (((const __u64 *)(ctx))[17] & 3)
/* the user registers the kernel saved for the task (bpf_task_pt_regs) */
#define READ_TASK_USER_REGS(r, ip, sp, fp)                                                         \
	do {                                                                                       \
		ip = BPF_CORE_READ(r, ip);                                                         \
		sp = BPF_CORE_READ(r, sp);                                                         \
		fp = BPF_CORE_READ(r, bp);                                                         \
	} while (0)
#elif defined(__TARGET_ARCH_arm64)
#define GO_ARG1(r) ((r)->regs[0])
#define GO_ARG2(r) ((r)->regs[1])
#define GO_ARG3(r) ((r)->regs[2])
#define GO_ARG4(r) ((r)->regs[3])
#define GO_G(r) ((r)->regs[28])
#define C_ARG1(r) ((r)->regs[0])
#define REG_IP(r) ((r)->pc)
#define REG_SP(r) ((r)->sp)
#define REG_FP(r) ((r)->regs[29])
/* the return address is in LR at a function's entry, and the callee stores it where its frame says */
#define RETURN_AT_SP 0
/* at the BLS of Go's stack check: taken (morestack) unless C is set and Z clear (pstate bits 29, 30) */
#define STACK_CHECK_FAILS(r) (((r)->pstate & (3ULL << 29)) != (1ULL << 29))
/* tpidr_el0 as the task last set it (variant I: the TLS block follows it) */
#define TASK_TLS_BASE(t) ((t)->thread.uw.tp_value)
/* Go keeps g in R28, and in TLS as well only for C code's sake (cgo) */
#define HAS_G_REGISTER 1
#define TASK_G_REGISTER(r) BPF_CORE_READ(r, regs[28])
/* a frameless leaf's return address is in the link register, R30 */
#define LEAF_WORD1(w, r) BPF_CORE_READ(r, regs[30])
/* at a function's first instruction, its return address: LR, top[1] */
#define ENTRY_RET_TOP 1
/* Go's frame record (saved R29, then LR at SP) starts 8 bytes below SP */
#define FRAME_BELOW_SP 8
/* Go calls duffzero and duffcopy with FP at a record (FP, return address) 24 bytes below SP */
#define DUFF_RECORD 24
#define DUFF_CALL_PUSH 0
/* the caller's record is at FP + the frame's size (ustack.bpf.h, sized_fp) */
#define FRAME_SIZES 1
/* a prologue stores LR as it moves SP (STP with writeback): [SP] is the return address */
#define LATE_BP 0
/* morestack's caller's caller: in g.sched.lr, where morestack keeps LR as it was at the call */
#define SCHED_CALLER_AT_SP 0
/* a handler returns to the vDSO's __kernel_rt_sigreturn (ustack.bpf.h, signal_step) */
#define SIGNAL_FRAMES 1
/* pstate, word 33 of user_pt_regs (31 registers, sp, pc): EL0 when its mode bits are 0 */
#define PERF_USER_MODE(ctx) (!(((const __u64 *)(ctx))[33] & 0xf))
#define READ_TASK_USER_REGS(r, ip, sp, fp)                                                         \
	do {                                                                                       \
		ip = BPF_CORE_READ(r, pc);                                                         \
		sp = BPF_CORE_READ(r, sp);                                                         \
		fp = BPF_CORE_READ(r, regs[29]);                                                   \
	} while (0)
#else
#error "ctxprof-go's BPF programs are for x86 and arm64: set __TARGET_ARCH_x86 or __TARGET_ARCH_arm64"
#endif

#endif /* __ARCH_BPF_H */
