// SPDX-License-Identifier: GPL-2.0
/* ctxprof.bpf.c: CPU samples of target Go processes, each with its goroutine's labels and user stack. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "go_walk.bpf.h"
#include "lifetime.bpf.h"
#include "traceparent.bpf.h"
#include "obi.bpf.h"
#include "ustack.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * One ring buffer per CPU: a shared one costs every sample a lock and a
 * producer position bouncing between CPUs. User space creates the inner
 * rings, one per possible CPU, and sizes them.
 */
struct ringbuf {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct ringbuf);
} events SEC(".maps");

/*
 * The label set this CPU sent last, so that repeats go out without their
 * labels; and where it was (g.labels) in which GC cycle, so that a repeat
 * of the same set is known without reading it.
 */
struct last_labels {
	__u64 hash;
	__u32 tgid;
	__u32 gen;
	__u32 flags; /* SAMPLE_F_LABELS_CUT and SAMPLE_F_TRACE of the set */
	__u32 nlabels;
	__u64 labels;
	__u32 cycles;
	__u32 cycles_ok;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct last_labels);
} last_sent SEC(".maps");

/* The fields every event sets before the walk; a work slot keeps the last one's otherwise. */
static __always_inline void start_event(struct sample_event *e, __u64 pid_tgid, __u32 origin)
{
	e->time_ns = bpf_ktime_get_ns();
	e->tgid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->goid = 0;
	e->flags = 0;
	e->nlabels = 0;
	e->labels_hash = 0;
	e->origin = origin;
	e->trace_rank = MAX_TRACE_KEYS;
	e->sp = 0;
	e->bp = 0;
	e->cpu = bpf_get_smp_processor_id();
}

/* The bytes of E that are sent: the header, N labels, then LEN bytes of stack. */
static __always_inline __u64 event_size(__u32 n, long len)
{
	return offsetof(struct sample_event, labels) + n * sizeof(struct go_label) + len;
}

/* The stack goes right after the labels, so that only filled bytes are sent. */
static __always_inline __u32 stack_first(__u32 n)
{
	return (offsetof(struct sample_event, labels) + n * sizeof(struct go_label)) / 8;
}

#define SET_FLAGS (SAMPLE_F_LABELS_CUT | SAMPLE_F_TRACE | SAMPLE_F_TRACEPARENT)

/*
 * A CPU sample (ORIGIN_SAMPLING), or one sampled allocation of VALUE
 * bytes (ORIGIN_ALLOC), with the user registers REGS: a request's handler
 * frame is judged by SP, and the stack walked from them. Only CPU samples
 * send a label set by reference (last_sent): an allocation's probe can be
 * interrupted by a CPU sample on its CPU, which would change the set
 * last sent under it.
 */
static __always_inline void sample(struct work *w, const struct go_layout *l, __u64 pid_tgid,
				   bool owners, const struct user_regs *regs, __u32 origin,
				   __u64 value)
{
	struct sample_event *e = &w->e;
	__u32 tgid = pid_tgid >> 32, zero = 0, n;
	const struct trace_ctx *tc = NULL;
	struct last_labels *last = NULL;
	bool repeat, known, ended;
	__u64 wakeup;
	void *ring;
	long len;

	start_event(e, pid_tgid, origin);
	e->context = value;
	if (origin == ORIGIN_SAMPLING) {
		last = bpf_map_lookup_elem(&last_sent, &zero);
		if (!last) {
			stat_inc(STAT_LOST_RINGBUF);
			return;
		}
	}
	ring = bpf_map_lookup_elem(&events, &e->cpu);
	if (!ring) {
		stat_inc(STAT_LOST_RINGBUF);
		return;
	}
	/* the goid puts the sample in its goroutine's lane of a timeline */
	if (go_walk(w, l, 1) < 0) {
		e->flags |= SAMPLE_F_READ_ERR;
		stat_inc(STAT_READ_ERR);
	} else {
		/* outside any goroutine: said with -v, as a target whose labels never show would be */
		if (!w->g)
			stat_inc(STAT_NO_G);
		else if (!w->curg)
			stat_inc(STAT_NO_CURG);
		tc = sampled_ctx(w, l, tgid, w->curg, e->goid, regs->sp, &e->flags);
		/* a goroutine's own context wins over its thread's */
		if (!tc)
			tc = obi_ctx(w, pid_tgid);
		/* labels it only inherited, from a request that is over; or its own */
		if (owners && w->labels)
			e->flags |= labels_judge(l, tgid, w->labels, e->goid);
	}
	/*
	 * The set this CPU sent last, at the same address, in the same GC
	 * cycle: it cannot have been freed and made again, so it is the same
	 * set, and reading it (two reads a label) can be skipped. A request's
	 * context is part of the set, and is never known that way.
	 */
	known = last && !(e->flags & SAMPLE_F_READ_ERR) && w->labels && w->cycles_ok &&
		last->cycles_ok && last->tgid == tgid && last->labels == w->labels &&
		last->cycles == w->cycles && !tc && !(last->flags & SAMPLE_F_TRACEPARENT);
	if (known) {
		e->flags |= last->flags & SET_FLAGS;
		e->nlabels = last->nlabels;
		e->labels_hash = last->hash;
	} else if (!(e->flags & SAMPLE_F_READ_ERR) &&
		   /* a label's bytes that could not be read mark the event, not the walk */
		   (go_labels(w, l) < 0 || (e->flags & SAMPLE_F_READ_ERR))) {
		e->flags |= SAMPLE_F_READ_ERR;
		stat_inc(STAT_READ_ERR);
	}
	/*
	 * --traced-only: a trace only inherited, from a request that ended, is
	 * none; the labels' trace, when they hold one, is the sample's
	 */
	ended = e->flags & SAMPLE_F_TRACE ? !!(e->flags & SAMPLE_F_LABELS_ENDED) :
					    tc && (e->flags & SAMPLE_F_CTX_ENDED);
	if (tc && !(e->flags & SAMPLE_F_READ_ERR))
		add_traceparent(e, tc);
	if (traced_only && (!(e->flags & SAMPLE_F_TRACE) || ended)) {
		stat_inc(STAT_FILTERED);
		return;
	}
	/* a failed walk may have read half a set: always send it whole */
	repeat = known || (last && !(e->flags & SAMPLE_F_READ_ERR) && last->tgid == tgid &&
			   last->hash == e->labels_hash && last->nlabels == e->nlabels &&
			   (last->flags & (SAMPLE_F_LABELS_CUT | SAMPLE_F_TRACEPARENT)) ==
				   (e->flags & (SAMPLE_F_LABELS_CUT | SAMPLE_F_TRACEPARENT)));
	if (repeat) {
		e->flags |= SAMPLE_F_SAME_LABELS;
		e->gen = last->gen;
		n = 0;
	} else {
		e->gen = last ? last->gen + 1 : 0;
		n = e->nlabels;
		if (n > MAX_LABELS)
			n = MAX_LABELS;
	}
	e->nlabels = n;
	frame_table(w, l, tgid);
	if (origin == ORIGIN_SAMPLING)
		len = read_user_stack(w, regs, stack_first(n)) * 8;
	else
		len = walk_user_stack(w, regs->ip, regs->sp, regs->bp, stack_first(n)) * 8;
	if (len < 0 || len > sizeof(e->stack_room))
		len = sizeof(e->stack_room);
	e->stack_bytes = len;
	/*
	 * No wakeup per sample: user space polls on a timer, which costs far
	 * less. But when the ring is half full (many targets, whose label sets
	 * rarely repeat, make big events), wake it before samples are lost.
	 */
	wakeup = bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) > bpf_ringbuf_query(ring, BPF_RB_RING_SIZE) / 2 ?
			 BPF_RB_FORCE_WAKEUP :
			 BPF_RB_NO_WAKEUP;
	if (bpf_ringbuf_output(ring, e, event_size(n, len), wakeup)) {
		stat_inc(STAT_LOST_RINGBUF);
		return;
	}
	if (!last || (e->flags & SAMPLE_F_READ_ERR))
		return;
	/* only a set that reached user space can be repeated by reference */
	if (!repeat) {
		last->hash = e->labels_hash;
		last->tgid = tgid;
		last->gen = e->gen;
		last->nlabels = n;
		last->flags = e->flags & SET_FLAGS;
	}
	/* the set is this one now, wherever it lives: a repeat found by its hash moves it */
	last->labels = w->labels;
	last->cycles = w->cycles;
	last->cycles_ok = w->cycles_ok;
}

/* sample() of target T, with a work slot of its own; a target that exec'd, or no slot, counted. */
static __always_inline void sample_target(const struct target_info *t, __u64 pid_tgid,
					  const struct user_regs *regs, __u32 origin, __u64 value)
{
	const struct go_layout *l = target_layout(t);
	struct work *w;
	__u32 slot;

	if (!l) {
		stat_inc(STAT_EXECED);
		return;
	}
	w = work_claim(&slot);
	if (!w) {
		stat_inc(STAT_BUSY);
		return;
	}
	sample(w, l, pid_tgid, t->label_owners, regs, origin, value);
	work_release(slot);
}

/*
 * -p: the events follow the targets' threads, so a tick that is turned
 * away below is rare (a child a target forked) and counted; under --all
 * most ticks are other processes', and counting them would cost each one.
 */
const volatile bool per_task = false;

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	const struct target_info *t;
	struct user_regs regs;

	if (!maybe_target(tgid)) {
		if (per_task)
			stat_inc(STAT_UNMARKED);
		return 0;
	}
	t = bpf_map_lookup_elem(&targets, &tgid);
	if (!t || !in_cgroup()) {
		if (per_task)
			stat_inc(STAT_UNKNOWN);
		return 0;
	}
	sample_user_regs(ctx, &regs);
	sample_target(t, pid_tgid, &regs, ORIGIN_SAMPLING, 0);
	return 0;
}

/* tgid -> its allocation probe's budget; user space sizes it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct probe_budget);
} alloc_budgets SEC(".maps");

/*
 * A budget's next period, run by user space (BPF_PROG_RUN): the hits left
 * and the program time of the period over swapped, each in one step, for
 * the new allowance and 0. A hit between a read and a write from user
 * space would go uncounted, and a record would have no hit seen.
 */
SEC("syscall")
int budget_refill(struct budget_refill *r)
{
	struct probe_budget *b;
	__u32 tgid = r->tgid;

	if (r->kind == BUDGET_ALLOC)
		b = bpf_map_lookup_elem(&alloc_budgets, &tgid);
	else
		b = bpf_map_lookup_elem(&spawn_budgets, &tgid);
	r->found = b != NULL;
	if (!b)
		return 0;
	r->left = __sync_lock_test_and_set(&b->left, r->allowed);
	r->bpf_ns = __sync_lock_test_and_set(&b->bpf_ns, 0);
	r->paid = __sync_lock_test_and_set(&b->paid, 0);
	r->paid_ns = __sync_lock_test_and_set(&b->paid_ns, 0);
	return 0;
}

/*
 * The allocation each CPU's probe saw last. A probe at a function's entry
 * (where no stack check is known) is hit again when the function grows
 * its stack: morestack runs it again from the top, on the same thread,
 * for the same object.
 */
struct last_alloc {
	__u64 object;
	__u32 tgid;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct last_alloc);
} last_allocs SEC(".maps");

/*
 * --alloc: the runtime samples an allocation (runtime.mProf_Malloc, on the
 * allocating goroutine). Its size is the Go argument the attach cookie
 * names: the second before Go 1.23, the third from it (the m comes first);
 * the object is the argument before it. On the branch of its stack check
 * (ALLOC_COOKIE_AT_CHECK) the flags say whether the call must first grow
 * its stack or be preempted: then it goes through morestack, back to its
 * entry, maybe on another thread, and is taken when it passes again.
 */
SEC("uprobe")
int alloc_sample(struct pt_regs *ctx)
{
	/* all read: the context allows no computed offsets */
	__u64 pid_tgid = bpf_get_current_pid_tgid(), arg1 = GO_ARG1(ctx), arg2 = GO_ARG2(ctx);
	__u64 arg3 = GO_ARG3(ctx), t0 = bpf_ktime_get_ns(), cookie = bpf_get_attach_cookie(ctx);
	bool again = (cookie & ALLOC_COOKIE_AT_CHECK) && STACK_CHECK_FAILS(ctx);
	__u32 tgid = pid_tgid >> 32, zero = 0;
	const struct target_info *t;
	struct last_alloc *last;
	struct probe_budget *b;
	struct user_regs regs;
	__u64 size, object;

	if (again)
		return 0;
	if (ALLOC_COOKIE_ARG(cookie) == 3) {
		size = arg3;
		object = arg2;
	} else {
		size = arg2;
		object = arg1;
	}
	/* at the check's branch a call is taken once: two objects may share an address */
	last = cookie & ALLOC_COOKIE_AT_CHECK ? NULL : bpf_map_lookup_elem(&last_allocs, &zero);
	if (last) {
		/* the same allocation again, after its stack grew */
		if (last->object == object && last->tgid == tgid)
			return 0;
		last->object = object;
		last->tgid = tgid;
	}
	t = bpf_map_lookup_elem(&targets, &tgid);
	if (!t || !in_cgroup())
		return 0;
	regs.ip = PT_REGS_IP(ctx);
	regs.sp = PT_REGS_SP(ctx);
	regs.bp = PT_REGS_FP(ctx);
	b = budget_spend(&alloc_budgets, tgid, BUDGET_ALLOC);
	sample_target(t, pid_tgid, &regs, ORIGIN_ALLOC, size);
	budget_time(b, t0);
	return 0;
}

/*
 * Execs of targets, counted: user space, which reads this page every
 * round, looks for the target that exec'd only when it changed.
 */
__u64 target_execs SEC(".data.target_execs");

/*
 * A target that execs runs another program from then on: its layout no
 * longer applies. Marked at once, in the exec itself, so that no sample
 * of the new program is read with it.
 */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct target_info *t;

	if (!maybe_target(tgid))
		return 0;
	t = bpf_map_lookup_elem(&targets, &tgid);
	if (!t)
		return 0;
	if (t->exe_ino && BPF_CORE_READ(bprm, file, f_inode, i_ino) == t->exe_ino) {
		/* where the runtime's variables are depends on the load address */
		t->layout.gc_cycles = 0;
		/* a new runtime: its label sets are judged once user space follows them again */
		t->label_owners = 0;
		__sync_fetch_and_add(&t->reexecs, 1);
	} else
		t->execed = 1;
	__sync_fetch_and_add(&target_execs, 1);
	return 0;
}

/*
 * The traceparent source: the start of a request's handler, and the end of
 * an HTTP/1.1 request, whose connection's goroutine serves the next one;
 * a grpc stream's headers, and its handler's start; an SDK span's start
 * and end; a goroutine's start. The cookie RAW says which.
 */
static __always_inline int traceparent_hit(struct pt_regs *ctx, __u32 tgid, __u64 raw)
{
	__u32 cookie = PROBE_KIND(raw), slot;
	const struct target_info *t;
	const struct go_layout *l;
	struct goid_key key;
	struct work *w;
	bool ready;

	/* the commonest hit, and the cheapest: what it needs is in its cookie */
	if ((cookie == HTTP_PROBE_REQ_RDI || cookie == HTTP_PROBE_REQ_RCX) && !want_spans)
		return http_begin_lazy(ctx, tgid, cookie, raw >> PROBE_GOID_SHIFT);
	t = bpf_map_lookup_elem(&targets, &tgid);
	l = t ? target_layout(t) : NULL;
	if (!l)
		return 0;
	/* on g0, where the goroutine it starts gets the context of the one that starts it */
	if (cookie == GO_PROBE_SPAWN) {
		spawn(ctx, l, tgid);
		return 0;
	}
	if (cookie == GRPC_PROBE_HEADERS || cookie == GRPC_PROBE_STREAM)
		ready = l->grpc.ok;
	else if (cookie == OTEL_PROBE_START || cookie == OTEL_PROBE_END)
		ready = l->otel.ok;
	else
		ready = l->hdr.map;
	/* all but a grpc stream's headers (on its connection's reader) act on their goroutine */
	if (!ready || (cookie != GRPC_PROBE_HEADERS && goroutine_key(ctx, l->g_goid, tgid, &key)))
		return 0;
	/* those need no work slot; an HTTP/1.1 request's end leaves its goroutine none */
	if (cookie == GRPC_PROBE_STREAM)
		return grpc_stream(ctx, l, &key);
	if (cookie == HTTP_PROBE_END) {
		if (want_spans)
			set_goroutine_ctx(&key, NULL, false, true);
		else
			http_end_lazy(&key);
		return 0;
	}
	w = work_claim(&slot);
	if (!w) {
		stat_inc(STAT_BUSY);
		return 0;
	}
	if (cookie == GRPC_PROBE_HEADERS)
		grpc_headers(ctx, w, l, tgid);
	else if (cookie == OTEL_PROBE_START)
		otel_start(ctx, w, l, &key);
	else if (cookie == OTEL_PROBE_END)
		otel_end(ctx, w, l, &key);
	else
		http_begin(ctx, w, l, &key);
	work_release(slot);
	return 0;
}

/*
 * A traceparent probe's hit, paid for by its process's goroutine-start
 * share where the cookie says so.
 */
SEC("uprobe")
int http_request(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 raw = bpf_get_attach_cookie(ctx);
	__u64 t0 = raw & PROBE_PAID ? bpf_ktime_get_ns() : 0;

	traceparent_hit(ctx, tgid, raw);
	if (t0)
		budget_pay(&spawn_budgets, tgid, t0);
	return 0;
}

/*
 * Goroutine G makes the set at NEW its labels, in place of the one it
 * holds. NESTED: a pprof.Do's set, whose restore is not seen.
 */
static __noinline int take_labels(__u64 g, __u64 new, bool nested)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, slot;
	__u64 goid, old, trace = 0;
	const __u8 *hex = NULL;
	const struct target_info *t;
	const struct go_layout *l;
	struct sample_event *e;
	struct work *w;

	t = bpf_map_lookup_elem(&targets, &tgid);
	l = t ? target_layout(t) : NULL;
	if (!l || !g || read_user(&goid, sizeof(goid), g + l->g_goid) ||
	    read_user(&old, sizeof(old), g + l->g_labels))
		return 0;
	if (!new) {
		owners_on_set(l, tgid, goid, g, old, new, 0, NULL, nested);
		return 0;
	}
	w = work_claim(&slot);
	if (!w) {
		stat_inc(STAT_BUSY);
		owners_on_set(l, tgid, goid, g, old, new, TRACE_UNREAD, NULL, nested);
		return 0;
	}
	e = &w->e;
	e->nlabels = 0;
	e->flags = 0;
	e->labels_hash = 0;
	e->trace_rank = MAX_TRACE_KEYS;
	w->labels = new;
	if (go_labels(w, l) < 0 || (e->flags & SAMPLE_F_READ_ERR))
		trace = TRACE_UNREAD;
	else
		trace = labels_trace(w, &hex);
	/* the work slot holds the trace ID's digits until then */
	owners_on_set(l, tgid, goid, g, old, new, trace, hex, nested);
	work_release(slot);
	return 0;
}

/*
 * The runtime's runtime_setProfLabel, where pprof.SetGoroutineLabels (and
 * so pprof.Do) ends, which every release has and never inlines; at the
 * branch of its stack check where there is one (go_binary_probes.c): the
 * goroutine in R14 (arm64: R28) makes the set in the first argument
 * register its labels. Which goroutine set a set tells the goroutines
 * that only inherited it once the setter has left it.
 */
SEC("uprobe")
int label_set(struct pt_regs *ctx)
{
	return take_labels(GO_G(ctx), GO_ARG1(ctx), false);
}

/*
 * context.valueCtx is {Context; key, val any}: val's data word, where
 * pprof.WithLabels keeps the *labelMap that becomes g.labels.
 */
#define VALUE_CTX_VAL_DATA 40

/*
 * pprof.Do's own call of SetGoroutineLabels, a call the kernel emulates,
 * in a program that sets labels no other way (go_binary_probes.c): one hit a
 * pprof.Do where label_set takes two. The context in the second argument
 * register is WithLabels' *valueCtx. Do's restore is not seen: the
 * setter's g tells when it left the set, and user space deletes its entry.
 */
SEC("uprobe")
int label_do(struct pt_regs *ctx)
{
	__u64 new;

	if (read_user(&new, sizeof(new), GO_ARG2(ctx) + VALUE_CTX_VAL_DATA))
		return 0;
	return take_labels(GO_G(ctx), new, true);
}

/*
 * Custom traces: another eBPF program stores a context value here and
 * tail-calls custom__generic. Names and types are a contract (README, custom traces).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} custom_context_map SEC(".maps");

/* --uprobe on a Go binary: its layout, at the index its attach cookie names */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_UPROBES);
	__type(key, __u32);
	__type(value, struct go_layout);
} probe_layouts SEC(".maps");

static __always_inline void event(struct pt_regs *regs, struct work *w, __u32 origin,
				  __u64 context, const struct go_layout *l, __u64 pid_tgid)
{
	struct sample_event *e = &w->e;
	__u32 tgid = pid_tgid >> 32, n;
	const struct target_info *t;
	void *ring;
	long len;

	start_event(e, pid_tgid, origin);
	e->gen = 0;
	e->context = context;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	w->g = 0;
	w->curg = 0;
	w->m = 0;
	t = NULL;
	if (!l) {
		t = bpf_map_lookup_elem(&targets, &tgid);
		l = t ? target_layout(t) : NULL;
	}
	if (l && (go_walk(w, l, 1) < 0 || go_labels(w, l) < 0))
		e->flags |= SAMPLE_F_READ_ERR;
	else if (t && t->label_owners && w->labels)
		e->flags |= labels_judge(l, tgid, w->labels, e->goid);
	n = e->nlabels;
	if (n > MAX_LABELS)
		n = MAX_LABELS;
	e->nlabels = n;
	frame_table(w, l, tgid);
	len = walk_user_stack(w, PT_REGS_IP(regs), PT_REGS_SP(regs), PT_REGS_FP(regs),
			      stack_first(n)) * 8;
	if (len < 0 || len > sizeof(e->stack_room))
		len = sizeof(e->stack_room);
	e->stack_bytes = len;
	ring = bpf_map_lookup_elem(&events, &e->cpu);
	if (!ring || bpf_ringbuf_output(ring, e, event_size(n, len), 0))
		stat_inc(STAT_EVENTS_LOST);
}

/*
 * One event at an exact moment: its context, the user stack and, in a Go
 * process whose layout is known (L, or a --pid target's), the goroutine's
 * labels and goid. Sent whole (no label set by reference).
 */
static __always_inline int emit_event(struct pt_regs *regs, __u32 origin, __u64 context,
				      const struct go_layout *l)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct work *w;
	__u32 slot;

	if (!in_cgroup())
		return 0;
	stat_inc(STAT_EVENTS);
	w = work_claim(&slot);
	if (!w) {
		stat_inc(STAT_BUSY);
		stat_inc(STAT_EVENTS_LOST);
		return 0;
	}
	event(regs, w, origin, context, l, pid_tgid);
	work_release(slot);
	return 0;
}

/*
 * The tail-call entry point: a uprobe-type program, so that uprobe programs
 * can call it. It has no attach cookie of its own: a tail call keeps the
 * caller's.
 */
SEC("uprobe")
int custom__generic(struct pt_regs *ctx)
{
	__u32 zero = 0;
	__u64 *v = bpf_map_lookup_elem(&custom_context_map, &zero);

	return emit_event(ctx, ORIGIN_CUSTOM, v ? *v : 0, NULL);
}

/*
 * --uprobe: the first integer argument is the context, in RAX for Go's
 * register ABI or RDI for C, as the attach cookie says; so is the layout
 * of the probed Go binary.
 */
SEC("uprobe")
int uprobe_event(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	const struct go_layout *l = NULL;
	__u64 rax = GO_ARG1(ctx), rdi = C_ARG1(ctx); /* the context allows no computed offsets */
	__u32 idx = cookie >> 1;

	if (idx) {
		idx--;
		l = bpf_map_lookup_elem(&probe_layouts, &idx);
	}
	return emit_event(ctx, ORIGIN_UPROBE, cookie & UPROBE_COOKIE_C ? rdi : rax, l);
}
