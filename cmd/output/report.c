// SPDX-License-Identifier: GPL-2.0
/* report.c: the report page: its template, styles and script (cmd/output/report/), and the records as JSON inside. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/util/hashmap.h"
#include "cmd/util/outfile.h"
#include "cmd/util/strbuf.h"
#include "cmd/util/version.h"
#include "jsonw.h"
#include "report.h"
#include "report_assets.h"

/* ,"KEY":V for a string index or -1 */
static void put_ref(struct strbuf *b, const char *key, int32_t v)
{
	jsonw__raw(b, key);
	jsonw__i64(b, v);
}

/*
 * The stacks of traces that are not in full, added up, per (origin,
 * state, reason, comm): time for CPU and wall records, bytes and objects
 * for alloc records.
 */
struct other_group {
	enum rec_origin origin;
	int32_t state, wait_reason, comm;
	struct hashmap *stacks; /* frame IDs -> struct other_sum */
};

struct other_sum {
	uint64_t value; /* ns; alloc: bytes */
	uint64_t objects; /* alloc only */
};

struct others {
	struct hashmap *groups; /* origin, state, reason, comm -> struct other_group */
	struct strbuf *b;
	bool alloc; /* the group being written is of alloc records */
	int err;
};

static void other_group__free(void *p)
{
	struct other_group *g = p;

	if (g)
		hashmap__free(g->stacks, free);
	free(g);
}

static int others__add(struct others *o, const struct recset_rec *r)
{
	/* named as the report names services: by service_name, else by comm */
	int32_t name = r->service >= 0 ? r->service : r->comm;
	int32_t key[4] = { (int32_t)r->origin, r->state, r->wait_reason, name };
	int64_t per = r->origin == REC_ALLOC ? 0 :
		      (r->origin == REC_SAMPLING ? r->cpu_ns : r->wall_ns) / (int64_t)r->samples;
	struct other_group *g = hashmap__get(o->groups, key, sizeof(key));
	struct other_sum *sum;
	uint32_t i;

	if (!g) {
		g = calloc(1, sizeof(*g));
		if (!g || !(g->stacks = hashmap__new()) || hashmap__add(o->groups, key, sizeof(key), g)) {
			other_group__free(g);
			return -ENOMEM;
		}
		*g = (struct other_group){ r->origin, r->state, r->wait_reason, name, g->stacks };
	}
	for (i = 0; i < r->nstacks; i++) {
		const struct recset_stack *st = &r->stacks[i];
		size_t len = st->nframes * sizeof(*st->frames);

		/* an empty stack (a running goroutine's) is a key of its own */
		sum = hashmap__get(g->stacks, st->nframes ? (const void *)st->frames : "", len);
		if (!sum) {
			sum = calloc(1, sizeof(*sum));
			if (!sum || hashmap__add(g->stacks, st->nframes ? (const void *)st->frames : "", len, sum)) {
				free(sum);
				return -ENOMEM;
			}
		}
		if (r->origin == REC_ALLOC) {
			sum->value += st->alloc_bytes;
			sum->objects += st->alloc_objects;
		} else {
			sum->value += st->samples * per;
		}
	}
	return 0;
}

/* {"ns":N,"frames":[...]}, or for alloc records {"bytes":N,"objects":N,"frames":[...]} */
static void put_other_stack(const void *key, size_t len, void *value, void *ctx)
{
	const struct other_sum *sum = value;
	const uint32_t *frames = key;
	struct others *o = ctx;
	size_t i;

	if (o->b->p[o->b->n - 1] != '[')
		jsonw__raw(o->b, ",");
	jsonw__raw(o->b, o->alloc ? "{\"bytes\":" : "{\"ns\":");
	jsonw__i64(o->b, sum->value);
	if (o->alloc) {
		jsonw__raw(o->b, ",\"objects\":");
		jsonw__i64(o->b, sum->objects);
	}
	jsonw__raw(o->b, ",\"frames\":[");
	for (i = 0; i < len / sizeof(*frames); i++) {
		if (i)
			jsonw__raw(o->b, ",");
		jsonw__i64(o->b, frames[i]);
	}
	jsonw__raw(o->b, "]}");
}

static void put_other_group(const void *key, size_t len, void *value, void *ctx)
{
	struct other_group *g = value;
	struct others *o = ctx;

	if (o->b->p[o->b->n - 1] != '[')
		jsonw__raw(o->b, ",");
	jsonw__raw(o->b, "{\"origin\":");
	jsonw__cstr(o->b, rec_origin__name(g->origin));
	put_ref(o->b, ",\"state\":", g->state);
	put_ref(o->b, ",\"wait_reason\":", g->wait_reason);
	put_ref(o->b, ",\"comm\":", g->comm);
	jsonw__raw(o->b, ",\"stacks\":[");
	o->alloc = g->origin == REC_ALLOC;
	hashmap__foreach(g->stacks, put_other_stack, o);
	jsonw__raw(o->b, "]}");
}

/* The names of a record's and a stack's positions: the page's JSON holds rows, not objects */
static const char record_fields[] =
	"[\"trace_id\",\"trace_source\",\"span_id\",\"inherited_trace_id\",\"labels\",\"pid\","
	"\"comm\",\"service_name\",\"container_id\","
	"\"pod_uid\",\"origin\",\"state\",\"wait_reason\",\"samples\",\"cpu_ns\",\"wall_ns\","
	"\"start_us\",\"end_us\",\"input\",\"request_goroutine\",\"full\",\"alloc_objects\","
	"\"alloc_bytes\",\"stacks\"]";
static const char stack_fields[] =
	"[\"samples\",\"frames\",\"times_us\",\"goids\",\"weights\",\"alloc_objects\",\"alloc_bytes\"]";
/* a record's origin is its index here */
static const char origins[] = "[\"sampling\",\"wall\",\"alloc\"]";

/*
 * [samples,[frames],[times_us],[goids](,[weights])]: each time and goid
 * after the one before it (the first time after the record's start), and
 * weights empty when all are 1: a parked goroutine's minute of looks is
 * some 1,100 small numbers, not 1,100 large ones. An alloc record's
 * stack has no weights (null) and its alloc_objects and alloc_bytes.
 */
static void put_stack(struct strbuf *b, const struct recset_rec *r, const struct recset_stack *st)
{
	int64_t prev = r->start_ns / 1000, us;
	uint64_t prev_goid = 0;
	bool ones = true;
	uint32_t i;

	jsonw__raw(b, "[");
	jsonw__i64(b, st->samples);
	jsonw__raw(b, ",[");
	for (i = 0; i < st->nframes; i++) {
		if (i)
			jsonw__raw(b, ",");
		jsonw__i64(b, st->frames[i]);
	}
	jsonw__raw(b, "],[");
	for (i = 0; i < st->ntimes; i++) {
		if (i)
			jsonw__raw(b, ",");
		us = st->times[i].ns / 1000;
		jsonw__i64(b, us - prev);
		prev = us;
	}
	jsonw__raw(b, "],[");
	for (i = 0; i < st->ntimes; i++) {
		if (i)
			jsonw__raw(b, ",");
		jsonw__i64(b, (int64_t)(st->times[i].goid - prev_goid));
		prev_goid = st->times[i].goid;
		ones &= st->times[i].weight == 1;
	}
	jsonw__raw(b, "]");
	if (r->origin == REC_WALL) {
		jsonw__raw(b, ",[");
		for (i = 0; !ones && i < st->ntimes; i++) {
			if (i)
				jsonw__raw(b, ",");
			jsonw__i64(b, (int64_t)(st->times[i].weight & INT64_MAX));
		}
		jsonw__raw(b, "]");
	}
	if (r->origin == REC_ALLOC) {
		jsonw__raw(b, ",null,");
		jsonw__i64(b, st->alloc_objects);
		jsonw__raw(b, ",");
		jsonw__i64(b, st->alloc_bytes);
	}
	jsonw__raw(b, "]");
}

/* One record as a row of record_fields: strings by index (-1: null), times after BASE_US. */
static void put_record(struct strbuf *b, const struct recset_rec *r, bool full, int64_t base_us)
{
	const int64_t row[] = {
		r->trace_id, r->trace_source, r->span_id, r->inherited, r->labels, r->pid, r->comm,
		r->service, r->container_id, r->pod_uid,
		r->origin == REC_SAMPLING ? 0 : r->origin == REC_WALL ? 1 : 2, r->state,
		r->wait_reason, (int64_t)r->samples, r->cpu_ns, r->wall_ns,
		r->start_ns / 1000 - base_us, r->end_ns / 1000 - base_us, r->input, r->role, full,
		r->alloc_objects, r->alloc_bytes,
	};
	uint32_t i;

	jsonw__raw(b, "[");
	for (i = 0; i < sizeof(row) / sizeof(row[0]); i++) {
		jsonw__i64(b, row[i]);
		jsonw__raw(b, ",");
	}
	jsonw__raw(b, "[");
	for (i = 0; full && i < r->nstacks; i++) {
		if (i)
			jsonw__raw(b, ",");
		put_stack(b, r, &r->stacks[i]);
	}
	jsonw__raw(b, "]]");
}

static int by_trace_start(const void *pa, const void *pb)
{
	const struct recset_request *a = *(void *const *)pa, *b = *(void *const *)pb;

	if (a->trace != b->trace)
		return a->trace < b->trace ? -1 : 1;
	return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/*
 * Each trace's elapsed time, [trace, ns, requests] rows: the time its
 * requests were in flight in any service, a request seen in two services
 * (or by two sources) counted once. Each service's clock is its host's.
 */
static void put_elapsed(struct strbuf *b, const struct recset_trace *traces,
			const struct recset_request *q, size_t n)
{
	const struct recset_request **o = malloc((n + 1) * sizeof(*o));
	int64_t lo = 0, hi = 0, ns = 0;
	size_t i, count = 0, rows = 0;

	jsonw__raw(b, ",\"elapsed\":[");
	for (i = 0; o && i < n; i++)
		o[i] = &q[i];
	if (o)
		qsort(o, n, sizeof(*o), by_trace_start);
	for (i = 0; o && i <= n; i++) {
		if (i < n && i && o[i]->trace == o[i - 1]->trace) {
			if (o[i]->start_ns > hi) {
				ns += hi - lo;
				lo = o[i]->start_ns;
			}
			if (o[i]->start_ns + o[i]->dur_ns > hi)
				hi = o[i]->start_ns + o[i]->dur_ns;
			count++;
			continue;
		}
		if (i) {
			jsonw__raw(b, rows++ ? ",[" : "[");
			jsonw__i64(b, traces[o[i - 1]->trace].trace_id);
			jsonw__raw(b, ",");
			jsonw__i64(b, ns + hi - lo);
			jsonw__raw(b, ",");
			jsonw__i64(b, count);
			jsonw__raw(b, "]");
		}
		if (i < n) {
			lo = o[i]->start_ns;
			hi = lo + o[i]->dur_ns;
			ns = 0;
			count = 1;
		}
	}
	jsonw__raw(b, "]");
	if (!o)
		b->oom = true;
	free(o);
}

/*
 * Every request of the traces in full, as rows [trace, input, pid,
 * service, goid, start_us, dur_us] (the trace as the records' trace_id),
 * up to REPORT_MAX_REQUESTS: past it the rest are counted, and each
 * trace's elapsed time is from its first sample to its last.
 */
static void put_requests(struct strbuf *b, struct recset *rs, const struct recset_trace *traces,
			 int64_t base_us)
{
	const struct recset_request *q = NULL;
	size_t i, n = 0, put = 0;

	q = recset__requests(rs, &n);
	jsonw__raw(b, ",\"request_fields\":[\"trace_id\",\"input\",\"pid\",\"service\",\"goid\","
		      "\"start_us\",\"dur_us\"],\"requests\":[");
	for (i = 0; i < n; i++) {
		const int64_t row[] = { traces[q[i].trace].trace_id, q[i].input, q[i].pid, q[i].service,
					(int64_t)(q[i].goid & INT64_MAX),
					q[i].start_ns / 1000 - base_us, q[i].dur_ns / 1000 };
		size_t j;

		if (!traces[q[i].trace].full || put >= REPORT_MAX_REQUESTS)
			continue;
		jsonw__raw(b, put++ ? ",[" : "[");
		for (j = 0; j < sizeof(row) / sizeof(row[0]); j++) {
			if (j)
				jsonw__raw(b, ",");
			jsonw__i64(b, row[j]);
		}
		jsonw__raw(b, "]");
	}
	jsonw__raw(b, "],\"requests_left_out\":");
	jsonw__i64(b, (int64_t)(n - put));
	put_elapsed(b, traces, q, n);
}

/* Digits grouped by thousands, as the page says its limits. */
static const char *grouped(uint64_t v, char buf[32])
{
	char digits[24];
	size_t n = snprintf(digits, sizeof(digits), "%" PRIu64, v), i, j = 0;

	for (i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = digits[i];
	}
	buf[j] = '\0';
	return buf;
}

/* The page's JSON: everything the script draws from. */
static int put_data(struct strbuf *b, struct recset *rs, const char *source)
{
	const struct recset_str *strs, *sets;
	const struct recset_frame *frames;
	const struct recset_trace *traces;
	const struct recset_rec *recs;
	struct others o = { .b = b };
	size_t i, nstrs, nsets, nframes, ntraces, nrecs, full, ninputs;
	const char *const *inputs;
	char rule[256], n1[32], n2[32];
	struct timespec now;
	int64_t base_us = 0;

	full = recset__choose(rs, REPORT_MAX_TRACES, REPORT_MAX_FRAMES, REPORT_MAX_TIMES, NULL);
	strs = recset__strings(rs, &nstrs);
	sets = recset__labelsets(rs, &nsets);
	frames = recset__frames(rs, &nframes);
	traces = recset__traces(rs, &ntraces);
	recs = recset__records(rs, &nrecs);
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(rule, sizeof(rule),
		 "flame graphs and timelines are drawn for the %zu costliest traces by CPU plus wall-clock "
		 "time (at most %d, holding at most %s stack frames and %s sample times)",
		 full, REPORT_MAX_TRACES, grouped(REPORT_MAX_FRAMES, n1), grouped(REPORT_MAX_TIMES, n2));
	jsonw__raw(b, "{\"format\":\"ctxprof-go report 1\",\"generator\":");
	jsonw__cstr(b, ctxprof_generator);
	jsonw__raw(b, ",\"source\":");
	jsonw__cstr(b, source);
	jsonw__raw(b, ",\"created_us\":");
	jsonw__i64(b, (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000);
	jsonw__raw(b, ",\"cpu_period_ns\":");
	jsonw__i64(b, recset__cpu_period(rs));
	jsonw__raw(b, ",\"wall_period_ns\":");
	jsonw__i64(b, recset__wall_period(rs));
	jsonw__raw(b, ",\"traces_total\":");
	jsonw__i64(b, ntraces);
	jsonw__raw(b, ",\"traces_full\":");
	jsonw__i64(b, full);
	jsonw__raw(b, ",\"cut_rule\":");
	jsonw__cstr(b, rule);
	jsonw__raw(b, ",\"events\":");
	jsonw__i64(b, recset__events(rs));
	jsonw__raw(b, ",\"duplicates\":");
	jsonw__i64(b, recset__duplicate_count(rs));
	/* the files the records came from, each on its host's clock */
	inputs = recset__inputs(rs, &ninputs);
	jsonw__raw(b, ",\"inputs\":[");
	for (i = 0; i < ninputs; i++) {
		if (i)
			jsonw__raw(b, ",");
		jsonw__cstr(b, inputs[i]);
	}
	jsonw__raw(b, "]");
	jsonw__raw(b, ",\"strings\":[");
	for (i = 0; i < nstrs; i++) {
		if (i)
			jsonw__raw(b, ",");
		jsonw__str(b, strs[i].s, strs[i].len);
	}
	jsonw__raw(b, "],\"labelsets\":[");
	for (i = 0; i < nsets; i++) {
		if (i)
			jsonw__raw(b, ",");
		jsonw__text(b, sets[i].s, sets[i].len);
	}
	jsonw__raw(b, "],\"frames\":[");
	for (i = 0; i < nframes; i++) {
		jsonw__raw(b, i ? ",[" : "[");
		jsonw__i64(b, frames[i].func);
		jsonw__raw(b, ",");
		jsonw__i64(b, frames[i].file);
		jsonw__raw(b, ",");
		jsonw__i64(b, frames[i].line);
		jsonw__raw(b, "]");
	}
	/* records' times after the first one's start: fewer digits to write and to read */
	for (i = 0; i < nrecs; i++)
		if (!i || recs[i].start_ns / 1000 < base_us)
			base_us = recs[i].start_ns / 1000;
	jsonw__raw(b, "],\"origins\":");
	jsonw__raw(b, origins);
	jsonw__raw(b, ",\"record_fields\":");
	jsonw__raw(b, record_fields);
	jsonw__raw(b, ",\"stack_fields\":");
	jsonw__raw(b, stack_fields);
	jsonw__raw(b, ",\"time_base_us\":");
	jsonw__i64(b, base_us);
	jsonw__raw(b, ",\"records\":[");
	if (!(o.groups = hashmap__new()))
		return -ENOMEM;
	for (i = 0; i < nrecs; i++) {
		bool in_full = traces[recs[i].trace].full;

		if (i)
			jsonw__raw(b, ",");
		put_record(b, &recs[i], in_full, base_us);
		if (!in_full && (o.err = others__add(&o, &recs[i])))
			break;
	}
	jsonw__raw(b, "],\"others\":[");
	hashmap__foreach(o.groups, put_other_group, &o);
	jsonw__raw(b, "]");
	put_requests(b, rs, traces, base_us);
	jsonw__raw(b, "}");
	hashmap__free(o.groups, other_group__free);
	return o.err ? o.err : b->oom ? -ENOMEM : 0;
}

/* The template with each @@NAME@@ filled in. */
static int put_page(struct strbuf *b, const struct strbuf *data)
{
	const char *t = (const char *)report_html, *end = t + report_html_len, *m, *close;

	while (t < end) {
		m = memmem(t, end - t, "@@", 2);
		close = m ? memmem(m + 2, end - m - 2, "@@", 2) : NULL;
		if (!m || !close) {
			strbuf__put(b, t, end - t);
			break;
		}
		strbuf__put(b, t, m - t);
#define IS(name) (close - m - 2 == sizeof(name) - 1 && !memcmp(m + 2, name, sizeof(name) - 1))
		if (IS("STYLE"))
			strbuf__put(b, report_css, report_css_len);
		else if (IS("SCRIPT"))
			strbuf__put(b, report_js, report_js_len);
		else if (IS("STYLE_CSP"))
			jsonw__raw(b, report_css_csp);
		else if (IS("SCRIPT_CSP"))
			jsonw__raw(b, report_js_csp);
		else if (IS("DATA"))
			strbuf__put(b, data->p, data->n);
		else
			return -EINVAL;
#undef IS
		t = close + 2;
	}
	return b->oom ? -ENOMEM : 0;
}

int report__write(struct recset *rs, const char *path, const char *source)
{
	struct strbuf data = {}, page = {};
	int ret;

	if (!(ret = put_data(&data, rs, source)) && !(ret = put_page(&page, &data)))
		ret = outfile__write(path, page.p, page.n);
	strbuf__free(&data);
	strbuf__free(&page);
	return ret;
}

static int report_write(void *w, const struct writer_dest *d)
{
	return report__write(w, d->path, d->source);
}

const struct writer_ops report_writer = {
	.what = "the report",
	.new = recset__writer_new,
	.add = recset__writer_add,
	.write = report_write,
	.free = recset__writer_free,
};
