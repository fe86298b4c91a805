// SPDX-License-Identifier: GPL-2.0
/* otlp_split.c: an encoded OTLP profiles request cut in two, each half with the dictionary entries it uses. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/arena.h"
#include "otlp_pb.h"
#include "otlp_split.h"

enum table { MAPPINGS, LOCATIONS, FUNCTIONS, LINKS, STRINGS, ATTRIBUTES, STACKS, NTABLES };

/*
 * What one half keeps of each dictionary table: to[i] is entry i's index
 * in the half's table, -1 while unused. Entry 0, the zero value every
 * table starts with, is always kept as 0.
 */
struct keep {
	const pb_dictionary *d;
	int32_t *to[NTABLES];
	size_t n[NTABLES];
	bool bad; /* an index outside its table */
};

static void mark(struct keep *k, enum table t, int32_t i)
{
	if (i < 0 || (size_t)i >= k->n[t]) {
		/* 0 stands for "none" even where a table is empty */
		k->bad |= i != 0;
		return;
	}
	if (k->to[t][i] < 0)
		k->to[t][i] = 0;
}

static void mark_all(struct keep *k, enum table t, const int32_t *idx, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		mark(k, t, idx[i]);
}

static bool kept(const struct keep *k, enum table t, size_t i)
{
	return k->to[t][i] >= 0;
}

static int keep_init(struct keep *k, const pb_dictionary *d)
{
	size_t t, i;

	memset(k, 0, sizeof(*k));
	k->d = d;
	k->n[MAPPINGS] = d->n_mapping_table;
	k->n[LOCATIONS] = d->n_location_table;
	k->n[FUNCTIONS] = d->n_function_table;
	k->n[LINKS] = d->n_link_table;
	k->n[STRINGS] = d->n_string_table;
	k->n[ATTRIBUTES] = d->n_attribute_table;
	k->n[STACKS] = d->n_stack_table;
	for (t = 0; t < NTABLES; t++) {
		k->to[t] = malloc((k->n[t] ? k->n[t] : 1) * sizeof(int32_t));
		if (!k->to[t])
			return -ENOMEM;
		for (i = 0; i < k->n[t]; i++)
			k->to[t][i] = i ? -1 : 0;
	}
	return 0;
}

static void keep_free(struct keep *k)
{
	size_t t;

	for (t = 0; t < NTABLES; t++)
		free(k->to[t]);
}

static void mark_profile(struct keep *k, const pb_profile *p)
{
	mark_all(k, ATTRIBUTES, p->attribute_indices, p->n_attribute_indices);
	if (p->sample_type) {
		mark(k, STRINGS, p->sample_type->type_strindex);
		mark(k, STRINGS, p->sample_type->unit_strindex);
	}
	if (p->period_type) {
		mark(k, STRINGS, p->period_type->type_strindex);
		mark(k, STRINGS, p->period_type->unit_strindex);
	}
}

static void mark_sample(struct keep *k, const pb_sample *s)
{
	mark(k, STACKS, s->stack_index);
	mark(k, LINKS, s->link_index);
	mark_all(k, ATTRIBUTES, s->attribute_indices, s->n_attribute_indices);
}

/* What the kept entries refer to, table by table: each refers only to tables after it here. */
static void mark_closure(struct keep *k)
{
	const pb_dictionary *d = k->d;
	size_t i, j;

	for (i = 0; i < k->n[STACKS]; i++)
		if (kept(k, STACKS, i) && d->stack_table[i])
			mark_all(k, LOCATIONS, d->stack_table[i]->location_indices,
				 d->stack_table[i]->n_location_indices);
	for (i = 0; i < k->n[LOCATIONS]; i++) {
		const pb_location *l = d->location_table[i];

		if (!kept(k, LOCATIONS, i) || !l)
			continue;
		mark(k, MAPPINGS, l->mapping_index);
		mark_all(k, ATTRIBUTES, l->attribute_indices, l->n_attribute_indices);
		for (j = 0; j < l->n_lines; j++)
			mark(k, FUNCTIONS, l->lines[j]->function_index);
	}
	for (i = 0; i < k->n[MAPPINGS]; i++) {
		const pb_mapping *m = d->mapping_table[i];

		if (!kept(k, MAPPINGS, i) || !m)
			continue;
		mark(k, STRINGS, m->filename_strindex);
		mark_all(k, ATTRIBUTES, m->attribute_indices, m->n_attribute_indices);
	}
	for (i = 0; i < k->n[FUNCTIONS]; i++) {
		const pb_function *f = d->function_table[i];

		if (!kept(k, FUNCTIONS, i) || !f)
			continue;
		mark(k, STRINGS, f->name_strindex);
		mark(k, STRINGS, f->system_name_strindex);
		mark(k, STRINGS, f->filename_strindex);
	}
	for (i = 0; i < k->n[ATTRIBUTES]; i++) {
		const pb_kvu *a = d->attribute_table[i];

		if (!kept(k, ATTRIBUTES, i) || !a)
			continue;
		mark(k, STRINGS, a->key_strindex);
		mark(k, STRINGS, a->unit_strindex);
	}
}

/* The kept entries numbered in their old order: the size of each new table. */
static void number(struct keep *k, size_t used[NTABLES])
{
	size_t t, i;

	for (t = 0; t < NTABLES; t++) {
		used[t] = 0;
		for (i = 0; i < k->n[t]; i++)
			if (kept(k, t, i))
				k->to[t][i] = used[t]++;
	}
}

static int32_t to(const struct keep *k, enum table t, int32_t i)
{
	return i >= 0 && (size_t)i < k->n[t] ? k->to[t][i] : 0;
}

static int32_t *to_all(struct arena *a, const struct keep *k, enum table t, const int32_t *idx,
		       size_t n)
{
	int32_t *out = arena__alloc(a, n, sizeof(*out));
	size_t i;

	for (i = 0; out && i < n; i++)
		out[i] = to(k, t, idx[i]);
	return out;
}

/* A copy of P in the new numbering (P may be NULL); false when out of memory. */
#define RENUMBERED(a, p) ((p) ? arena__dup(a, p, sizeof(*(p))) : NULL)

static bool dictionary_tables(struct arena *a, const struct keep *k, pb_dictionary *out,
			      const size_t used[NTABLES])
{
	const pb_dictionary *d = k->d;
	size_t i, j, n;

#define TABLE(field, t)                                                               \
	do {                                                                          \
		out->field = arena__alloc(a, used[t], sizeof(*out->field));           \
		out->n_##field = used[t];                                             \
		if (!out->field)                                                      \
			return false;                                                 \
		for (i = 0, n = 0; i < k->n[t]; i++)                                  \
			if (kept(k, t, i) && !(out->field[n++] = RENUMBERED(a, d->field[i])) && \
			    d->field[i])                                              \
				return false;                                         \
	} while (0)
	TABLE(mapping_table, MAPPINGS);
	TABLE(location_table, LOCATIONS);
	TABLE(function_table, FUNCTIONS);
	TABLE(link_table, LINKS);
	TABLE(attribute_table, ATTRIBUTES);
	TABLE(stack_table, STACKS);
#undef TABLE
	/* strings are shared, not copied */
	out->string_table = arena__alloc(a, used[STRINGS], sizeof(char *));
	out->n_string_table = used[STRINGS];
	if (!out->string_table)
		return false;
	for (i = 0, n = 0; i < k->n[STRINGS]; i++)
		if (kept(k, STRINGS, i))
			out->string_table[n++] = d->string_table[i];
	for (i = 0; i < out->n_mapping_table; i++) {
		pb_mapping *m = out->mapping_table[i];

		if (!m)
			continue;
		m->filename_strindex = to(k, STRINGS, m->filename_strindex);
		if (!(m->attribute_indices = to_all(a, k, ATTRIBUTES, m->attribute_indices,
						    m->n_attribute_indices)))
			return false;
	}
	for (i = 0; i < out->n_location_table; i++) {
		pb_location *l = out->location_table[i];
		pb_line **lines;

		if (!l)
			continue;
		l->mapping_index = to(k, MAPPINGS, l->mapping_index);
		if (!(l->attribute_indices = to_all(a, k, ATTRIBUTES, l->attribute_indices,
						    l->n_attribute_indices)))
			return false;
		lines = arena__alloc(a, l->n_lines, sizeof(*lines));
		if (!lines)
			return false;
		for (j = 0; j < l->n_lines; j++) {
			if (!(lines[j] = arena__dup(a, l->lines[j], sizeof(*lines[j]))))
				return false;
			lines[j]->function_index = to(k, FUNCTIONS, lines[j]->function_index);
		}
		l->lines = lines;
	}
	for (i = 0; i < out->n_function_table; i++) {
		pb_function *f = out->function_table[i];

		if (!f)
			continue;
		f->name_strindex = to(k, STRINGS, f->name_strindex);
		f->system_name_strindex = to(k, STRINGS, f->system_name_strindex);
		f->filename_strindex = to(k, STRINGS, f->filename_strindex);
	}
	for (i = 0; i < out->n_attribute_table; i++) {
		pb_kvu *kv = out->attribute_table[i];

		if (!kv)
			continue;
		kv->key_strindex = to(k, STRINGS, kv->key_strindex);
		kv->unit_strindex = to(k, STRINGS, kv->unit_strindex);
	}
	for (i = 0; i < out->n_stack_table; i++) {
		pb_stack *s = out->stack_table[i];

		if (s && !(s->location_indices = to_all(a, k, LOCATIONS, s->location_indices,
							  s->n_location_indices)))
			return false;
	}
	return true;
}

/* The sample type of P, "" when it names none. */
static const char *type_of(const pb_profile *p, const pb_dictionary *d)
{
	int32_t i = p->sample_type ? p->sample_type->type_strindex : 0;

	return i > 0 && (size_t)i < d->n_string_table ? d->string_table[i] : "";
}

/*
 * Whether profile P of SP is the alloc_space twin of the alloc_objects
 * profile before it: the same allocations, sample for sample, as the
 * encoder writes them side by side. A half takes the same samples of
 * both, so that each half can still weigh its allocations.
 */
static bool alloc_twin(const pb_scope_profiles *sp, size_t p, const pb_dictionary *d)
{
	return p > 0 && !strcmp(type_of(sp->profiles[p], d), "alloc_space") &&
	       !strcmp(type_of(sp->profiles[p - 1], d), "alloc_objects") &&
	       sp->profiles[p]->n_samples == sp->profiles[p - 1]->n_samples;
}

/*
 * The allocations the runtime sampled behind OBJECTS of BYTES in all, at
 * one in PERIOD bytes: their unbiasing undone, each object counting the
 * chance that one of their average size is sampled, 1 - e^(-size/period).
 */
static uint64_t sampled_allocations(int64_t objects, int64_t bytes, int64_t period)
{
	if (objects <= 0)
		return 0;
	if (bytes <= 0 || period <= 1)
		return objects;
	return llround(-expm1(-((double)bytes / (double)objects) / (double)period) * (double)objects);
}

/*
 * The samples sample S of profile P of SP stands for: its times or count,
 * its nanoseconds in periods, or the sampled allocations behind an
 * alloc_objects sample (its twin's bytes give their size; the twin, the
 * same allocations, stands for none).
 */
static uint64_t sample_weight(const pb_scope_profiles *sp, size_t p, size_t s, const pb_dictionary *d)
{
	const pb_profile *pr = sp->profiles[p];
	const pb_value_type *t = pr->sample_type;
	const pb_sample *x = pr->samples[s], *twin;
	uint64_t sum = 0;
	size_t i;

	if (x->n_timestamps_unix_nano)
		return x->n_timestamps_unix_nano;
	for (i = 0; i < x->n_values; i++)
		sum += x->values[i] > 0 ? x->values[i] : 0;
	if (alloc_twin(sp, p, d))
		return 0;
	if (p + 1 < sp->n_profiles && alloc_twin(sp, p + 1, d)) {
		twin = sp->profiles[p + 1]->samples[s];
		return sampled_allocations(sum, twin->n_values ? twin->values[0] : 0, pr->period);
	}
	if (t && t->unit_strindex > 0 && (size_t)t->unit_strindex < d->n_string_table &&
	    !strcmp(d->string_table[t->unit_strindex], "nanoseconds") && pr->period > 0)
		return (sum + pr->period / 2) / pr->period;
	return sum;
}

/* Samples [FROM, TO) of every profile, counted across the request in order. */
struct range {
	size_t from, to;
};

static pb_value_type *value_type(struct arena *a, const struct keep *k, const pb_value_type *v)
{
	pb_value_type *out = RENUMBERED(a, v);

	if (out) {
		out->type_strindex = to(k, STRINGS, out->type_strindex);
		out->unit_strindex = to(k, STRINGS, out->unit_strindex);
	}
	return out;
}

/*
 * The half R of REQ into OUT, sharing REQ's resources, scopes and strings;
 * its samples' weight into *WEIGHT. PASS 0 marks what the half refers to,
 * PASS 1 builds it.
 */
static bool half(struct arena *a, struct keep *k, const pb_request *req, struct range r, int pass,
		 pb_request *out, uint64_t *weight)
{
	size_t i, j, p, s, at = 0, from = 0, end = 0;

	if (pass && !(out->resource_profiles = arena__alloc(a, req->n_resource_profiles,
							     sizeof(pb_resource_profiles *))))
		return false;
	for (i = 0; i < req->n_resource_profiles; i++) {
		const pb_resource_profiles *rp = req->resource_profiles[i];
		pb_resource_profiles *nrp = NULL;

		for (j = 0; j < rp->n_scope_profiles; j++) {
			const pb_scope_profiles *sp = rp->scope_profiles[j];
			pb_scope_profiles *nsp = NULL;

			for (p = 0; p < sp->n_profiles; p++) {
				const pb_profile *pr = sp->profiles[p];
				pb_profile *npr;

				/* an alloc_space twin takes the samples its alloc_objects took */
				if (!alloc_twin(sp, p, req->dictionary)) {
					from = r.from > at ? r.from - at : 0;
					end = r.to > at ? r.to - at : 0;
					if (end > pr->n_samples)
						end = pr->n_samples;
					at += pr->n_samples;
				}
				/* a profile of no sample goes with the first half */
				if (from >= end && !(pr->n_samples == 0 && r.from == 0))
					continue;
				if (!pass) {
					mark_profile(k, pr);
					for (s = from; s < end; s++)
						mark_sample(k, pr->samples[s]);
					continue;
				}
				if (!nrp) {
					if (!(nrp = arena__dup(a, rp, sizeof(*rp))) ||
					    !(nrp->scope_profiles = arena__alloc(a, rp->n_scope_profiles,
										 sizeof(pb_scope_profiles *))))
						return false;
					nrp->n_scope_profiles = 0;
					out->resource_profiles[out->n_resource_profiles++] = nrp;
				}
				if (!nsp) {
					if (!(nsp = arena__dup(a, sp, sizeof(*sp))) ||
					    !(nsp->profiles = arena__alloc(a, sp->n_profiles, sizeof(pb_profile *))))
						return false;
					nsp->n_profiles = 0;
					nrp->scope_profiles[nrp->n_scope_profiles++] = nsp;
				}
				if (!(npr = arena__dup(a, pr, sizeof(*pr))) ||
				    !(npr->samples = arena__alloc(a, end - from, sizeof(pb_sample *))) ||
				    !(npr->attribute_indices = to_all(a, k, ATTRIBUTES, pr->attribute_indices,
								      pr->n_attribute_indices)))
					return false;
				npr->sample_type = value_type(a, k, pr->sample_type);
				npr->period_type = value_type(a, k, pr->period_type);
				if ((pr->sample_type && !npr->sample_type) || (pr->period_type && !npr->period_type))
					return false;
				npr->n_samples = 0;
				for (s = from; s < end; s++) {
					const pb_sample *os = pr->samples[s];
					pb_sample *ns = arena__dup(a, os, sizeof(*os));

					if (!ns || !(ns->attribute_indices = to_all(a, k, ATTRIBUTES,
										     os->attribute_indices,
										     os->n_attribute_indices)))
						return false;
					ns->stack_index = to(k, STACKS, os->stack_index);
					ns->link_index = to(k, LINKS, os->link_index);
					npr->samples[npr->n_samples++] = ns;
					*weight += sample_weight(sp, p, s, req->dictionary);
				}
				nsp->profiles[nsp->n_profiles++] = npr;
			}
		}
	}
	return true;
}

/* The samples of REQ a half may be cut between: an alloc_space twin's go with their alloc_objects. */
static size_t count_samples(const pb_request *req)
{
	const pb_scope_profiles *sp;
	size_t i, j, p, n = 0;

	for (i = 0; i < req->n_resource_profiles; i++) {
		for (j = 0; j < req->resource_profiles[i]->n_scope_profiles; j++) {
			sp = req->resource_profiles[i]->scope_profiles[j];
			for (p = 0; p < sp->n_profiles; p++)
				if (!alloc_twin(sp, p, req->dictionary))
					n += sp->profiles[p]->n_samples;
		}
	}
	return n;
}

/* The half R of REQ, packed into OUT. */
static int pack_half(const pb_request *req, struct range r, struct otlp_part *out)
{
	pb_request h = OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	pb_dictionary d = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	size_t used[NTABLES];
	struct arena a = {};
	struct keep k;
	uint64_t weight = 0;
	int err = -ENOMEM;

	if (keep_init(&k, req->dictionary))
		goto out;
	half(&a, &k, req, r, 0, &h, &weight);
	mark_closure(&k);
	err = -EINVAL;
	if (k.bad)
		goto out;
	number(&k, used);
	err = -ENOMEM;
	if (!dictionary_tables(&a, &k, &d, used) || !half(&a, &k, req, r, 1, &h, &weight))
		goto out;
	h.dictionary = &d;
	out->len = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(
		&h);
	out->buf = malloc(out->len ? out->len : 1);
	if (!out->buf)
		goto out;
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(
		&h, out->buf);
	out->samples = weight;
	err = 0;
out:
	keep_free(&k);
	arena__free(&a);
	return err;
}

int otlp_split(const uint8_t *buf, size_t len, uint64_t samples, struct otlp_part out[2])
{
	pb_request *req;
	size_t n;
	int err;

	memset(out, 0, 2 * sizeof(*out));
	req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	if (!req)
		return -EINVAL;
	err = -EINVAL;
	if (!req->dictionary)
		goto out;
	n = count_samples(req);
	err = -E2BIG;
	if (n < 2)
		goto out;
	err = pack_half(req, (struct range){ 0, n / 2 }, &out[0]);
	if (!err)
		err = pack_half(req, (struct range){ n / 2, n }, &out[1]);
	if (err) {
		free(out[0].buf);
		free(out[1].buf);
		memset(out, 0, 2 * sizeof(*out));
		goto out;
	}
	/* the halves' own counts, rounded, may not add up: the second takes the rest */
	if (out[0].samples > samples)
		out[0].samples = samples;
	out[1].samples = samples - out[0].samples;
out:
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
		req, NULL);
	return err;
}
