// SPDX-License-Identifier: GPL-2.0
/* speedscope.c: records as speedscope's file format (https://www.speedscope.app/file-format-schema.json). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "cmd/util/outfile.h"
#include "cmd/util/vec.h"
#include "cmd/util/version.h"
#include "jsonw.h"
#include "speedscope.h"

/* The profiles of a trace, or of the whole run: what each weighs, and in what unit. */
enum kind { KIND_CPU, KIND_WALL, KIND_ALLOC, KINDS };

static const struct {
	enum rec_origin origin;
	const char *what, *unit;
} kinds[KINDS] = {
	[KIND_CPU] = { REC_SAMPLING, "CPU", "nanoseconds" },
	[KIND_WALL] = { REC_WALL, "goroutine time", "nanoseconds" },
	[KIND_ALLOC] = { REC_ALLOC, "allocated bytes", "bytes" },
};

struct writer {
	const struct recset_str *strs;
	const struct recset_frame *frames;
	const struct recset_rec *recs;
	const struct recset_trace *traces;
	size_t nrecs, ntraces;
	int32_t *fmap; /* a recset frame's speedscope frame, -1 until known */
	struct hashmap *ids; /* name, NUL, file -> speedscope frame + 1 */
	size_t nframes;
	struct strbuf shared; /* the frames, as written */
	struct strbuf out, samples, weights, key;
	struct vec stack; /* uint32_t frames, root first */
	uint32_t *by_trace, *first; /* record indices by trace: by_trace[first[t] .. first[t + 1]) */
	int err;
};

/* A speedscope frame for NAME (in FILE), added when new; -1 when out of memory. */
static int32_t frame(struct writer *w, const char *name, const char *file)
{
	void *id;

	w->key.n = 0;
	jsonw__raw(&w->key, name);
	strbuf__put(&w->key, "", 1);
	if (file)
		jsonw__raw(&w->key, file);
	if (w->key.oom)
		return -1;
	id = hashmap__get(w->ids, w->key.p, w->key.n);
	if (id)
		return (int32_t)((uintptr_t)id - 1);
	if (hashmap__add(w->ids, w->key.p, w->key.n, (void *)(uintptr_t)(w->nframes + 1)))
		return -1;
	jsonw__raw(&w->shared, w->nframes ? ",{\"name\":" : "{\"name\":");
	jsonw__cstr(&w->shared, name);
	if (file) {
		jsonw__raw(&w->shared, ",\"file\":");
		jsonw__cstr(&w->shared, file);
	}
	jsonw__raw(&w->shared, "}");
	return (int32_t)w->nframes++;
}

/* A function as one frame, whatever the line: speedscope merges frames by their name and file. */
static int32_t func_frame(struct writer *w, uint32_t id)
{
	const struct recset_frame *f = &w->frames[id];

	if (w->fmap[id] < 0)
		w->fmap[id] = frame(w, w->strs[f->func].s, f->file >= 0 ? w->strs[f->file].s : NULL);
	return w->fmap[id];
}

static const char *str(const struct writer *w, int32_t i)
{
	return i >= 0 ? w->strs[i].s : NULL;
}

/* "[chan receive]": what a wall record's goroutines were doing, as a leaf */
static int32_t wait_frame(struct writer *w, const struct recset_rec *r)
{
	const char *state = str(w, r->state), *reason = str(w, r->wait_reason);
	char name[256];

	snprintf(name, sizeof(name), "[%s]",
		 state && !strcmp(state, "waiting") && reason ? reason : state ?: "?");
	return frame(w, name, NULL);
}

static const char *trace_name(const struct writer *w, const struct recset_trace *t)
{
	return t->trace_id >= 0			   ? w->strs[t->trace_id].s :
	       t->trace_id == RECSET_INHERITED ? "inherited, request ended" :
						 "no trace ID";
}

/* W's stack: OUTER frames, then ST's from the root, then the wait of wall record R. */
static int build_stack(struct writer *w, const int32_t *outer, size_t nouter,
		       const struct recset_rec *r, const struct recset_stack *st)
{
	uint32_t *s;
	int32_t id;
	size_t i;

	w->stack.n = 0;
	s = vec__extend(&w->stack, nouter + st->nframes + 1);
	if (!s)
		return -ENOMEM;
	for (i = 0; i < nouter; i++)
		*s++ = outer[i];
	for (i = st->nframes; i-- > 0;) {
		if ((id = func_frame(w, st->frames[i])) < 0)
			return -ENOMEM;
		*s++ = id;
	}
	if (r->origin == REC_WALL) {
		if ((id = wait_frame(w, r)) < 0)
			return -ENOMEM;
		*s++ = id;
	}
	w->stack.n = s - (uint32_t *)w->stack.items;
	return 0;
}

/* One sample of a sampled profile: W's stack, with its WEIGHT (ns, or bytes). */
static void add_sample(struct writer *w, int64_t weight)
{
	const uint32_t *s = w->stack.items;
	size_t i;

	jsonw__raw(&w->samples, w->samples.n ? ",[" : "[");
	for (i = 0; i < w->stack.n; i++) {
		if (i)
			jsonw__raw(&w->samples, ",");
		jsonw__i64(&w->samples, s[i]);
	}
	jsonw__raw(&w->samples, "]");
	if (w->weights.n)
		jsonw__raw(&w->weights, ",");
	jsonw__i64(&w->weights, weight);
}

static void start_profile(struct writer *w, const char *type, const char *name, enum kind k)
{
	jsonw__raw(&w->out, w->out.n ? ",{\"type\":\"" : "{\"type\":\"");
	jsonw__raw(&w->out, type);
	jsonw__raw(&w->out, "\",\"name\":");
	w->key.n = 0;
	jsonw__raw(&w->key, name);
	jsonw__raw(&w->key, " · ");
	jsonw__raw(&w->key, kinds[k].what);
	jsonw__str(&w->out, w->key.p, w->key.n);
	jsonw__raw(&w->out, ",\"unit\":\"");
	jsonw__raw(&w->out, kinds[k].unit);
	jsonw__raw(&w->out, "\",\"startValue\":0,\"endValue\":");
}

static void end_sampled(struct writer *w, int64_t total)
{
	jsonw__i64(&w->out, total);
	jsonw__raw(&w->out, ",\"samples\":[");
	strbuf__put(&w->out, w->samples.p, w->samples.n);
	jsonw__raw(&w->out, "],\"weights\":[");
	strbuf__put(&w->out, w->weights.p, w->weights.n);
	jsonw__raw(&w->out, "]}");
	w->samples.n = w->weights.n = 0;
}

/*
 * The first N samples of ST, of record R, as what they weigh: CPU or wall
 * time, or bytes allocated. A stack's bytes are unbiased as a whole, not
 * per sample: each of its samples has an equal share, the remainder
 * spread a byte each, so that any split of them adds up to the stack's.
 */
static int64_t first_samples(const struct recset_rec *r, const struct recset_stack *st, uint64_t n)
{
	if (r->origin == REC_ALLOC)
		return st->samples ?
			       (int64_t)((unsigned __int128)st->alloc_bytes * n / st->samples) : 0;
	return (int64_t)n * ((r->origin == REC_WALL ? r->wall_ns : r->cpu_ns) / (int64_t)r->samples);
}

/* The whole run, of kind KD: every trace's stacks under its ID and its process. */
static int whole_run(struct writer *w, enum kind kd, const uint32_t *order)
{
	int64_t total = 0, v;
	int32_t outer[2];
	size_t i, j, k;
	int ret;

	for (i = 0; i < w->ntraces; i++) {
		const struct recset_trace *t = &w->traces[order[i]];

		if ((outer[0] = frame(w, trace_name(w, t), NULL)) < 0)
			return -ENOMEM;
		for (j = w->first[order[i]]; j < w->first[order[i] + 1]; j++) {
			const struct recset_rec *r = &w->recs[w->by_trace[j]];

			if (r->origin != kinds[kd].origin)
				continue;
			/* the service, as its SDK names it when the record says so */
			if ((outer[1] = frame(w, str(w, r->service >= 0 ? r->service : r->comm), NULL)) < 0)
				return -ENOMEM;
			for (k = 0; k < r->nstacks; k++) {
				if ((ret = build_stack(w, outer, 2, r, &r->stacks[k])))
					return ret;
				v = first_samples(r, &r->stacks[k], r->stacks[k].samples);
				add_sample(w, v);
				total += v;
			}
		}
	}
	if (!total)
		return 0;
	start_profile(w, "sampled", "whole run", kd);
	end_sampled(w, total);
	return 0;
}

/* One sample (or look) of a trace, for its profiles in time order. */
struct timed {
	int64_t end_ns; /* INT64_MAX: not known, after the rest */
	int64_t ns; /* the time it stands for; an allocation's, the bytes */
	const struct recset_rec *r;
	const struct recset_stack *st;
};

static int by_end(const void *pa, const void *pb)
{
	const struct timed *a = pa, *b = pb;

	return a->end_ns < b->end_ns ? -1 : a->end_ns > b->end_ns;
}

/* TRACE's samples of kind KD, each timed one, then the rest of each stack, in time order. */
static struct timed *trace_samples(struct writer *w, uint32_t trace, enum kind kd, size_t *n,
				   bool *untimed)
{
	struct vec v = { .size = sizeof(struct timed) };
	struct timed *s;
	uint64_t weights;
	size_t j, k, i;

	*untimed = false;
	for (j = w->first[trace]; j < w->first[trace + 1]; j++) {
		const struct recset_rec *r = &w->recs[w->by_trace[j]];

		if (r->origin != kinds[kd].origin)
			continue;
		for (k = 0; k < r->nstacks; k++) {
			const struct recset_stack *st = &r->stacks[k];

			weights = 0;
			for (i = 0; i < st->ntimes; i++) {
				if (!(s = vec__push(&v)))
					goto oom;
				*s = (struct timed){ st->times[i].ns,
						     first_samples(r, st, weights + st->times[i].weight) -
							     first_samples(r, st, weights),
						     r, st };
				weights += st->times[i].weight;
			}
			if (weights < st->samples) {
				*untimed = true;
				if (!(s = vec__push(&v)))
					goto oom;
				*s = (struct timed){ INT64_MAX,
						     first_samples(r, st, st->samples) -
							     first_samples(r, st, weights),
						     r, st };
			}
		}
	}
	if (v.n)
		qsort(v.items, v.n, sizeof(struct timed), by_end);
	*n = v.n;
	return v.items ?: calloc(1, 1);
oom:
	free(v.items);
	return NULL;
}

static void event(struct writer *w, char type, uint32_t frame, int64_t at)
{
	char buf[80];

	snprintf(buf, sizeof(buf), "%s{\"type\":\"%c\",\"frame\":%u,\"at\":%lld}",
		 w->samples.n ? "," : "", type, frame, (long long)at);
	jsonw__raw(&w->samples, buf);
}

/*
 * NAME's samples S (N of them, all timed, in time order) at their own
 * times, after the first one's start: each stands for the period before it.
 * A sample that would overlap the one before (two goroutines of the trace
 * on two CPUs at once) starts where that one ends, so that every
 * nanosecond is drawn once; a gap closes every frame.
 */
static int evented(struct writer *w, const char *name, const struct timed *s, size_t n)
{
	struct vec open = { .size = sizeof(uint32_t) };
	int64_t t0 = s[0].end_ns - s[0].ns, cursor = t0, start;
	const uint32_t *st;
	uint32_t *o;
	size_t i, k, same;
	int ret = 0;

	for (i = 0; i < n && !ret; i++) {
		start = s[i].end_ns - s[i].ns > cursor ? s[i].end_ns - s[i].ns : cursor;
		if ((ret = build_stack(w, NULL, 0, s[i].r, s[i].st)))
			break;
		st = w->stack.items;
		o = open.items;
		same = 0;
		while (start == cursor && same < open.n && same < w->stack.n && o[same] == st[same])
			same++;
		for (k = open.n; k-- > same;)
			event(w, 'C', o[k], cursor - t0);
		open.n = same;
		for (k = same; k < w->stack.n; k++) {
			if (!(o = vec__push(&open))) {
				ret = -ENOMEM;
				break;
			}
			*o = st[k];
			event(w, 'O', st[k], start - t0);
		}
		cursor = start + s[i].ns;
	}
	for (k = open.n; k-- > 0;)
		event(w, 'C', ((uint32_t *)open.items)[k], cursor - t0);
	free(open.items);
	if (ret)
		return ret;
	start_profile(w, "evented", name, KIND_CPU);
	jsonw__i64(&w->out, cursor - t0);
	jsonw__raw(&w->out, ",\"events\":[");
	strbuf__put(&w->out, w->samples.p, w->samples.n);
	jsonw__raw(&w->out, "]}");
	w->samples.n = 0;
	return 0;
}

/* A sampled profile of S in their order (time order: speedscope's "Time Order" view follows it). */
static int sampled(struct writer *w, const char *name, enum kind kd, const struct timed *s,
		   size_t n)
{
	int64_t total = 0;
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		if ((ret = build_stack(w, NULL, 0, s[i].r, s[i].st)))
			return ret;
		add_sample(w, s[i].ns);
		total += s[i].ns;
	}
	start_profile(w, "sampled", name, kd);
	end_sampled(w, total);
	return 0;
}

/*
 * The profiles of trace T: its CPU, evented when every sample has its
 * time; its wall clock; its allocated bytes (an allocation is a moment,
 * not a span: sampled, in time order).
 */
static int trace_profiles(struct writer *w, uint32_t t)
{
	const char *name = trace_name(w, &w->traces[t]);
	struct timed *s;
	enum kind kd;
	bool untimed;
	size_t n;
	int ret;

	for (kd = 0; kd < KINDS; kd++) {
		if (!(s = trace_samples(w, t, kd, &n, &untimed)))
			return -ENOMEM;
		ret = !n ? 0 :
		      kd == KIND_CPU && !untimed ? evented(w, name, s, n) :
						   sampled(w, name, kd, s, n);
		free(s);
		if (ret)
			return ret;
	}
	return 0;
}

/* Record indices grouped by trace, in the order they came. */
static int index_traces(struct writer *w)
{
	size_t i;

	w->first = calloc(w->ntraces + 2, sizeof(*w->first));
	w->by_trace = malloc((w->nrecs + 1) * sizeof(*w->by_trace));
	if (!w->first || !w->by_trace)
		return -ENOMEM;
	for (i = 0; i < w->nrecs; i++)
		w->first[w->recs[i].trace + 2]++;
	for (i = 2; i < w->ntraces + 2; i++)
		w->first[i] += w->first[i - 1];
	for (i = 0; i < w->nrecs; i++)
		w->by_trace[w->first[w->recs[i].trace + 1]++] = i;
	return 0;
}

static int write_document(struct writer *w, const char *path, const char *name)
{
	struct strbuf doc = {};
	int ret;

	jsonw__raw(&doc, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"name\":");
	jsonw__cstr(&doc, name);
	jsonw__raw(&doc, ",\"exporter\":");
	jsonw__cstr(&doc, ctxprof_generator);
	jsonw__raw(&doc, ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
	strbuf__put(&doc, w->shared.p, w->shared.n);
	jsonw__raw(&doc, "]},\"profiles\":[");
	strbuf__put(&doc, w->out.p, w->out.n);
	jsonw__raw(&doc, "]}\n");
	ret = doc.oom ? -ENOMEM : outfile__write(path, doc.p, doc.n);
	strbuf__free(&doc);
	return ret;
}

int speedscope__write(struct recset *rs, const char *path, const char *name)
{
	struct writer w = { .stack.size = sizeof(uint32_t) };
	size_t i, nframes, nstrs, full;
	uint32_t *order = NULL;
	int ret;

	w.strs = recset__strings(rs, &nstrs);
	w.frames = recset__frames(rs, &nframes);
	w.recs = recset__records(rs, &w.nrecs);
	w.traces = recset__traces(rs, &w.ntraces);
	order = malloc((w.ntraces + 1) * sizeof(*order));
	w.fmap = malloc((nframes + 1) * sizeof(*w.fmap));
	w.ids = hashmap__new();
	if (!order || !w.fmap || !w.ids || (ret = index_traces(&w))) {
		ret = -ENOMEM;
		goto out;
	}
	memset(w.fmap, 0xff, (nframes + 1) * sizeof(*w.fmap));
	full = recset__choose(rs, SPEEDSCOPE_MAX_TRACES, UINT64_MAX, UINT64_MAX, order);
	for (i = 0; i < KINDS && !ret; i++)
		ret = whole_run(&w, i, order);
	if (ret)
		goto out;
	for (i = 0; i < full && !ret; i++)
		ret = trace_profiles(&w, order[i]);
	if (!ret && (w.shared.oom || w.out.oom || w.samples.oom || w.weights.oom))
		ret = -ENOMEM;
	if (!ret)
		ret = write_document(&w, path, name);
out:
	free(order);
	free(w.fmap);
	free(w.first);
	free(w.by_trace);
	free(w.stack.items);
	hashmap__free(w.ids, NULL);
	strbuf__free(&w.shared);
	strbuf__free(&w.out);
	strbuf__free(&w.samples);
	strbuf__free(&w.weights);
	strbuf__free(&w.key);
	return ret;
}

static int speedscope_write(void *w, const struct writer_dest *d)
{
	return speedscope__write(w, d->path, d->source);
}

const struct writer_ops speedscope_writer = {
	.what = "the speedscope file",
	.new = recset__writer_new,
	.add = recset__writer_add,
	.write = speedscope_write,
	.free = recset__writer_free,
};
