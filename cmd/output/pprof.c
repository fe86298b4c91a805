// SPDX-License-Identifier: GPL-2.0
/* pprof.c: records as a gzip-compressed profile.proto, the format go tool pprof reads. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cmd/util/hashmap.h"
#include "cmd/util/outfile.h"
#include "cmd/util/vec.h"
#include "pprof.h"
#include "profdict.h"

struct label {
	uint64_t key, str; /* str 0: numeric */
	int64_t num;
};

struct sample {
	size_t nlocs, nlabels;
	int64_t values[5]; /* samples, cpu ns, wall ns; alloc_objects, alloc_space (--alloc) */
	uint64_t *locs;
	struct label *labels;
};

struct pprof {
	struct profdict *dict;
	struct vec samples; /* struct sample */
	int64_t first_ns, last_ns, period;
	bool alloc, cpu; /* allocation records came; records of any other kind came */
	struct strbuf valid; /* a string made valid UTF-8 */
};

struct pprof *pprof__new(void)
{
	struct pprof *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->samples.size = sizeof(struct sample);
	c->dict = profdict__new();
	if (!c->dict) {
		pprof__free(c);
		return NULL;
	}
	return c;
}

void pprof__free(struct pprof *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->samples.n; i++) {
		free(((struct sample *)c->samples.items)[i].locs);
		free(((struct sample *)c->samples.items)[i].labels);
	}
	free(c->samples.items);
	profdict__free(c->dict);
	strbuf__free(&c->valid);
	free(c);
}

static uint64_t str_index(struct pprof *c, const char *s)
{
	return profdict__string(c->dict, s);
}

static void add_label(struct pprof *c, struct sample *s, const char *key, const char *value)
{
	s->labels[s->nlabels++] = (struct label){ str_index(c, key), str_index(c, value) };
}

/* A goroutine label named like one of ours is represented by ours. */
static bool ours(const char *k, bool wall)
{
	return !strcmp(k, "trace_id") || !strcmp(k, "span_id") || !strcmp(k, "trace_source") ||
	       !strcmp(k, "inherited_trace_id") ||
	       !strcmp(k, "pid") || !strcmp(k, "goid") || !strcmp(k, "context") ||
	       (wall && (!strcmp(k, "state") || !strcmp(k, "wait_reason")));
}

int pprof__add(struct pprof *c, const struct rec *r)
{
	uint64_t per_sample = 0, per_wall = 0, key;
	bool wall = r->origin == REC_WALL, event = r->origin == REC_CUSTOM || r->origin == REC_UPROBE;
	const struct rec_stack *st;
	struct sample *s;
	char pseudo[48];
	size_t i, j, v;

	/* a request's span is no sample: its time is on its trace's samples already */
	if (r->origin == REC_REQUEST)
		return 0;
	if (!c->first_ns || r->start_ns < c->first_ns)
		c->first_ns = r->start_ns;
	if (r->end_ns > c->last_ns)
		c->last_ns = r->end_ns;
	c->alloc |= r->origin == REC_ALLOC;
	c->cpu |= r->origin != REC_ALLOC;
	if (r->samples > 0 && r->cpu_ns > 0) {
		per_sample = r->cpu_ns / r->samples;
		if (!c->period)
			c->period = per_sample;
	}
	if (wall && r->samples > 0 && r->wall_ns > 0)
		per_wall = r->wall_ns / r->samples;
	for (i = 0; i < r->nstacks; i++) {
		st = &r->stacks[i];
		s = vec__push(&c->samples);
		if (!s)
			return -ENOMEM;
		if (r->origin == REC_ALLOC) {
			/* Go's own heap profile's types: -sample_index=alloc_space works as on it */
			s->values[3] = st->alloc_objects;
			s->values[4] = st->alloc_bytes;
		} else {
			s->values[0] = st->samples;
			s->values[1] = st->samples * per_sample;
			s->values[2] = st->samples * per_wall;
		}
		s->locs = calloc(st->nframes + 1, sizeof(*s->locs));
		s->labels = calloc(r->nlabels + 8, sizeof(*s->labels));
		if (!s->locs || !s->labels)
			return -ENOMEM;
		for (j = 0; j < st->nframes;)
			s->locs[s->nlocs++] = profdict__location(c->dict, r, st, &j);
		/* a running goroutine's wall samples have no stack (its CPU samples do) */
		if (wall && !st->nframes) {
			snprintf(pseudo, sizeof(pseudo), "[%s]", r->wait_reason ?: r->state ?: "?");
			s->locs[s->nlocs++] = profdict__pseudo(c->dict, pseudo);
		}
		if (r->trace_id)
			add_label(c, s, "trace_id", r->trace_id);
		/* time a request's goroutines spent after it ended: not the trace's, still its ID */
		if (r->inherited_trace_id)
			add_label(c, s, "inherited_trace_id", r->inherited_trace_id);
		if (r->span_id)
			add_label(c, s, "span_id", r->span_id);
		if (r->trace_source && (r->trace_id || r->inherited_trace_id))
			add_label(c, s, "trace_source", r->trace_source);
		if (wall)
			add_label(c, s, "state", r->state);
		if (wall && r->wait_reason)
			add_label(c, s, "wait_reason", r->wait_reason);
		/* every goroutine label; the IDs above stand for their own keys */
		for (j = 0; j < r->nlabels; j++) {
			if ((v = rec__label_value(r, j)) == SIZE_MAX)
				continue;
			key = profdict__valid(c->dict, r->labels[j].key, r->labels[j].key_len);
			if (ours(rec__valid(&c->valid, r->labels[j].key, r->labels[j].key_len), wall))
				continue;
			s->labels[s->nlabels++] = (struct label){
				key, profdict__valid(c->dict, r->labels[v].value, r->labels[v].value_len)
			};
		}
		s->labels[s->nlabels++] = (struct label){ str_index(c, "pid"), 0, (int64_t)r->pid };
		if (event && r->has_goid)
			s->labels[s->nlabels++] = (struct label){ str_index(c, "goid"), 0, (int64_t)r->goid };
		if (event && r->context <= INT64_MAX)
			s->labels[s->nlabels++] =
				(struct label){ str_index(c, "context"), 0, (int64_t)r->context };
	}
	return 0;
}

/* profile.proto, written by hand into strbufs: varints, tags and length-delimited fields. */
static void pb_varint(struct strbuf *p, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
		v >>= 7;
	} while (v);
	strbuf__put(p, b, n);
}

static void pb_uint(struct strbuf *p, unsigned int field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(p, (uint64_t)field << 3);
	pb_varint(p, v);
}

static void pb_sub(struct strbuf *p, unsigned int field, const struct strbuf *sub)
{
	pb_varint(p, (uint64_t)field << 3 | 2);
	pb_varint(p, sub->n);
	strbuf__put(p, sub->p, sub->n);
}

static void pb_packed(struct strbuf *p, unsigned int field, const uint64_t *v, size_t n)
{
	struct strbuf sub = {};
	size_t i;

	for (i = 0; i < n; i++)
		pb_varint(&sub, v[i]);
	pb_sub(p, field, &sub);
	p->oom |= sub.oom;
	free(sub.p);
}

static void pb_value_type(struct strbuf *p, unsigned int field, uint64_t type, uint64_t unit)
{
	struct strbuf sub = {};

	pb_uint(&sub, 1, type);
	pb_uint(&sub, 2, unit);
	pb_sub(p, field, &sub);
	free(sub.p);
}

/*
 * The sample types, then every sample: samples, CPU and wall time, and
 * with --alloc's records Go's own heap profile types after them. Into P,
 * with SUB and SUB2 as scratch.
 */
static void put_samples(struct pprof *c, struct strbuf *p, struct strbuf *sub, struct strbuf *sub2)
{
	uint64_t count = str_index(c, "count"), nanos = str_index(c, "nanoseconds");
	size_t i, j, nvals = c->alloc ? 5 : 3;

	pb_value_type(p, 1, str_index(c, "samples"), count);
	pb_value_type(p, 1, str_index(c, "cpu"), nanos);
	pb_value_type(p, 1, str_index(c, "wall"), nanos);
	if (c->alloc) {
		pb_value_type(p, 1, str_index(c, "alloc_objects"), count);
		pb_value_type(p, 1, str_index(c, "alloc_space"), str_index(c, "bytes"));
	}
	for (i = 0; i < c->samples.n; i++) {
		struct sample *sm = &((struct sample *)c->samples.items)[i];
		uint64_t vals[5] = { sm->values[0], sm->values[1], sm->values[2], sm->values[3],
				     sm->values[4] };

		sub->n = 0;
		pb_packed(sub, 1, sm->locs, sm->nlocs);
		pb_packed(sub, 2, vals, nvals);
		for (j = 0; j < sm->nlabels; j++) {
			sub2->n = 0;
			pb_uint(sub2, 1, sm->labels[j].key);
			pb_uint(sub2, 2, sm->labels[j].str);
			if (!sm->labels[j].str)
				pb_uint(sub2, 3, sm->labels[j].num);
			pb_sub(sub, 3, sub2);
		}
		pb_sub(p, 2, sub);
	}
}

int pprof__write(struct pprof *c, const char *path)
{
	uint64_t cpu = str_index(c, "cpu"), nanos = str_index(c, "nanoseconds");
	/* before the string table is written: an allocation-only profile's period type */
	uint64_t space = c->alloc ? str_index(c, "space") : 0;
	uint64_t bytes = c->alloc ? str_index(c, "bytes") : 0;
	uint64_t alloc_space = c->alloc ? str_index(c, "alloc_space") : 0;
	/* what the wall sample type is: `go tool pprof -comments` shows it */
	uint64_t note = str_index(c, "wall: goroutine time (--wall), each goroutine of a trace counted "
				    "for the time it was seen in each state, added; not a trace's "
				    "elapsed time, which its request records (origin request) give");
	struct strbuf p = {}, sub = {}, sub2 = {};
	const struct profdict_location *const *locs;
	const struct profdict_function *funcs;
	const struct profdict_mapping *maps;
	const char *const *strs;
	size_t i, j, n;
	gzFile gz;
	int fd;
	int ret = 0;

	put_samples(c, &p, &sub, &sub2);
	maps = profdict__mappings(c->dict, &n);
	for (i = 0; i < n; i++) {
		sub.n = 0;
		pb_uint(&sub, 1, i + 1);
		pb_uint(&sub, 2, maps[i].start);
		pb_uint(&sub, 3, maps[i].limit);
		pb_uint(&sub, 4, maps[i].offset);
		pb_uint(&sub, 5, maps[i].file);
		pb_uint(&sub, 6, maps[i].build_id);
		/* names, files, lines and inlined frames are all in the locations */
		for (j = 7; j <= 10; j++)
			pb_uint(&sub, j, 1);
		pb_sub(&p, 3, &sub);
	}
	locs = profdict__locations(c->dict, &n);
	for (i = 0; i < n; i++) {
		sub.n = 0;
		pb_uint(&sub, 1, i + 1);
		pb_uint(&sub, 2, locs[i]->mapping);
		pb_uint(&sub, 3, locs[i]->addr);
		/* innermost first: the last line is the function the others were inlined into */
		for (j = 0; j < locs[i]->nlines; j++) {
			sub2.n = 0;
			pb_uint(&sub2, 1, locs[i]->lines[j].function);
			pb_uint(&sub2, 2, locs[i]->lines[j].line);
			pb_sub(&sub, 4, &sub2);
		}
		pb_sub(&p, 4, &sub);
	}
	funcs = profdict__functions(c->dict, &n);
	for (i = 0; i < n; i++) {
		sub.n = 0;
		pb_uint(&sub, 1, i + 1);
		pb_uint(&sub, 2, funcs[i].name);
		pb_uint(&sub, 3, funcs[i].name);
		pb_uint(&sub, 4, funcs[i].file);
		pb_sub(&p, 5, &sub);
	}
	strs = profdict__strings(c->dict, &n);
	for (i = 0; i < n; i++) {
		pb_varint(&p, 6 << 3 | 2);
		pb_varint(&p, strlen(strs[i]));
		strbuf__put(&p, strs[i], strlen(strs[i]));
	}
	pb_uint(&p, 9, c->first_ns);
	pb_uint(&p, 10, c->last_ns > c->first_ns ? c->last_ns - c->first_ns : 0);
	if (c->cpu || !c->alloc) {
		pb_value_type(&p, 11, cpu, nanos);
		pb_uint(&p, 12, c->period);
	} else {
		pb_value_type(&p, 11, space, bytes);
	}
	pb_uint(&p, 13, note);
	/* go tool pprof shows CPU unless told -sample_index=wall or alloc_space */
	pb_uint(&p, 14, c->cpu || !c->alloc ? cpu : alloc_space);
	if (p.oom || sub.oom || sub2.oom || profdict__oom(c->dict)) {
		ret = -ENOMEM;
		goto out;
	}
	/* created 0600, as the records it comes from */
	fd = outfile__open(path, false);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	gz = gzdopen(fd, "wb");
	if (!gz) {
		ret = errno ? -errno : -ENOMEM;
		close(fd);
		goto out;
	}
	/* zlib leaves the errno of a write(2) that failed; gzclose writes the rest */
	errno = 0;
	if (p.n && gzwrite(gz, p.p, p.n) != (int)p.n)
		ret = errno ? -errno : -EIO;
	errno = 0;
	if (gzclose(gz) != Z_OK && !ret)
		ret = errno ? -errno : -EIO;
out:
	free(p.p);
	free(sub.p);
	free(sub2.p);
	return ret;
}

static void *pprof_new(const struct writer_dest *d)
{
	return pprof__new();
}

static int pprof_add(void *w, const struct rec *r)
{
	return pprof__add(w, r);
}

static int pprof_write(void *w, const struct writer_dest *d)
{
	return pprof__write(w, d->path);
}

static void pprof_free(void *w)
{
	pprof__free(w);
}

const struct writer_ops pprof_writer = {
	.what = "the pprof profile",
	.new = pprof_new,
	.add = pprof_add,
	.write = pprof_write,
	.free = pprof_free,
};
