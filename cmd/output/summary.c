// SPDX-License-Identifier: GPL-2.0
/* summary.c: a run's costliest traces by CPU, wall time and allocated bytes, each with its commonest leaf function, for the lines at exit. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "cmd/util/vec.h"
#include "summary.h"

/* Leaves kept a trace and kind: past them, the space-saving count (the least one's slot is taken over). */
#define LEAVES 8
#define ID_LEN 32

struct leaf {
	uint32_t func; /* index into names + 1; 0: a free slot */
	uint64_t value; /* ns; for allocations, bytes */
};

/* What a trace costs, and its leaves, by kind; ELAPSED is the time its requests were in flight. */
enum { KIND_CPU, KIND_WALL, KIND_ALLOC, KIND_ELAPSED };

/*
 * Times in flight, [start, end) each, in order and apart: a request seen
 * in two services, or as a span of two sources, is one time. Past
 * MAX_SPANS the two nearest are merged, the gap between them counted.
 */
#define MAX_SPANS 512

struct spans {
	int64_t (*iv)[2];
	uint32_t n, cap;
};

/* [LO, HI) into S, merged with what it overlaps. -ENOMEM. */
static int spans__add(struct spans *s, int64_t lo, int64_t hi)
{
	uint32_t i, j, best = 0;
	void *p;

	if (hi <= lo)
		return 0;
	/* the first that ends at or after LO, and those it overlaps */
	for (i = 0; i < s->n && s->iv[i][1] < lo; i++)
		;
	for (j = i; j < s->n && s->iv[j][0] <= hi; j++) {
		lo = s->iv[j][0] < lo ? s->iv[j][0] : lo;
		hi = s->iv[j][1] > hi ? s->iv[j][1] : hi;
	}
	if (j == i) {
		if (s->n == s->cap) {
			if (!(p = realloc(s->iv, (s->cap ? 2 * s->cap : 4) * sizeof(*s->iv))))
				return -ENOMEM;
			s->iv = p;
			s->cap = s->cap ? 2 * s->cap : 4;
		}
		memmove(s->iv + i + 1, s->iv + i, (s->n - i) * sizeof(*s->iv));
		s->n++;
		j = i + 1;
	}
	s->iv[i][0] = lo;
	s->iv[i][1] = hi;
	memmove(s->iv + i + 1, s->iv + j, (s->n - j) * sizeof(*s->iv));
	s->n -= j - i - 1;
	if (s->n <= MAX_SPANS)
		return 0;
	for (i = 1; i + 1 < s->n; i++)
		if (s->iv[i + 1][0] - s->iv[i][1] < s->iv[best + 1][0] - s->iv[best][1])
			best = i;
	s->iv[best][1] = s->iv[best + 1][1];
	memmove(s->iv + best + 1, s->iv + best + 2, (s->n - best - 2) * sizeof(*s->iv));
	s->n--;
	return 0;
}

static uint64_t spans__total(const struct spans *s)
{
	uint64_t ns = 0;
	uint32_t i;

	for (i = 0; i < s->n; i++)
		ns += s->iv[i][1] - s->iv[i][0];
	return ns;
}

struct trace_cost {
	char id[ID_LEN + 1];
	uint64_t ns[2]; /* CPU, goroutine time (--wall) */
	uint64_t alloc_bytes; /* allocated (--alloc), unbiased */
	/*
	 * the leaves of its CPU, of the goroutine time of the goroutine its
	 * request runs on, and of its allocated bytes (the allocating function)
	 */
	struct leaf leaves[3][LEAVES];
	uint64_t started_ns; /* goroutine time of the goroutines its requests started */
	/* when its requests were in flight: their spans, merged where they overlap */
	struct spans spans;
	int64_t first_ns, last_ns; /* its samples' first and last */
};

struct summary {
	struct vec traces; /* struct trace_cost */
	struct hashmap *by_id; /* trace ID -> index + 1 */
	struct vec names; /* char *: leaf functions */
	struct hashmap *by_name; /* name -> index + 1 */
	uint64_t dropped; /* traces the cap let go */
	/* CPU and wall time, and bytes allocated, of goroutines whose request had ended */
	uint64_t inherited[3];
};

struct summary *summary__new(void)
{
	struct summary *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->traces.size = sizeof(struct trace_cost);
	s->names.size = sizeof(char *);
	s->by_id = hashmap__new();
	s->by_name = hashmap__new();
	if (!s->by_id || !s->by_name) {
		summary__free(s);
		return NULL;
	}
	return s;
}

void summary__free(struct summary *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->names.n; i++)
		free(((char **)s->names.items)[i]);
	for (i = 0; i < s->traces.n; i++)
		free(((struct trace_cost *)s->traces.items)[i].spans.iv);
	free(s->names.items);
	free(s->traces.items);
	hashmap__free(s->by_id, NULL);
	hashmap__free(s->by_name, NULL);
	free(s);
}

/* NAME's number + 1; 0 when out of memory. */
static uint32_t name_of(struct summary *s, const char *name)
{
	uintptr_t v = (uintptr_t)hashmap__get(s->by_name, name, strlen(name));
	char **slot;

	if (v)
		return v;
	slot = vec__push(&s->names);
	if (!slot || !(*slot = strdup(name))) {
		if (slot)
			s->names.n--;
		return 0;
	}
	v = s->names.n;
	if (hashmap__add(s->by_name, name, strlen(name), (void *)v)) {
		free(*slot);
		s->names.n--;
		return 0;
	}
	return v;
}

static uint64_t cost(const struct trace_cost *t)
{
	return t->ns[0] + t->ns[1];
}

/* Costliest first; among equals (a trace that only allocated costs no time), the most allocated bytes. */
static int by_cost(const void *a, const void *b)
{
	const struct trace_cost *ta = a, *tb = b;
	uint64_t x = cost(ta), y = cost(tb);

	if (x == y) {
		x = ta->alloc_bytes;
		y = tb->alloc_bytes;
	}
	return x < y ? 1 : x > y ? -1 : 0;
}

/* At the cap: the cheaper half goes, counted. -ENOMEM. */
static int drop_half(struct summary *s)
{
	struct trace_cost *t = s->traces.items;
	size_t i, keep = s->traces.n / 2;

	qsort(t, s->traces.n, sizeof(*t), by_cost);
	hashmap__free(s->by_id, NULL);
	if (!(s->by_id = hashmap__new()))
		return -ENOMEM;
	s->dropped += s->traces.n - keep;
	for (i = keep; i < s->traces.n; i++)
		free(t[i].spans.iv);
	s->traces.n = keep;
	for (i = 0; i < keep; i++)
		if (hashmap__add(s->by_id, t[i].id, ID_LEN, (void *)(uintptr_t)(i + 1)))
			return -ENOMEM;
	return 0;
}

static struct trace_cost *trace_of(struct summary *s, const char *id)
{
	uintptr_t v = (uintptr_t)hashmap__get(s->by_id, id, ID_LEN);
	struct trace_cost *t;

	if (v)
		return (struct trace_cost *)s->traces.items + v - 1;
	if (s->traces.n >= SUMMARY_MAX_TRACES && drop_half(s))
		return NULL;
	t = vec__push(&s->traces);
	if (!t)
		return NULL;
	memset(t, 0, sizeof(*t));
	memcpy(t->id, id, ID_LEN);
	t->first_ns = INT64_MAX;
	t->last_ns = INT64_MIN;
	if (hashmap__add(s->by_id, id, ID_LEN, (void *)(uintptr_t)s->traces.n)) {
		s->traces.n--;
		return NULL;
	}
	return t;
}

/* V more in FUNC's slot of LEAVES; a new one takes over the least one's. */
static void add_leaf(struct leaf *leaves, uint32_t func, uint64_t v)
{
	struct leaf *least = &leaves[0];
	int i;

	for (i = 0; i < LEAVES; i++) {
		if (leaves[i].func == func || !leaves[i].func) {
			leaves[i].func = func;
			leaves[i].value += v;
			return;
		}
		if (leaves[i].value < least->value)
			least = &leaves[i];
	}
	least->func = func;
	least->value += v;
}

/*
 * A stack's leaf function; for wall time, its first outside the runtime:
 * a parked goroutine's leaf is runtime.gopark, where it waits for is
 * the code that called into it.
 */
static const char *leaf_of(const struct rec_stack *st, int wall)
{
	size_t i;

	for (i = 0; wall && i < st->nframes; i++)
		if (st->frames[i].func && strncmp(st->frames[i].func, "runtime.", 8))
			return st->frames[i].func;
	return st->nframes && st->frames[0].func ? st->frames[0].func : "?";
}

/* A request record: the spans of its trace's requests. */
static int add_requests(struct summary *s, const struct rec *r)
{
	const struct rec_time *tm;
	struct trace_cost *t;
	size_t i, j;

	if (!r->trace_id || strlen(r->trace_id) != ID_LEN)
		return 0;
	if (!(t = trace_of(s, r->trace_id)))
		return -ENOMEM;
	for (i = 0; i < r->nstacks; i++) {
		for (j = 0; j < r->stacks[i].ntimes; j++) {
			tm = &r->stacks[i].times[j];
			if (spans__add(&t->spans, tm->ns, tm->ns + (int64_t)tm->weight))
				return -ENOMEM;
		}
	}
	return 0;
}

/* R's start and end in T's first and last time. */
static void add_times(struct trace_cost *t, const struct rec *r)
{
	if (r->start_ns < t->first_ns)
		t->first_ns = r->start_ns;
	if (r->end_ns > t->last_ns)
		t->last_ns = r->end_ns;
}

/*
 * An alloc record: its trace's bytes, and the functions that allocated
 * them (its stacks start at the allocating function). Its samples are
 * moments of the trace, in its first and last.
 */
static int add_alloc(struct summary *s, const struct rec *r)
{
	struct trace_cost *t;
	uint32_t func;
	size_t i;

	if (r->alloc_bytes > 0 && !r->trace_id && r->inherited_trace_id)
		s->inherited[KIND_ALLOC] += r->alloc_bytes;
	if (!r->trace_id || strlen(r->trace_id) != ID_LEN || r->alloc_bytes <= 0)
		return 0;
	if (!(t = trace_of(s, r->trace_id)))
		return -ENOMEM;
	t->alloc_bytes += r->alloc_bytes;
	add_times(t, r);
	for (i = 0; i < r->nstacks; i++) {
		const struct rec_stack *st = &r->stacks[i];

		if (!st->nframes || st->alloc_bytes <= 0)
			continue;
		if (!(func = name_of(s, leaf_of(st, 0))))
			return -ENOMEM;
		add_leaf(t->leaves[KIND_ALLOC], func, st->alloc_bytes);
	}
	return 0;
}

int summary__add(struct summary *s, const struct rec *r)
{
	int kind = r->origin == REC_WALL;
	int64_t total = kind ? r->wall_ns : r->cpu_ns;
	struct trace_cost *t;
	uint32_t func;
	size_t i;

	if (r->origin == REC_REQUEST)
		return add_requests(s, r);
	if (r->origin == REC_ALLOC)
		return add_alloc(s, r);
	if (total > 0 && r->inherited_trace_id &&
	    (r->origin == REC_SAMPLING || r->origin == REC_WALL))
		s->inherited[kind] += total;
	if (!r->trace_id || strlen(r->trace_id) != ID_LEN || total <= 0 || !r->samples ||
	    (r->origin != REC_SAMPLING && r->origin != REC_WALL))
		return 0;
	if (!(t = trace_of(s, r->trace_id)))
		return -ENOMEM;
	t->ns[kind] += total;
	add_times(t, r);
	/* the leaves that describe a request: its own goroutine's; the others' time apart */
	if (kind && r->role == REC_ROLE_STARTED) {
		t->started_ns += total;
		return 0;
	}
	for (i = 0; i < r->nstacks; i++) {
		const struct rec_stack *st = &r->stacks[i];
		const char *leaf = leaf_of(st, kind);

		/* a running goroutine's look without a CPU sample near it has none */
		if (!st->nframes)
			continue;

		if (!(func = name_of(s, leaf)))
			return -ENOMEM;
		add_leaf(t->leaves[kind], func, (uint64_t)total / r->samples * st->samples);
	}
	return 0;
}

/*
 * T's elapsed time: the time its requests were in flight, else from its
 * first sample to its last (*SPANNED false).
 */
static uint64_t elapsed(const struct trace_cost *t, bool *spanned)
{
	*spanned = t->spans.n > 0;
	if (*spanned)
		return spans__total(&t->spans);
	return t->last_ns > t->first_ns ? (uint64_t)(t->last_ns - t->first_ns) : 0;
}

static uint64_t cost_of(const struct trace_cost *t, int kind)
{
	bool spanned;

	return kind == KIND_ALLOC   ? t->alloc_bytes :
	       kind == KIND_ELAPSED ? elapsed(t, &spanned) :
				      t->ns[kind];
}

static int by_kind(const void *a, const void *b, void *kind)
{
	uint64_t x = cost_of(a, *(int *)kind), y = cost_of(b, *(int *)kind);

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * NAME in at most ROOM columns, into BUF: without its type arguments
 * (slices.sort[go.shape.int]), then its package's path (internal/poll.),
 * then cut at its end. A bracket that opens the name is no type's: code
 * no symbol names is "[vdso]+0x780".
 */
static const char *shorten(const char *name, char *buf, size_t size, int room)
{
	const char *slash, *p;
	size_t n = 0;
	int depth = 0;

	for (p = name; *p && n + 1 < size; p++) {
		if (*name == '[') {
			buf[n++] = *p;
			continue;
		}
		depth += *p == '[' ? 1 : *p == ']' && depth ? -1 : 0;
		if (!depth && *p != ']')
			buf[n++] = *p;
	}
	buf[n] = '\0';
	if ((int)n > room && (slash = strrchr(buf, '/')))
		memmove(buf, slash + 1, strlen(slash + 1) + 1);
	if ((int)strlen(buf) > room && room > 3)
		strcpy(buf + room - 3, "...");
	return buf;
}

/* T's commonest leaf of KIND, in ROOM columns, with its share. */
static void print_leaf(const struct summary *s, const struct trace_cost *t, int kind, FILE *f,
		       int room)
{
	const struct leaf *top = NULL;
	char share[16], buf[256];
	int i;

	for (i = 0; i < LEAVES; i++)
		if (t->leaves[kind][i].func && (!top || t->leaves[kind][i].value > top->value))
			top = &t->leaves[kind][i];
	if (!top) {
		fputs("(no stack)\n", f);
		return;
	}
	/* a wait's share of the request goroutine's time: the others' is apart */
	snprintf(share, sizeof(share), " (%.0f%%)",
		 100.0 * top->value /
			 (kind == KIND_WALL ? t->ns[1] - t->started_ns : cost_of(t, kind)));
	fprintf(f, "%s%s\n",
		shorten(((char **)s->names.items)[top->func - 1], buf, sizeof(buf),
			room - (int)strlen(share)),
		share);
}

static void print_cpu(const struct summary *s, struct trace_cost *sorted, FILE *f, int n,
		      int width)
{
	int kind = KIND_CPU, used;
	size_t i, with = 0;
	char cost[24];

	qsort_r(sorted, s->traces.n, sizeof(*sorted), by_kind, &kind);
	for (i = 0; i < s->traces.n && sorted[i].ns[0]; i++)
		with++;
	if (!with)
		return;
	fprintf(f, "the costliest traces by CPU, of %zu%s, with the commonest leaf:\n", with,
		s->dropped ? " kept" : "");
	for (i = 0; i < with && i < (size_t)n; i++) {
		snprintf(cost, sizeof(cost), "%.2fs", sorted[i].ns[0] / 1e9);
		used = fprintf(f, "%s %7s ", sorted[i].id, cost);
		print_leaf(s, &sorted[i], 0, f, width - used);
	}
}

/*
 * The slowest traces by elapsed time (~: from the first sample to the
 * last, no request span known), with their goroutine time (every
 * goroutine of theirs, added) and the commonest leaf of the goroutine
 * their request runs on, running or waiting; or, without --wall, their
 * CPU and its commonest leaf.
 */
static void print_elapsed(const struct summary *s, struct trace_cost *sorted, FILE *f, int n,
			  int width, bool wall)
{
	char took[24], cost[24];
	int kind = KIND_ELAPSED, used;
	size_t i, with = 0;
	bool spanned;

	qsort_r(sorted, s->traces.n, sizeof(*sorted), by_kind, &kind);
	for (i = 0; i < s->traces.n && (elapsed(&sorted[i], &spanned) || sorted[i].ns[wall]); i++)
		with++;
	if (!with)
		return;
	fprintf(f, "the slowest traces of %zu%s: elapsed, %s:\n", with,
		s->dropped ? " kept" : "", wall ? "goroutine time, commonest leaf" : "CPU, commonest leaf");
	for (i = 0; i < with && i < (size_t)n; i++) {
		uint64_t e = elapsed(&sorted[i], &spanned);

		snprintf(took, sizeof(took), "%s%.2fs", spanned ? "" : "~", e / 1e9);
		snprintf(cost, sizeof(cost), "%.2fs", sorted[i].ns[wall] / 1e9);
		used = fprintf(f, "%s %7s %7s ", sorted[i].id, took, cost);
		print_leaf(s, &sorted[i], wall, f, width - used);
	}
}

/*
 * The traces that allocated the most bytes (--alloc), in MB (10^6 bytes),
 * each with the function that allocated the most of them.
 */
static void print_alloc(const struct summary *s, struct trace_cost *sorted, FILE *f, int n,
			int width)
{
	int kind = KIND_ALLOC, used;
	size_t i, with = 0;
	char mb[32];

	qsort_r(sorted, s->traces.n, sizeof(*sorted), by_kind, &kind);
	for (i = 0; i < s->traces.n && sorted[i].alloc_bytes; i++)
		with++;
	if (!with)
		return;
	fprintf(f, "the costliest traces by allocated bytes, of %zu%s, top allocator:\n", with,
		s->dropped ? " kept" : "");
	for (i = 0; i < with && i < (size_t)n; i++) {
		snprintf(mb, sizeof(mb), "%.2fMB", sorted[i].alloc_bytes / 1e6);
		used = fprintf(f, "%s %8s ", sorted[i].id, mb);
		print_leaf(s, &sorted[i], KIND_ALLOC, f, width - used);
	}
}

static bool any_wall(const struct summary *s)
{
	const struct trace_cost *t = s->traces.items;
	size_t i;

	for (i = 0; i < s->traces.n; i++)
		if (t[i].ns[1] || t[i].started_ns)
			return true;
	return false;
}

void summary__print(const struct summary *s, FILE *f, int n, int width)
{
	struct trace_cost *sorted;

	if (!s || !s->traces.n)
		return;
	/* sorted apart: the table's order is the index's */
	sorted = malloc(s->traces.n * sizeof(*sorted));
	if (!sorted)
		return;
	memcpy(sorted, s->traces.items, s->traces.n * sizeof(*sorted));
	print_cpu(s, sorted, f, n, width);
	print_elapsed(s, sorted, f, n, width, any_wall(s));
	print_alloc(s, sorted, f, n, width);
	free(sorted);
	if (!s->inherited[KIND_CPU] && !s->inherited[KIND_WALL] && !s->inherited[KIND_ALLOC])
		return;
	fprintf(f, "inherited, request ended: %.2fs CPU, %.2fs goroutine time",
		s->inherited[KIND_CPU] / 1e9, s->inherited[KIND_WALL] / 1e9);
	if (s->inherited[KIND_ALLOC])
		fprintf(f, ", %.2fMB allocated", s->inherited[KIND_ALLOC] / 1e6);
	fputc('\n', f);
}

static void *summary_new(const struct writer_dest *d)
{
	return summary__new();
}

static int summary_add(void *w, const struct rec *r)
{
	return summary__add(w, r);
}

static void summary_free(void *w)
{
	summary__free(w);
}

const struct writer_ops summary_writer = {
	.what = "the summary",
	.new = summary_new,
	.add = summary_add,
	.free = summary_free,
};
