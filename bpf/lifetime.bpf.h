/* SPDX-License-Identifier: GPL-2.0 */
/* lifetime.bpf.h: whether a goroutine's labels still belong to a live request, or were only inherited from one that ended. */
#ifndef __LIFETIME_BPF_H
#define __LIFETIME_BPF_H

#include "go_walk.bpf.h"
#include "spans.bpf.h"

/*
 * {tgid, g.labels} -> the goroutine that made the set current. Entries
 * come and go with requests: label_set deletes a set's entry when its
 * setter leaves it, user space the ones whose setter exited.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_LABEL_OWNERS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct labels_key);
	__type(value, struct label_owner);
} label_owners SEC(".maps");

/*
 * Does O's goroutine still hold the set at LABELS, or another set it made
 * for the same request, or one nested in it? Its g tells: a g that exited
 * and was reused has another goid, and one that exited has no labels.
 */
static __always_inline bool setter_holds(const struct go_layout *l, __u32 tgid,
					 const struct label_owner *o, __u64 labels)
{
	struct labels_key k = { .tgid = tgid };
	const struct label_owner *cur;
	__u64 goid, held;

	if (!o->goid)
		return true;
	if (read_user(&goid, sizeof(goid), o->g + l->g_goid) || goid != o->goid ||
	    read_user(&held, sizeof(held), o->g + l->g_labels) || !held)
		return false;
	if (held == labels)
		return true;
	k.labels = held;
	cur = bpf_map_lookup_elem(&label_owners, &k);
	return cur && cur->goid == o->goid && (cur->epoch == o->epoch || cur->under == labels);
}

/*
 * LABELS, which goroutine GOID of TGID holds: SAMPLE_F_LABELS_ENDED when
 * they are those of a request that ended (no setter is known for them: it
 * left them before this sample; or their setter no longer serves the
 * request; or the set they were made from is over); else
 * SAMPLE_F_LABELS_OWN when GOID set them itself, from no inherited set
 * (the request runs on it), or 0 (a goroutine the request started).
 * Global: verified once.
 */
__noinline __u32 labels_judge(const struct go_layout *l, __u32 tgid, __u64 labels, __u64 goid)
{
	struct labels_key k = { .tgid = tgid };
	const struct label_owner *p;
	struct label_owner o;
	__u32 own = 0;
	int i;

	if (!l)
		return 0;
	for (i = 0; i < MAX_OWNER_UP; i++) {
		k.labels = labels;
		p = bpf_map_lookup_elem(&label_owners, &k);
		if (!p)
			return SAMPLE_F_LABELS_JUDGED | SAMPLE_F_LABELS_ENDED;
		__builtin_memcpy(&o, p, sizeof(o));
		if (o.goid != goid && !setter_holds(l, tgid, &o, labels))
			return SAMPLE_F_LABELS_JUDGED | SAMPLE_F_LABELS_ENDED;
		if (!i && o.goid == goid && !o.up)
			own = SAMPLE_F_LABELS_OWN;
		if (!o.up)
			break;
		labels = o.up;
		goid = 0;
	}
	return SAMPLE_F_LABELS_JUDGED | own;
}

/* The search of labels_trace: the event, and its most preferred trace key so far. */
struct trace_search {
	struct work *w;
	__u32 best, rank;
};

/* One label per call: bpf_loop keeps the verifier from following every label's branches. */
static long rank_label(__u32 i, void *arg)
{
	struct trace_search *ts = arg;
	struct work *w = ts->w;
	__u32 rank;

	if (!w || i >= w->e.nlabels || i >= MAX_LABELS)
		return 1;
	rank = trace_key_rank(&w->e.labels[i]);
	if (rank < ts->rank) {
		ts->rank = rank;
		ts->best = i;
	}
	return 0;
}

/*
 * trace_hash() of the trace ID among W's event's labels: the most
 * preferred trace key present decides, as user space decides; 0 when that
 * key holds no 32 hex digits, or no trace key is present. *HEX gets its
 * digits.
 */
static __always_inline __u64 labels_trace(struct work *w, const __u8 **hex)
{
	struct trace_search ts = { .w = w, .rank = MAX_TRACE_KEYS };
	const struct go_label *best;

	bpf_loop(MAX_LABELS, rank_label, &ts, 0);
	if (ts.rank >= MAX_TRACE_KEYS || ts.best >= MAX_LABELS)
		return 0;
	best = &w->e.labels[ts.best];
	if (!value_is_hex(best))
		return 0;
	*hex = best->value;
	return trace_hash((const __u64 *)best->value);
}

/*
 * Goroutine GOID (whose g is G) of TGID makes the set at NEW current, in
 * place of OLD; TRACE is the new set's trace_hash(), HEX its trace ID's
 * digits when read. Leaving a set it made for another trace ends that
 * set's request; a set of the same trace continues it. A set another
 * goroutine made and still holds keeps its setter: this one adopted it
 * (SetGoroutineLabels with the request's context), as an inheritor.
 * NESTED: only pprof.Do's set is seen, not its restore, so a set left
 * for another trace is one the goroutine comes back to (under), and
 * user space deletes it once its setter holds it no longer.
 */
static __always_inline void owners_on_set(const struct go_layout *l, __u32 tgid, __u64 goid,
					  __u64 g, __u64 old, __u64 new, __u64 trace,
					  const __u8 *hex, bool nested)
{
	struct labels_key k = { .tgid = tgid, .labels = old };
	struct label_owner o = {}, rec = {};
	const struct label_owner *p;
	bool had = false;

	if (old && (p = bpf_map_lookup_elem(&label_owners, &k))) {
		__builtin_memcpy(&o, p, sizeof(o));
		had = true;
	}
	if (had && o.goid == goid) {
		if (trace && o.trace == trace) {
			rec.epoch = o.epoch;
			rec.up = o.up;
			rec.under = o.under;
		} else if (nested) {
			rec.under = old;
		} else if (old != new) {
			bpf_map_delete_elem(&label_owners, &k);
			if (!o.up)
				span_note(SPAN_END, tgid, goid, o.epoch, SPAN_LABEL, NULL);
		}
	} else if (had && trace && o.trace == trace) {
		rec.up = old;
	} else if (had && !o.goid && old != new) {
		/* a set whose setter was not known, left for another trace: by its setter */
		bpf_map_delete_elem(&label_owners, &k);
	}
	if (!trace || !new)
		return;
	k.labels = new;
	/* pprof.Do's set is new, made by WithLabels right before: no one holds it */
	p = nested ? NULL : bpf_map_lookup_elem(&label_owners, &k);
	if (p && p->goid != goid) {
		__builtin_memcpy(&o, p, sizeof(o));
		if (setter_holds(l, tgid, &o, new))
			return;
	}
	rec.goid = goid;
	rec.g = g;
	rec.trace = trace;
	/* a request begins on this goroutine: its span, unless it is another's (up) */
	if (!rec.epoch) {
		rec.epoch = bpf_ktime_get_ns();
		if (!rec.up && hex)
			span_note(SPAN_BEGIN, tgid, goid, rec.epoch, SPAN_LABEL, hex);
	}
	if (bpf_map_update_elem(&label_owners, &k, &rec, BPF_ANY))
		stat_inc(STAT_OWNERS_FULL);
}

#endif /* __LIFETIME_BPF_H */
