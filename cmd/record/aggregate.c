// SPDX-License-Identifier: GPL-2.0
/* aggregate.c: counts samples per (pid, trace ID, label set, stack) and writes them as JSON lines. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "aggregate.h"

/* A record's flags: whether the goroutine had more labels, and which IDs its labels hold. */
#define RECORD_F_LABELS_CUT SAMPLE_F_LABELS_CUT
#define RECORD_F_TRACE (1U << 16) /* trace_id holds a packed 32-hex trace ID */
#define RECORD_F_SPAN (1U << 17) /* span_id holds a packed 16-hex span ID */
#define RECORD_F_TRACEPARENT (1U << 18) /* both came from the request's traceparent */
#define RECORD_F_OTEL (1U << 19) /* both came from a span the OpenTelemetry SDK records */

#define TRACE_ID_LEN (TRACE_HEX_LEN / 2)
#define SPAN_ID_LEN 8

struct record {
	uint32_t pid;
	uint32_t flags;
	uint32_t wall; /* ORIGIN_WALL records: state | wait reason << 8; 0 for CPU samples */
	uint8_t trace_id[TRACE_ID_LEN]; /* from the labels or the traceparent */
	uint8_t span_id[SPAN_ID_LEN];
	uint32_t nlabels;
	struct go_label labels[MAX_LABELS]; /* sorted by key, then value */
	uint64_t samples;
	uint64_t first_ns, last_ns;
	struct hashmap *stacks; /* frames (u64 array) -> uint64_t count */
};

/* The last full label set each CPU sent; events flagged SAMPLE_F_SAME_LABELS refer to it. */
struct cpu_labels {
	uint32_t tgid;
	uint32_t gen;
	uint32_t flags; /* SAMPLE_F_TRACEPARENT of the set */
	uint32_t nlabels;
	struct go_label labels[MAX_LABELS];
};

/* What building one record's output needs, kept from record to record. */
struct rec_build {
	struct rec_frame *frames;
	size_t nframes, capframes;
	struct rec_stack *stacks;
	size_t capstacks;
	struct rec_mapping *maps;
	size_t nmaps, capmaps;
	struct rec_label labels[MAX_LABELS];
	char trace[2 * TRACE_ID_LEN + 1], span[2 * SPAN_ID_LEN + 1];
};

struct aggregate {
	const char *const *trace_keys; /* in order of preference */
	size_t ntrace_keys;
	const char *const *span_keys;
	size_t nspan_keys;
	bool no_labels, no_traceparent, no_otel; /* --trace-sources without them */
	uint64_t period_ns;
	uint64_t wall_period_ns;
	uint64_t gen; /* flushes so far, plus one: slots of an older one are stale */
	int64_t mono_to_real_ns;
	struct hashmap *records; /* record key -> struct record */
	struct hashmap *cpus; /* cpu number -> struct cpu_labels */
	struct hashmap *reasons; /* pid -> struct go_wall_layout, for its wait reasons' names */
	struct agg_stats stats;
	agg_lookup_fn repair_lookup;
	void *repair_ctx;
	agg_sink_fn sink;
	void *sink_ctx;
	agg_progress_fn progress;
	void *progress_ctx;
	bool no_json;
	struct strbuf line; /* a record as written, and its newline */
	struct rec_build build;
};

void aggregate__set_sink(struct aggregate *a, agg_sink_fn sink, void *ctx, bool json)
{
	a->sink = sink;
	a->sink_ctx = ctx;
	a->no_json = !json;
}

static const char *const default_trace_keys[] = { AGG_DEFAULT_TRACE_KEYS };
static const char *const default_span_keys[] = { AGG_DEFAULT_SPAN_KEYS };

void aggregate__set_sources(struct aggregate *a, bool labels, bool traceparent, bool otel)
{
	a->no_labels = !labels;
	a->no_traceparent = !traceparent;
	a->no_otel = !otel;
}

void aggregate__set_keys(struct aggregate *a, const char *const *trace_keys, size_t ntrace,
			 const char *const *span_keys, size_t nspan)
{
	a->trace_keys = trace_keys;
	a->ntrace_keys = ntrace;
	a->span_keys = span_keys;
	a->nspan_keys = nspan;
}

void aggregate__set_progress(struct aggregate *a, agg_progress_fn fn, void *ctx)
{
	a->progress = fn;
	a->progress_ctx = ctx;
}

void aggregate__repair_leaves(struct aggregate *a, agg_lookup_fn lookup, void *ctx)
{
	a->repair_lookup = lookup;
	a->repair_ctx = ctx;
}

/* The event's stack, in BUF with the leaf's missing caller put back when there is one. */
static const uint64_t *repaired_stack(struct aggregate *a, const struct sample_event *e,
				      const uint64_t *stack, size_t *nframes, uint64_t *buf)
{
	struct agg_target t = {};
	uint64_t caller;

	if (!a->repair_lookup || !(e->flags & SAMPLE_F_TOP_WORDS) || *nframes == 0 ||
	    !a->repair_lookup(a->repair_ctx, e->tgid, e->time_ns, &t) || !t.sym)
		return stack;
	caller = symbolizer__leaf_caller(t.sym, e->time_ns, stack[0], e->sp, e->bp,
					 (const uint64_t *)e->top);
	if (!caller)
		return stack;
	buf[0] = stack[0];
	buf[1] = caller;
	/* the outermost frame gives way when the stack is full */
	if (*nframes == MAX_STACK_DEPTH)
		(*nframes)--;
	memcpy(buf + 2, stack + 1, (*nframes - 1) * sizeof(*buf));
	(*nframes)++;
	a->stats.repaired++;
	return buf;
}

static void record__free(void *p)
{
	struct record *r = p;

	if (!r)
		return;
	hashmap__free(r->stacks, free);
	free(r);
}

struct aggregate *aggregate__new(uint64_t period_ns, int64_t mono_to_real_ns)
{
	struct aggregate *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->period_ns = period_ns;
	a->gen = 1;
	a->mono_to_real_ns = mono_to_real_ns;
	aggregate__set_keys(a, default_trace_keys,
			    sizeof(default_trace_keys) / sizeof(default_trace_keys[0]),
			    default_span_keys, sizeof(default_span_keys) / sizeof(default_span_keys[0]));
	a->records = hashmap__new();
	a->cpus = hashmap__new();
	a->reasons = hashmap__new();
	if (!a->records || !a->cpus || !a->reasons) {
		aggregate__free(a);
		return NULL;
	}
	return a;
}

void aggregate__free(struct aggregate *a)
{
	if (!a)
		return;
	hashmap__free(a->records, record__free);
	hashmap__free(a->cpus, free);
	hashmap__free(a->reasons, free);
	strbuf__free(&a->line);
	free(a->build.frames);
	free(a->build.stacks);
	free(a->build.maps);
	free(a);
}

static size_t key_bytes(const struct go_label *l)
{
	return l->key_len < MAX_KEY_LEN ? l->key_len : MAX_KEY_LEN;
}

static size_t value_bytes(const struct go_label *l)
{
	return l->value_len < MAX_VALUE_LEN ? l->value_len : MAX_VALUE_LEN;
}

/* Orders labels by what they hold, so that map iteration order never splits a record. */
static int label_cmp(const void *pa, const void *pb)
{
	const struct go_label *a = pa, *b = pb;
	size_t ka = key_bytes(a), kb = key_bytes(b), va, vb;
	int c;

	c = memcmp(a->key, b->key, ka < kb ? ka : kb);
	if (c || ka != kb)
		return c ? c : (ka < kb ? -1 : 1);
	if (a->key_len != b->key_len)
		return a->key_len < b->key_len ? -1 : 1;
	va = value_bytes(a);
	vb = value_bytes(b);
	c = memcmp(a->value, b->value, va < vb ? va : vb);
	if (c || va != vb)
		return c ? c : (va < vb ? -1 : 1);
	return a->value_len < b->value_len ? -1 : a->value_len > b->value_len;
}

/* Serializes what identifies a record: only bytes that were read, never buffer slack. */
static size_t record_key(const struct record *r, uint8_t *buf)
{
	uint8_t *p = buf;
	uint32_t i;

	memcpy(p, &r->pid, 4);
	memcpy(p + 4, &r->flags, 4);
	memcpy(p + 8, &r->nlabels, 4);
	memcpy(p + 12, &r->wall, 4);
	p += 16;
	/* a traceparent's or a span's IDs are no label: they tell records apart on their own */
	if (r->flags & (RECORD_F_TRACEPARENT | RECORD_F_OTEL)) {
		memcpy(p, r->trace_id, TRACE_ID_LEN);
		memcpy(p + TRACE_ID_LEN, r->span_id, SPAN_ID_LEN);
		p += TRACE_ID_LEN + SPAN_ID_LEN;
	}
	for (i = 0; i < r->nlabels; i++) {
		const struct go_label *l = &r->labels[i];

		memcpy(p, &l->key_len, 4);
		memcpy(p + 4, &l->value_len, 4);
		p += 8;
		memcpy(p, l->key, key_bytes(l));
		p += key_bytes(l);
		memcpy(p, l->value, value_bytes(l));
		p += value_bytes(l);
	}
	return p - buf;
}

/*
 * The labels an event carries, or for SAMPLE_F_SAME_LABELS the ones its CPU
 * sent last under the same gen; NULL when those never arrived. Full events
 * are remembered exactly when the BPF side remembers them: walk succeeded.
 */
static const struct go_label *resolve_labels(struct aggregate *a, const struct sample_event *e,
					     uint32_t *n, uint32_t *flags)
{
	struct cpu_labels *c = hashmap__get(a->cpus, &e->cpu, sizeof(e->cpu));

	if (e->flags & SAMPLE_F_SAME_LABELS) {
		if (!c || c->tgid != e->tgid || c->gen != e->gen)
			return NULL;
		*n = c->nlabels;
		*flags = c->flags;
		return c->labels;
	}
	/* events of custom traces are always whole, and never referred to */
	if (!(e->flags & SAMPLE_F_READ_ERR) && e->origin == ORIGIN_SAMPLING) {
		if (!c && (c = calloc(1, sizeof(*c))) &&
		    hashmap__add(a->cpus, &e->cpu, sizeof(e->cpu), c) != 0) {
			free(c);
			c = NULL;
		}
		if (c) {
			c->tgid = e->tgid;
			c->gen = e->gen;
			c->flags = e->flags & SAMPLE_F_TRACEPARENT;
			c->nlabels = e->nlabels;
			memcpy(c->labels, e->labels, e->nlabels * sizeof(e->labels[0]));
		}
	}
	*n = e->nlabels;
	*flags = e->flags & SAMPLE_F_TRACEPARENT;
	return e->labels;
}

#define MAX_RECORD_KEY (16 + TRACE_ID_LEN + SPAN_ID_LEN + MAX_LABELS * sizeof(struct go_label))

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Packs a value of exactly 2 * NBYTES hex digits into OUT; false on anything else. */
static bool pack_hex(const struct go_label *l, uint8_t *out, size_t nbytes)
{
	size_t i;
	int hi, lo;

	if (l->value_len != 2 * nbytes)
		return false;
	for (i = 0; i < nbytes; i++) {
		hi = hexval(l->value[2 * i]);
		lo = hexval(l->value[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = hi << 4 | lo;
	}
	return true;
}

/* The label with the most preferred of KEYS, or NULL: the first key present decides. */
static const struct go_label *find_key(const struct record *r, const char *const *keys, size_t nkeys)
{
	size_t k, len;
	uint32_t i;

	for (k = 0; k < nkeys; k++) {
		len = strlen(keys[k]);
		for (i = 0; i < r->nlabels; i++) {
			if (r->labels[i].key_len == len && len <= MAX_KEY_LEN &&
			    !memcmp(r->labels[i].key, keys[k], len))
				return &r->labels[i];
		}
	}
	return NULL;
}

/*
 * A span ID written as a decimal u64 (dd-trace-go's "span id"), big-endian
 * into OUT, as its 16 hex digits read; false unless 1 to 20 digits that fit.
 */
static bool pack_decimal(const struct go_label *l, uint8_t out[SPAN_ID_LEN])
{
	uint64_t v = 0;
	uint32_t i;
	int d;

	if (l->value_len == 0 || l->value_len > 20)
		return false;
	for (i = 0; i < l->value_len; i++) {
		if (l->value[i] < '0' || l->value[i] > '9')
			return false;
		d = l->value[i] - '0';
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	for (i = 0; i < SPAN_ID_LEN; i++)
		out[i] = v >> (8 * (SPAN_ID_LEN - 1 - i));
	return true;
}

/*
 * Trace and span IDs from R's labels: a key whose value is not hex of the
 * right length gives none. Datadog's "span id" is decimal; other span keys
 * are 16 hex digits, or else decimal (a 16-digit decimal value there reads
 * as hex).
 */
static void find_ids(const struct aggregate *a, struct record *r)
{
	const struct go_label *l;
	bool dec;

	l = find_key(r, a->trace_keys, a->ntrace_keys);
	if (l && pack_hex(l, r->trace_id, TRACE_ID_LEN))
		r->flags |= RECORD_F_TRACE;
	l = find_key(r, a->span_keys, a->nspan_keys);
	if (!l)
		return;
	dec = l->key_len == 7 && !memcmp(l->key, "span id", 7);
	if (dec ? pack_decimal(l, r->span_id) || pack_hex(l, r->span_id, SPAN_ID_LEN) :
		  pack_hex(l, r->span_id, SPAN_ID_LEN) || pack_decimal(l, r->span_id))
		r->flags |= RECORD_F_SPAN;
}

/* N digits of lowercase hex, as W3C Trace Context requires, packed into OUT. */
static bool pack_lower_hex(const uint8_t *s, size_t n, uint8_t *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if ((s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f'))
			return false;
		out[i / 2] = (i % 2 ? out[i / 2] << 4 : 0) | hexval(s[i]);
	}
	return true;
}

static bool all_zero(const uint8_t *b, size_t n)
{
	while (n--) {
		if (*b++)
			return false;
	}
	return true;
}

/*
 * A traceparent header, "VV-<32 hex trace ID>-<16 hex parent span ID>-FF":
 * its IDs into R. False for what W3C Trace Context calls invalid in its
 * first 55 characters: version ff, anything but lowercase hex, an all-zero ID.
 */
static bool parse_traceparent(const struct go_label *l, struct record *r)
{
	uint8_t ver, flags, trace[TRACE_ID_LEN], span[SPAN_ID_LEN];
	const uint8_t *v = l->value;

	if (l->value_len != TRACEPARENT_LEN || v[2] != '-' || v[35] != '-' || v[52] != '-' ||
	    !pack_lower_hex(v, 2, &ver) || ver == 0xff || !pack_lower_hex(v + 53, 2, &flags) ||
	    !pack_lower_hex(v + 3, 2 * TRACE_ID_LEN, trace) || all_zero(trace, TRACE_ID_LEN) ||
	    !pack_lower_hex(v + 36, 2 * SPAN_ID_LEN, span) || all_zero(span, SPAN_ID_LEN))
		return false;
	memcpy(r->trace_id, trace, TRACE_ID_LEN);
	memcpy(r->span_id, span, SPAN_ID_LEN);
	return true;
}

/* The sampler's context entry names its source in its key: the record flag for it, or 0. */
static uint32_t context_source(const struct go_label *l)
{
	if (l->key_len == 11 && !memcmp(l->key, "traceparent", 11))
		return RECORD_F_TRACEPARENT;
	if (l->key_len == 8 && !memcmp(l->key, "otel-sdk", 8))
		return RECORD_F_OTEL;
	return 0;
}

/*
 * Checks an event and fills TMP with its record's identity (pid, IDs, sorted
 * labels); *STACK and *NFRAMES get its stack, its leaf's caller put back
 * (into BUF) when that applies. -EINVAL for a malformed event.
 */
static int parse_event(struct aggregate *a, const struct sample_event *e, size_t size,
		       struct record *tmp, const uint64_t **stack, size_t *nframes, uint64_t *buf)
{
	const struct go_label *labels, *tp = NULL;
	uint32_t nlabels, i, set_flags = 0, src;

	if (size < offsetof(struct sample_event, labels) || e->nlabels > MAX_LABELS ||
	    e->stack_bytes > sizeof(e->stack_room) || e->stack_bytes % 8 ||
	    size < offsetof(struct sample_event, labels) + e->nlabels * sizeof(struct go_label) +
			   e->stack_bytes) {
		a->stats.malformed++;
		return -EINVAL;
	}
	/* the stack follows the last label */
	*stack = (const uint64_t *)&e->labels[e->nlabels];
	*nframes = e->stack_bytes / 8;
	*stack = repaired_stack(a, e, *stack, nframes, buf);
	labels = resolve_labels(a, e, &nlabels, &set_flags);
	memset(tmp, 0, sizeof(*tmp));
	tmp->pid = e->tgid;
	if (e->flags & SAMPLE_F_READ_ERR) {
		/* a half-read label set could name the wrong trace: count it unlabeled */
		a->stats.read_errors++;
	} else if (!labels) {
		/* repeats a set whose full event we never saw (lost, or before we started) */
		a->stats.unresolved++;
	} else {
		/* the sampler put the request's or the span's context after the labels */
		if ((set_flags & SAMPLE_F_TRACEPARENT) && nlabels && context_source(&labels[nlabels - 1]))
			tp = &labels[--nlabels];
		tmp->flags = e->flags & RECORD_F_LABELS_CUT;
		tmp->nlabels = nlabels;
		for (i = 0; i < nlabels; i++) {
			tmp->labels[i] = labels[i];
			/* zero the slack so a copy never carries bytes past the lengths */
			memset(tmp->labels[i].key + key_bytes(&labels[i]), 0,
			       MAX_KEY_LEN - key_bytes(&labels[i]));
			memset(tmp->labels[i].value + value_bytes(&labels[i]), 0,
			       MAX_VALUE_LEN - value_bytes(&labels[i]));
		}
		qsort(tmp->labels, tmp->nlabels, sizeof(tmp->labels[0]), label_cmp);
		if (!a->no_labels)
			find_ids(a, tmp);
		/* labels win; a bad header is no trace ID, and no label either */
		src = tp ? context_source(tp) : 0;
		if (src && !(src == RECORD_F_OTEL ? a->no_otel : a->no_traceparent) &&
		    !(tmp->flags & RECORD_F_TRACE) && parse_traceparent(tp, tmp)) {
			tmp->flags &= ~RECORD_F_SPAN;
			tmp->flags |= RECORD_F_TRACE | RECORD_F_SPAN | src;
		}
	}
	if (e->origin == ORIGIN_WALL)
		tmp->wall = e->wall ?: WALL_RUNNING;
	tmp->first_ns = e->time_ns;
	tmp->last_ns = e->time_ns;
	return 0;
}

void aggregate__set_wall_period(struct aggregate *a, uint64_t period_ns)
{
	a->wall_period_ns = period_ns;
}

int aggregate__name_reasons(struct aggregate *a, uint32_t pid, const struct go_wall_layout *w)
{
	struct go_wall_layout *copy = malloc(sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	*copy = *w;
	/* a pid used again, by another binary */
	free(hashmap__del(a->reasons, &pid, sizeof(pid)));
	if (hashmap__add(a->reasons, &pid, sizeof(pid), copy)) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

static void count_n(struct aggregate *a, struct record *r, uint64_t n, uint64_t first_ns,
		    uint64_t last_ns)
{
	if (r->wall) {
		a->stats.wall_samples += n;
	} else {
		a->stats.samples += n;
		if (r->flags & RECORD_F_TRACE)
			a->stats.traced += n;
	}
	r->samples += n;
	if (first_ns < r->first_ns)
		r->first_ns = first_ns;
	if (last_ns > r->last_ns)
		r->last_ns = last_ns;
}

bool aggregate__repeat(struct aggregate *a, const struct agg_slot *slot, uint64_t n,
		       uint64_t first_ns, uint64_t last_ns)
{
	if (slot->gen != a->gen)
		return false;
	count_n(a, slot->record, n, first_ns, last_ns);
	*slot->count += n;
	return true;
}

uint64_t aggregate__gen(const struct aggregate *a)
{
	return a->gen;
}

int aggregate__add(struct aggregate *a, const void *data, size_t size)
{
	return aggregate__add_slot(a, data, size, NULL);
}

int aggregate__add_slot(struct aggregate *a, const void *data, size_t size, struct agg_slot *slot)
{
	const struct sample_event *e = data;
	uint64_t buf[MAX_STACK_DEPTH];
	const uint64_t *stack;
	struct record tmp, *r;
	uint8_t key[MAX_RECORD_KEY];
	uint64_t *count;
	size_t klen, nframes;

	if (parse_event(a, e, size, &tmp, &stack, &nframes, buf) != 0)
		return -EINVAL;
	klen = record_key(&tmp, key);
	r = hashmap__get(a->records, key, klen);
	if (!r) {
		r = malloc(sizeof(*r));
		if (!r)
			return -ENOMEM;
		*r = tmp;
		r->stacks = hashmap__new();
		r->first_ns = e->time_ns;
		r->last_ns = e->time_ns;
		if (!r->stacks || hashmap__add(a->records, key, klen, r) != 0) {
			record__free(r);
			return -ENOMEM;
		}
	}
	count = hashmap__get(r->stacks, stack, nframes * 8);
	if (!count) {
		count = calloc(1, sizeof(*count));
		if (!count || hashmap__add(r->stacks, stack, nframes * 8, count) != 0) {
			free(count);
			return -ENOMEM;
		}
	}
	count_n(a, r, 1, e->time_ns, e->time_ns);
	(*count)++;
	if (slot)
		*slot = (struct agg_slot){ a->gen, r, count };
	return 0;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* One counted stack of a record: its addresses, as the hashmap keeps them. */
struct stack_out {
	const uint64_t *pcs;
	size_t n;
	uint64_t samples;
};

struct stack_list {
	struct stack_out *items;
	size_t n;
};

/*
 * Every stack is its own: frames carry their address, so two stacks never
 * print the same and there is nothing to merge after symbolizing.
 */
static void list_stack(const void *key, size_t len, void *value, void *arg)
{
	struct stack_list *l = arg;

	l->items[l->n++] = (struct stack_out){ key, len / 8, *(uint64_t *)value };
}

struct collect {
	void **items;
	size_t n;
};

static void collect_one(const void *key, size_t len, void *value, void *arg)
{
	struct collect *c = arg;

	c->items[c->n++] = value;
}

static void collect(const struct hashmap *m, struct collect *c)
{
	c->n = 0;
	c->items = calloc(hashmap__size(m) + 1, sizeof(void *));
	if (c->items)
		hashmap__foreach(m, collect_one, c);
}

static int by_stack_samples(const void *pa, const void *pb)
{
	const struct stack_out *a = pa, *b = pb;

	return a->samples < b->samples ? 1 : a->samples > b->samples ? -1 : 0;
}

static int by_record_samples(const void *pa, const void *pb)
{
	const struct record *a = *(void *const *)pa, *b = *(void *const *)pb;

	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int by_start(const void *pa, const void *pb)
{
	const struct rec_mapping *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

static void *grow_array(void **items, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *p;

	if (need <= *cap)
		return *items;
	while (n < need)
		n *= 2;
	p = realloc(*items, n * size);
	if (!p)
		return NULL;
	*items = p;
	*cap = n;
	return p;
}

/* Adds the mapping that holds ADDR to the record being built, once. */
static int note_mapping(struct aggregate *a, const struct agg_target *t, uint64_t addr)
{
	struct rec_build *b = &a->build;
	struct mapping m;
	size_t i;

	if (!t->sym || !symbolizer__mapping(t->sym, t->time_ns, addr, &m))
		return 0;
	for (i = 0; i < b->nmaps; i++) {
		if (b->maps[i].start == m.start)
			return 0;
	}
	if (!grow_array((void **)&b->maps, &b->capmaps, b->nmaps + 1, sizeof(*b->maps)))
		return -ENOMEM;
	b->maps[b->nmaps++] = (struct rec_mapping){ m.start, m.limit, m.offset, m.file, m.build_id };
	return 0;
}

/*
 * The frames of PCS, leaf first, after the record's frames so far; "addr"
 * is the address looked up: the interrupted PC for the leaf, a return
 * address minus one for callers, and the same for every frame one address
 * expands to (inlined calls).
 */
static int add_frames(struct aggregate *a, const struct agg_target *t, const uint64_t *pcs,
		      size_t n)
{
	struct rec_build *b = &a->build;
	const struct frame *fr;
	uint64_t addr;
	size_t i, j, nf;

	for (i = 0; i < n; i++) {
		addr = i == 0 || !pcs[i] ? pcs[i] : pcs[i] - 1;
		nf = t->sym ? symbolizer__frames(t->sym, t->time_ns, pcs[i], i == 0, &fr) : 1;
		if (!grow_array((void **)&b->frames, &b->capframes, b->nframes + nf, sizeof(*b->frames)))
			return -ENOMEM;
		if (!t->sym) {
			b->frames[b->nframes++] = (struct rec_frame){ .addr = addr, .pc = pcs[i] };
			continue;
		}
		for (j = 0; j < nf; j++)
			b->frames[b->nframes++] = (struct rec_frame){
				.func = fr[j].func, .file = fr[j].file, .line = fr[j].line,
				.addr = addr, .pc = pcs[i], .inlined = fr[j].inlined,
			};
		if (note_mapping(a, t, addr))
			return -ENOMEM;
	}
	return 0;
}

/* R's stacks, most samples first, with their frames and mappings, into OUT. */
static int build_stacks(struct aggregate *a, const struct record *r, const struct agg_target *t,
			struct rec *out)
{
	struct stack_list l = { .items = calloc(hashmap__size(r->stacks) + 1, sizeof(*l.items)) };
	struct rec_build *b = &a->build;
	size_t i, first;
	int ret = 0;

	b->nframes = 0;
	b->nmaps = 0;
	if (!l.items ||
	    !grow_array((void **)&b->stacks, &b->capstacks, hashmap__size(r->stacks), sizeof(*b->stacks))) {
		free(l.items);
		return -ENOMEM;
	}
	hashmap__foreach(r->stacks, list_stack, &l);
	qsort(l.items, l.n, sizeof(*l.items), by_stack_samples);
	for (i = 0; i < l.n && !ret; i++) {
		first = b->nframes;
		ret = add_frames(a, t, l.items[i].pcs, l.items[i].n);
		/* offsets now: the frames array may move as it grows */
		b->stacks[i] = (struct rec_stack){ l.items[i].samples, b->nframes - first,
						   (const struct rec_frame *)(uintptr_t)first };
	}
	for (i = 0; i < l.n; i++)
		b->stacks[i].frames = b->frames + (uintptr_t)b->stacks[i].frames;
	if (b->nmaps)
		qsort(b->maps, b->nmaps, sizeof(*b->maps), by_start);
	out->stacks = b->stacks;
	out->nstacks = l.n;
	out->mappings = b->maps;
	out->nmappings = b->nmaps;
	free(l.items);
	return ret;
}

/* "running", "runnable", "waiting", "syscall": what records say */
static const char *wall_state__name(unsigned int state)
{
	switch (state) {
	case WALL_RUNNABLE:
		return "runnable";
	case WALL_WAITING:
		return "waiting";
	case WALL_SYSCALL:
		return "syscall";
	default:
		return "running";
	}
}

/* Go's own name of why a goroutine waits: NULL unless waiting, as the binary spells it. */
static const char *wait_reason(uint32_t wall, const struct go_wall_layout *w)
{
	uint32_t reason = wall >> 8 & 0xff;

	if ((wall & 0xff) != WALL_WAITING)
		return NULL;
	if (!w || reason >= w->nreasons || !w->reasons[reason][0])
		return "unknown";
	return w->reasons[reason];
}

/* R as the record written, into OUT, which points into A's build buffers until the next one. */
static int build_rec(struct aggregate *a, const struct record *r, const struct agg_target *t,
		     struct rec *out)
{
	struct rec_build *b = &a->build;
	uint32_t i;

	memset(out, 0, sizeof(*out));
	if (r->flags & RECORD_F_TRACE) {
		hex(r->trace_id, TRACE_ID_LEN, b->trace);
		out->trace_id = b->trace;
		out->trace_source = r->flags & RECORD_F_TRACEPARENT ? "traceparent" :
				    r->flags & RECORD_F_OTEL	    ? "otel-sdk" :
									      "label";
	}
	if (r->flags & RECORD_F_SPAN) {
		hex(r->span_id, SPAN_ID_LEN, b->span);
		out->span_id = b->span;
	}
	for (i = 0; i < r->nlabels; i++) {
		const struct go_label *l = &r->labels[i];

		b->labels[i] = (struct rec_label){
			l->key, l->value, key_bytes(l), value_bytes(l),
			l->key_len > MAX_KEY_LEN || l->value_len > MAX_VALUE_LEN,
		};
	}
	out->labels = b->labels;
	out->nlabels = r->nlabels;
	out->more_labels = r->flags & RECORD_F_LABELS_CUT;
	out->pid = r->pid;
	out->comm = (const uint8_t *)t->comm;
	out->comm_len = strlen(t->comm);
	if (t->container && t->container->id[0])
		out->container_id = t->container->id;
	if (t->container && t->container->pod_uid[0])
		out->pod_uid = t->container->pod_uid;
	if (t->container)
		out->ns_pid = t->container->ns_pid;
	out->samples = r->samples;
	out->cpu_ns = r->wall ? -1 : (int64_t)(r->samples * a->period_ns);
	if (r->wall) {
		out->origin = REC_WALL;
		out->wall_ns = r->samples * a->wall_period_ns;
		out->state = wall_state__name(r->wall & 0xff);
		out->wait_reason = wait_reason(r->wall, hashmap__get(a->reasons, &r->pid, sizeof(r->pid)));
	}
	out->start_ns = r->first_ns + a->mono_to_real_ns;
	out->end_ns = r->last_ns + a->mono_to_real_ns;
	return build_stacks(a, r, t, out);
}

/* One record out: a JSON line, and to the sink. 0, or -errno when it was not written. */
static int emit(struct aggregate *a, const struct rec *r, FILE *out)
{
	int ret;

	if (!a->no_json) {
		a->line.n = 0;
		if ((ret = rec__json(r, &a->line)))
			return ret;
		/* stdio keeps the errno of the write(2) that failed */
		errno = 0;
		if (fwrite(a->line.p, 1, a->line.n, out) != a->line.n)
			return errno ? -errno : -EIO;
	}
	return a->sink ? a->sink(a->sink_ctx, r) : 0;
}

int aggregate__write_event(struct aggregate *a, const void *data, size_t size, FILE *out,
			   agg_lookup_fn lookup, void *ctx)
{
	const struct sample_event *e = data;
	uint64_t buf[MAX_STACK_DEPTH], one = 1;
	struct agg_target t = {};
	const uint64_t *stack;
	struct record r;
	struct rec rec;
	size_t nframes;
	char comm[24]; /* the task's name */
	int ret;

	if (parse_event(a, e, size, &r, &stack, &nframes, buf) != 0)
		return -EINVAL;
	r.samples = 1;
	r.stacks = hashmap__new();
	if (!r.stacks || hashmap__add(r.stacks, stack, nframes * 8, &one) != 0) {
		hashmap__free(r.stacks, NULL);
		return -ENOMEM;
	}
	if (!lookup(ctx, e->tgid, e->time_ns, &t))
		t.sym = NULL;
	t.time_ns = e->time_ns;
	/* the task's name when the event happened, not whatever /proc says later */
	memcpy(comm, e->comm, sizeof(e->comm));
	comm[sizeof(e->comm)] = '\0';
	t.comm = comm;
	ret = build_rec(a, &r, &t, &rec);
	hashmap__free(r.stacks, NULL);
	if (ret)
		return ret;
	rec.origin = e->origin == ORIGIN_CUSTOM ? REC_CUSTOM : REC_UPROBE;
	rec.context = e->context;
	rec.tid = e->tid;
	rec.has_goid = e->flags & SAMPLE_F_CURG && !(e->flags & SAMPLE_F_READ_ERR);
	rec.goid = e->goid;
	/* an event is a moment, not CPU time */
	rec.cpu_ns = -1;
	ret = emit(a, &rec, out);
	if (!ret)
		a->stats.events++;
	return ret;
}

int aggregate__flush(struct aggregate *a, FILE *out, agg_lookup_fn lookup, void *ctx)
{
	struct hashmap *records = a->records;
	struct agg_target t;
	struct collect all;
	struct rec rec;
	size_t i;
	int n = 0, ret = 0;

	/* samples that arrive while these are written count towards the next flush */
	a->gen++;
	a->records = hashmap__new();
	if (!a->records) {
		a->records = records;
		return -ENOMEM;
	}
	collect(records, &all);
	if (!all.items) {
		hashmap__free(records, record__free);
		return -ENOMEM;
	}
	qsort(all.items, all.n, sizeof(void *), by_record_samples);
	for (i = 0; i < all.n && !ret; i++) {
		struct record *r = all.items[i];

		memset(&t, 0, sizeof(t));
		if (!lookup(ctx, r->pid, r->last_ns, &t)) {
			t.comm = "";
			t.sym = NULL;
		}
		t.time_ns = r->last_ns;
		ret = build_rec(a, r, &t, &rec);
		if (!ret)
			ret = emit(a, &rec, out);
		if (!ret)
			n++;
		/* many records take a while: the rings must not fill meanwhile */
		if (a->progress && i % 64 == 63)
			a->progress(a->progress_ctx);
	}
	/* a line in stdio's buffer is not written yet */
	errno = 0;
	if (!ret && !a->no_json && fflush(out) != 0)
		ret = errno ? -errno : -EIO;
	free(all.items);
	/* with stdio's buffer in between, none of them is known to be written */
	if (ret)
		n = 0;
	a->stats.unwritten += all.n - n;
	hashmap__free(records, record__free);
	a->stats.records += n;
	return ret ? ret : n;
}

void aggregate__stats(const struct aggregate *a, struct agg_stats *out)
{
	*out = a->stats;
}
