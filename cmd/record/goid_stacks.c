// SPDX-License-Identifier: GPL-2.0
/* goid_stacks.c: each goroutine's latest CPU samples' stacks, for the running goroutines --wall finds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "goid_stacks.h"

/* entries whose latest sample is older than this go, at most once a period of it */
#define KEEP_NS 1000000000ULL

struct goid_key {
	uint32_t tgid, pad;
	uint64_t goid;
};

/* the latest sample first */
struct goid_entry {
	uint64_t time_ns[2];
	size_t n[2];
	uint64_t *frames[2];
};

struct goid_stacks {
	struct hashmap *map; /* struct goid_key -> struct goid_entry */
	uint64_t gap_ns;
	uint64_t swept_ns; /* when entries were last let go */
};

static void entry_free(void *p)
{
	struct goid_entry *e = p;

	if (!e)
		return;
	free(e->frames[0]);
	free(e->frames[1]);
	free(e);
}

struct goid_stacks *goid_stacks__new(uint64_t gap_ns)
{
	struct goid_stacks *gs = calloc(1, sizeof(*gs));

	if (!gs)
		return NULL;
	gs->map = hashmap__new();
	if (!gs->map) {
		free(gs);
		return NULL;
	}
	gs->gap_ns = gap_ns;
	return gs;
}

void goid_stacks__free(struct goid_stacks *gs)
{
	if (!gs)
		return;
	hashmap__free(gs->map, entry_free);
	free(gs);
}

struct sweep {
	uint64_t before_ns;
	struct goid_key *old;
	size_t n, cap;
};

static void collect_old(const void *key, size_t len, void *value, void *ctx)
{
	struct goid_entry *e = value;
	struct sweep *sw = ctx;
	struct goid_key *grown;

	if (e->time_ns[0] >= sw->before_ns)
		return;
	if (sw->n == sw->cap) {
		sw->cap = sw->cap ? 2 * sw->cap : 64;
		grown = realloc(sw->old, sw->cap * sizeof(*grown));
		if (!grown)
			return;
		sw->old = grown;
	}
	memcpy(&sw->old[sw->n++], key, sizeof(struct goid_key));
}

/* Lets go of the goroutines sampled last more than KEEP_NS before NOW_NS (gathered first). */
static void sweep(struct goid_stacks *gs, uint64_t now_ns)
{
	struct sweep sw = { .before_ns = now_ns - KEEP_NS };
	size_t i;

	gs->swept_ns = now_ns;
	hashmap__foreach(gs->map, collect_old, &sw);
	for (i = 0; i < sw.n; i++)
		entry_free(hashmap__del(gs->map, &sw.old[i], sizeof(sw.old[i])));
	free(sw.old);
}

int goid_stacks__note(struct goid_stacks *gs, uint32_t tgid, uint64_t goid, uint64_t time_ns,
		      const uint64_t *frames, size_t n)
{
	struct goid_key key = { .tgid = tgid, .goid = goid };
	struct goid_entry *e;
	uint64_t *copy;

	if (time_ns > gs->swept_ns + KEEP_NS)
		sweep(gs, time_ns);
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, frames, n * sizeof(*copy));
	e = hashmap__get(gs->map, &key, sizeof(key));
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || hashmap__add(gs->map, &key, sizeof(key), e)) {
			free(e);
			free(copy);
			return -ENOMEM;
		}
	}
	free(e->frames[1]);
	e->frames[1] = e->frames[0];
	e->n[1] = e->n[0];
	e->time_ns[1] = e->time_ns[0];
	e->frames[0] = copy;
	e->n[0] = n;
	e->time_ns[0] = time_ns;
	return 0;
}

static uint64_t distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

size_t goid_stacks__find(struct goid_stacks *gs, uint32_t tgid, uint64_t goid, uint64_t time_ns,
			 const uint64_t **frames)
{
	struct goid_key key = { .tgid = tgid, .goid = goid };
	struct goid_entry *e = hashmap__get(gs->map, &key, sizeof(key));
	int i;

	if (!e)
		return 0;
	i = e->frames[1] && distance(e->time_ns[1], time_ns) < distance(e->time_ns[0], time_ns);
	if (!e->frames[i] || distance(e->time_ns[i], time_ns) > gs->gap_ns)
		return 0;
	*frames = e->frames[i];
	return e->n[i];
}
