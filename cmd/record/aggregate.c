// SPDX-License-Identifier: GPL-2.0
/* aggregate.c: counts samples per (pid, trace ID, label set, stack), and hands the records to the writers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/clock.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/vec.h"
#include "aggregate.h"
#include "goid_stacks.h"
#include "counted.h"
#include "rec_build.h"
#include "trace_ids.h"

/* The last full label set each CPU sent; events flagged SAMPLE_F_SAME_LABELS refer to it. */
struct cpu_labels {
	uint32_t tgid;
	uint32_t gen;
	uint32_t flags; /* SAMPLE_F_TRACEPARENT of the set */
	uint32_t nlabels;
	struct go_label labels[MAX_LABELS];
};

struct aggregate {
	struct trace_keys keys; /* the labels that hold the IDs */
	bool no_labels, no_traceparent, no_otel, no_obi; /* --trace-sources without them */
	struct rec_clock clock; /* what a sample stands for, and the wall clock */
	uint64_t max_times[2]; /* sample times kept an interval at most: CPU, wall; 0: none */
	uint64_t times_left[2]; /* of them, in this interval: CPU, wall */
	uint64_t gen; /* of filled slots: 1 */
	struct hashmap *records; /* record key -> struct counted */
	struct hashmap *cpus; /* cpu number -> struct cpu_labels */
	struct hashmap *reasons; /* pid -> struct go_wall_layout, for its wait reasons' names */
	struct hashmap *pids; /* pid -> struct agg_pid_stats: what each process's samples were */
	struct agg_stats stats;
	agg_lookup_fn repair_lookup;
	void *repair_ctx;
	bool repair; /* put frameless leaves' callers back */
	struct writers *writers; /* where records go */
	agg_progress_fn progress;
	void *progress_ctx;
	struct rec_builder *build;
	/* --wall: the goroutines' latest CPU stacks, for those found running */
	struct goid_stacks *running;
	/* requests begun and not yet ended: {tgid, goid, epoch} -> struct open_span */
	struct hashmap *open_spans;
	/* requests ended since the last flush, struct ended_span each: counted there */
	struct vec ended;
	/*
	 * The traces the profile has, {pid, trace ID} -> the flush that last
	 * counted a sample of theirs: only their requests are written
	 */
	struct hashmap *sampled;
	uintptr_t flushes;
};

/* A trace's requests are written while a sample of it came within this many flushes */
#define SAMPLED_FLUSHES 3

/* A request begun on a goroutine, until it ends. */
struct open_span {
	uint64_t start_ns;
	uint64_t key[3]; /* tgid, goid, epoch: its key */
	uint8_t trace[TRACE_ID_LEN];
	uint32_t source; /* SPAN_LABEL, TRACE_CTX_* */
};

/* {pid, trace ID}: the key of a.sampled */
#define SAMPLED_KEY (4 + TRACE_ID_LEN)

static size_t sampled_key(uint32_t pid, const uint8_t *trace, uint8_t key[SAMPLED_KEY])
{
	memcpy(key, &pid, 4);
	memcpy(key + 4, trace, TRACE_ID_LEN);
	return SAMPLED_KEY;
}

/* A request that ended, until the flush counts it (or not: its trace has no sample). */
struct ended_span {
	uint64_t start_ns, end_ns, goid;
	uint32_t pid, source;
	uint8_t trace[TRACE_ID_LEN];
};

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

/*
 * The link register under a signal frame (FRAME_MAYBE, ustack.bpf.h) is
 * the interrupted function's caller only if that function had not stored
 * it yet: SP delta 0 at the interrupted PC. Else it is dropped, as when
 * there is no telling (no leaf repair, code without a pcsp table), and
 * when the frame after it is the same address: FP was at a record made
 * for the call (Go's calls of duffzero and duffcopy), which holds LR too.
 * The stack goes to BUF when it changes.
 */
static const uint64_t *settle_signal_frames(struct aggregate *a, const struct sample_event *e,
					    const uint64_t *stack, size_t *nframes, uint64_t *buf)
{
	struct agg_target t = {};
	size_t i, n = 0;
	bool known;

	for (i = 0; i < *nframes && !(stack[i] & FRAME_MAYBE); i++)
		;
	if (i == *nframes)
		return stack;
	known = a->repair && a->repair_lookup &&
		a->repair_lookup(a->repair_ctx, e->tgid, e->time_ns, &t) && t.sym;
	for (i = 0; i < *nframes; i++) {
		if (!(stack[i] & FRAME_MAYBE))
			buf[n++] = stack[i];
		else if (known && n && symbolizer__sp_delta(t.sym, e->time_ns, buf[n - 1] & ~FRAME_TAGS) == 0 &&
			 !(i + 1 < *nframes && (stack[i + 1] & ~FRAME_TAGS) == (stack[i] & ~FRAME_TAGS)))
			buf[n++] = stack[i] & ~FRAME_MAYBE;
	}
	*nframes = n;
	return buf;
}

/*
 * The event's stack, in BUF with the leaf's missing caller put back when
 * there is one. A caller the walk has next already came from a record
 * made for the leaf's call (Go's calls of duffzero and duffcopy).
 */
static const uint64_t *repaired_stack(struct aggregate *a, const struct sample_event *e,
				      const uint64_t *stack, size_t *nframes, uint64_t *buf)
{
	struct agg_target t = {};
	uint64_t caller;

	if (!a->repair || !a->repair_lookup || !(e->flags & SAMPLE_F_TOP_WORDS) || *nframes == 0 ||
	    !a->repair_lookup(a->repair_ctx, e->tgid, e->time_ns, &t) || !t.sym)
		return stack;
	caller = symbolizer__leaf_caller(t.sym, e->time_ns, stack[0], e->sp, e->bp,
					 (const uint64_t *)e->top);
	if (!caller || (*nframes > 1 && (stack[1] & ~FRAME_TAGS) == caller))
		return stack;
	/* the outermost frame gives way when the stack is full */
	if (*nframes == MAX_STACK_DEPTH)
		(*nframes)--;
	/* STACK may be BUF already: moved up first */
	memmove(buf + 2, stack + 1, (*nframes - 1) * sizeof(*buf));
	buf[0] = stack[0];
	buf[1] = caller;
	(*nframes)++;
	a->stats.repaired++;
	return buf;
}

void counted_stack__free(void *p)
{
	struct counted_stack *cs = p;

	if (cs)
		free(cs->times);
	free(cs);
}

/*
 * When a sample (or a wall look) was taken, of which goroutine, and what
 * it counts; past the interval's bound, the count alone. Whether it was kept.
 */
static bool keep_time(struct aggregate *a, struct counted_stack *cs, bool wall, uint64_t time_ns,
		      uint64_t goid, uint64_t weight)
{
	struct counted_time *times;
	uint32_t cap;

	if (a->times_left[wall] == 0)
		return false;
	if (cs->ntimes == cs->cap) {
		cap = cs->cap ? 2 * cs->cap : 8;
		times = realloc(cs->times, cap * sizeof(*times));
		if (!times)
			return false;
		cs->times = times;
		cs->cap = cap;
	}
	cs->times[cs->ntimes++] = (struct counted_time){ time_ns, goid, weight };
	a->times_left[wall]--;
	return true;
}

static void counted__free(void *p)
{
	struct counted *r = p;

	if (!r)
		return;
	hashmap__free(r->stacks, counted_stack__free);
	free(r);
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
	a->open_spans = hashmap__new();
	a->ended.size = sizeof(struct ended_span);
	a->sampled = hashmap__new();
	a->build = rec_builder__new();
	if (!a->records || !a->cpus || !a->reasons || !a->pids || !a->open_spans || !a->sampled ||
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
	hashmap__free(a->records, counted__free);
	hashmap__free(a->cpus, free);
	hashmap__free(a->reasons, free);
	hashmap__free(a->pids, free);
	hashmap__free(a->open_spans, free);
	free(a->ended.items);
	hashmap__free(a->sampled, NULL);
	rec_builder__free(a->build);
	goid_stacks__free(a->running);
	free(a);
}

/* Orders labels by what they hold, so that map iteration order never splits a record. */
static int label_cmp(const void *pa, const void *pb)
{
	const struct go_label *a = pa, *b = pb;
	size_t ka = label_key_bytes(a), kb = label_key_bytes(b), va, vb;
	int c;

	c = memcmp(a->key, b->key, ka < kb ? ka : kb);
	if (c || ka != kb)
		return c ? c : (ka < kb ? -1 : 1);
	if (a->key_len != b->key_len)
		return a->key_len < b->key_len ? -1 : 1;
	va = label_value_bytes(a);
	vb = label_value_bytes(b);
	c = memcmp(a->value, b->value, va < vb ? va : vb);
	if (c || va != vb)
		return c ? c : (va < vb ? -1 : 1);
	return a->value_len < b->value_len ? -1 : a->value_len > b->value_len;
}

/* Serializes what identifies a record: only bytes that were read, never buffer slack. */
static size_t counted_key(const struct counted *r, uint8_t *buf)
{
	uint8_t *p = buf;
	uint32_t i;

	memcpy(p, &r->pid, 4);
	memcpy(p + 4, &r->flags, 4);
	memcpy(p + 8, &r->nlabels, 4);
	memcpy(p + 12, &r->wall, 4);
	p += 16;
	/* a traceparent's or a span's IDs are no label: they tell records apart on their own */
	if (r->flags & (COUNTED_F_CONTEXT | COUNTED_F_REQUEST)) {
		memcpy(p, r->trace_id, TRACE_ID_LEN);
		memcpy(p + TRACE_ID_LEN, r->span_id, SPAN_ID_LEN);
		p += TRACE_ID_LEN + SPAN_ID_LEN;
	}
	for (i = 0; i < r->nlabels; i++) {
		const struct go_label *l = &r->labels[i];

		memcpy(p, &l->key_len, 4);
		memcpy(p + 4, &l->value_len, 4);
		p += 8;
		memcpy(p, l->key, label_key_bytes(l));
		p += label_key_bytes(l);
		memcpy(p, l->value, label_value_bytes(l));
		p += label_value_bytes(l);
	}
	return p - buf;
}

/*
 * The labels an event carries, or for SAMPLE_F_SAME_LABELS the ones its CPU
 * sent last under the same gen; NULL when those never arrived. Full events
 * are remembered exactly when the BPF side remembers them: walk succeeded.
 */
static const struct go_label *resolve_labels(struct aggregate *a, const struct sample_event *e,
					     uint32_t *n, uint32_t *flags)
{
	struct cpu_labels *c = hashmap__get(a->cpus, &e->cpu, sizeof(e->cpu));

	if (e->flags & SAMPLE_F_SAME_LABELS) {
		if (!c || c->tgid != e->tgid || c->gen != e->gen)
			return NULL;
		*n = c->nlabels;
		*flags = c->flags;
		return c->labels;
	}
	/* events of custom traces are always whole, and never referred to */
	if (!(e->flags & SAMPLE_F_READ_ERR) && e->origin == ORIGIN_SAMPLING) {
		if (!c && (c = calloc(1, sizeof(*c))) &&
		    hashmap__add(a->cpus, &e->cpu, sizeof(e->cpu), c) != 0) {
			free(c);
			c = NULL;
		}
		if (c) {
			c->tgid = e->tgid;
			c->gen = e->gen;
			c->flags = e->flags & SAMPLE_F_TRACEPARENT;
			c->nlabels = e->nlabels;
			memcpy(c->labels, e->labels, e->nlabels * sizeof(e->labels[0]));
		}
	}
	*n = e->nlabels;
	*flags = e->flags & SAMPLE_F_TRACEPARENT;
	return e->labels;
}

#define MAX_COUNTED_KEY (16 + TRACE_ID_LEN + SPAN_ID_LEN + MAX_LABELS * sizeof(struct go_label))

/* Trace and span IDs from R's labels, as flags of R. */
static void find_ids(const struct aggregate *a, struct counted *r)
{
	unsigned int found;

	found = trace_ids__from_labels(r->labels, r->nlabels, &a->keys, r->trace_id, r->span_id);
	if (found & TRACE_IDS_TRACE)
		r->flags |= COUNTED_F_TRACE;
	if (found & TRACE_IDS_SPAN)
		r->flags |= COUNTED_F_SPAN;
}

/* The sampler's context entry names its source in its key: the record flag for it, or 0. */
static uint32_t context_source(const struct go_label *l)
{
	if (l->key_len == 11 && !memcmp(l->key, "traceparent", 11))
		return COUNTED_F_TRACEPARENT;
	if (l->key_len == 8 && !memcmp(l->key, "otel-sdk", 8))
		return COUNTED_F_OTEL;
	if (l->key_len == 3 && !memcmp(l->key, "obi", 3))
		return COUNTED_F_OBI;
	return 0;
}

/*
 * Is the goroutine whose stack is STACK one of the runtime's own (a GC
 * worker, the finalizer)? Its outermost frames say: runtime.goexit, under
 * the function it started in, named runtime.* but not runtime.main, as
 * Go's isSystemGoroutine decides. A stack cut short says nothing.
 */
static bool runtime_goroutine(struct aggregate *a, const struct sample_event *e,
			      const uint64_t *stack, size_t nframes)
{
	const struct frame *f;
	struct agg_target t = {};
	size_t n;

	if (nframes < 2 || !a->repair_lookup ||
	    !a->repair_lookup(a->repair_ctx, e->tgid, e->time_ns, &t) || !t.sym)
		return false;
	n = symbolizer__frames(t.sym, e->time_ns, stack[nframes - 1] & ~FRAME_TAGS, false, &f);
	if (!n || !f[n - 1].func || strcmp(f[n - 1].func, "runtime.goexit"))
		return false;
	n = symbolizer__frames(t.sym, e->time_ns, stack[nframes - 2] & ~FRAME_TAGS, nframes == 2,
			       &f);
	return n && f[n - 1].func && !strncmp(f[n - 1].func, "runtime.", 8) &&
	       strcmp(f[n - 1].func, "runtime.main");
}

/*
 * A request's lifetime, from what the sampler or the wall reader found:
 * a trace whose request ended is R's only as inherited; a context the
 * runtime's own goroutine took from the goroutine that started it is no
 * trace of its at all.
 */
static void judge_request(struct aggregate *a, const struct sample_event *e, struct counted *r,
			  const uint64_t *stack, size_t nframes)
{
	bool ctx = r->flags & COUNTED_F_CONTEXT;

	if (!(r->flags & COUNTED_F_TRACE))
		return;
	if (ctx && (e->flags & SAMPLE_F_CTX_CHILD) && runtime_goroutine(a, e, stack, nframes)) {
		r->flags &= ~(COUNTED_F_TRACE | COUNTED_F_SPAN | COUNTED_F_CONTEXT);
		memset(r->trace_id, 0, sizeof(r->trace_id));
		memset(r->span_id, 0, sizeof(r->span_id));
		return;
	}
	if (e->flags & (ctx ? SAMPLE_F_CTX_ENDED : SAMPLE_F_LABELS_ENDED))
		r->flags |= COUNTED_F_INHERITED;
	/* the goroutine its request runs on, or one the request started */
	else if (ctx)
		r->flags |= COUNTED_F_ROLE |
			    ((r->flags & COUNTED_F_OBI) || !(e->flags & SAMPLE_F_CTX_CHILD) ?
				     COUNTED_F_OWN :
				     0);
	else if (e->flags & SAMPLE_F_LABELS_JUDGED)
		r->flags |= COUNTED_F_ROLE | (e->flags & SAMPLE_F_LABELS_OWN ? COUNTED_F_OWN : 0);
}

/*
 * Checks an event and fills TMP with its record's identity (pid, IDs, sorted
 * labels); *STACK and *NFRAMES get its stack, its leaf's caller put back
 * (into BUF) when that applies. -EINVAL for a malformed event.
 */
static int parse_event(struct aggregate *a, const struct sample_event *e, size_t size,
		       struct counted *tmp, const uint64_t **stack, size_t *nframes, uint64_t *buf)
{
	const struct go_label *labels, *tp = NULL;
	uint32_t nlabels, i, set_flags = 0, src;

	if (size < offsetof(struct sample_event, labels) || e->nlabels > MAX_LABELS ||
	    e->stack_bytes > sizeof(e->stack_room) || e->stack_bytes % 8 ||
	    size < offsetof(struct sample_event, labels) + e->nlabels * sizeof(struct go_label) +
			   e->stack_bytes) {
		a->stats.malformed++;
		return -EINVAL;
	}
	/* the stack follows the last label */
	*stack = (const uint64_t *)&e->labels[e->nlabels];
	*nframes = e->stack_bytes / 8;
	*stack = settle_signal_frames(a, e, *stack, nframes, buf);
	*stack = repaired_stack(a, e, *stack, nframes, buf);
	labels = resolve_labels(a, e, &nlabels, &set_flags);
	/* labels past nlabels are never read */
	memset(tmp, 0, offsetof(struct counted, labels));
	tmp->pid = e->tgid;
	if (e->flags & SAMPLE_F_READ_ERR) {
		/* a half-read label set could name the wrong trace: count it unlabeled */
		a->stats.read_errors++;
	} else if (!labels) {
		/* repeats a set whose full event we never saw (lost, or before we started) */
		a->stats.unresolved++;
	} else {
		/* the sampler put the request's or the span's context after the labels */
		if ((set_flags & SAMPLE_F_TRACEPARENT) && nlabels && context_source(&labels[nlabels - 1]))
			tp = &labels[--nlabels];
		tmp->flags = e->flags & COUNTED_F_LABELS_CUT;
		tmp->nlabels = nlabels;
		for (i = 0; i < nlabels; i++) {
			tmp->labels[i] = labels[i];
			/* zero the slack so a copy never carries bytes past the lengths */
			memset(tmp->labels[i].key + label_key_bytes(&labels[i]), 0,
			       MAX_KEY_LEN - label_key_bytes(&labels[i]));
			memset(tmp->labels[i].value + label_value_bytes(&labels[i]), 0,
			       MAX_VALUE_LEN - label_value_bytes(&labels[i]));
		}
		qsort(tmp->labels, tmp->nlabels, sizeof(tmp->labels[0]), label_cmp);
		if (!a->no_labels)
			find_ids(a, tmp);
		/* labels win; a bad header is no trace ID, and no label either */
		src = tp ? context_source(tp) : 0;
		if (src && !(src == COUNTED_F_OTEL ? a->no_otel : src == COUNTED_F_OBI ? a->no_obi : a->no_traceparent) &&
		    !(tmp->flags & COUNTED_F_TRACE) && trace_ids__from_traceparent(tp, tmp->trace_id, tmp->span_id)) {
			tmp->flags &= ~COUNTED_F_SPAN;
			tmp->flags |= COUNTED_F_TRACE | COUNTED_F_SPAN | src;
		}
	}
	if (e->origin == ORIGIN_WALL)
		tmp->wall = e->wall ?: WALL_RUNNING;
	tmp->first_ns = e->time_ns;
	tmp->last_ns = e->time_ns;
	return 0;
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
		keep_time(a, cs, r->wall != 0, times[i], goid, weights ? weights[i] : 1);
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

	if (parse_event(a, e, size, &tmp, &stack, &nframes, buf) != 0)
		return -EINVAL;
	if (a->running)
		running_stack(a, e, &stack, &nframes);
	judge_request(a, e, &tmp, stack, nframes);
	klen = counted_key(&tmp, key);
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
			counted__free(r);
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
	if (e->origin == ORIGIN_SAMPLING || e->origin == ORIGIN_WALL)
		keep_time(a, cs, e->origin == ORIGIN_WALL, e->time_ns,
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

/* The request record of PID's trace TRACE from SOURCE; NULL when out of memory. */
static struct counted *request_record(struct aggregate *a, uint32_t pid, const uint8_t *trace,
				      uint32_t source)
{
	uint8_t key[MAX_COUNTED_KEY];
	struct counted tmp = {}, *r;
	size_t klen;

	tmp.pid = pid;
	tmp.flags = COUNTED_F_TRACE | COUNTED_F_REQUEST | COUNTED_F_ROLE | COUNTED_F_OWN |
		    (source == TRACE_CTX_HEADER ? COUNTED_F_TRACEPARENT :
		     source == TRACE_CTX_OTEL	? COUNTED_F_OTEL :
						  0);
	memcpy(tmp.trace_id, trace, TRACE_ID_LEN);
	klen = counted_key(&tmp, key);
	if ((r = hashmap__get(a->records, key, klen)))
		return r;
	/* as every record: room for its labels only (it has none) */
	if (!(r = malloc(offsetof(struct counted, labels) + tmp.nlabels * sizeof(tmp.labels[0]))))
		return NULL;
	memcpy(r, &tmp, offsetof(struct counted, labels));
	r->first_ns = UINT64_MAX;
	r->stacks = hashmap__new();
	if (!r->stacks || hashmap__add(a->records, key, klen, r)) {
		counted__free(r);
		return NULL;
	}
	return r;
}

/* Open spans are forgotten when no end came for this long: a request no probe sees end */
#define SPAN_MAX_NS (300 * NSEC_PER_SEC)

/* The keys of the spans begun before BEFORE. */
struct span_sweep {
	uint64_t before;
	struct vec gone; /* uint64_t[3] each */
};

static void old_span(const void *key, size_t len, void *value, void *ctx)
{
	const struct open_span *sp = value;
	struct span_sweep *sw = ctx;
	uint64_t *k;

	(void)key;
	(void)len;
	if (sp->start_ns < sw->before && (k = vec__push(&sw->gone)))
		memcpy(k, sp->key, sizeof(sp->key));
}

int aggregate__add_span(struct aggregate *a, const void *data, size_t size)
{
	const struct span_event *e = data;
	uint64_t key[3] = { e->tgid, e->goid, e->epoch };
	struct ended_span *d;
	struct open_span *sp;

	if (size < sizeof(*e) || (e->kind != SPAN_BEGIN && e->kind != SPAN_END)) {
		a->stats.malformed++;
		return -EINVAL;
	}
	if (e->kind == SPAN_BEGIN) {
		if (hashmap__get(a->open_spans, key, sizeof(key)) || !(sp = calloc(1, sizeof(*sp))))
			return 0;
		sp->start_ns = e->time_ns;
		memcpy(sp->key, key, sizeof(key));
		sp->source = e->source;
		if (!trace_ids__pack_hex(e->trace, TRACE_ID_LEN, sp->trace) ||
		    hashmap__add(a->open_spans, key, sizeof(key), sp)) {
			free(sp);
			return 0;
		}
		return 0;
	}
	/* an end without its begin: a request that began before the recording */
	if (!(sp = hashmap__del(a->open_spans, key, sizeof(key))))
		return 0;
	/* a record each only at the flush, for the traces sampled: most are not */
	d = vec__push(&a->ended);
	if (d) {
		*d = (struct ended_span){ sp->start_ns, e->time_ns, e->goid, e->tgid, sp->source };
		memcpy(d->trace, sp->trace, TRACE_ID_LEN);
		a->stats.requests++;
	}
	free(sp);
	return d ? 0 : -ENOMEM;
}

/* The requests ended since the last flush, into their request records: those of sampled traces. */
static int count_requests(struct aggregate *a)
{
	const struct ended_span *d = a->ended.items;
	uint8_t key[SAMPLED_KEY];
	struct counted_stack *cs;
	struct counted *r;
	size_t i;
	int ret = 0;

	for (i = 0; i < a->ended.n && !ret; i++, d++) {
		/* the requests of a trace no sample has: no record, nothing lost */
		if (!hashmap__get(a->sampled, key, sampled_key(d->pid, d->trace, key))) {
			a->stats.requests_unsampled++;
			continue;
		}
		r = request_record(a, d->pid, d->trace, d->source);
		cs = r ? hashmap__get(r->stacks, "", 0) : NULL;
		if (r && !cs && (cs = calloc(1, sizeof(*cs))) && hashmap__add(r->stacks, "", 0, cs)) {
			free(cs);
			cs = NULL;
		}
		if (!cs) {
			ret = -ENOMEM;
			break;
		}
		cs->count++;
		r->samples++;
		r->elapsed_ns += d->end_ns - d->start_ns;
		if (d->start_ns < r->first_ns)
			r->first_ns = d->start_ns;
		if (d->end_ns > r->last_ns)
			r->last_ns = d->end_ns;
		keep_time(a, cs, false, d->start_ns, d->goid, d->end_ns - d->start_ns);
	}
	a->ended.n = 0;
	return ret;
}

/* Spans begun long ago whose end no probe saw (HTTP/2, grpc-go): forgotten. */
static void forget_old_spans(struct aggregate *a, uint64_t now)
{
	struct span_sweep sw = { .before = now - SPAN_MAX_NS, .gone.size = 3 * sizeof(uint64_t) };
	uint64_t *k = NULL;
	size_t i;

	if (now < SPAN_MAX_NS)
		return;
	hashmap__foreach(a->open_spans, old_span, &sw);
	for (i = 0, k = sw.gone.items; i < sw.gone.n; i++, k += 3)
		free(hashmap__del(a->open_spans, k, 3 * sizeof(uint64_t)));
	free(sw.gone.items);
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

	if (parse_event(a, e, size, &r, &stack, &nframes, buf) != 0)
		return -EINVAL;
	judge_request(a, e, &r, stack, nframes);
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
		hashmap__del(a->records, key, counted_key(r, key));
		counted__free(r);
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

struct stale {
	uintptr_t before;
	struct vec keys; /* uint8_t[SAMPLED_KEY] each */
};

static void stale_one(const void *key, size_t len, void *value, void *ctx)
{
	struct stale *st = ctx;
	void *k;

	if ((uintptr_t)value < st->before && (k = vec__push(&st->keys)))
		memcpy(k, key, len);
}

/* A record with samples of a live trace this interval: its trace is marked sampled. */
static void mark_one(const void *k, size_t klen, void *value, void *ctx)
{
	const struct counted *r = value;
	struct aggregate *a = ctx;
	uint8_t key[SAMPLED_KEY];
	size_t len;

	(void)k;
	(void)klen;
	if (!r->samples || (r->flags & (COUNTED_F_TRACE | COUNTED_F_INHERITED | COUNTED_F_REQUEST)) !=
				   COUNTED_F_TRACE)
		return;
	len = sampled_key(r->pid, r->trace_id, key);
	hashmap__del(a->sampled, key, len);
	hashmap__add(a->sampled, key, len, (void *)a->flushes);
}

/*
 * The traces this flush has samples of, marked; those without any for
 * long, forgotten. A request record is written only for a trace the
 * profile has: a service's every request would be a record otherwise.
 */
static void mark_sampled(struct aggregate *a)
{
	struct stale st = { .before = a->flushes - SAMPLED_FLUSHES, .keys.size = SAMPLED_KEY };
	size_t i;

	a->flushes++;
	hashmap__foreach(a->records, mark_one, a);
	if (a->flushes <= SAMPLED_FLUSHES)
		return;
	hashmap__foreach(a->sampled, stale_one, &st);
	for (i = 0; i < st.keys.n; i++)
		hashmap__del(a->sampled, (uint8_t *)st.keys.items + i * st.keys.size, st.keys.size);
	free(st.keys.items);
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
	forget_old_spans(a, now_ns(CLOCK_MONOTONIC));
	mark_sampled(a);
	ret = count_requests(a);
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
