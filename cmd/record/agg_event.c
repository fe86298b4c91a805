// SPDX-License-Identifier: GPL-2.0
/* agg_event.c: a sample event read into what it counts: its stack, its labels sorted, its IDs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "aggregate_priv.h"
#include "counted.h"
#include "trace_ids.h"

/* The last full label set each CPU sent; events flagged SAMPLE_F_SAME_LABELS refer to it. */
struct cpu_labels {
	uint32_t tgid;
	uint32_t gen;
	uint32_t flags; /* SAMPLE_F_TRACEPARENT of the set */
	uint32_t nlabels;
	struct go_label labels[MAX_LABELS];
};

/*
 * The link register under a signal frame (FRAME_MAYBE, ustack.bpf.h) is
 * the interrupted function's caller only if that function had not stored
 * it yet: SP delta 0 at the interrupted PC. Else it is dropped, as when
 * there is no telling (no leaf repair, code without a pcsp table), and
 * when the frame after it is the same address: FP was at a record made
 * for the call (Go's calls of duffzero and duffcopy), which holds LR too.
 * The stack goes to BUF when it changes.
 */
static const uint64_t *settle_signal_frames(struct aggregate *a, const struct sample_event *e,
					    const uint64_t *stack, size_t *nframes, uint64_t *buf)
{
	struct agg_target t = {};
	size_t i, n = 0;
	bool known;

	for (i = 0; i < *nframes && !(stack[i] & FRAME_MAYBE); i++)
		;
	if (i == *nframes)
		return stack;
	known = a->repair && a->repair_lookup &&
		a->repair_lookup(a->repair_ctx, e->tgid, e->time_ns, &t) && t.sym;
	for (i = 0; i < *nframes; i++) {
		if (!(stack[i] & FRAME_MAYBE))
			buf[n++] = stack[i];
		else if (known && n && symbolizer__sp_delta(t.sym, e->time_ns, buf[n - 1] & ~FRAME_TAGS) == 0 &&
			 !(i + 1 < *nframes && (stack[i + 1] & ~FRAME_TAGS) == (stack[i] & ~FRAME_TAGS)))
			buf[n++] = stack[i] & ~FRAME_MAYBE;
	}
	*nframes = n;
	return buf;
}

/*
 * The event's stack, in BUF with the leaf's missing caller put back when
 * there is one. A caller the walk has next already came from a record
 * made for the leaf's call (Go's calls of duffzero and duffcopy).
 */
static const uint64_t *repaired_stack(struct aggregate *a, const struct sample_event *e,
				      const uint64_t *stack, size_t *nframes, uint64_t *buf)
{
	struct agg_target t = {};
	uint64_t caller;

	if (!a->repair || !a->repair_lookup || !(e->flags & SAMPLE_F_TOP_WORDS) || *nframes == 0 ||
	    !a->repair_lookup(a->repair_ctx, e->tgid, e->time_ns, &t) || !t.sym)
		return stack;
	caller = symbolizer__leaf_caller(t.sym, e->time_ns, stack[0], e->sp, e->bp,
					 (const uint64_t *)e->top, e->flags & SAMPLE_F_TOP_FAR);
	if (!caller || (*nframes > 1 && (stack[1] & ~FRAME_TAGS) == caller))
		return stack;
	/* the outermost frame gives way when the stack is full */
	if (*nframes == MAX_STACK_DEPTH)
		(*nframes)--;
	/* STACK may be BUF already: moved up first */
	memmove(buf + 2, stack + 1, (*nframes - 1) * sizeof(*buf));
	buf[0] = stack[0];
	buf[1] = caller;
	(*nframes)++;
	a->stats.repaired++;
	return buf;
}

/* Orders labels by what they hold, so that map iteration order never splits a record. */
static int label_cmp(const void *pa, const void *pb)
{
	const struct go_label *a = pa, *b = pb;
	size_t ka = label_key_bytes(a), kb = label_key_bytes(b), va, vb;
	int c;

	c = memcmp(a->key, b->key, ka < kb ? ka : kb);
	if (c || ka != kb)
		return c ? c : (ka < kb ? -1 : 1);
	if (a->key_len != b->key_len)
		return a->key_len < b->key_len ? -1 : 1;
	va = label_value_bytes(a);
	vb = label_value_bytes(b);
	c = memcmp(a->value, b->value, va < vb ? va : vb);
	if (c || va != vb)
		return c ? c : (va < vb ? -1 : 1);
	return a->value_len < b->value_len ? -1 : a->value_len > b->value_len;
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

/* Trace and span IDs from R's labels, as flags of R. */
static void find_ids(const struct aggregate *a, struct counted *r)
{
	unsigned int found;

	found = trace_ids__from_labels(r->labels, r->nlabels, &a->keys, r->trace_id, r->span_id);
	if (found & TRACE_IDS_TRACE)
		r->flags |= COUNTED_F_TRACE;
	if (found & TRACE_IDS_SPAN)
		r->flags |= COUNTED_F_SPAN;
}

/* The sampler's context entry names its source in its key: the record flag for it, or 0. */
static uint32_t context_source(const struct go_label *l)
{
	if (l->key_len == 11 && !memcmp(l->key, "traceparent", 11))
		return COUNTED_F_TRACEPARENT;
	if (l->key_len == 8 && !memcmp(l->key, "otel-sdk", 8))
		return COUNTED_F_OTEL;
	if (l->key_len == 3 && !memcmp(l->key, "obi", 3))
		return COUNTED_F_OBI;
	return 0;
}

/*
 * Is the goroutine whose stack is STACK one of the runtime's own (a GC
 * worker, the finalizer)? Its outermost frames say: runtime.goexit, under
 * the function it started in, named runtime.* but not runtime.main, as
 * Go's isSystemGoroutine decides. A stack cut short says nothing.
 */
static bool runtime_goroutine(struct aggregate *a, const struct sample_event *e,
			      const uint64_t *stack, size_t nframes)
{
	const struct frame *f;
	struct agg_target t = {};
	size_t n;

	if (nframes < 2 || !a->repair_lookup ||
	    !a->repair_lookup(a->repair_ctx, e->tgid, e->time_ns, &t) || !t.sym)
		return false;
	n = symbolizer__frames(t.sym, e->time_ns, stack[nframes - 1] & ~FRAME_TAGS, false, &f);
	if (!n || !f[n - 1].func || strcmp(f[n - 1].func, "runtime.goexit"))
		return false;
	n = symbolizer__frames(t.sym, e->time_ns, stack[nframes - 2] & ~FRAME_TAGS, nframes == 2,
			       &f);
	return n && f[n - 1].func && !strncmp(f[n - 1].func, "runtime.", 8) &&
	       strcmp(f[n - 1].func, "runtime.main");
}

/*
 * A request's lifetime, from what the sampler or the wall reader found:
 * a trace whose request ended is R's only as inherited; a context the
 * runtime's own goroutine took from the goroutine that started it is no
 * trace of its at all.
 */
void agg_event__judge(struct aggregate *a, const struct sample_event *e, struct counted *r,
		      const uint64_t *stack, size_t nframes)
{
	bool ctx = r->flags & COUNTED_F_CONTEXT;

	if (!(r->flags & COUNTED_F_TRACE))
		return;
	if (ctx && (e->flags & SAMPLE_F_CTX_CHILD) && runtime_goroutine(a, e, stack, nframes)) {
		r->flags &= ~(COUNTED_F_TRACE | COUNTED_F_SPAN | COUNTED_F_CONTEXT);
		memset(r->trace_id, 0, sizeof(r->trace_id));
		memset(r->span_id, 0, sizeof(r->span_id));
		return;
	}
	if (e->flags & (ctx ? SAMPLE_F_CTX_ENDED : SAMPLE_F_LABELS_ENDED))
		r->flags |= COUNTED_F_INHERITED;
	/* the goroutine its request runs on, or one the request started */
	else if (ctx)
		r->flags |= COUNTED_F_ROLE |
			    ((r->flags & COUNTED_F_OBI) || !(e->flags & SAMPLE_F_CTX_CHILD) ?
				     COUNTED_F_OWN :
				     0);
	else if (e->flags & SAMPLE_F_LABELS_JUDGED)
		r->flags |= COUNTED_F_ROLE | (e->flags & SAMPLE_F_LABELS_OWN ? COUNTED_F_OWN : 0);
}

/*
 * Checks an event and fills TMP with its record's identity (pid, IDs, sorted
 * labels); *STACK and *NFRAMES get its stack, its leaf's caller put back
 * (into BUF) when that applies. -EINVAL for a malformed event.
 */
int agg_event__parse(struct aggregate *a, const struct sample_event *e, size_t size,
		     struct counted *tmp, const uint64_t **stack, size_t *nframes, uint64_t *buf)
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
	*stack = settle_signal_frames(a, e, *stack, nframes, buf);
	*stack = repaired_stack(a, e, *stack, nframes, buf);
	labels = resolve_labels(a, e, &nlabels, &set_flags);
	/* labels past nlabels are never read */
	memset(tmp, 0, offsetof(struct counted, labels));
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
		tmp->flags = e->flags & COUNTED_F_LABELS_CUT;
		tmp->nlabels = nlabels;
		for (i = 0; i < nlabels; i++) {
			tmp->labels[i] = labels[i];
			/* zero the slack so a copy never carries bytes past the lengths */
			memset(tmp->labels[i].key + label_key_bytes(&labels[i]), 0,
			       MAX_KEY_LEN - label_key_bytes(&labels[i]));
			memset(tmp->labels[i].value + label_value_bytes(&labels[i]), 0,
			       MAX_VALUE_LEN - label_value_bytes(&labels[i]));
		}
		qsort(tmp->labels, tmp->nlabels, sizeof(tmp->labels[0]), label_cmp);
		if (!a->no_labels)
			find_ids(a, tmp);
		/* labels win; a bad header is no trace ID, and no label either */
		src = tp ? context_source(tp) : 0;
		if (src && !(src == COUNTED_F_OTEL ? a->no_otel : src == COUNTED_F_OBI ? a->no_obi : a->no_traceparent) &&
		    !(tmp->flags & COUNTED_F_TRACE) && trace_ids__from_traceparent(tp, tmp->trace_id, tmp->span_id)) {
			tmp->flags &= ~COUNTED_F_SPAN;
			tmp->flags |= COUNTED_F_TRACE | COUNTED_F_SPAN | src;
		}
	}
	if (e->origin == ORIGIN_WALL)
		tmp->wall = e->wall ?: WALL_RUNNING;
	if (e->origin == ORIGIN_ALLOC)
		tmp->flags |= COUNTED_F_ALLOC;
	tmp->first_ns = e->time_ns;
	tmp->last_ns = e->time_ns;
	return 0;
}
