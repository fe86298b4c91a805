// SPDX-License-Identifier: GPL-2.0
/* wall_iter.bpf.c: make bench only: every g of a target read from a sleepable task iterator, to weigh against process_vm_readv. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define MAX_GS (1 << 17)
#define MAX_WIN 512

const volatile __u32 target_tgid;
const volatile __u32 win_len; /* bytes of each g, at most MAX_WIN */

__u32 ngs; /* entries of gaddrs to read, set before each run */
__u64 reads, failed, sum;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_GS);
	__type(key, __u32);
	__type(value, __u64);
} gaddrs SEC(".maps");

struct win {
	__u8 b[MAX_WIN];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct win);
} wins SEC(".maps");

struct read_ctx {
	struct task_struct *task;
	struct win *w;
};

/* one g per call, as a reader of goroutines would take them: one copy each */
static long read_one(__u32 i, void *arg)
{
	struct read_ctx *c = arg;
	__u32 n = win_len;
	__u64 *a = bpf_map_lookup_elem(&gaddrs, &i);

	if (!a || !c->w)
		return 1;
	if (n > MAX_WIN)
		n = MAX_WIN;
	if (bpf_copy_from_user_task(c->w->b, n, (const void *)*a, c->task, 0)) {
		failed++;
	} else {
		reads++;
		sum += c->w->b[0];
	}
	return 0;
}

SEC("iter.s/task")
int read_gs(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct read_ctx c;
	__u32 zero = 0;

	/* the process's leader only: one pass over its goroutines */
	if (!task || task->tgid != target_tgid || task->pid != target_tgid)
		return 0;
	c.task = task;
	c.w = bpf_map_lookup_elem(&wins, &zero);
	bpf_loop(ngs, read_one, &c, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
