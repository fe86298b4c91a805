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
#include "cmd/util/map_copy.h"
#include "sampler.h"
#include "spawn_table.h"
#include "owners.h"
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
	const struct sampler_bpf *bpf;
	struct aggregate *agg;
	struct targets *ts;
	unsigned long hz;
	/*
	 * the kernel's trace contexts as of this snapshot, struct goid_key ->
	 * trace_ctx: goroutines' own, and those taken from their starters
	 */
	struct hashmap *ctxs, *copies;
	/* who set the label sets with trace IDs, as of this snapshot; NULL when no target follows them */
	struct owners *owners;
	struct wall_lookup lookup;
	struct wall_stats stats;
	uint64_t cpu_ns; /* this process's CPU time in snapshots */
};

struct wall_snap *wall_snap__new(const struct sampler_bpf *bpf, struct aggregate *agg,
				 struct targets *ts, unsigned long hz)
{
	struct wall_snap *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->bpf = bpf;
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
	hashmap__free(w->copies, free);
	owners__free(w->owners);
	free(w);
}

const struct wall_stats *wall_snap__stats(const struct wall_snap *w, uint64_t *cpu_ns)
{
	*cpu_ns = w->cpu_ns;
	return &w->stats;
}

static struct trace_ctx *ctx_of(const struct hashmap *m, uint32_t tgid, uint64_t goid)
{
	struct goid_key key = { .tgid = tgid, .goid = goid };

	return m ? hashmap__get(m, &key, sizeof(key)) : NULL;
}

/*
 * As the sampler's sampled_ctx: a goroutine's own context, or the one it
 * took from its starter (live while that one serves the same request), or
 * on Go >= 1.21 its starter's own, which it takes from now on, in the
 * kernel too, so that its CPU samples agree.
 */
static bool wall_context(void *ctx, uint32_t tgid, uint64_t goid, uint64_t parent,
			 struct trace_ctx *out, uint32_t *flags)
{
	struct wall_snap *w = ctx;
	struct goid_key key = { .tgid = tgid, .goid = goid };
	struct trace_ctx *c, *o;

	if ((c = ctx_of(w->ctxs, tgid, goid))) {
		*out = *c;
		return true;
	}
	/* one it took as it started: kept once a sample saw it, else still in its slot */
	if ((c = ctx_of(w->copies, tgid, goid)) ||
	    spawn_table__get(w->bpf->spawn.table, tgid, goid, out)) {
		if (c)
			*out = *c;
		o = ctx_of(w->ctxs, tgid, out->origin);
		*flags |= SAMPLE_F_CTX_CHILD |
			  (!o || o->epoch != out->epoch ? SAMPLE_F_CTX_ENDED : 0);
		return true;
	}
	if (!parent || !(o = ctx_of(w->ctxs, tgid, parent)))
		return false;
	*out = *o;
	out->origin = parent;
	*flags |= SAMPLE_F_CTX_CHILD;
	bpf_map_update_elem(w->bpf->requests.spawn_ctxs_fd, &key, out, BPF_NOEXIST);
	if ((c = malloc(sizeof(*c)))) {
		*c = *out;
		if (hashmap__add(w->copies, &key, sizeof(key), c))
			free(c);
	}
	return true;
}

static uint32_t wall_labels_judge(void *ctx, uint32_t tgid, uint64_t labels, uint64_t goid)
{
	struct wall_snap *w = ctx;
	struct target *t = targets__find(w->ts, tgid);

	return t && target__follows_labels(t) ?
		       owners__judge(w->owners, tgid, target__go_layout(t), labels, goid) :
		       0;
}

static void has_probes(struct target *t, void *ctx)
{
	*(bool *)ctx |= target__probed(t);
}

static void follows_labels(struct target *t, void *ctx)
{
	*(bool *)ctx |= target__follows_labels(t);
}

/*
 * The traceparent and otel-sdk contexts, and who set the label sets,
 * read in batches once per snapshot: thousands of goroutines then look
 * theirs up here, not each with a system call. None of what no target
 * has probes for.
 */
static void snapshot_contexts(struct wall_snap *w)
{
	bool any = false;

	hashmap__free(w->ctxs, free);
	hashmap__free(w->copies, free);
	w->ctxs = w->copies = NULL;
	w->lookup = (struct wall_lookup){ .ctx = w };
	targets__foreach(w->ts, has_probes, &any);
	if (any && (w->ctxs = hashmap__new()) && (w->copies = hashmap__new())) {
		/* a map not read leaves its goroutines without a context this snapshot */
		map_copy(w->bpf->requests.trace_ctxs_fd, w->ctxs, sizeof(struct goid_key),
			 sizeof(struct trace_ctx));
		map_copy(w->bpf->requests.spawn_ctxs_fd, w->copies, sizeof(struct goid_key),
			 sizeof(struct trace_ctx));
		w->lookup.context = wall_context;
	}
	any = false;
	targets__foreach(w->ts, follows_labels, &any);
	if (any && (w->owners || (w->owners = owners__new())) &&
	    !owners__follow(w->owners, w->bpf->labels.owners_fd))
		w->lookup.labels_judge = wall_labels_judge;
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
	ret = wall_reader__finish(reader, r->w->agg, &r->w->lookup, &r->w->stats);
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
	if (bpf_map_lookup_elem(r->w->bpf->targets_fd, &(__u32){ target__pid(t) },
				&info) ||
	    info.execed)
		return;
	ret = wall_reader__snapshot(reader, r->w->agg, &r->share, r->time_ns, &r->w->lookup,
				    &r->w->stats);
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
