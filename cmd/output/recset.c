// SPDX-License-Identifier: GPL-2.0
/* recset.c: a whole run's records, kept compact, for the report page and speedscope. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "cmd/util/vec.h"
#include "recset.h"

/* Strings kept once each. */
struct strtab {
	struct hashmap *ids; /* bytes -> index + 1 */
	struct vec strs; /* struct recset_str */
};

struct recset {
	struct strtab strs, labelsets;
	struct hashmap *frame_ids; /* struct recset_frame -> index + 1 */
	struct vec frames; /* struct recset_frame */
	struct vec recs; /* struct recset_rec */
	struct hashmap *trace_ids; /* trace_id string index -> trace index + 1 */
	struct vec traces; /* struct recset_trace */
	struct vec requests; /* struct recset_request */
	uint64_t events;
	int64_t cpu_period, wall_period;
	struct strbuf tmp, valid;
	char **inputs; /* names of the inputs so far; the last one is the current */
	size_t ninputs;
	uint64_t duplicates;
};

struct recset *recset__new(void)
{
	struct recset *rs = calloc(1, sizeof(*rs));

	if (!rs)
		return NULL;
	rs->strs.strs.size = sizeof(struct recset_str);
	rs->labelsets.strs.size = sizeof(struct recset_str);
	rs->frames.size = sizeof(struct recset_frame);
	rs->recs.size = sizeof(struct recset_rec);
	rs->traces.size = sizeof(struct recset_trace);
	rs->requests.size = sizeof(struct recset_request);
	rs->strs.ids = hashmap__new();
	rs->labelsets.ids = hashmap__new();
	rs->frame_ids = hashmap__new();
	rs->trace_ids = hashmap__new();
	if (!rs->strs.ids || !rs->labelsets.ids || !rs->frame_ids || !rs->trace_ids) {
		recset__free(rs);
		return NULL;
	}
	return rs;
}

static void strtab__free(struct strtab *t)
{
	struct recset_str *s = t->strs.items;
	size_t i;

	for (i = 0; i < t->strs.n; i++)
		free((char *)s[i].s);
	free(t->strs.items);
	hashmap__free(t->ids, NULL);
}

void recset__free(struct recset *rs)
{
	struct recset_rec *r;
	size_t i;

	if (!rs)
		return;
	strtab__free(&rs->strs);
	strtab__free(&rs->labelsets);
	r = rs->recs.items;
	/* a record's stacks, frames and times are one block */
	for (i = 0; i < rs->recs.n; i++)
		free((void *)r[i].stacks);
	free(rs->frames.items);
	free(rs->recs.items);
	free(rs->traces.items);
	free(rs->requests.items);
	for (i = 0; i < rs->ninputs; i++)
		free(rs->inputs[i]);
	free(rs->inputs);
	hashmap__free(rs->frame_ids, NULL);
	hashmap__free(rs->trace_ids, NULL);
	strbuf__free(&rs->tmp);
	strbuf__free(&rs->valid);
	free(rs);
}

/* The index of S[0..LEN) in T, added when new; -1 when out of memory. */
static int32_t strtab__intern(struct strtab *t, const char *s, size_t len)
{
	void *id = hashmap__get(t->ids, s, len);
	struct recset_str *e;
	char *copy;

	if (id)
		return (int32_t)((uintptr_t)id - 1);
	if (t->strs.n >= INT32_MAX || !(copy = malloc(len + 1)))
		return -1;
	memcpy(copy, s, len);
	copy[len] = '\0';
	e = vec__push(&t->strs);
	if (!e || hashmap__add(t->ids, s, len, (void *)(uintptr_t)t->strs.n)) {
		if (e)
			t->strs.n--;
		free(copy);
		return -1;
	}
	*e = (struct recset_str){ copy, len };
	return (int32_t)(t->strs.n - 1);
}

/* S[0..LEN), valid UTF-8, as a string's index; -1 when out of memory. */
static int32_t intern(struct recset *rs, const char *s, size_t len)
{
	return strtab__intern(&rs->strs, s, len);
}

/* A C string, or -1 for NULL; OOM set when out of memory. */
static int32_t intern_cstr(struct recset *rs, const char *s, bool *oom)
{
	int32_t id;

	if (!s)
		return -1;
	s = rec__valid(&rs->valid, (const uint8_t *)s, strlen(s));
	id = intern(rs, s, strlen(s));
	if (id < 0 || rs->valid.oom)
		*oom = true;
	return id;
}

static int32_t intern_bytes(struct recset *rs, const uint8_t *s, size_t len, bool *oom)
{
	const char *v = rec__valid(&rs->valid, s, len);
	int32_t id = intern(rs, v, strlen(v));

	if (id < 0 || rs->valid.oom)
		*oom = true;
	return id;
}

/* The frame's index, added when new; -1 when out of memory. */
static int64_t frame_id(struct recset *rs, const struct rec_frame *f)
{
	struct recset_frame key = { .file = -1 }, *e;
	bool oom = false;
	char pc[32];
	void *id;

	if (!f->func)
		snprintf(pc, sizeof(pc), "0x%" PRIx64, f->pc);
	key.func = intern_cstr(rs, f->func ?: pc, &oom);
	if (f->file) {
		key.file = intern_cstr(rs, f->file, &oom);
		key.line = f->line;
	}
	if (oom)
		return -1;
	id = hashmap__get(rs->frame_ids, &key, sizeof(key));
	if (id)
		return (int64_t)(uintptr_t)id - 1;
	e = vec__push(&rs->frames);
	if (!e || hashmap__add(rs->frame_ids, &key, sizeof(key), (void *)(uintptr_t)rs->frames.n)) {
		if (e)
			rs->frames.n--;
		return -1;
	}
	*e = key;
	return (int64_t)rs->frames.n - 1;
}

/* The trace that R's ID (interned as ID) belongs to; NULL when out of memory. */
static struct recset_trace *trace_of(struct recset *rs, int32_t id, uint32_t *idx)
{
	void *v = hashmap__get(rs->trace_ids, &id, sizeof(id));
	struct recset_trace *t;

	if (v) {
		*idx = (uint32_t)((uintptr_t)v - 1);
		return &((struct recset_trace *)rs->traces.items)[*idx];
	}
	t = vec__push(&rs->traces);
	if (!t || hashmap__add(rs->trace_ids, &id, sizeof(id), (void *)(uintptr_t)rs->traces.n)) {
		if (t)
			rs->traces.n--;
		return NULL;
	}
	*t = (struct recset_trace){ .trace_id = id, .first_ns = INT64_MAX, .last_ns = INT64_MIN };
	*idx = rs->traces.n - 1;
	return t;
}

/* R's stacks in one block: the stacks, then their frames, then their times. */
static struct recset_stack *copy_stacks(struct recset *rs, const struct rec *r, uint64_t *nframes,
					uint64_t *ntimes)
{
	size_t i, j, nf = 0, nt = 0;
	struct recset_stack *st;
	struct rec_time *times;
	uint32_t *frames;
	int64_t id;

	for (i = 0; i < r->nstacks; i++) {
		nf += r->stacks[i].nframes;
		nt += r->stacks[i].ntimes;
	}
	st = malloc(r->nstacks * sizeof(*st) + nt * sizeof(*times) + nf * sizeof(*frames) + 1);
	if (!st)
		return NULL;
	times = (struct rec_time *)(st + r->nstacks);
	frames = (uint32_t *)(times + nt);
	for (i = 0; i < r->nstacks; i++) {
		const struct rec_stack *s = &r->stacks[i];

		st[i] = (struct recset_stack){ s->samples, s->nframes, s->ntimes, frames, times,
					       s->alloc_objects, s->alloc_bytes };
		for (j = 0; j < s->nframes; j++) {
			if ((id = frame_id(rs, &s->frames[j])) < 0) {
				free(st);
				return NULL;
			}
			*frames++ = (uint32_t)id;
		}
		if (s->ntimes)
			memcpy(times, s->times, s->ntimes * sizeof(*times));
		times += s->ntimes;
	}
	*nframes = nf;
	*ntimes = nt;
	return st;
}

/* A request record's requests, each a span of its trace. */
static int add_requests(struct recset *rs, const struct rec *r)
{
	int32_t id, service;
	struct recset_request *q;
	struct recset_trace *t;
	bool oom = false;
	uint32_t trace;
	size_t i, j;

	id = intern_cstr(rs, r->trace_id, &oom);
	service = r->service_name ? intern_cstr(rs, r->service_name, &oom) :
				    intern_bytes(rs, r->comm, r->comm_len, &oom);
	if (oom || id < 0 || !(t = trace_of(rs, id, &trace)))
		return -ENOMEM;
	for (i = 0; i < r->nstacks; i++) {
		for (j = 0; j < r->stacks[i].ntimes; j++) {
			const struct rec_time *tm = &r->stacks[i].times[j];

			if (!(q = vec__push(&rs->requests)))
				return -ENOMEM;
			*q = (struct recset_request){ trace, rs->ninputs ? rs->ninputs - 1 : 0, r->pid,
						      service, tm->goid, tm->ns, (int64_t)tm->weight };
		}
	}
	if (r->start_ns < t->first_ns)
		t->first_ns = r->start_ns;
	if (r->end_ns > t->last_ns)
		t->last_ns = r->end_ns;
	return 0;
}

int recset__add(struct recset *rs, const struct rec *r)
{
	struct recset_rec *k;
	struct recset_trace *t;
	uint64_t nf, nt;
	bool oom = false;

	if (r->origin == REC_REQUEST)
		return add_requests(rs, r);
	if (r->origin != REC_SAMPLING && r->origin != REC_WALL && r->origin != REC_ALLOC) {
		rs->events++;
		return 0;
	}
	k = vec__push(&rs->recs);
	if (!k)
		return -ENOMEM;
	*k = (struct recset_rec){
		.trace_id = intern_cstr(rs, r->trace_id, &oom),
		.trace_source = intern_cstr(rs, r->trace_id || r->inherited_trace_id ? r->trace_source :
										   NULL, &oom),
		.inherited = intern_cstr(rs, r->trace_id ? NULL : r->inherited_trace_id, &oom),
		.role = r->role,
		.input = rs->ninputs ? rs->ninputs - 1 : 0,
		.span_id = intern_cstr(rs, r->span_id, &oom),
		.comm = intern_bytes(rs, r->comm, r->comm_len, &oom),
		.service = intern_cstr(rs, r->service_name, &oom),
		.container_id = intern_cstr(rs, r->container_id, &oom),
		.pod_uid = intern_cstr(rs, r->pod_uid, &oom),
		.state = intern_cstr(rs, r->origin == REC_WALL ? r->state : NULL, &oom),
		.wait_reason = intern_cstr(rs, r->origin == REC_WALL ? r->wait_reason : NULL, &oom),
		.pid = r->pid,
		.origin = r->origin,
		.samples = r->samples,
		.cpu_ns = r->origin == REC_SAMPLING ? r->cpu_ns : -1,
		.wall_ns = r->origin == REC_WALL ? r->wall_ns : -1,
		.alloc_objects = r->origin == REC_ALLOC ? r->alloc_objects : -1,
		.alloc_bytes = r->origin == REC_ALLOC ? r->alloc_bytes : -1,
		.start_ns = r->start_ns,
		.end_ns = r->end_ns,
		.nstacks = r->nstacks,
	};
	rs->tmp.n = 0;
	if (rec__json_labels(r, &rs->tmp))
		oom = true;
	else
		k->labels = strtab__intern(&rs->labelsets, rs->tmp.p, rs->tmp.n);
	if (oom || k->labels < 0 ||
	    !(t = trace_of(rs, k->trace_id >= 0 ? k->trace_id : k->inherited >= 0 ? RECSET_INHERITED :
										  RECSET_NO_TRACE,
			   &k->trace)) ||
	    !(k->stacks = copy_stacks(rs, r, &nf, &nt))) {
		rs->recs.n--;
		return -ENOMEM;
	}
	if (r->origin == REC_SAMPLING) {
		t->cpu_ns += r->cpu_ns;
		if (!rs->cpu_period && r->samples)
			rs->cpu_period = r->cpu_ns / (int64_t)r->samples;
	} else if (r->origin == REC_ALLOC) {
		t->alloc_objects += r->alloc_objects;
		t->alloc_bytes += r->alloc_bytes;
	} else {
		t->wall_ns += r->wall_ns;
		if (!rs->wall_period && r->samples)
			rs->wall_period = r->wall_ns / (int64_t)r->samples;
	}
	if (r->start_ns < t->first_ns)
		t->first_ns = r->start_ns;
	if (r->end_ns > t->last_ns)
		t->last_ns = r->end_ns;
	t->frames += nf;
	t->times += nt;
	return 0;
}

const struct recset_str *recset__strings(const struct recset *rs, size_t *n)
{
	*n = rs->strs.strs.n;
	return rs->strs.strs.items;
}

const struct recset_str *recset__labelsets(const struct recset *rs, size_t *n)
{
	*n = rs->labelsets.strs.n;
	return rs->labelsets.strs.items;
}

const struct recset_frame *recset__frames(const struct recset *rs, size_t *n)
{
	*n = rs->frames.n;
	return rs->frames.items;
}

const struct recset_rec *recset__records(const struct recset *rs, size_t *n)
{
	*n = rs->recs.n;
	return rs->recs.items;
}

const struct recset_trace *recset__traces(const struct recset *rs, size_t *n)
{
	*n = rs->traces.n;
	return rs->traces.items;
}

int recset__input(struct recset *rs, const char *name)
{
	char **grown = realloc(rs->inputs, (rs->ninputs + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	rs->inputs = grown;
	if (!(rs->inputs[rs->ninputs] = strdup(name)))
		return -ENOMEM;
	return rs->ninputs++;
}

const char *const *recset__inputs(const struct recset *rs, size_t *n)
{
	*n = rs->ninputs;
	return (const char *const *)rs->inputs;
}

void recset__duplicates(struct recset *rs, uint64_t n)
{
	rs->duplicates += n;
}

uint64_t recset__duplicate_count(const struct recset *rs)
{
	return rs->duplicates;
}

const struct recset_request *recset__requests(const struct recset *rs, size_t *n)
{
	*n = rs->requests.n;
	return rs->requests.items;
}

uint64_t recset__events(const struct recset *rs)
{
	return rs->events;
}

int64_t recset__cpu_period(const struct recset *rs)
{
	return rs->cpu_period;
}

int64_t recset__wall_period(const struct recset *rs)
{
	return rs->wall_period;
}

/*
 * Costliest first; among equals (a trace that only allocated costs no
 * time), the most allocated bytes, then the earliest, then by index, so
 * that the order is the same every run.
 */
static int by_cost(const void *pa, const void *pb, void *arg)
{
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct recset_trace *a = (struct recset_trace *)arg + ia, *b = (struct recset_trace *)arg + ib;
	int64_t ca = a->cpu_ns + a->wall_ns, cb = b->cpu_ns + b->wall_ns;

	if (ca != cb)
		return ca > cb ? -1 : 1;
	if (a->alloc_bytes != b->alloc_bytes)
		return a->alloc_bytes > b->alloc_bytes ? -1 : 1;
	if (a->first_ns != b->first_ns)
		return a->first_ns < b->first_ns ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

size_t recset__choose(struct recset *rs, size_t max_traces, uint64_t max_frames,
		      uint64_t max_times, uint32_t *order)
{
	struct recset_trace *t = rs->traces.items;
	uint32_t *o = order ?: malloc((rs->traces.n + 1) * sizeof(*o));
	uint64_t frames = 0, times = 0;
	size_t i, full = 0;
	bool room = true;

	for (i = 0; i < rs->traces.n; i++)
		t[i].full = false;
	if (!o)
		return 0;
	for (i = 0; i < rs->traces.n; i++)
		o[i] = i;
	qsort_r(o, rs->traces.n, sizeof(*o), by_cost, t);
	for (i = 0; i < rs->traces.n && room; i++) {
		struct recset_trace *c = &t[o[i]];

		/* the first that does not fit ends the list: "the N costliest", nothing skipped */
		room = full < max_traces && frames + c->frames <= max_frames &&
		       times + c->times <= max_times;
		if (room) {
			c->full = true;
			frames += c->frames;
			times += c->times;
			full++;
		}
	}
	if (!order)
		free(o);
	return full;
}

void *recset__writer_new(const struct writer_dest *d)
{
	return recset__new();
}

int recset__writer_add(void *w, const struct rec *r)
{
	return recset__add(w, r);
}

void recset__writer_free(void *w)
{
	recset__free(w);
}
