// SPDX-License-Identifier: GPL-2.0
/* aggregate.c: counts samples per (pid, trace ID, label set, stack), and hands the records to the writers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "aggregate.h"
#include "aggregate_priv.h"
#include "goid_stacks.h"
#include "counted.h"
#include "rec_build.h"

void aggregate__set_writers(struct aggregate *a, struct writers *ws)
{
	a->writers = ws;
}

static const char *const default_trace_keys[] = { AGG_DEFAULT_TRACE_KEYS };
static const char *const default_span_keys[] = { AGG_DEFAULT_SPAN_KEYS };
static const char *const id_keys[] = { AGG_DEFAULT_TRACE_KEYS, AGG_DEFAULT_SPAN_KEYS,
				       AGG_OTHER_ID_KEYS };
_Static_assert(sizeof(id_keys) / sizeof(id_keys[0]) + MAX_TRACE_KEYS <= AGG_MAX_ID_KEYS,
	       "AGG_MAX_ID_KEYS holds every convention's ID keys and --trace-key's");

size_t aggregate__id_keys(const char *const *trace_keys, int ntrace, const char **out)
{
	size_t n = sizeof(id_keys) / sizeof(id_keys[0]);
	int i;

	memcpy(out, id_keys, sizeof(id_keys));
	for (i = 0; i < ntrace && i < MAX_TRACE_KEYS; i++)
		out[n++] = trace_keys[i];
	return n;
}

void aggregate__set_sources(struct aggregate *a, bool labels, bool traceparent, bool otel, bool obi)
{
	a->no_labels = !labels;
	a->no_traceparent = !traceparent;
	a->no_otel = !otel;
	a->no_obi = !obi;
}

void aggregate__set_keys(struct aggregate *a, const char *const *trace_keys, size_t ntrace,
			 const char *const *span_keys, size_t nspan)
{
	a->keys = (struct trace_keys){ trace_keys, ntrace, span_keys, nspan };
}

void aggregate__set_progress(struct aggregate *a, agg_progress_fn fn, void *ctx)
{
	a->progress = fn;
	a->progress_ctx = ctx;
}

void aggregate__progress(struct aggregate *a)
{
	if (a->progress)
		a->progress(a->progress_ctx);
}

void aggregate__set_lookup(struct aggregate *a, agg_lookup_fn lookup, void *ctx)
{
	a->repair_lookup = lookup;
	a->repair_ctx = ctx;
}

void aggregate__repair_leaves(struct aggregate *a, bool on)
{
	a->repair = on;
}

struct aggregate *aggregate__new(uint64_t period_ns, int64_t mono_to_real_ns)
{
	struct aggregate *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->clock.period_ns = period_ns;
	a->clock.mono_to_real_ns = mono_to_real_ns;
	a->gen = 1;
	aggregate__set_keys(a, default_trace_keys,
			    sizeof(default_trace_keys) / sizeof(default_trace_keys[0]),
			    default_span_keys, sizeof(default_span_keys) / sizeof(default_span_keys[0]));
	a->records = hashmap__new();
	a->cpus = hashmap__new();
	a->reasons = hashmap__new();
	a->pids = hashmap__new();
	a->build = rec_builder__new();
	if (agg_requests__init(a) || !a->records || !a->cpus || !a->reasons || !a->pids ||
	    !a->build) {
		aggregate__free(a);
		return NULL;
	}
	return a;
}

void aggregate__free(struct aggregate *a)
{
	if (!a)
		return;
	hashmap__free(a->records, agg_counted__free);
	hashmap__free(a->cpus, free);
	hashmap__free(a->reasons, free);
	hashmap__free(a->pids, free);
	agg_requests__free(a);
	rec_builder__free(a->build);
	goid_stacks__free(a->running);
	free(a);
}

void aggregate__keep_times(struct aggregate *a, uint64_t max_cpu, uint64_t max_wall)
{
	a->max_times[0] = a->times_left[0] = max_cpu;
	a->max_times[1] = a->times_left[1] = max_wall;
}

int aggregate__set_wall_period(struct aggregate *a, uint64_t period_ns)
{
	a->clock.wall_period_ns = period_ns;
	/*
	 * a running goroutine's CPU samples come a sampling period apart, and
	 * a wall sample stands for a wall period: the nearest within half of
	 * that (or two sampling periods, if longer) shows the same work
	 */
	if (!a->running && !(a->running = goid_stacks__new(period_ns / 2 > 2 * a->clock.period_ns ?
								   period_ns / 2 :
								   2 * a->clock.period_ns)))
		return -ENOMEM;
	return 0;
}

int aggregate__name_reasons(struct aggregate *a, uint32_t pid, const struct go_wall_layout *w)
{
	struct go_wall_layout *copy = malloc(sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	*copy = *w;
	/* a pid used again, by another binary */
	free(hashmap__del(a->reasons, &pid, sizeof(pid)));
	if (hashmap__add(a->reasons, &pid, sizeof(pid), copy)) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

/* PID's tally, made when new; NULL when out of memory (the tally is then not kept). */
static struct agg_pid_stats *pid_stats(struct aggregate *a, uint32_t pid)
{
	struct agg_pid_stats *p = hashmap__get(a->pids, &pid, sizeof(pid));

	if (!p && (p = calloc(1, sizeof(*p)))) {
		p->pid = pid;
		if (hashmap__add(a->pids, &pid, sizeof(pid), p)) {
			free(p);
			p = NULL;
		}
	}
	return p;
}

static void count_n(struct aggregate *a, struct counted *r, uint64_t n, uint64_t first_ns,
		    uint64_t last_ns)
{
	struct agg_pid_stats *p;

	if (r->wall) {
		a->stats.wall_samples += n;
	} else if (r->flags & COUNTED_F_ALLOC) {
		a->stats.alloc_samples += n;
	} else {
		a->stats.samples += n;
		if ((r->flags & (COUNTED_F_TRACE | COUNTED_F_INHERITED)) == COUNTED_F_TRACE)
			a->stats.traced += n;
		if (r->flags & COUNTED_F_INHERITED)
			a->stats.inherited += n;
		if ((p = pid_stats(a, r->pid))) {
			p->samples += n;
			if ((r->flags & (COUNTED_F_TRACE | COUNTED_F_INHERITED)) == COUNTED_F_TRACE)
				p->traced += n;
			if (r->flags & COUNTED_F_INHERITED)
				p->inherited += n;
		}
	}
	r->samples += n;
	if (first_ns < r->first_ns)
		r->first_ns = first_ns;
	if (last_ns > r->last_ns)
		r->last_ns = last_ns;
}

bool aggregate__repeat(struct aggregate *a, const struct agg_slot *slot, uint64_t n,
		       uint64_t looks, uint64_t first_ns, uint64_t last_ns, const uint64_t *times,
		       const uint64_t *weights, uint64_t goid)
{
	struct counted_stack *cs = slot->stack;
	struct counted *r = slot->record;
	struct counted_time *t;
	uint64_t i;

	if (slot->gen != a->gen)
		return false;
	count_n(a, r, n, first_ns, last_ns);
	r->observed += looks;
	cs->count += n;
	/* more snapshots for the look just counted, where its time was kept */
	t = cs->ntimes ? &cs->times[cs->ntimes - 1] : NULL;
	if (!looks && t && t->time_ns == first_ns && t->goid == goid)
		t->weight += n;
	for (i = 0; times && i < looks; i++)
		agg_counted__keep_time(a, cs, r->wall != 0, times[i], goid,
				       weights ? weights[i] : 1);
	return true;
}

uint64_t aggregate__gen(const struct aggregate *a)
{
	return a->gen;
}

/*
 * --wall: a goroutine on a CPU has no saved context to read, so its wall
 * sample has no stack of its own; it gets the stack of its CPU sample
 * nearest in time (same goid), when one lies within half a wall period or
 * two sampling periods, and else stays a bare [running]. CPU samples are noted for that.
 */
static void running_stack(struct aggregate *a, const struct sample_event *e,
			  const uint64_t **stack, size_t *nframes)
{
	const uint64_t *frames;
	size_t n;

	if (!(e->flags & SAMPLE_F_CURG) || !e->goid)
		return;
	if (e->origin == ORIGIN_SAMPLING && *nframes) {
		/* out of memory: the wall sample stays bare */
		goid_stacks__note(a->running, e->tgid, e->goid, e->time_ns, *stack, *nframes);
	} else if (e->origin == ORIGIN_WALL && (e->wall & 0xff) == WALL_RUNNING && !*nframes) {
		a->stats.wall_running++;
		n = goid_stacks__find(a->running, e->tgid, e->goid, e->time_ns, &frames);
		if (n) {
			a->stats.wall_running_framed++;
			*stack = frames;
			*nframes = n;
		}
	}
}

int aggregate__add(struct aggregate *a, const void *data, size_t size)
{
	return aggregate__add_slot(a, data, size, NULL);
}

int aggregate__add_slot(struct aggregate *a, const void *data, size_t size, struct agg_slot *slot)
{
	const struct sample_event *e = data;
	uint64_t buf[MAX_STACK_DEPTH];
	const uint64_t *stack;
	struct counted tmp, *r;
	uint8_t key[MAX_COUNTED_KEY];
	struct counted_stack *cs;
	size_t klen, nframes;

	if (agg_event__parse(a, e, size, &tmp, &stack, &nframes, buf) != 0)
		return -EINVAL;
	if (a->running)
		running_stack(a, e, &stack, &nframes);
	agg_event__judge(a, e, &tmp, stack, nframes);
	klen = agg_counted__key(&tmp, key);
	r = hashmap__get(a->records, key, klen);
	if (!r) {
		r = malloc(offsetof(struct counted, labels) + tmp.nlabels * sizeof(tmp.labels[0]));
		if (!r)
			return -ENOMEM;
		memcpy(r, &tmp, offsetof(struct counted, labels) + tmp.nlabels * sizeof(tmp.labels[0]));
		r->stacks = hashmap__new();
		r->first_ns = e->time_ns;
		r->last_ns = e->time_ns;
		if (!r->stacks || hashmap__add(a->records, key, klen, r) != 0) {
			agg_counted__free(r);
			return -ENOMEM;
		}
	}
	cs = hashmap__get(r->stacks, stack, nframes * 8);
	if (!cs) {
		cs = calloc(1, sizeof(*cs));
		if (!cs || hashmap__add(r->stacks, stack, nframes * 8, cs) != 0) {
			free(cs);
			return -ENOMEM;
		}
		cs->seen_ns = e->time_ns;
	}
	count_n(a, r, 1, e->time_ns, e->time_ns);
	r->observed++;
	cs->count++;
	if (e->origin == ORIGIN_ALLOC)
		cs->bytes += e->context;
	if (e->origin == ORIGIN_SAMPLING || e->origin == ORIGIN_WALL || e->origin == ORIGIN_ALLOC)
		agg_counted__keep_time(a, cs, e->origin == ORIGIN_WALL, e->time_ns,
				       e->flags & SAMPLE_F_CURG ? e->goid : 0, 1);
	if (slot) {
		/* taken first: the slot may already hold these */
		r->refs++;
		cs->refs++;
		aggregate__release_slot(a, slot);
		*slot = (struct agg_slot){ a->gen, r, cs };
	}
	return 0;
}

void aggregate__release_slot(struct aggregate *a, struct agg_slot *slot)
{
	if (slot->gen == a->gen) {
		((struct counted *)slot->record)->refs--;
		((struct counted_stack *)slot->stack)->refs--;
	}
	*slot = (struct agg_slot){ 0 };
}

struct collect {
	void **items;
	size_t n;
};

static void collect_one(const void *key, size_t len, void *value, void *arg)
{
	struct collect *c = arg;

	c->items[c->n++] = value;
}

static void collect(const struct hashmap *m, struct collect *c)
{
	c->n = 0;
	c->items = calloc(hashmap__size(m) + 1, sizeof(void *));
	if (c->items)
		hashmap__foreach(m, collect_one, c);
}

static int by_record_samples(const void *pa, const void *pb)
{
	const struct counted *a = *(void *const *)pa, *b = *(void *const *)pb;

	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* R as the record written, into OUT, which points into A's builder until the next one. */
static int build_rec(struct aggregate *a, const struct counted *c, const struct agg_target *t,
		     struct rec *out)
{
	struct agg_pid_stats *p = hashmap__get(a->pids, &c->pid, sizeof(c->pid));

	/* the name it had when its records were written, for the summary */
	if (p && t->comm && *t->comm)
		snprintf(p->comm, sizeof(p->comm), "%s", t->comm);
	return rec_builder__build(a->build, c, t, &a->clock,
				  hashmap__get(a->reasons, &c->pid, sizeof(c->pid)), out);
}

uint64_t aggregate__pid_samples(const struct aggregate *a, uint32_t pid)
{
	const struct agg_pid_stats *p = hashmap__get(a->pids, &pid, sizeof(pid));

	return p ? p->samples : 0;
}

struct pid_walk {
	void (*fn)(const struct agg_pid_stats *p, void *ctx);
	void *ctx;
};

static void one_pid(const void *key, size_t len, void *value, void *ctx)
{
	struct pid_walk *w = ctx;

	w->fn(value, w->ctx);
}

void aggregate__pids(const struct aggregate *a, void (*fn)(const struct agg_pid_stats *p, void *ctx),
		     void *ctx)
{
	struct pid_walk w = { fn, ctx };

	hashmap__foreach(a->pids, one_pid, &w);
}

int aggregate__write_event(struct aggregate *a, const void *data, size_t size,
			   agg_lookup_fn lookup, void *ctx)
{
	const struct sample_event *e = data;
	struct counted_stack one = { .count = 1 };
	uint64_t buf[MAX_STACK_DEPTH];
	struct agg_target t = {};
	const uint64_t *stack;
	struct counted r;
	struct rec rec;
	size_t nframes;
	char comm[24]; /* the task's name */
	int ret;

	if (agg_event__parse(a, e, size, &r, &stack, &nframes, buf) != 0)
		return -EINVAL;
	agg_event__judge(a, e, &r, stack, nframes);
	r.samples = 1;
	r.stacks = hashmap__new();
	if (!r.stacks || hashmap__add(r.stacks, stack, nframes * 8, &one) != 0) {
		hashmap__free(r.stacks, NULL);
		return -ENOMEM;
	}
	if (!lookup(ctx, e->tgid, e->time_ns, &t))
		t.sym = NULL;
	t.time_ns = e->time_ns;
	/* the task's name when the event happened, not whatever /proc says later */
	memcpy(comm, e->comm, sizeof(e->comm));
	comm[sizeof(e->comm)] = '\0';
	t.comm = comm;
	ret = build_rec(a, &r, &t, &rec);
	hashmap__free(r.stacks, NULL);
	if (ret)
		return ret;
	rec.origin = e->origin == ORIGIN_CUSTOM ? REC_CUSTOM : REC_UPROBE;
	rec.context = e->context;
	rec.tid = e->tid;
	rec.has_goid = e->flags & SAMPLE_F_CURG && !(e->flags & SAMPLE_F_READ_ERR);
	rec.goid = e->goid;
	/* an event is a moment, not CPU time */
	rec.cpu_ns = -1;
	ret = writers__add(a->writers, &rec);
	if (!ret)
		a->stats.events++;
	return ret;
}

/* A record's stacks that counted nothing and that no slot holds: their keys, copied. */
struct idle_stacks {
	void **keys;
	size_t *lens;
	size_t n, cap;
};

/* Each stack starts over; an idle one is listed, to be freed once the walk is done. */
static void find_idle_stack(const void *key, size_t len, void *value, void *arg)
{
	struct counted_stack *cs = value;
	struct idle_stacks *st = arg;
	void *p;

	cs->ntimes = 0;
	if (cs->count || cs->refs) {
		cs->count = 0;
		cs->bytes = 0;
		return;
	}
	/* out of memory: it stays, counting nothing */
	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 4;

		if (!(p = realloc(st->keys, cap * sizeof(*st->keys))))
			return;
		st->keys = p;
		if (!(p = realloc(st->lens, cap * sizeof(*st->lens))))
			return;
		st->lens = p;
		st->cap = cap;
	}
	if (!(p = malloc(len)))
		return;
	memcpy(p, key, len);
	st->keys[st->n] = p;
	st->lens[st->n++] = len;
}

/*
 * After R was written (or could not be): its counts start over, and what
 * this interval did not count, nothing holds and no flush will write
 * (stacks, then R itself when IDLE) is freed. What a slot holds is kept,
 * so that a parked goroutine counts into the same record every interval
 * without its labels and stack being hashed again.
 */
static void start_over(struct aggregate *a, struct counted *r, bool idle)
{
	struct idle_stacks st = { 0 };
	uint8_t key[MAX_COUNTED_KEY];
	size_t i;

	/* idle: counted nothing when the flush began; what came since is the next one's */
	if (idle && r->samples)
		return;
	if (idle && !r->refs) {
		hashmap__del(a->records, key, agg_counted__key(r, key));
		agg_counted__free(r);
		return;
	}
	hashmap__foreach(r->stacks, find_idle_stack, &st);
	for (i = 0; i < st.n; i++) {
		counted_stack__free(hashmap__del(r->stacks, st.keys[i], st.lens[i]));
		free(st.keys[i]);
	}
	free(st.keys);
	free(st.lens);
	r->samples = r->observed = r->elapsed_ns = 0;
	r->first_ns = UINT64_MAX;
	r->last_ns = 0;
}

int aggregate__flush(struct aggregate *a, agg_lookup_fn lookup, void *ctx)
{
	struct agg_target t;
	struct collect all;
	struct rec rec;
	size_t i, counted = 0;
	int n = 0, ret = 0;

	a->times_left[0] = a->max_times[0];
	a->times_left[1] = a->max_times[1];
	ret = agg_requests__flush(a);
	collect(a->records, &all);
	if (!all.items)
		return -ENOMEM;
	/* the records counted in this interval first, most samples first; then the idle ones */
	qsort(all.items, all.n, sizeof(void *), by_record_samples);
	for (i = 0; i < all.n && ((struct counted *)all.items[i])->samples; i++) {
		struct counted *r = all.items[i];

		counted++;
		if (!ret) {
			memset(&t, 0, sizeof(t));
			if (!lookup(ctx, r->pid, r->last_ns, &t)) {
				t.comm = "";
				t.sym = NULL;
			}
			t.time_ns = r->last_ns;
			ret = build_rec(a, r, &t, &rec);
			if (!ret)
				ret = writers__add(a->writers, &rec);
			if (!ret)
				n++;
		}
		/* samples that arrive while the others are written count towards the next flush */
		start_over(a, r, false);
		/* many records take a while: the rings must not fill meanwhile */
		if (i % 64 == 63)
			aggregate__progress(a);
	}
	/* idle for a whole interval: freed, unless a slot holds it or samples just came */
	for (; i < all.n; i++)
		start_over(a, all.items[i], true);
	/* the interval's end: a line in stdio's buffer, for one, is not written yet */
	if (!ret)
		ret = writers__flush(a->writers);
	free(all.items);
	/* with stdio's buffer in between, none of them is known to be written */
	if (ret)
		n = 0;
	a->stats.unwritten += counted - n;
	a->stats.records += n;
	return ret ? ret : n;
}

void aggregate__stats(const struct aggregate *a, struct agg_stats *out)
{
	*out = a->stats;
}
