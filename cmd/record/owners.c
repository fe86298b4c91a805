// SPDX-License-Identifier: GPL-2.0
/* owners.c: the goroutine that set each label set holding a trace ID, as the kernel's label_owners keeps them, judged from user space. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "cmd/util/clock.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/map_copy.h"
#include "cmd/util/procfs.h"
#include "cmd/util/vec.h"
#include "offsets/gopclntab.h"
#include "owners.h"
#include "wall.h"

/* A setter's g as read once for a copy: its goid and its labels then. */
struct setter {
	uint64_t goid, labels;
	bool ok;
};

/*
 * Looking a set up costs a system call; copying the map walks every bucket
 * of its MAX_LABEL_OWNERS, whatever it holds: a snapshot looks up this
 * many sets one by one, then copies the rest at once.
 */
#define LAZY_LOOKUPS 256

struct owners {
	struct hashmap *sets; /* struct labels_key -> struct label_owner (epoch 0: none) */
	struct hashmap *setters; /* {pid, g} -> struct setter */
	int fd; /* label_owners, when looked up set by set (owners__follow) */
	bool whole; /* sets is a copy of the whole map: a set not in it has no entry */
	/*
	 * A sweep: a set not in the copy is looked up, once, so that a set
	 * made since (a nested pprof.Do's) does not pass for one with none.
	 */
	bool sweeping;
	struct label_owner fresh; /* what that lookup found: the copy is being walked */
	size_t lookups;
};

struct owners *owners__new(void)
{
	struct owners *o = calloc(1, sizeof(*o));

	if (!o || !(o->sets = hashmap__new()) || !(o->setters = hashmap__new())) {
		owners__free(o);
		return NULL;
	}
	return o;
}

void owners__free(struct owners *o)
{
	if (!o)
		return;
	hashmap__free(o->sets, free);
	hashmap__free(o->setters, free);
	free(o);
}

size_t owners__size(const struct owners *o)
{
	return hashmap__size(o->sets);
}

int owners__read(struct owners *o, int fd)
{
	struct hashmap *sets, *setters;
	int ret;

	if (!(sets = hashmap__new()) || !(setters = hashmap__new())) {
		hashmap__free(sets, NULL);
		return -ENOMEM;
	}
	ret = map_copy(fd, sets, sizeof(struct labels_key), sizeof(struct label_owner));
	if (ret) {
		hashmap__free(sets, free);
		hashmap__free(setters, free);
		return ret;
	}
	hashmap__free(o->sets, free);
	hashmap__free(o->setters, free);
	o->sets = sets;
	o->setters = setters;
	o->whole = true;
	return 0;
}

int owners__follow(struct owners *o, int fd)
{
	struct hashmap *sets, *setters;

	if (!(sets = hashmap__new()) || !(setters = hashmap__new())) {
		hashmap__free(sets, NULL);
		return -ENOMEM;
	}
	hashmap__free(o->sets, free);
	hashmap__free(o->setters, free);
	o->sets = sets;
	o->setters = setters;
	o->fd = fd;
	o->whole = false;
	o->lookups = 0;
	return 0;
}

/* The goid and labels of the g at G of PID, read once per copy. */
static const struct setter *setter_of(struct owners *o, pid_t pid, const struct go_layout *l,
				      uint64_t g)
{
	uint64_t key[2] = { (uint64_t)pid, g }, buf[64];
	uint32_t lo = l->g_goid < l->g_labels ? l->g_goid : l->g_labels;
	uint32_t hi = (l->g_goid > l->g_labels ? l->g_goid : l->g_labels) + 8;
	struct setter *s = hashmap__get(o->setters, key, sizeof(key));

	if (s)
		return s;
	if (!(s = calloc(1, sizeof(*s))))
		return NULL;
	if (hi - lo <= sizeof(buf) && !procfs__read_mem(pid, g + lo, buf, hi - lo)) {
		memcpy(&s->goid, (uint8_t *)buf + (l->g_goid - lo), 8);
		memcpy(&s->labels, (uint8_t *)buf + (l->g_labels - lo), 8);
		s->ok = true;
	}
	if (hashmap__add(o->setters, key, sizeof(key), s)) {
		free(s);
		return NULL;
	}
	return s;
}

static const struct label_owner *owner_of(struct owners *o, pid_t pid, uint64_t labels)
{
	struct labels_key k = { .tgid = pid, .labels = labels };
	struct label_owner *v = hashmap__get(o->sets, &k, sizeof(k));

	if (!v && o->sweeping) {
		if (bpf_map_lookup_elem(o->fd, &k, &o->fresh))
			return NULL;
		v = &o->fresh;
	} else if (!v && !o->whole) {
		if (o->lookups++ >= LAZY_LOOKUPS) {
			/* a copy failed leaves the sets not read as having no entry */
			owners__read(o, o->fd);
			o->whole = true;
			v = hashmap__get(o->sets, &k, sizeof(k));
		} else if ((v = calloc(1, sizeof(*v)))) {
			if (bpf_map_lookup_elem(o->fd, &k, v))
				memset(v, 0, sizeof(*v));
			if (hashmap__add(o->sets, &k, sizeof(k), v)) {
				free(v);
				v = NULL;
			}
		}
	}
	return v && v->epoch ? v : NULL;
}

/* As the sampler's setter_holds: does OW's goroutine still serve the request of the set at LABELS? */
static bool setter_holds(struct owners *o, pid_t pid, const struct go_layout *l,
			 const struct label_owner *ow, uint64_t labels)
{
	const struct setter *s;
	const struct label_owner *cur;

	/* not known yet: live until found out */
	if (!ow->goid)
		return true;
	s = setter_of(o, pid, l, ow->g);
	if (!s || !s->ok || s->goid != ow->goid || !s->labels)
		return false;
	if (s->labels == labels)
		return true;
	cur = owner_of(o, pid, s->labels);
	return cur && cur->goid == ow->goid && (cur->epoch == ow->epoch || cur->under == labels);
}

uint32_t owners__judge(struct owners *o, pid_t pid, const struct go_layout *l, uint64_t labels,
		       uint64_t goid)
{
	const struct label_owner *ow;
	uint32_t own = 0;
	int i;

	for (i = 0; i < MAX_OWNER_UP; i++) {
		if (!(ow = owner_of(o, pid, labels)))
			return SAMPLE_F_LABELS_JUDGED | SAMPLE_F_LABELS_ENDED;
		if (ow->goid != goid && !setter_holds(o, pid, l, ow, labels))
			return SAMPLE_F_LABELS_JUDGED | SAMPLE_F_LABELS_ENDED;
		if (!i && ow->goid == goid && !ow->up)
			own = SAMPLE_F_LABELS_OWN;
		if (!ow->up)
			break;
		labels = ow->up;
		goid = 0;
	}
	return SAMPLE_F_LABELS_JUDGED | own;
}

/* Entries to act on once a map walk is done, as judged: a walk cannot change its map. */
struct entry_list {
	struct owner_found *e; /* labels: the key's */
	size_t n, cap;
};

/* Appends K and V; on ENOMEM they are left out, to be seen by the next walk. */
static void entry_list__push(struct entry_list *l, const struct labels_key *k,
			     const struct label_owner *v)
{
	struct owner_found *grown;

	if (l->n == l->cap) {
		grown = realloc(l->e, (l->cap ? 2 * l->cap : 16) * sizeof(*grown));
		if (!grown)
			return;
		l->e = grown;
		l->cap = l->cap ? 2 * l->cap : 16;
	}
	l->e[l->n].labels = k->labels;
	l->e[l->n++].rec = *v;
}

/*
 * Deletes PID's entry for E's set from FD, unless the entry changed since
 * it was copied and judged. A label set is heap memory: once its request
 * ended and the collector freed it, a set made later at its address has
 * its key, and its entry, which the probe writes, belongs to a live
 * request. The window left is one system call's.
 */
static bool delete_judged(int fd, pid_t pid, const struct owner_found *e)
{
	struct labels_key k = { .tgid = pid, .labels = e->labels };
	struct label_owner now;

	if (bpf_map_lookup_elem(fd, &k, &now) || now.goid != e->rec.goid || now.g != e->rec.g ||
	    now.epoch != e->rec.epoch)
		return false;
	return !bpf_map_delete_elem(fd, &k);
}

/*
 * An entry younger than this is judged at a later sweep. The probe runs
 * before the runtime stores the set in g.labels: a setter preempted
 * between the two holds another set still, and its request would lose
 * its entry for good.
 */
#define SWEEP_GRACE_NS NSEC_PER_SEC

struct sweep {
	struct owners *o;
	pid_t pid;
	const struct go_layout *l;
	uint64_t now; /* CLOCK_MONOTONIC, as the entries' epochs */
	struct entry_list gone;
};

static void sweep_one(const void *key, size_t len, void *value, void *ctx)
{
	const struct labels_key *k = key;
	const struct label_owner *v = value;
	struct sweep *sw = ctx;

	if (k->tgid != (__u32)sw->pid || !v->epoch || v->epoch + SWEEP_GRACE_NS > sw->now ||
	    setter_holds(sw->o, sw->pid, sw->l, v, k->labels))
		return;
	entry_list__push(&sw->gone, k, value);
}

size_t owners__sweep(struct owners *o, int fd, pid_t pid, const struct go_layout *l)
{
	struct sweep sw = { .o = o, .pid = pid, .l = l, .now = now_ns(CLOCK_MONOTONIC) };
	size_t i, n = 0;

	o->fd = fd;
	o->sweeping = true;
	hashmap__foreach(o->sets, sweep_one, &sw);
	o->sweeping = false;
	for (i = 0; i < sw.gone.n; i++)
		n += delete_judged(fd, pid, &sw.gone.e[i]);
	free(sw.gone.e);
	return n;
}

int owners__add(int fd, pid_t pid, const struct owner_found *found, size_t n)
{
	struct labels_key k = { .tgid = pid };
	size_t i;

	for (i = 0; i < n; i++) {
		k.labels = found[i].labels;
		if (bpf_map_update_elem(fd, &k, &found[i].rec, BPF_NOEXIST) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

struct unknown {
	pid_t pid;
	struct entry_list l;
};

static void unknown_one(const void *key, size_t len, void *value, void *ctx)
{
	const struct label_owner *ow = value;
	const struct labels_key *k = key;
	struct unknown *u = ctx;

	(void)len;
	if (k->tgid == (__u32)u->pid && ow->epoch && !ow->goid)
		entry_list__push(&u->l, k, ow);
}

size_t owners__unknown(const struct owners *o, pid_t pid)
{
	struct unknown u = { .pid = pid };

	hashmap__foreach(o->sets, unknown_one, &u);
	free(u.l.e);
	return u.l.n;
}

int owners__settle(struct owners *o, int fd, pid_t pid, const struct owner_found *found, size_t n)
{
	struct labels_key k = { .tgid = pid };
	struct unknown u = { .pid = pid };
	const struct owner_found *f;
	size_t i, j;

	hashmap__foreach(o->sets, unknown_one, &u);
	for (i = 0; i < u.l.n; i++) {
		for (j = 0, f = NULL; j < n && !f; j++)
			f = found[j].labels == u.l.e[i].labels ? &found[j] : NULL;
		k.labels = u.l.e[i].labels;
		if (f && f->rec.goid)
			bpf_map_update_elem(fd, &k, &f->rec, BPF_EXIST);
		else if (!f)
			delete_judged(fd, pid, &u.l.e[i]);
	}
	free(u.l.e);
	return 0;
}

/* A label set the scan met: its trace, and who holds it inside pprof.Do. */
struct held_set {
	uint64_t labels;
	struct label_owner rec; /* goid 0: no holder in pprof.Do yet */
	bool running; /* a holder ran while read: its stack is not known */
};

struct scan {
	const struct trace_keys *keys;
	uint64_t do_lo, do_hi; /* runtime/pprof.Do's code, in the process */
	uint64_t exit_lo, exit_hi; /* runtime.goexit's: a stack read to its end */
	struct hashmap *sets; /* labels -> struct held_set */
	uint64_t epoch;
	int err;
};

/* The trace_hash() the kernel gives a set whose labels hold TRACE, as 32 lowercase hex digits. */
static uint64_t hash_of(const uint8_t trace[TRACE_ID_LEN])
{
	union {
		__u64 words[TRACE_HEX_LEN / 8 + 1];
		char hex[TRACE_HEX_LEN + 8];
	} u;

	trace_ids__hex(trace, TRACE_ID_LEN, u.hex);
	return trace_hash(u.words);
}

static int scan_held(void *ctx, const struct wall_held *h)
{
	uint8_t trace[TRACE_ID_LEN], span[SPAN_ID_LEN];
	struct scan *sc = ctx;
	struct held_set *hs;
	uint32_t i;

	if (!(trace_ids__from_labels(h->label, h->nlabels, sc->keys, trace, span) & TRACE_IDS_TRACE))
		return 0;
	hs = hashmap__get(sc->sets, &h->labels, sizeof(h->labels));
	if (!hs) {
		if (!(hs = calloc(1, sizeof(*hs))) ||
		    hashmap__add(sc->sets, &h->labels, sizeof(h->labels), hs)) {
			free(hs);
			return -ENOMEM;
		}
		hs->labels = h->labels;
		hs->rec.trace = hash_of(trace);
		hs->rec.epoch = sc->epoch;
	}
	if (h->running) {
		hs->running = true;
		return 0;
	}
	/* its innermost pprof.Do made the set it holds: a frame returns into Do */
	for (i = 1; i < h->nframes && !hs->rec.goid; i++) {
		if (h->frames[i] - 1 >= sc->do_lo && h->frames[i] - 1 < sc->do_hi) {
			hs->rec.goid = h->goid;
			hs->rec.g = h->g;
		}
	}
	/* a stack not read to its end (too deep, unreadable) tells nothing: as if it ran */
	if (!hs->rec.goid && (!h->nframes || h->frames[h->nframes - 1] - 1 < sc->exit_lo ||
			      h->frames[h->nframes - 1] - 1 >= sc->exit_hi))
		hs->running = true;
	return 0;
}

static void collect_set(const void *key, size_t len, void *value, void *ctx)
{
	const struct held_set *hs = value;
	struct vec *out = ctx;
	struct owner_found *f;

	(void)key;
	(void)len;
	if ((hs->rec.goid || hs->running) && (f = vec__push(out))) {
		f->labels = hs->labels;
		f->rec = hs->rec;
		f->rec.g = hs->rec.goid ? hs->rec.g : 0;
	}
}

static bool any_running_unowned(const struct hashmap *sets);

int owners__scan(pid_t pid, const struct go_binary *gb, uint64_t bias,
		 const struct trace_keys *keys, struct vec *found)
{
	const struct gopclntab *pcln = go_binary__pclntab(gb);
	struct scan sc = { .keys = keys, .epoch = now_ns(CLOCK_MONOTONIC) };
	struct gopclntab_func fn;
	struct wall_reader *r;
	int pass, ret = 0;

	found->size = sizeof(struct owner_found);
	if (!pcln || gopclntab__find(pcln, "runtime/pprof.Do", &fn) != 0)
		return -ENOENT;
	sc.do_lo = fn.entry + bias;
	sc.do_hi = fn.end + bias;
	if (gopclntab__find(pcln, "runtime.goexit", &fn) != 0)
		return -ENOENT;
	sc.exit_lo = fn.entry + bias;
	sc.exit_hi = fn.end + bias;
	if (!(sc.sets = hashmap__new()))
		return -ENOMEM;
	/*
	 * A goroutine on a CPU has no stack to read: read again, a few
	 * times, the sets held only by goroutines that ran
	 */
	for (pass = 0; pass < 3 && !ret && (!pass || any_running_unowned(sc.sets)); pass++) {
		if (!(r = wall_reader__new(pid, gb, bias))) {
			ret = -errno;
			break;
		}
		ret = wall_reader__scan(r, scan_held, &sc);
		wall_reader__free(r);
	}
	if (!ret)
		hashmap__foreach(sc.sets, collect_set, found);
	hashmap__free(sc.sets, free);
	return ret;
}

static void running_unowned(const void *key, size_t len, void *value, void *ctx)
{
	const struct held_set *hs = value;

	(void)key;
	(void)len;
	*(bool *)ctx |= hs->running && !hs->rec.goid;
}

static bool any_running_unowned(const struct hashmap *sets)
{
	bool any = false;

	hashmap__foreach(sets, running_unowned, &any);
	return any;
}
