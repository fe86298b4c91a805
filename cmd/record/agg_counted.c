// SPDX-License-Identifier: GPL-2.0
/* agg_counted.c: a counted record's upkeep: the key it is found by, its stacks' times, its end. */
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "aggregate_priv.h"
#include "counted.h"

/* Serializes what identifies a record: only bytes that were read, never buffer slack. */
size_t agg_counted__key(const struct counted *r, uint8_t *buf)
{
	uint8_t *p = buf;
	uint32_t i;

	memcpy(p, &r->pid, 4);
	memcpy(p + 4, &r->flags, 4);
	memcpy(p + 8, &r->nlabels, 4);
	memcpy(p + 12, &r->wall, 4);
	p += 16;
	/* a traceparent's or a span's IDs are no label: they tell records apart on their own */
	if (r->flags & (COUNTED_F_CONTEXT | COUNTED_F_REQUEST)) {
		memcpy(p, r->trace_id, TRACE_ID_LEN);
		memcpy(p + TRACE_ID_LEN, r->span_id, SPAN_ID_LEN);
		p += TRACE_ID_LEN + SPAN_ID_LEN;
	}
	for (i = 0; i < r->nlabels; i++) {
		const struct go_label *l = &r->labels[i];

		memcpy(p, &l->key_len, 4);
		memcpy(p + 4, &l->value_len, 4);
		p += 8;
		memcpy(p, l->key, label_key_bytes(l));
		p += label_key_bytes(l);
		memcpy(p, l->value, label_value_bytes(l));
		p += label_value_bytes(l);
	}
	return p - buf;
}

void counted_stack__free(void *p)
{
	struct counted_stack *cs = p;

	if (cs)
		free(cs->times);
	free(cs);
}

void agg_counted__free(void *p)
{
	struct counted *r = p;

	if (!r)
		return;
	hashmap__free(r->stacks, counted_stack__free);
	free(r);
}

/*
 * When a sample (or a wall look) was taken, of which goroutine, and what
 * it counts; past the interval's bound, the count alone. Whether it was kept.
 */
bool agg_counted__keep_time(struct aggregate *a, struct counted_stack *cs, bool wall,
			    uint64_t time_ns, uint64_t goid, uint64_t weight)
{
	struct counted_time *times;
	uint32_t cap;

	if (a->times_left[wall] == 0)
		return false;
	if (cs->ntimes == cs->cap) {
		cap = cs->cap ? 2 * cs->cap : 8;
		times = realloc(cs->times, cap * sizeof(*times));
		if (!times)
			return false;
		cs->times = times;
		cs->cap = cap;
	}
	cs->times[cs->ntimes++] = (struct counted_time){ time_ns, goid, weight };
	a->times_left[wall]--;
	return true;
}
