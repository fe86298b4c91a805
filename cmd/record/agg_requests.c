// SPDX-License-Identifier: GPL-2.0
/* agg_requests.c: requests' spans begun and ended, into request records of the traces sampled. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/clock.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/vec.h"
#include "aggregate_priv.h"
#include "counted.h"
#include "trace_ids.h"

/* A trace's requests are written while a sample of it came within this many flushes */
#define SAMPLED_FLUSHES 3

/* A request begun on a goroutine, until it ends. */
struct open_span {
	uint64_t start_ns;
	uint64_t key[3]; /* tgid, goid, epoch: its key */
	uint8_t trace[TRACE_ID_LEN];
	uint32_t source; /* SPAN_LABEL, TRACE_CTX_* */
};

/* {pid, trace ID}: the key of a.sampled */
#define SAMPLED_KEY (4 + TRACE_ID_LEN)

static size_t sampled_key(uint32_t pid, const uint8_t *trace, uint8_t key[SAMPLED_KEY])
{
	memcpy(key, &pid, 4);
	memcpy(key + 4, trace, TRACE_ID_LEN);
	return SAMPLED_KEY;
}

/* A request that ended, until the flush counts it (or not: its trace has no sample). */
struct ended_span {
	uint64_t start_ns, end_ns, goid;
	uint32_t pid, source;
	uint8_t trace[TRACE_ID_LEN];
};

int agg_requests__init(struct aggregate *a)
{
	a->open_spans = hashmap__new();
	a->ended.size = sizeof(struct ended_span);
	a->sampled = hashmap__new();
	return a->open_spans && a->sampled ? 0 : -ENOMEM;
}

void agg_requests__free(struct aggregate *a)
{
	hashmap__free(a->open_spans, free);
	free(a->ended.items);
	hashmap__free(a->sampled, NULL);
}

/* The request record of PID's trace TRACE from SOURCE; NULL when out of memory. */
static struct counted *request_record(struct aggregate *a, uint32_t pid, const uint8_t *trace,
				      uint32_t source)
{
	uint8_t key[MAX_COUNTED_KEY];
	struct counted tmp = {}, *r;
	size_t klen;

	tmp.pid = pid;
	tmp.flags = COUNTED_F_TRACE | COUNTED_F_REQUEST | COUNTED_F_ROLE | COUNTED_F_OWN |
		    (source == TRACE_CTX_HEADER ? COUNTED_F_TRACEPARENT :
		     source == TRACE_CTX_OTEL	? COUNTED_F_OTEL :
						  0);
	memcpy(tmp.trace_id, trace, TRACE_ID_LEN);
	klen = agg_counted__key(&tmp, key);
	if ((r = hashmap__get(a->records, key, klen)))
		return r;
	/* as every record: room for its labels only (it has none) */
	if (!(r = malloc(offsetof(struct counted, labels) + tmp.nlabels * sizeof(tmp.labels[0]))))
		return NULL;
	memcpy(r, &tmp, offsetof(struct counted, labels));
	r->first_ns = UINT64_MAX;
	r->stacks = hashmap__new();
	if (!r->stacks || hashmap__add(a->records, key, klen, r)) {
		agg_counted__free(r);
		return NULL;
	}
	return r;
}

/* Open spans are forgotten when no end came for this long: a request no probe sees end */
#define SPAN_MAX_NS (300 * NSEC_PER_SEC)

/* The keys of the spans begun before BEFORE. */
struct span_sweep {
	uint64_t before;
	struct vec gone; /* uint64_t[3] each */
};

static void old_span(const void *key, size_t len, void *value, void *ctx)
{
	const struct open_span *sp = value;
	struct span_sweep *sw = ctx;
	uint64_t *k;

	(void)key;
	(void)len;
	if (sp->start_ns < sw->before && (k = vec__push(&sw->gone)))
		memcpy(k, sp->key, sizeof(sp->key));
}

int aggregate__add_span(struct aggregate *a, const void *data, size_t size)
{
	const struct span_event *e = data;
	uint64_t key[3] = { e->tgid, e->goid, e->epoch };
	struct ended_span *d;
	struct open_span *sp;

	if (size < sizeof(*e) || (e->kind != SPAN_BEGIN && e->kind != SPAN_END)) {
		a->stats.malformed++;
		return -EINVAL;
	}
	if (e->kind == SPAN_BEGIN) {
		if (hashmap__get(a->open_spans, key, sizeof(key)) || !(sp = calloc(1, sizeof(*sp))))
			return 0;
		sp->start_ns = e->time_ns;
		memcpy(sp->key, key, sizeof(key));
		sp->source = e->source;
		if (!trace_ids__pack_hex(e->trace, TRACE_ID_LEN, sp->trace) ||
		    hashmap__add(a->open_spans, key, sizeof(key), sp)) {
			free(sp);
			return 0;
		}
		return 0;
	}
	/* an end without its begin: a request that began before the recording */
	if (!(sp = hashmap__del(a->open_spans, key, sizeof(key))))
		return 0;
	/* a record each only at the flush, for the traces sampled: most are not */
	d = vec__push(&a->ended);
	if (d) {
		*d = (struct ended_span){ sp->start_ns, e->time_ns, e->goid, e->tgid, sp->source };
		memcpy(d->trace, sp->trace, TRACE_ID_LEN);
		a->stats.requests++;
	}
	free(sp);
	return d ? 0 : -ENOMEM;
}

/* The requests ended since the last flush, into their request records: those of sampled traces. */
static int count_requests(struct aggregate *a)
{
	const struct ended_span *d = a->ended.items;
	uint8_t key[SAMPLED_KEY];
	struct counted_stack *cs;
	struct counted *r;
	size_t i;
	int ret = 0;

	for (i = 0; i < a->ended.n && !ret; i++, d++) {
		/* the requests of a trace no sample has: no record, nothing lost */
		if (!hashmap__get(a->sampled, key, sampled_key(d->pid, d->trace, key))) {
			a->stats.requests_unsampled++;
			continue;
		}
		r = request_record(a, d->pid, d->trace, d->source);
		cs = r ? hashmap__get(r->stacks, "", 0) : NULL;
		if (r && !cs && (cs = calloc(1, sizeof(*cs))) && hashmap__add(r->stacks, "", 0, cs)) {
			free(cs);
			cs = NULL;
		}
		if (!cs) {
			ret = -ENOMEM;
			break;
		}
		cs->count++;
		r->samples++;
		r->elapsed_ns += d->end_ns - d->start_ns;
		if (d->start_ns < r->first_ns)
			r->first_ns = d->start_ns;
		if (d->end_ns > r->last_ns)
			r->last_ns = d->end_ns;
		agg_counted__keep_time(a, cs, false, d->start_ns, d->goid, d->end_ns - d->start_ns);
	}
	a->ended.n = 0;
	return ret;
}

/* Spans begun long ago whose end no probe saw (HTTP/2, grpc-go): forgotten. */
static void forget_old_spans(struct aggregate *a, uint64_t now)
{
	struct span_sweep sw = { .before = now - SPAN_MAX_NS, .gone.size = 3 * sizeof(uint64_t) };
	uint64_t *k = NULL;
	size_t i;

	if (now < SPAN_MAX_NS)
		return;
	hashmap__foreach(a->open_spans, old_span, &sw);
	for (i = 0, k = sw.gone.items; i < sw.gone.n; i++, k += 3)
		free(hashmap__del(a->open_spans, k, 3 * sizeof(uint64_t)));
	free(sw.gone.items);
}

struct stale {
	uintptr_t before;
	struct vec keys; /* uint8_t[SAMPLED_KEY] each */
};

static void stale_one(const void *key, size_t len, void *value, void *ctx)
{
	struct stale *st = ctx;
	void *k;

	if ((uintptr_t)value < st->before && (k = vec__push(&st->keys)))
		memcpy(k, key, len);
}

/* A record with samples of a live trace this interval: its trace is marked sampled. */
static void mark_one(const void *k, size_t klen, void *value, void *ctx)
{
	const struct counted *r = value;
	struct aggregate *a = ctx;
	uint8_t key[SAMPLED_KEY];
	size_t len;

	(void)k;
	(void)klen;
	if (!r->samples || (r->flags & (COUNTED_F_TRACE | COUNTED_F_INHERITED | COUNTED_F_REQUEST)) !=
				   COUNTED_F_TRACE)
		return;
	len = sampled_key(r->pid, r->trace_id, key);
	hashmap__del(a->sampled, key, len);
	hashmap__add(a->sampled, key, len, (void *)a->flushes);
}

/*
 * The traces this flush has samples of, marked; those without any for
 * long, forgotten. A request record is written only for a trace the
 * profile has: a service's every request would be a record otherwise.
 */
static void mark_sampled(struct aggregate *a)
{
	struct stale st = { .before = a->flushes - SAMPLED_FLUSHES, .keys.size = SAMPLED_KEY };
	size_t i;

	a->flushes++;
	hashmap__foreach(a->records, mark_one, a);
	if (a->flushes <= SAMPLED_FLUSHES)
		return;
	hashmap__foreach(a->sampled, stale_one, &st);
	for (i = 0; i < st.keys.n; i++)
		hashmap__del(a->sampled, (uint8_t *)st.keys.items + i * st.keys.size, st.keys.size);
	free(st.keys.items);
}

int agg_requests__flush(struct aggregate *a)
{
	forget_old_spans(a, now_ns(CLOCK_MONOTONIC));
	mark_sampled(a);
	return count_requests(a);
}
