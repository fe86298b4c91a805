// SPDX-License-Identifier: GPL-2.0
/* convert.c: ctxprof-go's JSON records as a pprof profile or folded stacks, live or from a file. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "convert.h"
#include "hashmap.h"

/* Frames one address expands to: inlined calls, then the function itself. */
#define MAX_LINES 64
#define MAX_BAD_LINES 20

struct line {
	uint64_t function_id;
	int64_t line;
};

struct location {
	uint64_t mapping_id, addr;
	size_t nlines;
	struct line lines[];
};

struct mapping {
	uint64_t start, limit, offset, file, build_id; /* strings as indexes */
};

struct function {
	uint64_t name, file;
};

struct label {
	uint64_t key, str; /* str 0: numeric */
	int64_t num;
};

struct sample {
	size_t nlocs, nlabels;
	int64_t values[3]; /* samples, cpu ns, wall ns */
	uint64_t *locs;
	struct label *labels;
};

/* A growable array of fixed-size items. */
struct vec {
	void *items;
	size_t n, cap, size;
};

struct convert {
	struct hashmap *strings; /* string -> index + 1 */
	struct vec strtab; /* char * */
	struct hashmap *functions; /* name\0file -> id */
	struct vec funcs; /* struct function */
	struct hashmap *mappings_by; /* pid, start -> id */
	struct vec maps; /* struct mapping */
	struct hashmap *locations; /* pid, addr -> id */
	struct vec locs; /* struct location * */
	struct vec samples; /* struct sample */
	/* folded line -> uint64_t count; bit 0: the trace ID first, bit 1: wall records only */
	struct hashmap *folded[4];
	int64_t first_ns, last_ns, period;
};

static void *vec_push(struct vec *v)
{
	void *items;

	if (v->n == v->cap) {
		items = realloc(v->items, (v->cap ? 2 * v->cap : 64) * v->size);
		if (!items)
			return NULL;
		v->items = items;
		v->cap = v->cap ? 2 * v->cap : 64;
	}
	return memset((char *)v->items + v->n++ * v->size, 0, v->size);
}

struct convert *convert__new(void)
{
	struct convert *c = calloc(1, sizeof(*c));
	int i;

	if (!c)
		return NULL;
	c->strtab.size = sizeof(char *);
	c->funcs.size = sizeof(struct function);
	c->maps.size = sizeof(struct mapping);
	c->locs.size = sizeof(struct location *);
	c->samples.size = sizeof(struct sample);
	c->strings = hashmap__new();
	c->functions = hashmap__new();
	c->mappings_by = hashmap__new();
	c->locations = hashmap__new();
	for (i = 0; i < 4; i++)
		c->folded[i] = hashmap__new();
	if (!c->strings || !c->functions || !c->mappings_by || !c->locations || !c->folded[0] ||
	    !c->folded[1] || !c->folded[2] || !c->folded[3]) {
		convert__free(c);
		return NULL;
	}
	return c;
}

void convert__free(struct convert *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->strtab.n; i++)
		free(((char **)c->strtab.items)[i]);
	for (i = 0; i < c->locs.n; i++)
		free(((struct location **)c->locs.items)[i]);
	for (i = 0; i < c->samples.n; i++) {
		free(((struct sample *)c->samples.items)[i].locs);
		free(((struct sample *)c->samples.items)[i].labels);
	}
	free(c->strtab.items);
	free(c->funcs.items);
	free(c->maps.items);
	free(c->locs.items);
	free(c->samples.items);
	hashmap__free(c->strings, NULL);
	hashmap__free(c->functions, NULL);
	hashmap__free(c->mappings_by, NULL);
	hashmap__free(c->locations, NULL);
	for (i = 0; i < 4; i++)
		hashmap__free(c->folded[i], free);
	free(c);
}

/* Index of S in the string table, added when new; 0 is "". */
static uint64_t str_index(struct convert *c, const char *s)
{
	size_t len = strlen(s);
	void *v;
	char **slot, *copy;

	if (!c->strtab.n) {
		slot = vec_push(&c->strtab);
		if (!slot || !(*slot = strdup("")) || hashmap__add(c->strings, "", 0, (void *)1))
			return 0;
	}
	v = hashmap__get(c->strings, s, len);
	if (v)
		return (uintptr_t)v - 1;
	copy = strdup(s);
	slot = copy ? vec_push(&c->strtab) : NULL;
	if (!slot) {
		free(copy);
		return 0;
	}
	*slot = copy;
	if (hashmap__add(c->strings, s, len, (void *)(uintptr_t)c->strtab.n))
		return 0;
	return c->strtab.n - 1;
}

static uint64_t function_id(struct convert *c, const char *name, const char *file)
{
	size_t nl = strlen(name), fl = strlen(file);
	char *key = malloc(nl + fl + 2);
	struct function *f;
	void *v;

	if (!key)
		return 0;
	memcpy(key, name, nl + 1);
	memcpy(key + nl + 1, file, fl + 1);
	v = hashmap__get(c->functions, key, nl + fl + 2);
	if (!v && (f = vec_push(&c->funcs))) {
		f->name = str_index(c, name);
		f->file = str_index(c, file);
		v = (void *)(uintptr_t)c->funcs.n;
		if (hashmap__add(c->functions, key, nl + fl + 2, v))
			v = NULL;
	}
	free(key);
	return (uintptr_t)v;
}

static bool hex_u64(json_t *v, uint64_t *out)
{
	const char *s = json_string_value(v);
	char *end;

	if (!s || strncmp(s, "0x", 2) != 0)
		return false;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return !errno && end != s + 2 && !*end;
}

/* "2026-11-22T11:40:01.123456Z" in ns since the epoch; false if not that shape. */
static bool parse_time(json_t *v, int64_t *ns)
{
	const char *s = json_string_value(v), *rest;
	struct tm tm = {};
	long frac = 0;
	int digits = 0;

	if (!s || !(rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)))
		return false;
	if (*rest == '.') {
		for (rest++; *rest >= '0' && *rest <= '9'; rest++, digits++)
			if (digits < 9)
				frac = frac * 10 + (*rest - '0');
		for (; digits < 9; digits++)
			frac *= 10;
	}
	if (strcmp(rest, "Z") != 0)
		return false;
	*ns = (int64_t)timegm(&tm) * 1000000000 + frac;
	return true;
}

#define fail(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

/* Checks everything convert__add will read, so that a bad record is taken whole or not at all. */
static bool is_wall(json_t *rec)
{
	const char *origin = json_string_value(json_object_get(rec, "origin"));

	return origin && !strcmp(origin, "wall");
}

/* A wall record's state, or its wait reason when waiting: the leaf of its folded stacks. */
static const char *wall_leaf(json_t *rec)
{
	const char *reason = json_string_value(json_object_get(rec, "wait_reason"));

	return reason ?: json_string_value(json_object_get(rec, "state"));
}

static int check_record(json_t *rec, char *err, size_t errlen)
{
	json_t *stacks, *st, *frames, *f, *v;
	const char *k;
	size_t i, j;
	int64_t t;
	uint64_t a;

	if (!json_is_object(rec))
		return fail("not a JSON object");
	if (!json_is_integer(json_object_get(rec, "pid")))
		return fail("\"pid\" missing or not an integer");
	if (!json_is_string(json_object_get(rec, "comm")))
		return fail("\"comm\" missing or not a string");
	if (!json_is_integer(json_object_get(rec, "samples")))
		return fail("\"samples\" missing or not an integer");
	v = json_object_get(rec, "cpu_ns");
	if (!json_is_integer(v) && !json_is_null(v))
		return fail("\"cpu_ns\" missing or neither an integer nor null");
	if (is_wall(rec)) {
		if (!json_is_integer(json_object_get(rec, "wall_ns")) ||
		    !json_is_string(json_object_get(rec, "state")))
			return fail("a wall record without \"wall_ns\" or \"state\"");
		v = json_object_get(rec, "wait_reason");
		if (!json_is_string(v) && !json_is_null(v))
			return fail("\"wait_reason\" neither a string nor null");
	}
	for (i = 0; i < 2; i++) {
		k = i ? "span_id" : "trace_id";
		v = json_object_get(rec, k);
		if (!json_is_string(v) && !json_is_null(v))
			return fail("\"%s\" missing or neither a string nor null", k);
	}
	if (!parse_time(json_object_get(rec, "start"), &t) ||
	    !parse_time(json_object_get(rec, "end"), &t))
		return fail("\"start\" or \"end\" missing or not an RFC 3339 UTC time");
	v = json_object_get(rec, "labels");
	if (!json_is_object(v))
		return fail("\"labels\" missing or not an object");
	json_object_foreach(v, k, f)
		if (!json_is_string(f))
			return fail("label \"%s\" is not a string", k);
	stacks = json_object_get(rec, "stacks");
	if (!json_is_array(stacks))
		return fail("\"stacks\" missing or not an array");
	json_array_foreach(stacks, i, st) {
		if (!json_is_integer(json_object_get(st, "samples")) ||
		    json_integer_value(json_object_get(st, "samples")) < 0)
			return fail("stack %zu: \"samples\" missing or negative", i);
		frames = json_object_get(st, "frames");
		if (!json_is_array(frames))
			return fail("stack %zu: \"frames\" missing or not an array", i);
		json_array_foreach(frames, j, f) {
			if (!json_is_string(json_object_get(f, "func")))
				return fail("stack %zu, frame %zu: \"func\" missing", i, j);
			if (!hex_u64(json_object_get(f, "addr"), &a))
				return fail("stack %zu, frame %zu: \"addr\" missing or not 0x hex "
					    "(written by a ctxprof-go older than convert?)",
					    i, j);
		}
	}
	v = json_object_get(rec, "mappings");
	if (v && !json_is_array(v))
		return fail("\"mappings\" is not an array");
	return 0;
}

/* pprof's mapping of ADDR in this record's process; 0 when none covers it. */
static uint64_t mapping_id(struct convert *c, json_t *rec, uint64_t pid, uint64_t addr)
{
	uint64_t key[2] = { pid }, start, limit;
	struct mapping *m;
	json_t *mj;
	size_t i;
	void *v;

	json_array_foreach(json_object_get(rec, "mappings"), i, mj) {
		if (!hex_u64(json_object_get(mj, "start"), &start) ||
		    !hex_u64(json_object_get(mj, "limit"), &limit) || addr < start || addr >= limit)
			continue;
		key[1] = start;
		v = hashmap__get(c->mappings_by, key, sizeof(key));
		if (v)
			return (uintptr_t)v;
		m = vec_push(&c->maps);
		if (!m)
			return 0;
		m->start = start;
		m->limit = limit;
		/* records before the field was written have none: 0 */
		if (!hex_u64(json_object_get(mj, "offset"), &m->offset))
			m->offset = 0;
		m->file = str_index(c, json_string_value(json_object_get(mj, "file")) ?: "");
		m->build_id = str_index(c, json_string_value(json_object_get(mj, "build_id")) ?: "");
		if (hashmap__add(c->mappings_by, key, sizeof(key), (void *)(uintptr_t)c->maps.n))
			return 0;
		return c->maps.n;
	}
	return 0;
}

/* The location of FRAMES[*I...]: every frame at one address; advances *I past them. */
static uint64_t location_id(struct convert *c, json_t *rec, uint64_t pid, json_t *frames, size_t *i)
{
	uint64_t key[2] = { pid }, addr;
	struct line lines[MAX_LINES];
	struct location *loc, **slot;
	size_t n = 0, j;
	json_t *f;
	void *v;

	hex_u64(json_object_get(json_array_get(frames, *i), "addr"), &addr);
	/* the inlined frames, then the one that is not: all at ADDR */
	for (j = *i; j < json_array_size(frames); j++) {
		uint64_t a;

		f = json_array_get(frames, j);
		hex_u64(json_object_get(f, "addr"), &a);
		if (a != addr)
			break;
		if (n < MAX_LINES) {
			lines[n].function_id = function_id(
				c, json_string_value(json_object_get(f, "func")),
				json_string_value(json_object_get(f, "file")) ?: "");
			lines[n++].line = json_integer_value(json_object_get(f, "line"));
		}
		if (!json_is_true(json_object_get(f, "inlined"))) {
			j++;
			break;
		}
	}
	*i = j;
	key[1] = addr;
	v = hashmap__get(c->locations, key, sizeof(key));
	if (v)
		return (uintptr_t)v;
	loc = malloc(sizeof(*loc) + n * sizeof(lines[0]));
	slot = loc ? vec_push(&c->locs) : NULL;
	if (!slot) {
		free(loc);
		return 0;
	}
	*slot = loc;
	loc->mapping_id = mapping_id(c, rec, pid, addr);
	loc->addr = addr;
	loc->nlines = n;
	memcpy(loc->lines, lines, n * sizeof(lines[0]));
	if (hashmap__add(c->locations, key, sizeof(key), (void *)(uintptr_t)c->locs.n))
		return 0;
	return c->locs.n;
}

static void add_folded(struct convert *c, int which, const char *line, uint64_t n)
{
	uint64_t *count = hashmap__get(c->folded[which], line, strlen(line));

	if (!count && (count = calloc(1, sizeof(*count))) &&
	    hashmap__add(c->folded[which], line, strlen(line), count)) {
		free(count);
		return;
	}
	if (count)
		*count += n;
}

/* Folded frames are separated by ';' and lines by '\n': neither may appear in a name. */
static void append_frame(FILE *f, const char *name)
{
	for (; *name; name++)
		fputc(*name == ';' || *name == '\n' || *name == ' ' ? '_' : *name, f);
}

static void folded_lines(struct convert *c, json_t *rec, json_t *frames, uint64_t n)
{
	const char *trace = json_string_value(json_object_get(rec, "trace_id"));
	bool wall = is_wall(rec);
	char *line = NULL;
	size_t len = 0, i;
	int which;
	FILE *f;

	for (which = 0; which < 2; which++) {
		f = open_memstream(&line, &len);
		if (!f)
			return;
		if (which) {
			append_frame(f, trace ? trace : "no-trace");
			fputc(';', f);
		}
		append_frame(f, json_string_value(json_object_get(rec, "comm")));
		for (i = json_array_size(frames); i-- > 0;) {
			fputc(';', f);
			append_frame(f, json_string_value(json_object_get(json_array_get(frames, i), "func")));
		}
		/* what a goroutine was doing, as a leaf: "[chan receive]", "[running]" */
		if (wall) {
			fputs(";[", f);
			append_frame(f, wall_leaf(rec) ?: "?");
			fputc(']', f);
		}
		fclose(f);
		add_folded(c, which | (wall ? 2 : 0), line, n);
		free(line);
		line = NULL;
	}
}

int convert__add(struct convert *c, json_t *rec, char *err, size_t errlen)
{
	const char *trace, *span, *source, *k;
	uint64_t pid, per_sample = 0, per_wall = 0;
	json_t *st, *frames, *v;
	struct sample *s;
	int64_t start, end, cpu, wall, samples;
	const char *state, *reason;
	size_t i, j, nl;

	if (check_record(rec, err, errlen))
		return -EINVAL;
	pid = json_integer_value(json_object_get(rec, "pid"));
	parse_time(json_object_get(rec, "start"), &start);
	parse_time(json_object_get(rec, "end"), &end);
	if (!c->first_ns || start < c->first_ns)
		c->first_ns = start;
	if (end > c->last_ns)
		c->last_ns = end;
	cpu = json_integer_value(json_object_get(rec, "cpu_ns"));
	samples = json_integer_value(json_object_get(rec, "samples"));
	if (samples > 0 && cpu > 0) {
		per_sample = cpu / samples;
		if (!c->period)
			c->period = per_sample;
	}
	wall = json_integer_value(json_object_get(rec, "wall_ns"));
	if (samples > 0 && wall > 0)
		per_wall = wall / samples;
	state = is_wall(rec) ? json_string_value(json_object_get(rec, "state")) : NULL;
	reason = is_wall(rec) ? json_string_value(json_object_get(rec, "wait_reason")) : NULL;
	trace = json_string_value(json_object_get(rec, "trace_id"));
	span = json_string_value(json_object_get(rec, "span_id"));
	/* older records have none */
	source = json_string_value(json_object_get(rec, "trace_source"));
	json_array_foreach(json_object_get(rec, "stacks"), i, st) {
		uint64_t n = json_integer_value(json_object_get(st, "samples"));

		frames = json_object_get(st, "frames");
		folded_lines(c, rec, frames, n);
		s = vec_push(&c->samples);
		if (!s)
			return fail("out of memory");
		s->values[0] = n;
		s->values[1] = n * per_sample;
		s->values[2] = n * per_wall;
		s->locs = calloc(json_array_size(frames) + 1, sizeof(*s->locs));
		nl = json_object_size(json_object_get(rec, "labels")) + 8;
		s->labels = calloc(nl, sizeof(*s->labels));
		if (!s->locs || !s->labels)
			return fail("out of memory");
		for (j = 0; j < json_array_size(frames);)
			s->locs[s->nlocs++] = location_id(c, rec, pid, frames, &j);
		if (trace)
			s->labels[s->nlabels++] = (struct label){ str_index(c, "trace_id"), str_index(c, trace) };
		if (span)
			s->labels[s->nlabels++] = (struct label){ str_index(c, "span_id"), str_index(c, span) };
		if (source)
			s->labels[s->nlabels++] =
				(struct label){ str_index(c, "trace_source"), str_index(c, source) };
		if (state)
			s->labels[s->nlabels++] = (struct label){ str_index(c, "state"), str_index(c, state) };
		if (reason)
			s->labels[s->nlabels++] =
				(struct label){ str_index(c, "wait_reason"), str_index(c, reason) };
		/* every goroutine label; the IDs above stand for their own keys */
		json_object_foreach(json_object_get(rec, "labels"), k, v) {
			if (!strcmp(k, "trace_id") || !strcmp(k, "span_id") ||
			    !strcmp(k, "trace_source") || !strcmp(k, "pid") ||
			    (state && (!strcmp(k, "state") || !strcmp(k, "wait_reason"))) ||
			    !strcmp(k, "goid") || !strcmp(k, "context"))
				continue;
			s->labels[s->nlabels++] = (struct label){ str_index(c, k),
								  str_index(c, json_string_value(v)) };
		}
		s->labels[s->nlabels++] = (struct label){ str_index(c, "pid"), 0, (int64_t)pid };
		v = json_object_get(rec, "goid");
		if (json_is_integer(v))
			s->labels[s->nlabels++] =
				(struct label){ str_index(c, "goid"), 0, json_integer_value(v) };
		v = json_object_get(rec, "context");
		if (json_is_integer(v))
			s->labels[s->nlabels++] =
				(struct label){ str_index(c, "context"), 0, json_integer_value(v) };
	}
	return 0;
}

/* profile.proto, written by hand: varints, tags and length-delimited fields. */
struct pb {
	uint8_t *b;
	size_t n, cap;
	bool oom;
};

static void pb_bytes(struct pb *p, const void *d, size_t len)
{
	uint8_t *b;

	if (p->n + len > p->cap) {
		size_t cap = p->cap ? p->cap : 4096;

		while (cap < p->n + len)
			cap *= 2;
		b = realloc(p->b, cap);
		if (!b) {
			p->oom = true;
			return;
		}
		p->b = b;
		p->cap = cap;
	}
	memcpy(p->b + p->n, d, len);
	p->n += len;
}

static void pb_varint(struct pb *p, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
		v >>= 7;
	} while (v);
	pb_bytes(p, b, n);
}

static void pb_uint(struct pb *p, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(p, (uint64_t)field << 3);
	pb_varint(p, v);
}

static void pb_sub(struct pb *p, unsigned int field, const struct pb *sub)
{
	pb_varint(p, (uint64_t)field << 3 | 2);
	pb_varint(p, sub->n);
	pb_bytes(p, sub->b, sub->n);
}

static void pb_packed(struct pb *p, unsigned int field, const uint64_t *v, size_t n)
{
	struct pb sub = {};
	size_t i;

	for (i = 0; i < n; i++)
		pb_varint(&sub, v[i]);
	pb_sub(p, field, &sub);
	p->oom |= sub.oom;
	free(sub.b);
}

static void pb_value_type(struct pb *p, unsigned int field, uint64_t type, uint64_t unit)
{
	struct pb sub = {};

	pb_uint(&sub, 1, type);
	pb_uint(&sub, 2, unit);
	pb_sub(p, field, &sub);
	free(sub.b);
}

int convert__write_pprof(struct convert *c, const char *path)
{
	uint64_t samples = str_index(c, "samples"), count = str_index(c, "count");
	uint64_t cpu = str_index(c, "cpu"), nanos = str_index(c, "nanoseconds");
	uint64_t wall = str_index(c, "wall");
	struct pb p = {}, sub = {}, sub2 = {};
	const char *s;
	size_t i, j;
	gzFile gz;
	int ret = 0;

	pb_value_type(&p, 1, samples, count);
	pb_value_type(&p, 1, cpu, nanos);
	pb_value_type(&p, 1, wall, nanos);
	for (i = 0; i < c->samples.n; i++) {
		struct sample *sm = &((struct sample *)c->samples.items)[i];
		uint64_t vals[3] = { sm->values[0], sm->values[1], sm->values[2] };

		sub.n = 0;
		pb_packed(&sub, 1, sm->locs, sm->nlocs);
		pb_packed(&sub, 2, vals, 3);
		for (j = 0; j < sm->nlabels; j++) {
			sub2.n = 0;
			pb_uint(&sub2, 1, sm->labels[j].key);
			pb_uint(&sub2, 2, sm->labels[j].str);
			if (!sm->labels[j].str)
				pb_uint(&sub2, 3, sm->labels[j].num);
			pb_sub(&sub, 3, &sub2);
		}
		pb_sub(&p, 2, &sub);
	}
	for (i = 0; i < c->maps.n; i++) {
		struct mapping *m = &((struct mapping *)c->maps.items)[i];

		sub.n = 0;
		pb_uint(&sub, 1, i + 1);
		pb_uint(&sub, 2, m->start);
		pb_uint(&sub, 3, m->limit);
		pb_uint(&sub, 4, m->offset);
		pb_uint(&sub, 5, m->file);
		pb_uint(&sub, 6, m->build_id);
		/* names, files, lines and inlined frames are all in the locations */
		for (j = 7; j <= 10; j++)
			pb_uint(&sub, j, 1);
		pb_sub(&p, 3, &sub);
	}
	for (i = 0; i < c->locs.n; i++) {
		struct location *l = ((struct location **)c->locs.items)[i];

		sub.n = 0;
		pb_uint(&sub, 1, i + 1);
		pb_uint(&sub, 2, l->mapping_id);
		pb_uint(&sub, 3, l->addr);
		/* innermost first: the last line is the function the others were inlined into */
		for (j = 0; j < l->nlines; j++) {
			sub2.n = 0;
			pb_uint(&sub2, 1, l->lines[j].function_id);
			pb_uint(&sub2, 2, l->lines[j].line);
			pb_sub(&sub, 4, &sub2);
		}
		pb_sub(&p, 4, &sub);
	}
	for (i = 0; i < c->funcs.n; i++) {
		struct function *f = &((struct function *)c->funcs.items)[i];

		sub.n = 0;
		pb_uint(&sub, 1, i + 1);
		pb_uint(&sub, 2, f->name);
		pb_uint(&sub, 3, f->name);
		pb_uint(&sub, 4, f->file);
		pb_sub(&p, 5, &sub);
	}
	for (i = 0; i < c->strtab.n; i++) {
		s = ((char **)c->strtab.items)[i];
		pb_varint(&p, 6 << 3 | 2);
		pb_varint(&p, strlen(s));
		pb_bytes(&p, s, strlen(s));
	}
	pb_uint(&p, 9, c->first_ns);
	pb_uint(&p, 10, c->last_ns > c->first_ns ? c->last_ns - c->first_ns : 0);
	pb_value_type(&p, 11, cpu, nanos);
	pb_uint(&p, 12, c->period);
	/* go tool pprof shows CPU unless told -sample_index=wall */
	pb_uint(&p, 14, cpu);
	if (p.oom || sub.oom || sub2.oom) {
		ret = -ENOMEM;
		goto out;
	}
	gz = gzopen(path, "wb");
	if (!gz) {
		ret = errno ? -errno : -EIO;
		goto out;
	}
	/* zlib leaves the errno of a write(2) that failed; gzclose writes the rest */
	errno = 0;
	if (p.n && gzwrite(gz, p.b, p.n) != (int)p.n)
		ret = errno ? -errno : -EIO;
	errno = 0;
	if (gzclose(gz) != Z_OK && !ret)
		ret = errno ? -errno : -EIO;
out:
	free(p.b);
	free(sub.b);
	free(sub2.b);
	return ret;
}

struct folded_out {
	char **lines;
	uint64_t *counts;
	size_t n;
};

static void collect_folded(const void *key, size_t len, void *value, void *arg)
{
	struct folded_out *o = arg;

	o->lines[o->n] = strndup(key, len);
	o->counts[o->n++] = *(uint64_t *)value;
}

static int by_string(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int convert__write_folded(struct convert *c, FILE *out, bool trace_root, bool wall)
{
	struct hashmap *m = c->folded[trace_root | (wall ? 2 : 0)];
	struct folded_out o = {};
	size_t i, n = hashmap__size(m);
	char **sorted;
	uint64_t *count;
	int ret = 0;

	o.lines = calloc(n + 1, sizeof(*o.lines));
	o.counts = calloc(n + 1, sizeof(*o.counts));
	sorted = calloc(n + 1, sizeof(*sorted));
	if (!o.lines || !o.counts || !sorted) {
		free(o.lines);
		free(o.counts);
		free(sorted);
		return -ENOMEM;
	}
	hashmap__foreach(m, collect_folded, &o);
	memcpy(sorted, o.lines, o.n * sizeof(*sorted));
	qsort(sorted, o.n, sizeof(*sorted), by_string);
	errno = 0;
	for (i = 0; i < o.n && !ret; i++) {
		count = hashmap__get(m, sorted[i], strlen(sorted[i]));
		if (sorted[i] && count && fprintf(out, "%s %" PRIu64 "\n", sorted[i], *count) < 0)
			ret = errno ? -errno : -EIO;
	}
	if (!ret && (fflush(out) != 0 || ferror(out)))
		ret = errno ? -errno : -EIO;
	for (i = 0; i < o.n; i++)
		free(o.lines[i]);
	free(o.lines);
	free(o.counts);
	free(sorted);
	return ret;
}

static const char usage[] =
	"Usage: ctxprof-go convert (--pprof FILE | -f [--folded-trace-root] [--folded-wall]) [INPUT]\n"
	"\n"
	"Reads ctxprof-go's JSON lines from INPUT (default: stdin), for example a\n"
	"jq selection of one trace, and writes them in another format. The result\n"
	"is the same as the live options give for the same records. A line that is\n"
	"not a ctxprof-go record stops it, with the line's number: nothing is\n"
	"written, and no record is left out silently.\n"
	"\n"
	"      --pprof FILE           gzip-compressed profile.proto, for go tool pprof\n"
	"  -f, --folded               comm;root;...;leaf COUNT lines (flame graphs)\n"
	"      --folded-trace-root    the trace ID as the root frame\n"
	"      --folded-wall          wall records only (--wall), the state or wait reason\n"
	"                             as the leaf, [chan receive]; without it, the others\n"
	"\n"
	"pprof sample types: samples (count), cpu and wall (nanoseconds); wall records\n"
	"carry state and wait_reason labels. Pick one with go tool pprof -sample_index.\n"
	"\n"
	"Examples:\n"
	"  jq -c 'select(.trace_id==\"4bf92f3577b34da6a3ce929d0e0e4736\")' cpu.jsonl |\n"
	"      ctxprof-go convert --pprof trace.pb.gz\n"
	"  go tool pprof -top trace.pb.gz\n"
	"  go tool pprof -sample_index=wall -tagfocus=wait_reason='chan receive' -top trace.pb.gz\n"
	"  ctxprof-go convert -f cpu.jsonl | flamegraph.pl > cpu.svg\n";

int convert__main(int argc, char **argv)
{
	enum { OPT_PPROF = 256, OPT_TRACE_ROOT, OPT_WALL };
	static const struct option opts[] = {
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "folded", no_argument, NULL, 'f' },
		{ "folded-trace-root", no_argument, NULL, OPT_TRACE_ROOT },
		{ "folded-wall", no_argument, NULL, OPT_WALL },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *pprof = NULL, *input = "-";
	bool folded = false, trace_root = false, wall = false;
	size_t cap = 0, lineno = 0, bad = 0, good = 0;
	char *line = NULL, err[256];
	struct convert *c = NULL;
	json_error_t jerr;
	FILE *in = stdin;
	ssize_t len;
	json_t *rec;
	int opt, ret = 1;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_PPROF:
			pprof = optarg;
			break;
		case 'f':
			folded = true;
			break;
		case OPT_TRACE_ROOT:
			folded = trace_root = true;
			break;
		case OPT_WALL:
			folded = wall = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc)
		input = argv[optind++];
	if (optind < argc || (!pprof && !folded) || (pprof && folded)) {
		fputs(usage, stderr);
		return 2;
	}
	if (strcmp(input, "-") && !(in = fopen(input, "r"))) {
		fprintf(stderr, "failed to open %s: %s\n", input, strerror(errno));
		return 1;
	}
	c = convert__new();
	if (!c) {
		fprintf(stderr, "out of memory\n");
		goto out;
	}
	while ((len = getline(&line, &cap, in)) > 0) {
		lineno++;
		if (len == 1 && line[0] == '\n')
			continue;
		/* labels may hold NUL, written as \u0000 */
		rec = json_loadb(line, len, JSON_ALLOW_NUL, &jerr);
		if (!rec) {
			snprintf(err, sizeof(err), "%s%s", line[len - 1] != '\n' ? "truncated last line: " : "",
				 jerr.text);
		} else if (convert__add(c, rec, err, sizeof(err)) == 0) {
			good++;
			json_decref(rec);
			continue;
		}
		json_decref(rec);
		if (++bad <= MAX_BAD_LINES)
			fprintf(stderr, "%s:%zu: %s\n", strcmp(input, "-") ? input : "<stdin>", lineno, err);
	}
	if (ferror(in)) {
		fprintf(stderr, "failed to read %s: %s\n", input, strerror(errno));
		goto out;
	}
	if (bad) {
		fprintf(stderr, "%zu of %zu lines are not ctxprof-go records; nothing written\n", bad,
			lineno);
		goto out;
	}
	if (pprof) {
		ret = convert__write_pprof(c, pprof);
		if (ret) {
			fprintf(stderr, "failed to write %s: %s\n", pprof, strerror(-ret));
			ret = 1;
			goto out;
		}
		fprintf(stderr, "ctxprof-go: %zu records in %s\n", good, pprof);
	} else if ((ret = convert__write_folded(c, stdout, trace_root, wall))) {
		fprintf(stderr, "failed to write folded stacks to stdout: %s\n", strerror(-ret));
		ret = 1;
		goto out;
	}
	ret = 0;
	if (fclose(stdout) != 0) {
		fprintf(stderr, "failed to write to stdout: %s\n", strerror(errno));
		ret = 1;
	}
out:
	free(line);
	convert__free(c);
	if (in && in != stdin)
		fclose(in);
	return ret;
}
