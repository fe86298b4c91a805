// SPDX-License-Identifier: GPL-2.0
/* rec_build.c: a counted record as the record written: IDs in hex, the process named, every frame named. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rec_build.h"

struct rec_builder {
	struct rec_frame *frames;
	size_t nframes, capframes;
	struct rec_time *times; /* of samples and wall looks, CLOCK_REALTIME */
	size_t ntimes, captimes;
	struct rec_stack *stacks;
	size_t capstacks;
	struct rec_mapping *maps;
	size_t nmaps, capmaps;
	struct rec_label labels[MAX_LABELS];
	char trace[2 * TRACE_ID_LEN + 1], span[2 * SPAN_ID_LEN + 1];
};

struct rec_builder *rec_builder__new(void)
{
	return calloc(1, sizeof(struct rec_builder));
}

void rec_builder__free(struct rec_builder *b)
{
	if (!b)
		return;
	free(b->frames);
	free(b->times);
	free(b->stacks);
	free(b->maps);
	free(b);
}

/* One counted stack of a record: its addresses, as the hashmap keeps them. */
struct stack_out {
	const uint64_t *pcs;
	size_t n;
	const struct counted_stack *cs;
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
	const struct counted_stack *cs = value;
	struct stack_list *l = arg;

	/* kept from an earlier interval, not counted in this one */
	if (cs->count)
		l->items[l->n++] = (struct stack_out){ key, len / 8, value };
}

static int by_stack_samples(const void *pa, const void *pb)
{
	const struct stack_out *a = pa, *b = pb;

	return a->cs->count < b->cs->count ? 1 : a->cs->count > b->cs->count ? -1 : 0;
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
static int note_mapping(struct rec_builder *b, const struct agg_target *t, uint64_t addr)
{
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
 * is the address looked up: the interrupted PC for a CPU sample's leaf, a
 * return address minus one for callers and for a parked goroutine's leaf
 * (RETURNS: where gopark's mcall or entersyscall's caller will resume),
 * and the same for every frame one address expands to (inlined calls).
 * The frame under runtime.asyncPreempt is exact too: the preemption signal
 * made the interrupted PC look like a return address, after no call. So
 * is one the sampler tagged FRAME_EXACT (under a signal frame).
 */
static int add_frames(struct rec_builder *b, const struct agg_target *t, const uint64_t *pcs,
		      size_t n, bool returns)
{
	const struct frame *fr;
	uint64_t addr, pc;
	size_t i, j, nf;
	bool leaf, preempted = false;

	for (i = 0; i < n; i++) {
		pc = pcs[i] & ~FRAME_TAGS;
		leaf = (i == 0 && !returns) || preempted || (pcs[i] & FRAME_EXACT);
		addr = leaf || !pc ? pc : pc - 1;
		nf = t->sym ? symbolizer__frames(t->sym, t->time_ns, pc, leaf, &fr) : 1;
		if (!grow_array((void **)&b->frames, &b->capframes, b->nframes + nf, sizeof(*b->frames)))
			return -ENOMEM;
		if (!t->sym) {
			b->frames[b->nframes++] = (struct rec_frame){ .addr = addr, .pc = pc };
			continue;
		}
		for (j = 0; j < nf; j++)
			b->frames[b->nframes++] = (struct rec_frame){
				.func = fr[j].func, .file = fr[j].file, .line = fr[j].line,
				.addr = addr, .pc = pc, .inlined = fr[j].inlined,
			};
		preempted = nf && fr[nf - 1].func && strcmp(fr[nf - 1].func, "runtime.asyncPreempt") == 0;
		if (note_mapping(b, t, addr))
			return -ENOMEM;
	}
	return 0;
}

static int by_time(const void *pa, const void *pb)
{
	const struct rec_time *a = pa, *b = pb;

	return a->ns < b->ns ? -1 : a->ns > b->ns;
}

/*
 * The times of CS's samples (looks), where kept, after the record's times
 * so far: wall-clock times, in order (rings are read a CPU at a time).
 */
static int add_times(struct rec_builder *b, const struct counted_stack *cs,
		     const struct rec_clock *clk)
{
	uint32_t i;

	if (!cs->ntimes)
		return 0;
	if (!grow_array((void **)&b->times, &b->captimes, b->ntimes + cs->ntimes, sizeof(*b->times)))
		return -ENOMEM;
	for (i = 0; i < cs->ntimes; i++)
		b->times[b->ntimes++] = (struct rec_time){
			cs->times[i].time_ns + clk->mono_to_real_ns, cs->times[i].goid,
			cs->times[i].weight,
		};
	qsort(b->times + b->ntimes - cs->ntimes, cs->ntimes, sizeof(*b->times), by_time);
	return 0;
}

/*
 * An allocation's stack from the allocating function on, as Go's heap
 * profile shows it: the runtime's frames above it (mallocgc and the
 * probed runtime.mProf_Malloc) are not the user's, unless every frame is
 * the runtime's. FIRST: the stack's first frame in B.
 */
static void drop_runtime_leaves(struct rec_builder *b, size_t first)
{
	size_t i;

	for (i = first; i < b->nframes; i++)
		if (!b->frames[i].func || strncmp(b->frames[i].func, "runtime.", 8))
			break;
	if (i == first || i == b->nframes)
		return;
	memmove(b->frames + first, b->frames + i, (b->nframes - i) * sizeof(*b->frames));
	b->nframes -= i - first;
}

/*
 * COUNT sampled allocations of BYTES in all, at one in RATE bytes, as
 * runtime/pprof unbiases a heap profile's record: each divided by the
 * chance that an allocation of their average size was sampled,
 * 1 - e^(-size/rate).
 */
static void unbias(uint64_t count, uint64_t bytes, int64_t rate, struct rec_stack *st)
{
	double scale;

	st->alloc_objects = (int64_t)count;
	st->alloc_bytes = (int64_t)bytes;
	if (!count || !bytes || rate <= 1)
		return;
	scale = 1 / (1 - exp(-((double)bytes / (double)count) / (double)rate));
	st->alloc_objects = (int64_t)((double)count * scale);
	st->alloc_bytes = (int64_t)((double)bytes * scale);
}

/* C's stacks, most samples first, with their frames, times and mappings, into OUT. */
static int build_stacks(struct rec_builder *b, const struct counted *c, const struct agg_target *t,
			const struct rec_clock *clk, struct rec *out)
{
	struct stack_list l = { .items = calloc(hashmap__size(c->stacks) + 1, sizeof(*l.items)) };
	size_t i, first, first_time;
	int ret = 0;

	b->nframes = 0;
	b->ntimes = 0;
	b->nmaps = 0;
	if (!l.items ||
	    !grow_array((void **)&b->stacks, &b->capstacks, hashmap__size(c->stacks), sizeof(*b->stacks))) {
		free(l.items);
		return -ENOMEM;
	}
	hashmap__foreach(c->stacks, list_stack, &l);
	qsort(l.items, l.n, sizeof(*l.items), by_stack_samples);
	for (i = 0; i < l.n && !ret; i++) {
		struct agg_target at = *t;

		if (l.items[i].cs->seen_ns)
			at.time_ns = l.items[i].cs->seen_ns;
		first = b->nframes;
		first_time = b->ntimes;
		ret = add_frames(b, &at, l.items[i].pcs, l.items[i].n, c->wall != 0);
		if (!ret && (c->flags & COUNTED_F_ALLOC))
			drop_runtime_leaves(b, first);
		if (!ret)
			ret = add_times(b, l.items[i].cs, clk);
		/* offsets now: the arrays may move as they grow */
		b->stacks[i] = (struct rec_stack){
			l.items[i].cs->count, b->nframes - first, (const struct rec_frame *)(uintptr_t)first,
			b->ntimes - first_time, (const struct rec_time *)(uintptr_t)first_time,
		};
		if (c->flags & COUNTED_F_ALLOC) {
			unbias(l.items[i].cs->count, l.items[i].cs->bytes, t->memprofile_rate,
			       &b->stacks[i]);
			out->alloc_objects += b->stacks[i].alloc_objects;
			out->alloc_bytes += b->stacks[i].alloc_bytes;
		}
	}
	for (i = 0; i < l.n; i++) {
		b->stacks[i].frames = b->stacks[i].nframes ? b->frames + (uintptr_t)b->stacks[i].frames : NULL;
		b->stacks[i].times = b->stacks[i].ntimes ? b->times + (uintptr_t)b->stacks[i].times : NULL;
	}
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


int rec_builder__build(struct rec_builder *b, const struct counted *c, const struct agg_target *t,
		       const struct rec_clock *clk, const struct go_wall_layout *reasons,
		       struct rec *out)
{
	uint32_t i;

	memset(out, 0, sizeof(*out));
	if (c->flags & COUNTED_F_TRACE) {
		trace_ids__hex(c->trace_id, TRACE_ID_LEN, b->trace);
		/* a request that ended: not its time, but findable by its ID */
		if (c->flags & COUNTED_F_INHERITED)
			out->inherited_trace_id = b->trace;
		else
			out->trace_id = b->trace;
		out->trace_source = c->flags & COUNTED_F_TRACEPARENT ? "traceparent" :
				    c->flags & COUNTED_F_OTEL	     ? "otel-sdk" :
				    c->flags & COUNTED_F_OBI	     ? "obi" :
									       "label";
	}
	if ((c->flags & (COUNTED_F_SPAN | COUNTED_F_INHERITED)) == COUNTED_F_SPAN) {
		trace_ids__hex(c->span_id, SPAN_ID_LEN, b->span);
		out->span_id = b->span;
	}
	for (i = 0; i < c->nlabels; i++) {
		const struct go_label *l = &c->labels[i];

		b->labels[i] = (struct rec_label){
			l->key, l->value, label_key_bytes(l), label_value_bytes(l),
			l->key_len > MAX_KEY_LEN || l->value_len > MAX_VALUE_LEN,
		};
	}
	out->labels = b->labels;
	out->nlabels = c->nlabels;
	out->more_labels = c->flags & COUNTED_F_LABELS_CUT;
	out->pid = c->pid;
	out->comm = (const uint8_t *)t->comm;
	out->comm_len = strlen(t->comm);
	out->service_name = t->service_name;
	if (t->container && t->container->id[0])
		out->container_id = t->container->id;
	if (t->container && t->container->pod_uid[0])
		out->pod_uid = t->container->pod_uid;
	if (t->container)
		out->ns_pid = t->container->ns_pid;
	out->samples = c->samples;
	out->cpu_ns = c->wall || (c->flags & (COUNTED_F_REQUEST | COUNTED_F_ALLOC)) ? -1 :
							     (int64_t)(c->samples * clk->period_ns);
	if ((c->flags & (COUNTED_F_ROLE | COUNTED_F_INHERITED)) == COUNTED_F_ROLE)
		out->role = c->flags & COUNTED_F_OWN ? REC_ROLE_REQUEST : REC_ROLE_STARTED;
	if (c->flags & COUNTED_F_REQUEST) {
		out->origin = REC_REQUEST;
		out->elapsed_ns = c->elapsed_ns;
	}
	if (c->flags & COUNTED_F_ALLOC)
		out->origin = REC_ALLOC;
	if (c->wall) {
		out->origin = REC_WALL;
		out->wall_ns = c->samples * clk->wall_period_ns;
		out->observed = c->observed;
		out->state = wall_state__name(c->wall & 0xff);
		out->wait_reason = wait_reason(c->wall, reasons);
	}
	out->start_ns = c->first_ns + clk->mono_to_real_ns;
	out->end_ns = c->last_ns + clk->mono_to_real_ns;
	return build_stacks(b, c, t, clk, out);
}
