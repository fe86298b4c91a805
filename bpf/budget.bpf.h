/* SPDX-License-Identifier: GPL-2.0 */
/* budget.bpf.h: probes held to a budget of hits a period, per process: the hit that spends it says so. */
#ifndef __BUDGET_BPF_H
#define __BUDGET_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ctxprof.h"

/* the processes whose probe spent its budget, and which probe: user space detaches it at once */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} budget_notes SEC(".maps");

/*
 * A hit of probe KIND in TGID counted down from its budget in BUDGETS (a
 * map of struct probe_budget by tgid); NULL when it has none. The hit that
 * spends the last of it says so; the probe goes on until user space has
 * read that.
 */
static __always_inline struct probe_budget *budget_spend(void *budgets, __u32 tgid, __u32 kind)
{
	struct probe_budget *b = bpf_map_lookup_elem(budgets, &tgid);
	struct budget_note note = { .tgid = tgid, .kind = kind };

	if (b && __sync_fetch_and_sub(&b->left, 1) == 1)
		bpf_ringbuf_output(&budget_notes, &note, sizeof(note), BPF_RB_FORCE_WAKEUP);
	return b;
}

/* The program's own time in a hit since T0, added to B: a hit's price is measured. */
static __always_inline void budget_time(struct probe_budget *b, __u64 t0)
{
	if (b)
		__sync_fetch_and_add(&b->bpf_ns, bpf_ktime_get_ns() - t0);
}

/*
 * A hit of another probe of TGID whose time since T0 its budget in
 * BUDGETS pays for, when it has one: counted apart, never spent from its
 * count of hits, so that only its own probe rests.
 */
static __always_inline void budget_pay(void *budgets, __u32 tgid, __u64 t0)
{
	struct probe_budget *b = bpf_map_lookup_elem(budgets, &tgid);

	if (!b)
		return;
	__sync_fetch_and_add(&b->paid, 1);
	__sync_fetch_and_add(&b->paid_ns, bpf_ktime_get_ns() - t0);
}

#endif /* __BUDGET_BPF_H */
