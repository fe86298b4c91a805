// SPDX-License-Identifier: GPL-2.0
/* profdict.c: strings, functions, mappings and locations, each held once, for the profile encoders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "cmd/util/vec.h"
#include "profdict.h"

/* Frames one address expands to: inlined calls, then the function itself. */
#define MAX_LINES 64

struct profdict {
	struct hashmap *strings; /* string -> number + 1 */
	struct vec strtab; /* char * */
	struct hashmap *functions; /* name\0file -> number */
	struct vec funcs; /* struct profdict_function */
	struct hashmap *mappings; /* pid, start -> number */
	struct vec maps; /* struct profdict_mapping */
	struct hashmap *locations; /* pid, addr -> number */
	struct vec locs; /* struct profdict_location * */
	struct strbuf valid; /* a string made valid UTF-8 */
	bool oom;
};

struct profdict *profdict__new(void)
{
	struct profdict *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->strtab.size = sizeof(char *);
	d->funcs.size = sizeof(struct profdict_function);
	d->maps.size = sizeof(struct profdict_mapping);
	d->locs.size = sizeof(struct profdict_location *);
	d->strings = hashmap__new();
	d->functions = hashmap__new();
	d->mappings = hashmap__new();
	d->locations = hashmap__new();
	if (!d->strings || !d->functions || !d->mappings || !d->locations) {
		profdict__free(d);
		return NULL;
	}
	/* "" is string 0 */
	profdict__string(d, "");
	if (d->oom) {
		profdict__free(d);
		return NULL;
	}
	return d;
}

void profdict__free(struct profdict *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->strtab.n; i++)
		free(((char **)d->strtab.items)[i]);
	for (i = 0; i < d->locs.n; i++)
		free(((struct profdict_location **)d->locs.items)[i]);
	free(d->strtab.items);
	free(d->funcs.items);
	free(d->maps.items);
	free(d->locs.items);
	hashmap__free(d->strings, NULL);
	hashmap__free(d->functions, NULL);
	hashmap__free(d->mappings, NULL);
	hashmap__free(d->locations, NULL);
	strbuf__free(&d->valid);
	free(d);
}

bool profdict__oom(const struct profdict *d)
{
	return d->oom;
}

uint64_t profdict__string(struct profdict *d, const char *s)
{
	size_t len = strlen(s);
	char **slot, *copy;
	void *v;

	v = hashmap__get(d->strings, s, len);
	if (v)
		return (uintptr_t)v - 1;
	copy = strdup(s);
	slot = copy ? vec__push(&d->strtab) : NULL;
	if (!slot) {
		free(copy);
		d->oom = true;
		return 0;
	}
	*slot = copy;
	if (hashmap__add(d->strings, s, len, (void *)(uintptr_t)d->strtab.n)) {
		d->oom = true;
		return 0;
	}
	return d->strtab.n - 1;
}

uint64_t profdict__valid(struct profdict *d, const uint8_t *s, size_t len)
{
	return profdict__string(d, rec__valid(&d->valid, s, len));
}

static uint64_t valid_cstr(struct profdict *d, const char *s)
{
	return profdict__valid(d, (const uint8_t *)s, strlen(s));
}

static uint64_t function(struct profdict *d, const char *name, const char *file)
{
	size_t nl = strlen(name), fl = strlen(file);
	char *key = malloc(nl + fl + 2);
	struct profdict_function *f;
	void *v;

	if (!key) {
		d->oom = true;
		return 0;
	}
	memcpy(key, name, nl + 1);
	memcpy(key + nl + 1, file, fl + 1);
	v = hashmap__get(d->functions, key, nl + fl + 2);
	if (!v && (f = vec__push(&d->funcs))) {
		f->name = valid_cstr(d, name);
		f->file = valid_cstr(d, file);
		v = (void *)(uintptr_t)d->funcs.n;
		if (hashmap__add(d->functions, key, nl + fl + 2, v))
			v = NULL;
	}
	free(key);
	d->oom |= !v;
	return (uintptr_t)v;
}

/* The mapping of ADDR in R's process; 0 when none covers it. */
static uint64_t mapping(struct profdict *d, const struct rec *r, uint64_t addr)
{
	uint64_t key[2] = { r->pid };
	const struct rec_mapping *rm;
	struct profdict_mapping *m;
	size_t i;
	void *v;

	for (i = 0; i < r->nmappings; i++) {
		rm = &r->mappings[i];
		if (addr < rm->start || addr >= rm->limit)
			continue;
		key[1] = rm->start;
		v = hashmap__get(d->mappings, key, sizeof(key));
		if (v)
			return (uintptr_t)v;
		m = vec__push(&d->maps);
		if (!m) {
			d->oom = true;
			return 0;
		}
		m->start = rm->start;
		m->limit = rm->limit;
		m->offset = rm->offset;
		m->file = valid_cstr(d, rm->file);
		m->build_id = profdict__string(d, rm->build_id);
		if (hashmap__add(d->mappings, key, sizeof(key), (void *)(uintptr_t)d->maps.n)) {
			d->oom = true;
			return 0;
		}
		return d->maps.n;
	}
	return 0;
}

uint64_t profdict__location(struct profdict *d, const struct rec *r, const struct rec_stack *st,
			    size_t *i)
{
	uint64_t key[2] = { r->pid }, addr = st->frames[*i].addr;
	struct profdict_line lines[MAX_LINES];
	struct profdict_location *loc, **slot;
	const struct rec_frame *f;
	size_t n = 0, j, end;
	char pc[32];
	void *v;

	/* the inlined frames, then the one that is not: all at ADDR */
	for (end = *i; end < st->nframes && st->frames[end].addr == addr;) {
		if (!st->frames[end++].inlined)
			break;
	}
	key[1] = addr;
	v = hashmap__get(d->locations, key, sizeof(key));
	if (v) {
		/* one address of one process: the same frames every time */
		*i = end;
		return (uintptr_t)v;
	}
	for (j = *i; j < end && n < MAX_LINES; j++) {
		f = &st->frames[j];
		/* a frame nothing names is named by its PC */
		if (!f->func)
			snprintf(pc, sizeof(pc), "0x%llx", (unsigned long long)f->pc);
		lines[n].function = function(d, f->func ?: pc, f->file ?: "");
		lines[n++].line = f->file ? f->line : 0;
	}
	*i = end;
	loc = malloc(sizeof(*loc) + n * sizeof(lines[0]));
	slot = loc ? vec__push(&d->locs) : NULL;
	if (!slot) {
		free(loc);
		d->oom = true;
		return 0;
	}
	*slot = loc;
	loc->mapping = mapping(d, r, addr);
	loc->addr = addr;
	loc->nlines = n;
	memcpy(loc->lines, lines, n * sizeof(lines[0]));
	if (hashmap__add(d->locations, key, sizeof(key), (void *)(uintptr_t)d->locs.n)) {
		d->oom = true;
		return 0;
	}
	return d->locs.n;
}

uint64_t profdict__pseudo(struct profdict *d, const char *name)
{
	/* no process has pid UINT64_MAX: a key no address can take */
	uint64_t key[2] = { UINT64_MAX, function(d, name, "") };
	struct profdict_location *loc, **slot;
	void *v = hashmap__get(d->locations, key, sizeof(key));

	if (v)
		return (uintptr_t)v;
	loc = malloc(sizeof(*loc) + sizeof(loc->lines[0]));
	slot = loc ? vec__push(&d->locs) : NULL;
	if (!slot) {
		free(loc);
		d->oom = true;
		return 0;
	}
	*slot = loc;
	loc->mapping = 0;
	loc->addr = 0;
	loc->nlines = 1;
	loc->lines[0] = (struct profdict_line){ .function = key[1], .line = 0 };
	if (hashmap__add(d->locations, key, sizeof(key), (void *)(uintptr_t)d->locs.n)) {
		d->oom = true;
		return 0;
	}
	return d->locs.n;
}

const char *const *profdict__strings(const struct profdict *d, size_t *n)
{
	*n = d->strtab.n;
	return d->strtab.items;
}

const struct profdict_function *profdict__functions(const struct profdict *d, size_t *n)
{
	*n = d->funcs.n;
	return d->funcs.items;
}

const struct profdict_mapping *profdict__mappings(const struct profdict *d, size_t *n)
{
	*n = d->maps.n;
	return d->maps.items;
}

const struct profdict_location *const *profdict__locations(const struct profdict *d, size_t *n)
{
	*n = d->locs.n;
	return d->locs.items;
}
