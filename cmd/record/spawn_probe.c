// SPDX-License-Identifier: GPL-2.0
/* spawn_probe.c: Go before 1.21: the probe where goroutines start, held to a number of hits a second. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/util/clock.h"
#include "spawn_probe.h"
#include "uprobe_link.h"

/*
 * A uprobe hit costs the process a trap at every goroutine start, whoever
 * starts it, and only detaching the probe spares it that. So each second
 * the kernel counts down a budget of hits; the hit that spends it says so
 * (spawn_notes) and the probe comes off until the second is over. A
 * server that starts goroutines faster than the budget pays the budget's
 * hits and no more; the goroutines started while the probe rests carry
 * no context, and the statistics say about how many those were.
 */
struct spawn_probe {
	struct bpf_program *prog;
	struct uprobe_link *link; /* NULL while it rests */
	int budgets_fd;
	__u32 pid;
	char path[64];
	uint64_t offset, cookie;
	unsigned int max_per_sec;
	uint64_t second_ns; /* when this second of its budget began: while on, it was on since then */
	uint64_t since_ns; /* when it last came on or went off */
	uint64_t watched, on_ns, paused_ns;
	/* the rate of starts when it last spent its budget, per ns, and what it missed so far at that rate */
	double rate, missed;
	bool failed;
};

/* The hits of this second so far, past the budget too (a note is read late); 0 when unknown. */
static uint64_t second_hits(const struct spawn_probe *sp)
{
	struct spawn_budget b;

	if (bpf_map_lookup_elem(sp->budgets_fd, &sp->pid, &b))
		return 0;
	return (uint64_t)((__s64)sp->max_per_sec - b.left);
}

/* The budget for a second anew; what the last one spent is counted. */
static void refill(struct spawn_probe *sp)
{
	struct spawn_budget b = { .left = sp->max_per_sec };

	sp->watched += second_hits(sp);
	bpf_map_update_elem(sp->budgets_fd, &sp->pid, &b, BPF_ANY);
}

static int attach(struct spawn_probe *sp)
{
	sp->link = uprobe_link__attach(sp->prog, sp->pid, sp->path, sp->offset, sp->cookie);
	return sp->link ? 0 : -errno;
}

int spawn_probe__attach(struct bpf_program *prog, int budgets_fd, pid_t pid, const char *path,
			uint64_t offset, uint64_t cookie, unsigned int max_per_sec,
			struct spawn_probe **out)
{
	struct spawn_budget b = { .left = max_per_sec };
	struct spawn_probe *sp;
	int err;

	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->prog = prog;
	sp->budgets_fd = budgets_fd;
	sp->pid = pid;
	snprintf(sp->path, sizeof(sp->path), "%s", path);
	sp->offset = offset;
	sp->cookie = cookie;
	sp->max_per_sec = max_per_sec;
	if (bpf_map_update_elem(budgets_fd, &sp->pid, &b, BPF_ANY)) {
		err = -errno;
		free(sp);
		return err;
	}
	err = attach(sp);
	if (err) {
		bpf_map_delete_elem(budgets_fd, &sp->pid);
		free(sp);
		return err;
	}
	sp->second_ns = sp->since_ns = now_ns(CLOCK_MONOTONIC);
	*out = sp;
	return 0;
}

void spawn_probe__spent(struct spawn_probe *sp)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (!sp->link)
		return;
	if (now > sp->second_ns)
		sp->rate = (double)second_hits(sp) / (now - sp->second_ns);
	uprobe_link__destroy(sp->link);
	sp->link = NULL;
	sp->on_ns += now - sp->since_ns;
	sp->since_ns = now;
}

void spawn_probe__tick(struct spawn_probe *sp)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int err;

	/* a note lost to a full ring leaves the probe on to the end of its second */
	if (sp->failed || now - sp->second_ns < NSEC_PER_SEC)
		return;
	sp->second_ns = now;
	refill(sp);
	if (sp->link)
		return;
	err = attach(sp);
	if (err) {
		fprintf(stderr, "pid %u: warning: failed to attach the goroutine-start probe again: "
				"%s; the goroutines it starts from now on carry no trace ID\n",
			sp->pid, strerror(-err));
		sp->failed = true;
		return;
	}
	sp->paused_ns += now - sp->since_ns;
	sp->missed += sp->rate * (now - sp->since_ns);
	sp->since_ns = now;
}

void spawn_probe__stats(const struct spawn_probe *sp, struct spawn_probe_stats *st)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	st->watched = sp->watched + second_hits(sp);
	st->on_ns = sp->on_ns + (sp->link ? now - sp->since_ns : 0);
	st->paused_ns = sp->paused_ns + (sp->link ? 0 : now - sp->since_ns);
	st->missed = sp->missed + (sp->link ? 0 : sp->rate * (now - sp->since_ns));
	st->failed = sp->failed;
}

void spawn_probe__free(struct spawn_probe *sp)
{
	if (!sp)
		return;
	uprobe_link__destroy(sp->link);
	bpf_map_delete_elem(sp->budgets_fd, &sp->pid);
	free(sp);
}
