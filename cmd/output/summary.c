// SPDX-License-Identifier: GPL-2.0
/* summary.c: a run's costliest traces by CPU and by wall time, each with its commonest leaf function, for the lines at exit. */
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
	uint64_t ns;
};

struct trace_cost {
	char id[ID_LEN + 1];
	uint64_t ns[2]; /* CPU, wall */
	struct leaf leaves[2][LEAVES];
};

struct summary {
	struct vec traces; /* struct trace_cost */
	struct hashmap *by_id; /* trace ID -> index + 1 */
	struct vec names; /* char *: leaf functions */
	struct hashmap *by_name; /* name -> index + 1 */
	uint64_t dropped; /* traces the cap let go */
	uint64_t inherited[2]; /* CPU and wall time of goroutines whose request had ended */
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

static int by_cost(const void *a, const void *b)
{
	uint64_t x = cost(a), y = cost(b);

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
	if (hashmap__add(s->by_id, id, ID_LEN, (void *)(uintptr_t)s->traces.n)) {
		s->traces.n--;
		return NULL;
	}
	return t;
}

/* NS more in FUNC's slot of LEAVES; a new one takes over the least one's. */
static void add_leaf(struct leaf *leaves, uint32_t func, uint64_t ns)
{
	struct leaf *least = &leaves[0];
	int i;

	for (i = 0; i < LEAVES; i++) {
		if (leaves[i].func == func || !leaves[i].func) {
			leaves[i].func = func;
			leaves[i].ns += ns;
			return;
		}
		if (leaves[i].ns < least->ns)
			least = &leaves[i];
	}
	least->func = func;
	least->ns += ns;
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

int summary__add(struct summary *s, const struct rec *r)
{
	int kind = r->origin == REC_WALL;
	int64_t total = kind ? r->wall_ns : r->cpu_ns;
	struct trace_cost *t;
	uint32_t func;
	size_t i;

	if (total > 0 && r->inherited_trace_id &&
	    (r->origin == REC_SAMPLING || r->origin == REC_WALL))
		s->inherited[kind] += total;
	if (!r->trace_id || strlen(r->trace_id) != ID_LEN || total <= 0 || !r->samples ||
	    (r->origin != REC_SAMPLING && r->origin != REC_WALL))
		return 0;
	if (!(t = trace_of(s, r->trace_id)))
		return -ENOMEM;
	t->ns[kind] += total;
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

static int by_kind(const void *a, const void *b, void *kind)
{
	uint64_t x = ((const struct trace_cost *)a)->ns[*(int *)kind];
	uint64_t y = ((const struct trace_cost *)b)->ns[*(int *)kind];

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * NAME in at most ROOM columns, into BUF: without its type arguments
 * (slices.sort[go.shape.int]), then its package's path (internal/poll.),
 * then cut at its end.
 */
static const char *shorten(const char *name, char *buf, size_t size, int room)
{
	const char *slash, *p;
	size_t n = 0;
	int depth = 0;

	for (p = name; *p && n + 1 < size; p++) {
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
		if (t->leaves[kind][i].func && (!top || t->leaves[kind][i].ns > top->ns))
			top = &t->leaves[kind][i];
	if (!top) {
		fputs("(no stack)\n", f);
		return;
	}
	snprintf(share, sizeof(share), " (%.0f%%)", 100.0 * top->ns / t->ns[kind]);
	fprintf(f, "%s%s\n",
		shorten(((char **)s->names.items)[top->func - 1], buf, sizeof(buf),
			room - (int)strlen(share)),
		share);
}

static void print_kind(const struct summary *s, struct trace_cost *sorted, int kind, FILE *f, int n,
		       int width)
{
	static const char *const what[] = { "CPU", "wall time" };
	size_t i, with = 0;
	char cost[24];
	int used;

	qsort_r(sorted, s->traces.n, sizeof(*sorted), by_kind, &kind);
	for (i = 0; i < s->traces.n && sorted[i].ns[kind]; i++)
		with++;
	if (!with)
		return;
	fprintf(f, "the costliest traces by %s, of %zu%s, with the commonest leaf:\n", what[kind],
		with, s->dropped ? " kept" : "");
	for (i = 0; i < with && i < (size_t)n; i++) {
		snprintf(cost, sizeof(cost), "%.2fs", sorted[i].ns[kind] / 1e9);
		used = fprintf(f, "%s %7s ", sorted[i].id, cost);
		print_leaf(s, &sorted[i], kind, f, width - used);
	}
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
	print_kind(s, sorted, 0, f, n, width);
	print_kind(s, sorted, 1, f, n, width);
	free(sorted);
	if (s->inherited[0] || s->inherited[1])
		fprintf(f, "inherited, request ended: %.2fs of CPU, %.2fs of goroutine time, "
			   "in goroutines that outlived their trace's request (inherited_trace_id)\n",
			s->inherited[0] / 1e9, s->inherited[1] / 1e9);
}
