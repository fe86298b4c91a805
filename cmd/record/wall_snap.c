// SPDX-License-Identifier: GPL-2.0
/* wall_snap.c: --wall's snapshots: every target's goroutines, wall_hz times a second, within a budget of looks. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/util/clock.h"
#include "cmd/util/hashmap.h"
#include "ctxprof.skel.h"
#include "target.h"
#include "targets.h"
#include "wall.h"
#include "wall_snap.h"

/*
 * Goroutine looks a second --wall may spend: a look costs about as much
 * as the kernel pinning and copying the target's pages it reads
 * (tests/bench/README.md weighs it). With more goroutines than a
 * snapshot's share, each snapshot looks at a rotating part of them.
 */
#define WALL_LOOKS_PER_SEC 30000
/*
 * Reading a goroutine whole (labels, context, stack) costs some 20 looks:
 * with a rotating part, a snapshot reads at most its share / this whole
 * again, so that goroutines that keep changing cost at most as much again
 * as the looks. (The first read of each is not limited: that is once.)
 */
#define WALL_FULL_COST 32

struct wall_snap {
	struct ctxprof_bpf *skel;
	struct aggregate *agg;
	struct targets *ts;
	unsigned long hz;
	/* the kernel's trace contexts as of this snapshot, struct goid_key -> trace_ctx */
	struct hashmap *ctxs;
	struct wall_stats stats;
	uint64_t cpu_ns; /* this process's CPU time in snapshots */
};

struct wall_snap *wall_snap__new(struct ctxprof_bpf *skel, struct aggregate *agg,
				 struct targets *ts, unsigned long hz)
{
	struct wall_snap *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->skel = skel;
	w->agg = agg;
	w->ts = ts;
	w->hz = hz;
	return w;
}

void wall_snap__free(struct wall_snap *w)
{
	if (!w)
		return;
	hashmap__free(w->ctxs, free);
	free(w);
}

const struct wall_stats *wall_snap__stats(const struct wall_snap *w, uint64_t *cpu_ns)
{
	*cpu_ns = w->cpu_ns;
	return &w->stats;
}

/* Only handed to readers when ctxs holds any. */
static bool wall_context(void *ctx, uint32_t tgid, uint64_t goid, struct trace_ctx *out)
{
	struct wall_snap *w = ctx;
	struct goid_key key = { .tgid = tgid, .goid = goid };
	struct trace_ctx *c;

	c = hashmap__get(w->ctxs, &key, sizeof(key));
	if (c)
		*out = *c;
	return c;
}

/* NULL with no context to look up: most snapshots, with no request in flight. */
static wall_ctx_fn context_fn(const struct wall_snap *w)
{
	return w->ctxs && hashmap__size(w->ctxs) ? wall_context : NULL;
}

static void has_probes(struct target *t, void *ctx)
{
	*(bool *)ctx |= target__probed(t);
}

/* Adds the entries of map FD to the snapshot (the first of a goroutine wins). */
static void snapshot_map(struct wall_snap *w, int fd)
{
	struct goid_key keys[256];
	struct trace_ctx vals[256], *c;
	__u32 n, i;
	void *in = NULL;
	__u64 out;
	int ret;

	do {
		n = sizeof(keys) / sizeof(keys[0]);
		ret = bpf_map_lookup_batch(fd, in, &out, keys, vals, &n, NULL);
		if (ret && errno != ENOENT)
			return;
		for (i = 0; i < n; i++) {
			if (hashmap__get(w->ctxs, &keys[i], sizeof(keys[i])) ||
			    !(c = malloc(sizeof(*c))))
				continue;
			*c = vals[i];
			if (hashmap__add(w->ctxs, &keys[i], sizeof(keys[i]), c))
				free(c);
		}
		in = &out;
	} while (!ret);
}

/*
 * The traceparent and otel-sdk contexts, read in batches once per
 * snapshot: thousands of goroutines then look theirs up here, not each
 * with a system call. None when no target has those probes.
 */
static void snapshot_contexts(struct wall_snap *w)
{
	bool any = false;

	hashmap__free(w->ctxs, free);
	w->ctxs = NULL;
	targets__foreach(w->ts, has_probes, &any);
	if (!any || !(w->ctxs = hashmap__new()))
		return;
	/* a goroutine's own context first, then one it took from its starter */
	snapshot_map(w, bpf_map__fd(w->skel->maps.trace_ctxs));
	snapshot_map(w, bpf_map__fd(w->skel->maps.spawn_ctxs));
}

struct round {
	struct wall_snap *w;
	uint64_t time_ns;
	struct wall_share share;
	uint64_t goroutines;
	int err;
};

static void settle_one(struct target *t, void *ctx)
{
	struct wall_reader *reader = target__wall(t);
	struct round *r = ctx;
	int ret;

	if (reader && !r->err && (ret = wall_reader__settle(reader, r->w->agg)))
		r->err = ret;
}

static void finish_one(struct target *t, void *ctx)
{
	struct wall_reader *reader = target__wall(t);
	struct round *r = ctx;
	int ret;

	if (!reader || r->err)
		return;
	ret = wall_reader__finish(reader, r->w->agg, context_fn(r->w), r->w, &r->w->stats);
	if (ret && ret != -ESRCH)
		r->err = ret;
}

int wall_snap__finish(struct wall_snap *w)
{
	struct round r = { .w = w };
	uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);

	targets__foreach(w->ts, finish_one, &r);
	w->cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	return r.err;
}

int wall_snap__settle(struct wall_snap *w)
{
	struct round r = { .w = w };

	targets__foreach(w->ts, settle_one, &r);
	return r.err;
}

/* A target's goroutines as its last snapshot listed them. */
static void count_goroutines(struct target *t, void *ctx)
{
	struct round *r = ctx;

	if (target__wall(t))
		r->goroutines += wall_reader__goroutines(target__wall(t));
}

static void snapshot_one(struct target *t, void *ctx)
{
	struct wall_reader *reader = target__wall(t);
	struct round *r = ctx;
	struct target_info info;
	int ret;

	if (!reader || r->err)
		return;
	/* a target that exec'd runs another program: its goroutine list is gone */
	if (bpf_map_lookup_elem(bpf_map__fd(r->w->skel->maps.targets), &(__u32){ target__pid(t) },
				&info) ||
	    info.execed)
		return;
	ret = wall_reader__snapshot(reader, r->w->agg, &r->share, r->time_ns, context_fn(r->w),
				    r->w, &r->w->stats);
	/* a process that is gone is reaped by the loop */
	if (ret && ret != -ESRCH)
		r->err = ret;
}

int wall_snap__take(struct wall_snap *w, uint32_t slot)
{
	struct round r = { .w = w, .share.slot = slot };
	uint64_t cpu, share = WALL_LOOKS_PER_SEC / w->hz;
	uint64_t stride;

	r.time_ns = now_ns(CLOCK_MONOTONIC);
	cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	snapshot_contexts(w);
	targets__foreach(w->ts, count_goroutines, &r);
	share = share ? share : 1;
	stride = (r.goroutines + share - 1) / share;
	r.share.stride = stride > 1 ? stride : 1;
	/* every goroutine in each snapshot: fewer than a share, each read whole at most once */
	r.share.full = stride > 1 ? share / WALL_FULL_COST + 1 : UINT32_MAX;
	if (r.share.stride > w->stats.stride)
		w->stats.stride = r.share.stride;
	targets__foreach(w->ts, snapshot_one, &r);
	w->cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	return r.err;
}
