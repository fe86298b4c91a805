// SPDX-License-Identifier: GPL-2.0
/* example_tailcall.bpf.c: another tool's uprobe that hands ctxprof-go a context value by tail call. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/*
 * ctxprof-go's own map, reused by fd from its pin (bpf_map__reuse_fd), so
 * the definition must match: a per-CPU array of one u64 at key 0.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} custom_context_map SEC(".maps");

/* this tool's own jump table: the loader puts custom__generic at index 0 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ctxprof_jump SEC(".maps");

/*
 * A uprobe, so a program of the same type (kprobe) as custom__generic:
 * tail calls only go between programs of one type.
 */
SEC("uprobe")
int report(struct pt_regs *ctx)
{
	__u64 context = PT_REGS_PARM1(ctx); /* RDI: report_trace's argument */
	__u32 zero = 0;

	bpf_map_update_elem(&custom_context_map, &zero, &context, BPF_ANY);
	bpf_tail_call(ctx, &ctxprof_jump, 0);
	/* only reached when the slot is empty: ctxprof-go is not running */
	return 0;
}
