// SPDX-License-Identifier: GPL-2.0
/* rec_parse.c: one record back from its JSON line, held to the schema, for `convert`. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/util/hashmap.h"
#include "rec.h"

void rec_mem__free(struct rec_mem *m)
{
	while (m->n)
		free(m->blocks[--m->n]);
}

static void *rec_alloc(struct rec_mem *m, size_t n, size_t size)
{
	void *p;

	if (m->n >= sizeof(m->blocks) / sizeof(m->blocks[0]))
		return NULL;
	p = calloc(n + 1, size);
	if (p)
		m->blocks[m->n++] = p;
	return p;
}

static bool hex_u64(json_t *v, uint64_t *out)
{
	const char *s = json_string_value(v);
	char *end;

	size_t i;

	if (!s || strncmp(s, "0x", 2) != 0 || !s[2])
		return false;
	for (i = 2; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	errno = 0;
	*out = strtoull(s + 2, &end, 16);
	return !errno && end != s + 2 && !*end;
}

/* "2026-11-22T11:40:01.123456Z" (the schema's shape, microseconds) in ns since the epoch. */
static bool parse_time(json_t *v, int64_t *ns)
{
	const char *s = json_string_value(v), *rest;
	struct tm tm = {};
	long frac = 0;
	int i;

	if (!s || strlen(s) != 27 || !(rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) || rest != s + 19 ||
	    *rest != '.' || rest[7] != 'Z')
		return false;
	for (i = 1; i <= 6; i++) {
		if (rest[i] < '0' || rest[i] > '9')
			return false;
		frac = frac * 10 + (rest[i] - '0');
	}
	*ns = (int64_t)timegm(&tm) * 1000000000 + frac * 1000;
	return true;
}

/* Is V a string of N lowercase hex digits (N 0: any even number), with the dashes of UUID where asked? */
static bool hex_string(json_t *v, size_t n, bool uuid)
{
	const char *s = json_string_value(v);
	size_t i, len;

	if (!s)
		return false;
	len = strlen(s);
	if (len != json_string_length(v) || (n ? len != n : len % 2))
		return false;
	for (i = 0; i < len; i++) {
		if (uuid && (i == 8 || i == 13 || i == 18 || i == 23)) {
			if (s[i] != '-')
				return false;
		} else if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
			return false;
		}
	}
	return true;
}

/* The first key of O not in KEYS (NULL-terminated), or NULL: the schema allows no others. */
static const char *unknown_key(json_t *o, const char *const *keys)
{
	const char *k;
	size_t i;
	json_t *v;

	json_object_foreach(o, k, v) {
		for (i = 0; keys[i] && strcmp(keys[i], k); i++)
			;
		if (!keys[i])
			return k;
	}
	return NULL;
}

#define fail(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)

static bool parse_origin(const char *s, enum rec_origin *o)
{
	static const enum rec_origin all[] = { REC_SAMPLING, REC_WALL, REC_CUSTOM, REC_UPROBE,
					       REC_REQUEST, REC_ALLOC };
	size_t i;

	if (!s)
		return false;
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!strcmp(s, rec_origin__name(all[i]))) {
			*o = all[i];
			return true;
		}
	}
	return false;
}

static int parse_labels(json_t *o, struct rec *r, struct rec_mem *m, char *err, size_t errlen)
{
	json_t *labels = json_object_get(o, "labels"), *cut = json_object_get(o, "truncated"), *v, *c;
	struct hashmap *index = NULL;
	struct rec_label *l;
	const char *k;
	size_t i, j;

	if (!json_is_object(labels))
		return fail("\"labels\" missing or not an object");
	if (!json_is_array(cut))
		return fail("\"truncated\" missing or not an array");
	json_array_foreach(cut, i, c) {
		if (!json_is_string(c))
			return fail("\"truncated\" holds something other than strings");
		/* beyond the schema: what it lists are labels of the record */
		if (!json_object_get(labels, json_string_value(c)))
			return fail("\"truncated\" names \"%s\", which is no label", json_string_value(c));
	}
	if (!json_is_boolean(json_object_get(o, "more_labels")))
		return fail("\"more_labels\" missing or neither true nor false");
	l = rec_alloc(m, json_object_size(labels), sizeof(*l));
	if (!l)
		return fail("out of memory");
	r->labels = l;
	json_object_foreach(labels, k, v) {
		if (!json_is_string(v))
			return fail("label \"%s\" is not a string", k);
		l->key = (const uint8_t *)k;
		l->key_len = strlen(k);
		l->value = (const uint8_t *)json_string_value(v);
		l->value_len = json_string_length(v);
		l++;
	}
	r->nlabels = l - r->labels;
	r->labels_distinct = true;
	/* the labels truncated names, through a table of keys, not a search a name */
	if (json_array_size(cut) && !(index = hashmap__new()))
		return fail("out of memory");
	for (i = 0; index && i < r->nlabels; i++) {
		if (hashmap__add(index, r->labels[i].key, r->labels[i].key_len, (void *)(uintptr_t)(i + 1))) {
			hashmap__free(index, NULL);
			return fail("out of memory");
		}
	}
	json_array_foreach(cut, i, c) {
		j = (uintptr_t)hashmap__get(index, json_string_value(c), strlen(json_string_value(c)));
		if (j)
			((struct rec_label *)r->labels)[j - 1].cut = true;
	}
	hashmap__free(index, NULL);
	v = json_object_get(o, "more_labels");
	r->more_labels = json_is_true(v);
	return 0;
}

/* Is V an integer from LO to HI? */
static bool int_in(json_t *v, int64_t lo, int64_t hi)
{
	return json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi;
}

/*
 * Stack I's times_us, goids and weights (wall records), checked against
 * the record, after *T (which moves on). Stacks of events have none, older
 * records none at all.
 */
static int parse_times(json_t *st, size_t i, struct rec *r, struct rec_stack *s,
		       struct rec_time **t, char *err, size_t errlen)
{
	json_t *times = json_object_get(st, "times_us"), *goids = json_object_get(st, "goids");
	json_t *weights = json_object_get(st, "weights"), *durations = json_object_get(st, "durations_us");
	bool wall = r->origin == REC_WALL, request = r->origin == REC_REQUEST;
	int64_t span_us = r->end_ns / 1000 - r->start_ns / 1000;
	uint64_t sum = 0;
	size_t j, n;

	if (!times && !goids && !weights && !durations)
		return 0;
	if (r->origin != REC_SAMPLING && r->origin != REC_ALLOC && !wall && !request)
		return fail("stack %zu: \"times_us\", \"goids\" or \"weights\" in a record of origin %s",
			    i, rec_origin__name(r->origin));
	n = json_array_size(times);
	if (!json_is_array(times) || !json_is_array(goids) || json_array_size(goids) != n ||
	    (wall != !!weights) || (weights && (!json_is_array(weights) || json_array_size(weights) != n)))
		return fail("stack %zu: \"times_us\" and \"goids\"%s are not arrays of one length", i,
			    wall ? " and \"weights\"" : " (and no \"weights\": wall records only)");
	if (request != !!durations || (durations && (!json_is_array(durations) ||
						     json_array_size(durations) != n)))
		return fail("stack %zu: \"durations_us\" %s", i,
			    request ? "missing, or not an array as long as \"times_us\"" :
				      "in a record that is no request's");
	if (n > s->samples)
		return fail("stack %zu: more times (%zu) than samples (%" PRIu64 ")", i, n, s->samples);
	for (j = 0; j < n; j++) {
		if (!int_in(json_array_get(times, j), 0, span_us))
			return fail("stack %zu: times_us[%zu] is not an integer from 0 to the record's "
				    "end (%" PRId64 ")", i, j, span_us);
		if (!int_in(json_array_get(goids, j), 0, INT64_MAX))
			return fail("stack %zu: goids[%zu] is not an integer of at least 0", i, j);
		if (weights && !int_in(json_array_get(weights, j), 1, INT64_MAX))
			return fail("stack %zu: weights[%zu] is not an integer of at least 1", i, j);
		if (durations && !int_in(json_array_get(durations, j), 0, span_us))
			return fail("stack %zu: durations_us[%zu] is not an integer from 0 to the record's "
				    "span (%" PRId64 ")", i, j, span_us);
		(*t)[j] = (struct rec_time){
			r->start_ns / 1000 * 1000 + json_integer_value(json_array_get(times, j)) * 1000,
			json_integer_value(json_array_get(goids, j)),
			weights	  ? (uint64_t)json_integer_value(json_array_get(weights, j)) :
			durations ? (uint64_t)json_integer_value(json_array_get(durations, j)) * 1000 :
				    1,
		};
		sum += durations ? 1 : (*t)[j].weight;
		if (sum > s->samples)
			return fail("stack %zu: its weights add up to more than its samples (%" PRIu64 ")",
				    i, s->samples);
	}
	s->times = *t;
	s->ntimes = n;
	*t += n;
	return 0;
}

/* An allocation record's or stack's alloc_objects and alloc_bytes: there exactly when it is one. */
static int parse_alloc(json_t *o, enum rec_origin origin, int64_t *objects, int64_t *bytes,
		       char *err, size_t errlen)
{
	json_t *n = json_object_get(o, "alloc_objects"), *b = json_object_get(o, "alloc_bytes");

	if (origin != REC_ALLOC) {
		if (n || b)
			return fail("\"alloc_objects\" or \"alloc_bytes\" in a record of origin %s "
				    "(alloc records only)", rec_origin__name(origin));
		return 0;
	}
	if (!int_in(n, 0, INT64_MAX) || !int_in(b, 0, INT64_MAX))
		return fail("\"alloc_objects\" or \"alloc_bytes\" missing or not an integer of at "
			    "least 0 (every alloc record and stack has them)");
	*objects = json_integer_value(n);
	*bytes = json_integer_value(b);
	return 0;
}

static int parse_stacks(json_t *o, struct rec *r, struct rec_mem *m, char *err, size_t errlen)
{
	static const char *const stack_keys[] = { "samples", "frames", "times_us", "goids", "weights",
						  "durations_us", "alloc_objects", "alloc_bytes", NULL };
	static const char *const frame_keys[] = { "func", "addr", "file", "line", "inlined", NULL };
	json_t *stacks = json_object_get(o, "stacks"), *st, *frames, *f, *v;
	const char *k;
	struct rec_stack *s;
	struct rec_frame *fr;
	struct rec_time *t;
	size_t i, j, total = 0, ntimes = 0;
	uint64_t sum = 0;
	int ret;

	if (!json_is_array(stacks))
		return fail("\"stacks\" missing or not an array");
	json_array_foreach(stacks, i, st) {
		if (!json_is_object(st))
			return fail("stack %zu is not an object", i);
		if ((k = unknown_key(st, stack_keys)))
			return fail("stack %zu: unknown field \"%s\"", i, k);
		v = json_object_get(st, "samples");
		if (!json_is_integer(v) || json_integer_value(v) < 1)
			return fail("stack %zu: \"samples\" missing or not an integer of at least 1", i);
		sum += json_integer_value(v);
		frames = json_object_get(st, "frames");
		if (!json_is_array(frames))
			return fail("stack %zu: \"frames\" missing or not an array", i);
		total += json_array_size(frames);
		ntimes += json_array_size(json_object_get(st, "times_us"));
	}
	/* beyond the schema: every sample is one of a stack's */
	if (sum != r->samples)
		return fail("the stacks' samples add up to %" PRIu64 ", not \"samples\" (%" PRIu64 ")", sum,
			    r->samples);
	if (ntimes > REC_MAX_TIMES)
		return fail("the stacks hold %zu times, more than a record's %d", ntimes, REC_MAX_TIMES);
	s = rec_alloc(m, json_array_size(stacks), sizeof(*s));
	fr = rec_alloc(m, total, sizeof(*fr));
	t = rec_alloc(m, ntimes, sizeof(*t));
	if (!s || !fr || !t)
		return fail("out of memory");
	r->stacks = s;
	r->nstacks = json_array_size(stacks);
	json_array_foreach(stacks, i, st) {
		frames = json_object_get(st, "frames");
		s[i].samples = json_integer_value(json_object_get(st, "samples"));
		if ((ret = parse_alloc(st, r->origin, &s[i].alloc_objects, &s[i].alloc_bytes, err,
				       errlen)) ||
		    (ret = parse_times(st, i, r, &s[i], &t, err, errlen)))
			return ret;
		s[i].frames = fr;
		s[i].nframes = json_array_size(frames);
		json_array_foreach(frames, j, f) {
			if (!json_is_object(f))
				return fail("stack %zu, frame %zu is not an object", i, j);
			if ((k = unknown_key(f, frame_keys)))
				return fail("stack %zu, frame %zu: unknown field \"%s\"", i, j, k);
			if (!json_object_get(f, "file") != !json_object_get(f, "line"))
				return fail("stack %zu, frame %zu: \"file\" without \"line\" or the other "
					    "way round", i, j);
			v = json_object_get(f, "inlined");
			if (v && !json_is_true(v))
				return fail("stack %zu, frame %zu: \"inlined\" is there and not true", i, j);
			fr->func = json_string_value(json_object_get(f, "func"));
			if (!fr->func)
				return fail("stack %zu, frame %zu: \"func\" missing", i, j);
			if (!hex_u64(json_object_get(f, "addr"), &fr->addr))
				return fail("stack %zu, frame %zu: \"addr\" missing or not 0x hex "
					    "(written by a ctxprof-go older than convert?)",
					    i, j);
			fr->pc = fr->addr;
			v = json_object_get(f, "file");
			if (v && !json_is_string(v))
				return fail("stack %zu, frame %zu: \"file\" is not a string", i, j);
			fr->file = json_string_value(v);
			v = json_object_get(f, "line");
			if (v && (!json_is_integer(v) || json_integer_value(v) < 0))
				return fail("stack %zu, frame %zu: \"line\" is not an integer of at least 0",
					    i, j);
			fr->line = json_integer_value(v);
			fr->inlined = json_is_true(json_object_get(f, "inlined"));
			fr++;
		}
	}
	return 0;
}

static int parse_mappings(json_t *o, struct rec *r, struct rec_mem *m, char *err, size_t errlen)
{
	static const char *const mapping_keys[] = { "start", "limit", "offset", "file", "build_id", NULL };
	json_t *maps = json_object_get(o, "mappings"), *mj;
	const char *k;
	struct rec_mapping *out;
	size_t i, n = 0;

	if (!json_is_array(maps))
		return fail("\"mappings\" missing or not an array");
	out = rec_alloc(m, json_array_size(maps), sizeof(*out));
	if (!out)
		return fail("out of memory");
	r->mappings = out;
	json_array_foreach(maps, i, mj) {
		if (!json_is_object(mj))
			return fail("mapping %zu is not an object", i);
		if ((k = unknown_key(mj, mapping_keys)))
			return fail("mapping %zu: unknown field \"%s\"", i, k);
		if (!hex_u64(json_object_get(mj, "start"), &out[n].start) ||
		    !hex_u64(json_object_get(mj, "limit"), &out[n].limit) ||
		    out[n].limit < out[n].start)
			return fail("mapping %zu: \"start\" or \"limit\" missing, not 0x hex, or limit "
				    "below start",
				    i);
		if (!json_is_string(json_object_get(mj, "file")))
			return fail("mapping %zu: \"file\" missing or not a string", i);
		if (!hex_string(json_object_get(mj, "build_id"), 0, false))
			return fail("mapping %zu: \"build_id\" missing or not hex", i);
		if (!hex_u64(json_object_get(mj, "offset"), &out[n].offset))
			return fail("mapping %zu: \"offset\" missing or not 0x hex", i);
		out[n].file = json_string_value(json_object_get(mj, "file")) ?: "";
		out[n].build_id = json_string_value(json_object_get(mj, "build_id")) ?: "";
		n++;
	}
	r->nmappings = n;
	return 0;
}

/* V is null, or passes OK: "KEY" either way; missing is neither. */
#define null_or(v, ok) (json_is_null(v) || (v && (ok)))

/* O's KEY into *OUT: N lowercase hex digits (a UUID's with UUID set, WHAT in the error), or null. */
static int hex_or_null(json_t *o, const char *key, size_t n, bool uuid, const char *what,
		       const char **out, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);

	if (!null_or(v, hex_string(v, n, uuid)))
		return fail("\"%s\" missing or neither %s nor null", key, what);
	*out = json_string_value(v);
	return 0;
}

/* Fields only records of some origins have, and those they must have (the schema's allOf). */
static int check_origin_fields(json_t *o, enum rec_origin origin, char *err, size_t errlen)
{
	static const char *const wall[] = { "state", "wait_reason", "wall_ns", "observed" };
	static const char *const event[] = { "context", "tid", "goid" };
	bool is_wall = origin == REC_WALL, is_event = origin == REC_CUSTOM || origin == REC_UPROBE;
	size_t i;

	for (i = 0; i < sizeof(wall) / sizeof(wall[0]); i++)
		if (!is_wall && json_object_get(o, wall[i]))
			return fail("\"%s\" in a record of origin %s (wall records only)", wall[i],
				    rec_origin__name(origin));
	for (i = 0; i < sizeof(event) / sizeof(event[0]); i++) {
		if (!is_event && json_object_get(o, event[i]))
			return fail("\"%s\" in a record of origin %s (events only)", event[i],
				    rec_origin__name(origin));
		if (is_event && !json_object_get(o, event[i]))
			return fail("\"%s\" missing (every event has it)", event[i]);
	}
	if ((origin == REC_REQUEST) != !!json_object_get(o, "elapsed_ns"))
		return fail(origin == REC_REQUEST ? "\"elapsed_ns\" missing (every request record has it)" :
						    "\"elapsed_ns\" in a record of origin %s (request records only)",
			    rec_origin__name(origin));
	return 0;
}

static int parse_event(json_t *o, struct rec *r, char *err, size_t errlen)
{
	json_t *v = json_object_get(o, "context");
	const char *s = json_string_value(v);
	char *end;

	if (r->samples != 1)
		return fail("\"samples\" of an event is not 1");
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		r->context = json_integer_value(v);
	} else {
		/* above 2^63 - 1: decimal digits in a string */
		errno = 0;
		r->context = s && *s >= '0' && *s <= '9' ? strtoull(s, &end, 10) : 0;
		if (!s || *s < '0' || *s > '9' || errno || *end)
			return fail("\"context\" is neither an integer of at least 0 nor a string of digits");
	}
	v = json_object_get(o, "tid");
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT32_MAX)
		return fail("\"tid\" is not a thread ID (1 to 2^31-1)");
	r->tid = json_integer_value(v);
	v = json_object_get(o, "goid");
	if (!json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) < 0))
		return fail("\"goid\" is neither an integer of at least 0 nor null");
	r->has_goid = json_is_integer(v);
	r->goid = json_integer_value(v);
	return 0;
}

int rec__from_json(json_t *o, struct rec *r, struct rec_mem *m, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"trace_id", "trace_source", "span_id", "inherited_trace_id", "request_goroutine", "labels",
		"truncated", "more_labels", "pid", "elapsed_ns",
		"comm", "service_name", "container_id", "pod_uid", "ns_pid", "origin", "state", "wait_reason",
		"wall_ns", "observed", "samples", "cpu_ns", "start", "end", "stacks", "mappings",
		"context", "tid", "goid", "alloc_objects", "alloc_bytes", NULL,
	};
	static const char *const sources[] = { "label", "traceparent", "otel-sdk", "obi", NULL };
	static const char *const states[] = { "running", "runnable", "waiting", "syscall", NULL };
	const char *k;
	json_t *v;
	int i, ret;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(o))
		return fail("not a JSON object");
	if ((k = unknown_key(o, keys)))
		return fail("unknown field \"%s\"", k);
	v = json_object_get(o, "pid");
	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT32_MAX)
		return fail("\"pid\" missing or not a process ID (1 to 2^31-1)");
	r->pid = json_integer_value(v);
	v = json_object_get(o, "comm");
	if (!json_is_string(v))
		return fail("\"comm\" missing or not a string");
	r->comm = (const uint8_t *)json_string_value(v);
	r->comm_len = json_string_length(v);
	/* absent from the records of releases before it */
	v = json_object_get(o, "service_name");
	if (v && !json_is_null(v) && (!json_is_string(v) || !json_string_length(v)))
		return fail("\"service_name\" is neither a non-empty string nor null");
	r->service_name = json_is_string(v) ? json_string_value(v) : NULL;
	v = json_object_get(o, "samples");
	if (!json_is_integer(v) || json_integer_value(v) < 1)
		return fail("\"samples\" missing or not an integer of at least 1");
	r->samples = json_integer_value(v);
	v = json_object_get(o, "cpu_ns");
	if ((!json_is_integer(v) && !json_is_null(v)) || json_integer_value(v) < 0)
		return fail("\"cpu_ns\" missing, negative, or neither an integer nor null");
	r->cpu_ns = json_is_integer(v) ? json_integer_value(v) : -1;
	if ((ret = hex_or_null(o, "trace_id", 32, false, "32 lowercase hex digits", &r->trace_id, err,
			       errlen)) ||
	    (ret = hex_or_null(o, "span_id", 16, false, "16 lowercase hex digits", &r->span_id, err,
			       errlen)))
		return ret;
	/* absent from the records of releases before it */
	if (json_object_get(o, "inherited_trace_id") &&
	    (ret = hex_or_null(o, "inherited_trace_id", 32, false, "32 lowercase hex digits",
			       &r->inherited_trace_id, err, errlen)))
		return ret;
	if (r->trace_id && r->inherited_trace_id)
		return fail("\"trace_id\" and \"inherited_trace_id\" both set: a trace is a "
			    "goroutine's own or inherited, not both");
	/* absent from the records of releases before it */
	v = json_object_get(o, "request_goroutine");
	if (v && !json_is_boolean(v) && !json_is_null(v))
		return fail("\"request_goroutine\" is neither true, false nor null");
	r->role = json_is_true(v) ? REC_ROLE_REQUEST : json_is_false(v) ? REC_ROLE_STARTED : REC_ROLE_NONE;
	v = json_object_get(o, "trace_source");
	r->trace_source = json_string_value(v);
	for (i = 0; r->trace_source && sources[i] && strcmp(sources[i], r->trace_source); i++)
		;
	if (!null_or(v, r->trace_source && sources[i]))
		return fail("\"trace_source\" missing or not label, traceparent, otel-sdk, obi or null");
	if (!parse_origin(json_string_value(json_object_get(o, "origin")), &r->origin))
		return fail("\"origin\" missing or not sampling, wall, custom, uprobe, request or alloc");
	if ((ret = check_origin_fields(o, r->origin, err, errlen)) ||
	    (ret = parse_alloc(o, r->origin, &r->alloc_objects, &r->alloc_bytes, err, errlen)))
		return ret;
	/* CPU time is the samples' only for CPU samples: the others have none */
	if ((r->origin == REC_SAMPLING) != (r->cpu_ns >= 0))
		return fail("\"cpu_ns\" is %s for a record of origin %s",
			    r->cpu_ns >= 0 ? "a number" : "null", rec_origin__name(r->origin));
	if (r->origin == REC_WALL) {
		v = json_object_get(o, "wall_ns");
		r->state = json_string_value(json_object_get(o, "state"));
		for (i = 0; r->state && states[i] && strcmp(states[i], r->state); i++)
			;
		if (!json_is_integer(v) || json_integer_value(v) < 0 || !r->state || !states[i])
			return fail("a wall record without \"wall_ns\" (at least 0) or \"state\" (running, "
				    "runnable, waiting or syscall)");
		r->wall_ns = json_integer_value(v);
		/* older records have none: every sample was a look */
		v = json_object_get(o, "observed");
		if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
			  (uint64_t)json_integer_value(v) > r->samples))
			return fail("\"observed\" is not an integer from 1 to \"samples\"");
		r->observed = v ? (uint64_t)json_integer_value(v) : r->samples;
		v = json_object_get(o, "wait_reason");
		if (!null_or(v, json_is_string(v)))
			return fail("\"wait_reason\" missing or neither a string nor null");
		r->wait_reason = json_string_value(v);
	}
	if (!parse_time(json_object_get(o, "start"), &r->start_ns) ||
	    !parse_time(json_object_get(o, "end"), &r->end_ns))
		return fail("\"start\" or \"end\" missing or not an RFC 3339 UTC time in microseconds");
	if (r->end_ns < r->start_ns)
		return fail("\"end\" is before \"start\"");
	if ((ret = hex_or_null(o, "container_id", 64, false, "64 lowercase hex digits",
			       &r->container_id, err, errlen)) ||
	    (ret = hex_or_null(o, "pod_uid", 36, true, "a lowercase UUID", &r->pod_uid, err, errlen)))
		return ret;
	v = json_object_get(o, "ns_pid");
	if (!null_or(v, json_is_integer(v) && json_integer_value(v) >= 1))
		return fail("\"ns_pid\" missing or neither a process ID nor null");
	r->ns_pid = json_integer_value(v);
	if ((r->origin == REC_CUSTOM || r->origin == REC_UPROBE) && (ret = parse_event(o, r, err, errlen)))
		return ret;
	if (r->origin == REC_REQUEST) {
		v = json_object_get(o, "elapsed_ns");
		if (!json_is_integer(v) || json_integer_value(v) < 0 || !r->trace_id)
			return fail("a request record without \"elapsed_ns\" (at least 0) or a \"trace_id\"");
		r->elapsed_ns = json_integer_value(v);
	}
	if ((ret = parse_labels(o, r, m, err, errlen)) || (ret = parse_stacks(o, r, m, err, errlen)) ||
	    (ret = parse_mappings(o, r, m, err, errlen)))
		return ret;
	return 0;
}
