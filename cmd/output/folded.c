// SPDX-License-Identifier: GPL-2.0
/* folded.c: records as folded stacks, "comm;root;...;leaf COUNT", for flame graphs. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "folded.h"

/* A set's index in sets: the trace ID first, or not, in each folded_set. */
#define SET(set, root) ((set) * 2 + (root))
#define NSETS SET(FOLDED_SETS, 0)

struct folded {
	struct hashmap *sets[NSETS]; /* folded line -> uint64_t count */
	struct strbuf line, valid;
};

struct folded *folded__new(void)
{
	struct folded *f = calloc(1, sizeof(*f));
	int i;

	if (!f)
		return NULL;
	for (i = 0; i < NSETS; i++) {
		f->sets[i] = hashmap__new();
		if (!f->sets[i]) {
			folded__free(f);
			return NULL;
		}
	}
	return f;
}

void folded__free(struct folded *f)
{
	int i;

	if (!f)
		return;
	for (i = 0; i < NSETS; i++)
		hashmap__free(f->sets[i], free);
	strbuf__free(&f->line);
	strbuf__free(&f->valid);
	free(f);
}

static void put_raw(struct folded *f, char c)
{
	strbuf__put(&f->line, &c, 1);
}

/* Frames are separated by ';' and lines by '\n', and the count follows a space: none in a name. */
static void put_frame(struct folded *f, const uint8_t *name, size_t len)
{
	const char *s = rec__valid(&f->valid, name, len);
	size_t n = strlen(s), i;

	for (i = 0; i < n; i++)
		put_raw(f, s[i] == ';' || s[i] == '\n' || s[i] == ' ' ? '_' : s[i]);
}

static void put_cstr(struct folded *f, const char *s)
{
	put_frame(f, (const uint8_t *)s, strlen(s));
}

static int count(struct hashmap *m, const char *line, size_t len, uint64_t n)
{
	uint64_t *c = hashmap__get(m, line, len);

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c || hashmap__add(m, line, len, c)) {
			free(c);
			return -ENOMEM;
		}
	}
	*c += n;
	return 0;
}

int folded__add(struct folded *f, const struct rec *r)
{
	bool wall = r->origin == REC_WALL, alloc = r->origin == REC_ALLOC;
	enum folded_set set = wall ? FOLDED_WALL : alloc ? FOLDED_ALLOC : FOLDED_CPU;
	const struct rec_stack *st;
	const struct rec_frame *fr;
	char pc[32];
	size_t i, j;
	int root, ret;

	/* a request's span has no stack */
	if (r->origin == REC_REQUEST)
		return 0;
	for (i = 0; i < r->nstacks; i++) {
		st = &r->stacks[i];
		/* an allocation counts its bytes, not its samples: a flame graph of memory */
		if (alloc && st->alloc_bytes <= 0)
			continue;
		for (root = 0; root < 2; root++) {
			f->line.n = 0;
			f->line.oom = false;
			if (root) {
				put_cstr(f, r->trace_id ?: r->inherited_trace_id ? "inherited" : "no-trace");
				put_raw(f, ';');
			}
			put_frame(f, r->comm, r->comm_len);
			for (j = st->nframes; j-- > 0;) {
				fr = &st->frames[j];
				snprintf(pc, sizeof(pc), "0x%" PRIx64, fr->pc);
				put_raw(f, ';');
				put_cstr(f, fr->func ?: pc);
			}
			/* what a goroutine was doing, as a leaf: "[chan receive]", "[running]" */
			if (wall) {
				put_raw(f, ';');
				put_raw(f, '[');
				put_cstr(f, r->wait_reason ?: r->state ?: "?");
				put_raw(f, ']');
			}
			if (f->line.oom)
				return -ENOMEM;
			ret = count(f->sets[SET(set, root)], f->line.p, f->line.n,
				    alloc ? (uint64_t)st->alloc_bytes : st->samples);
			if (ret)
				return ret;
		}
	}
	return 0;
}

struct folded_out {
	char **lines;
	size_t n;
};

static void collect(const void *key, size_t len, void *value, void *arg)
{
	struct folded_out *o = arg;

	o->lines[o->n++] = strndup(key, len);
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int folded__write(struct folded *f, FILE *out, bool trace_root, enum folded_set set)
{
	struct hashmap *m = f->sets[SET(set, trace_root)];
	struct folded_out o = {};
	size_t i, n = hashmap__size(m);
	uint64_t *c;
	int ret = 0;

	o.lines = calloc(n + 1, sizeof(*o.lines));
	if (!o.lines)
		return -ENOMEM;
	hashmap__foreach(m, collect, &o);
	for (i = 0; i < o.n; i++) {
		if (!o.lines[i])
			ret = -ENOMEM;
	}
	if (!ret)
		qsort(o.lines, o.n, sizeof(*o.lines), by_string);
	errno = 0;
	for (i = 0; i < o.n && !ret; i++) {
		c = hashmap__get(m, o.lines[i], strlen(o.lines[i]));
		if (c && fprintf(out, "%s %" PRIu64 "\n", o.lines[i], *c) < 0)
			ret = errno ? -errno : -EIO;
	}
	if (!ret && (fflush(out) != 0 || ferror(out)))
		ret = errno ? -errno : -EIO;
	for (i = 0; i < o.n; i++)
		free(o.lines[i]);
	free(o.lines);
	return ret;
}

static void *folded_new(const struct writer_dest *d)
{
	return folded__new();
}

static int folded_add(void *w, const struct rec *r)
{
	return folded__add(w, r);
}

static int folded_write(void *w, const struct writer_dest *d)
{
	return folded__write(w, *d->stream, d->trace_root,
			     d->wall_only ? FOLDED_WALL : d->alloc_only ? FOLDED_ALLOC : FOLDED_CPU);
}

static void folded_free(void *w)
{
	folded__free(w);
}

const struct writer_ops folded_writer = {
	.what = "folded stacks",
	.new = folded_new,
	.add = folded_add,
	.write = folded_write,
	.free = folded_free,
};
