// SPDX-License-Identifier: GPL-2.0
/* stats.c: what a recording says of itself: the statistics at exit and on SIGUSR1, hints where trace IDs are few, /metrics. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/output/metrics_http.h"
#include "cmd/output/otlp.h"
#include "cmd/util/clock.h"
#include "cmd/util/plural.h"
#include "cmd/util/strbuf.h"
#include "cmd/util/version.h"
#include "aggregate.h"
#include "processes.h"
#include "budget_probe.h"
#include "session_config.h"
#include "stats.h"
#include "target.h"
#include "targets.h"
#include "wall.h"

/* The kernel's counters (enum stat_idx), summed over CPUs. */
static void kernel_stats(const struct stats_view *v, __u64 totals[STAT_MAX])
{
	int ncpus = libbpf_num_possible_cpus(), i, k;
	__u64 *vals;

	vals = calloc(ncpus > 0 ? ncpus : 1, sizeof(*vals));
	for (k = 0; vals && k < STAT_MAX; k++) {
		if (bpf_map_lookup_elem(v->stats_fd, &k, vals) != 0)
			continue;
		for (i = 0; i < ncpus; i++)
			totals[k] += vals[i];
	}
	free(vals);
}

/* Why the rings' reader did not run SCHED_FIFO, from the errno it got; "" when unknown. */
static const char *realtime_why(int err)
{
	static char buf[96];

	if (err == EPERM)
		return " (SCHED_FIFO is not permitted: it needs CAP_SYS_NICE, and on cgroup v1 "
		       "with real-time group scheduling a cpu.rt_runtime_us for its cgroup)";
	if (!err)
		return " (--realtime for SCHED_FIFO)";
	snprintf(buf, sizeof(buf), " (SCHED_FIFO: %s)", strerror(err));
	return buf;
}

static void print_sampling_stats(const struct stats_view *v, const __u64 *totals,
				 const struct agg_stats *st, bool so_far)
{
	int nadded = targets__added(v->targets), now = targets__count(v->targets);
	int came = nadded - v->nstart, went = nadded - now;
	char moves[96] = "";

	/* targets that came or went: why the count at the start is not this one */
	if (came || went)
		snprintf(moves, sizeof(moves), " (%d at the start, %d came, %d went)", v->nstart, came,
			 went);
	fprintf(stderr,
		"ctxprof-go: %s%llu sample%s from %d target%s%s, %llu (%.1f%%) with a trace ID, "
		"%llu inherited from a request that ended, "
		"%llu record%s; lost %llu (ring buffer full), %llu label read error%s, "
		"%llu without their label set, %llu filtered (--traced-only), %llu malformed; "
		"%llu stack%s got back a leaf's caller\n",
		so_far ? "so far, " : "", (unsigned long long)st->samples, plural(st->samples),
		nadded, plural(nadded), moves, (unsigned long long)st->traced,
		st->samples ? 100.0 * st->traced / st->samples : 0.0, (unsigned long long)st->inherited,
		(unsigned long long)st->records,
		plural(st->records), (unsigned long long)totals[STAT_LOST_RINGBUF],
		(unsigned long long)totals[STAT_READ_ERR], plural(totals[STAT_READ_ERR]),
		(unsigned long long)st->unresolved, (unsigned long long)totals[STAT_FILTERED],
		(unsigned long long)st->malformed, (unsigned long long)st->repaired,
		plural(st->repaired));
}

struct pid_list {
	struct agg_pid_stats *items;
	size_t n, cap;
};

static void list_pid(const struct agg_pid_stats *p, void *ctx)
{
	struct pid_list *l = ctx;

	if (l->n < l->cap)
		l->items[l->n++] = *p;
}

static int by_samples(const void *pa, const void *pb)
{
	const struct agg_pid_stats *a = pa, *b = pb;

	return a->samples < b->samples ? 1 : a->samples > b->samples ? -1 : (int)a->pid - (int)b->pid;
}

/* -v: every process sampled, most samples first, and whether it is still a target. */
static void print_targets(const struct stats_view *v)
{
	struct pid_list l = { .cap = (size_t)targets__added(v->targets) + 1 };
	size_t i;

	l.items = calloc(l.cap, sizeof(*l.items));
	if (!l.items)
		return;
	aggregate__pids(v->agg, list_pid, &l);
	qsort(l.items, l.n, sizeof(*l.items), by_samples);
	for (i = 0; i < l.n; i++)
		fprintf(stderr, "ctxprof-go: pid %u (%s): %llu sample%s, %.1f%% with a trace ID%s\n",
			l.items[i].pid, l.items[i].comm, (unsigned long long)l.items[i].samples,
			plural(l.items[i].samples), 100.0 * l.items[i].traced / l.items[i].samples,
			targets__find(v->targets, l.items[i].pid) ? "" : "; gone");
	free(l.items);
}

struct hint_round {
	const struct stats_view *v;
	const __u64 *totals;
};

/* A target with samples, under half of them with a trace ID: the cause, when one is known. */
static void hint_one(const struct agg_pid_stats *p, void *ctx)
{
	const struct hint_round *r = ctx;
	const struct target *t = targets__find(r->v->targets, p->pid);
	struct bare_requests bare = { r->totals[STAT_HTTP_BARE], r->totals[STAT_HTTP_CUT] };
	char why[256];

	if (!t || p->samples < 50 || 2 * p->traced >= p->samples ||
	    !target__untraced_cause(t, &bare, why, sizeof(why)))
		return;
	fprintf(stderr, "ctxprof-go: pid %u (%s): %.1f%% of its %llu samples with a trace ID: %s\n",
		p->pid, target__comm(t), 100.0 * p->traced / p->samples, (unsigned long long)p->samples, why);
}

/* Each target's parts' lines: a goroutine-start probe that rested, and with -v what it cost. */
static void say_parts(struct target *t, void *ctx)
{
	const struct stats_view *v = ctx;

	target__say(t, v->cfg->verbose);
}

/* What the goroutine-start and allocation probes of processes gone saw and missed. */
static void print_budgets_gone(const struct stats_view *v)
{
	static const char *const what[BUDGET_KINDS][2] = {
		[BUDGET_SPAWN] = { "goroutine-start", "starts" },
		[BUDGET_ALLOC] = { "allocation", "sampled allocations" },
	};
	struct budget_account gone;
	uint64_t watched;
	double missed;
	int kind;

	for (kind = 0; kind < BUDGET_KINDS; kind++) {
		targets__budget_totals(v->targets, kind, &gone, &watched, &missed);
		if (gone.probes && (gone.missed >= 0.5 || v->cfg->verbose))
			fprintf(stderr,
				"ctxprof-go: the %s probes of %llu processes gone saw %llu %s and "
				"missed about %.0f\n",
				what[kind][0], (unsigned long long)gone.probes,
				(unsigned long long)gone.watched, what[kind][1], gone.missed);
	}
}

static void print_wall_stats(const struct stats_view *v)
{
	const struct wall_stats *w = v->wall;
	char stride[64] = "";
	struct agg_stats st;

	aggregate__stats(v->agg, &st);
	if (w->stride > 1)
		snprintf(stride, sizeof(stride), " (each goroutine in 1 of %llu snapshots)",
			 (unsigned long long)w->stride);
	fprintf(stderr,
		"ctxprof-go: wall: %llu goroutine samples in %llu snapshots at %lu Hz from %llu looks%s, "
		"%llu read in full; %llu dropped as changed while read (%.2f%%), "
		"%llu unreadable; %.1f ms of CPU; %llu looks at running goroutines, %llu of them with "
		"the stack of their CPU sample nearest in time\n",
		(unsigned long long)w->goroutines, (unsigned long long)w->snapshots, v->cfg->wall_hz,
		(unsigned long long)w->looks, stride, (unsigned long long)w->reread, (unsigned long long)w->dropped,
		w->looks + w->dropped ? 100.0 * w->dropped / (w->looks + w->dropped) : 0.0,
		(unsigned long long)w->unreadable, v->wall_cpu_ns / 1e6,
		(unsigned long long)st.wall_running, (unsigned long long)st.wall_running_framed);
}

/* --alloc: the sampled allocations counted, and about how many the probes missed while they rested. */
static void print_alloc_stats(const struct stats_view *v)
{
	struct budget_account gone;
	struct agg_stats st;
	uint64_t watched;
	double missed;

	aggregate__stats(v->agg, &st);
	targets__budget_totals(v->targets, BUDGET_ALLOC, &gone, &watched, &missed);
	fprintf(stderr,
		"ctxprof-go: alloc: %llu sampled allocations counted, of %llu the probes saw; about "
		"%.0f missed while they rested past --alloc-share\n",
		(unsigned long long)st.alloc_samples, (unsigned long long)watched, missed);
}

/* --otlp: what reached the collector, and what did not; during the run, what so far. */
static void print_otlp_stats(const struct stats_view *v)
{
	const struct otlp_export_stats st = v->otlp;
	struct otlp_stats es = {};
	size_t i;

	fprintf(stderr,
		"ctxprof-go: otlp: %llu request%s sent to %s (%llu samples, %llu bytes), %llu %s, "
		"%llu dropped (%llu samples), %llu profile%s rejected by the collector; queue high "
		"water %llu of %zu",
		(unsigned long long)st.requests, plural(st.requests), v->cfg->otlp.url,
		(unsigned long long)st.samples, (unsigned long long)st.bytes,
		(unsigned long long)st.retries, st.retries == 1 ? "retry" : "retries",
		(unsigned long long)st.dropped, (unsigned long long)st.dropped_samples,
		(unsigned long long)st.rejected, plural(st.rejected), (unsigned long long)st.queue_high,
		v->cfg->otlp.queue_max);
	if (st.splits)
		fprintf(stderr, "; %llu request%s cut in halves for their size",
			(unsigned long long)st.splits, plural(st.splits));
	if (st.dropped)
		fprintf(stderr,
			"; dropped for: a full queue %llu, refusal %llu, size %llu, no answer in time %llu",
			(unsigned long long)st.dropped_full, (unsigned long long)st.dropped_refused,
			(unsigned long long)st.dropped_too_large, (unsigned long long)st.dropped_unsent);
	if (v->encoder)
		otlp__stats(v->encoder, &es);
	if (es.left_out_samples) {
		fprintf(stderr,
			"; %llu samples sent without some of their labels, past the budget of %d "
			"attributes a series: ",
			(unsigned long long)es.left_out_samples, OTLP_MAX_ATTRIBUTES);
		for (i = 0; i < OTLP_LEFT_OUT_NAMES && es.left_out_names[i]; i++)
			fprintf(stderr, "%s'%s'", i ? ", " : "", es.left_out_names[i]);
		if (es.left_out_keys > i)
			fprintf(stderr, " and %llu more", (unsigned long long)(es.left_out_keys - i));
		fprintf(stderr, " left out (--otlp-labels chooses)");
	}
	fputc('\n', stderr);
}

/* The name a kind of probe goes by in the statistics: its trace source's, or its own. */
static const char *probe_source_name(int src)
{
	return src == ATTACH_SPAWN ? "goroutine-start" :
	       src == ATTACH_ALLOC ? "alloc" :
				     trace_source__name(src);
}

/* Probes that failed to attach, by source: each failure a process's source lost. */
static void print_attach_failures(const struct stats_view *v)
{
	const uint64_t *f = targets__attach_failures(v->targets);
	const char *sep = "";
	int src;

	for (src = 0; src < ATTACH_KINDS && !f[src]; src++)
		;
	if (src == ATTACH_KINDS)
		return;
	fprintf(stderr, "ctxprof-go: probes that failed to attach (a process without that source): ");
	for (src = 0; src < ATTACH_KINDS; src++) {
		if (!f[src])
			continue;
		fprintf(stderr, "%s%s %llu", sep, probe_source_name(src), (unsigned long long)f[src]);
		sep = ", ";
	}
	fputc('\n', stderr);
}

/* One metric of the page: its help and type once, then its samples. */
static void metric(struct strbuf *b, const char *name, const char *type, const char *help)
{
	strbuf__printf(b, "# HELP ctxprof_%s %s\n# TYPE ctxprof_%s %s\n", name, help, name, type);
}

static void value(struct strbuf *b, const char *name, const char *labels, unsigned long long v)
{
	strbuf__printf(b, "ctxprof_%s%s %llu\n", name, labels, v);
}

static void fvalue(struct strbuf *b, const char *name, double v)
{
	strbuf__printf(b, "%s %.15g\n", name, v);
}

/*
 * ctxprof-go's own CPU and memory, by the names every Prometheus client
 * gives its process (no prefix), so that the dashboards made for them work.
 */
static void publish_self(struct strbuf *b)
{
	unsigned long long pages, resident;
	FILE *f = fopen("/proc/self/statm", "re");
	int n = f ? fscanf(f, "%llu %llu", &pages, &resident) : 0;

	if (f)
		fclose(f);
	strbuf__printf(b, "# HELP process_cpu_seconds_total User and system CPU time ctxprof-go "
			  "spent, in seconds.\n# TYPE process_cpu_seconds_total counter\n");
	fvalue(b, "process_cpu_seconds_total", now_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9);
	if (n == 2) {
		strbuf__printf(b, "# HELP process_resident_memory_bytes Resident memory of "
				  "ctxprof-go, in bytes.\n# TYPE process_resident_memory_bytes gauge\n");
		fvalue(b, "process_resident_memory_bytes", (double)resident * sysconf(_SC_PAGESIZE));
	}
}

/* Each budgeted probe's two counters, of processes gone too. */
struct budget_metric {
	const char *seen, *seen_help, *missed, *missed_help;
};

static const struct budget_metric budget_metrics[BUDGET_KINDS] = {
	[BUDGET_SPAWN] = {
		"goroutine_starts_seen_total",
		"Go < 1.21: goroutine starts the goroutine-start probes saw, of processes gone too.",
		"goroutine_starts_missed_total",
		"Go < 1.21: about how many goroutines started while their probe rested: no trace ID.",
	},
	[BUDGET_ALLOC] = {
		"alloc_samples_seen_total",
		"--alloc: allocations the runtime sampled that the allocation probes saw.",
		"alloc_samples_missed_total",
		"--alloc: about how many it sampled while their probe rested, its budget spent.",
	},
};

/* --metrics-addr: what the statistics lines say, as Prometheus's text format. */
void stats__publish(const struct stats_view *v, struct metrics_http *m)
{
	const struct otlp_export_stats *o = &v->otlp;
	__u64 totals[STAT_MAX] = {};
	struct budget_account gone;
	struct strbuf b = {};
	struct agg_stats st;
	char labels[128];
	uint64_t watched;
	double missed;
	int kind;

	if (!m)
		return;
	kernel_stats(v, totals);
	aggregate__stats(v->agg, &st);
	metric(&b, "build_info", "gauge", "ctxprof-go's version, as its label; always 1.");
	snprintf(labels, sizeof(labels), "{version=\"%s\"}", ctxprof_version);
	value(&b, "build_info", labels, 1);
	publish_self(&b);
	metric(&b, "samples_total", "counter", "CPU samples taken of targets.");
	value(&b, "samples_total", "", st.samples);
	if (v->wall) {
		metric(&b, "wall_looks_total", "counter", "--wall: looks at goroutines, in snapshots.");
		value(&b, "wall_looks_total", "", v->wall->looks);
		metric(&b, "wall_samples_total", "counter",
		       "--wall: goroutine samples counted, each look counting the snapshots since the last.");
		value(&b, "wall_samples_total", "", st.wall_samples);
	}
	metric(&b, "samples_traced_total", "counter", "Samples with a trace ID.");
	value(&b, "samples_traced_total", "", st.traced);
	metric(&b, "samples_inherited_total", "counter",
	       "Samples of goroutines that only inherited a trace, from a request that ended.");
	value(&b, "samples_inherited_total", "", st.inherited);
	metric(&b, "samples_lost_total", "counter", "Samples lost, by cause.");
	value(&b, "samples_lost_total", "{cause=\"ring_buffer_full\"}", totals[STAT_LOST_RINGBUF]);
	value(&b, "samples_lost_total", "{cause=\"cpu_busy\"}", totals[STAT_BUSY]);
	value(&b, "samples_lost_total", "{cause=\"exec\"}", totals[STAT_EXECED]);
	value(&b, "samples_lost_total", "{cause=\"malformed\"}", st.malformed);
	value(&b, "samples_lost_total", "{cause=\"loop_busy\"}", v->kept.lost);
	metric(&b, "samples_filtered_total", "counter", "Samples without a trace ID dropped by --traced-only.");
	value(&b, "samples_filtered_total", "", totals[STAT_FILTERED]);
	metric(&b, "label_read_errors_total", "counter", "Samples whose goroutine labels could not be read.");
	value(&b, "label_read_errors_total", "", totals[STAT_READ_ERR]);
	for (kind = 0; kind < BUDGET_KINDS; kind++) {
		const struct budget_metric *m = &budget_metrics[kind];

		if (kind == BUDGET_ALLOC && !v->cfg->alloc)
			continue;
		targets__budget_totals(v->targets, kind, &gone, &watched, &missed);
		metric(&b, m->seen, "counter", m->seen_help);
		value(&b, m->seen, "", watched);
		metric(&b, m->missed, "counter", m->missed_help);
		value(&b, m->missed, "", (uint64_t)(missed + 0.5));
	}
	metric(&b, "header_read_errors_total", "counter",
	       "Requests and streams whose headers could not be read for a traceparent.");
	value(&b, "header_read_errors_total", "", totals[STAT_HTTP_ERR]);
	metric(&b, "requests_without_traceparent_total", "counter",
	       "Requests read whose header held no traceparent, by whether every field was read.");
	value(&b, "requests_without_traceparent_total", "{fields=\"all\"}", totals[STAT_HTTP_BARE]);
	value(&b, "requests_without_traceparent_total", "{fields=\"some\"}", totals[STAT_HTTP_CUT]);
	metric(&b, "records_total", "counter", "Records written.");
	value(&b, "records_total", "", st.records);
	metric(&b, "targets", "gauge", "Processes sampled now.");
	value(&b, "targets", "", targets__count(v->targets));
	metric(&b, "targets_added_total", "counter", "Processes ever sampled in this run.");
	value(&b, "targets_added_total", "", targets__added(v->targets));
	metric(&b, "processes_unsupported_total", "counter",
	       "--all: processes of a Go build it cannot read, not sampled.");
	value(&b, "processes_unsupported_total", "", targets__unsupported(v->targets));
	metric(&b, "probe_attach_failures_total", "counter",
	       "Probes that failed to attach, by trace source: each a process without it.");
	for (int src = 0; src < ATTACH_KINDS; src++) {
		char label[48];

		if (src == TRACE_SOURCE_OBI || (src == ATTACH_ALLOC && !v->cfg->alloc))
			continue;
		snprintf(label, sizeof(label), "{source=\"%s\"}", probe_source_name(src));
		value(&b, "probe_attach_failures_total", label, targets__attach_failures(v->targets)[src]);
	}
	if (v->cfg->otlp.url) {
		metric(&b, "otlp_requests_sent_total", "counter", "OTLP requests the collector took.");
		value(&b, "otlp_requests_sent_total", "", o->requests);
		metric(&b, "otlp_samples_sent_total", "counter", "Samples in them.");
		value(&b, "otlp_samples_sent_total", "", o->samples);
		metric(&b, "otlp_bytes_sent_total", "counter", "Bytes of them, as sent.");
		value(&b, "otlp_bytes_sent_total", "", o->bytes);
		metric(&b, "otlp_retries_total", "counter", "Attempts that failed and were tried again.");
		value(&b, "otlp_retries_total", "", o->retries);
		metric(&b, "otlp_requests_failed_total", "counter",
		       "OTLP requests never delivered, by cause.");
		value(&b, "otlp_requests_failed_total", "{cause=\"queue_full\"}", o->dropped_full);
		value(&b, "otlp_requests_failed_total", "{cause=\"refused\"}", o->dropped_refused);
		value(&b, "otlp_requests_failed_total", "{cause=\"too_large\"}", o->dropped_too_large);
		value(&b, "otlp_requests_failed_total", "{cause=\"unsent\"}", o->dropped_unsent);
		metric(&b, "otlp_samples_failed_total", "counter", "Samples in them.");
		value(&b, "otlp_samples_failed_total", "", o->dropped_samples);
		metric(&b, "otlp_profiles_rejected_total", "counter",
		       "Profiles the collector took a request without (partial success).");
		value(&b, "otlp_profiles_rejected_total", "", o->rejected);
		metric(&b, "otlp_requests_split_total", "counter", "Requests cut in halves for their size.");
		value(&b, "otlp_requests_split_total", "", o->splits);
		metric(&b, "otlp_requests_queued", "gauge", "OTLP requests waiting to be sent, or being sent.");
		value(&b, "otlp_requests_queued", "", o->queued);
		if (o->last_sent_ns) {
			metric(&b, "otlp_last_sent_timestamp_seconds", "gauge",
			       "When the collector last took a request, in seconds since the epoch.");
			fvalue(&b, "ctxprof_otlp_last_sent_timestamp_seconds", o->last_sent_ns / 1e9);
		}
	}
	if (!b.oom)
		metrics_http__publish(m, b.p, b.n);
	strbuf__free(&b);
}

/* The statistics: at exit, and on SIGUSR1 (SO_FAR). Lines about what did not happen are left out. */
void stats__print(const struct stats_view *v, bool so_far)
{
	__u64 totals[STAT_MAX] = {};
	struct processes_stats ps;
	struct agg_stats st;

	kernel_stats(v, totals);
	aggregate__stats(v->agg, &st);
	if (v->cfg->sampling)
		print_sampling_stats(v, totals, &st, so_far);
	if (v->cfg->sampling && v->cfg->verbose)
		print_targets(v);
	if (v->cfg->sampling)
		aggregate__pids(v->agg, hint_one, &(struct hint_round){ .v = v, .totals = totals });
	if (v->cfg->sampling) {
		targets__foreach(v->targets, say_parts, (void *)v);
		print_budgets_gone(v);
	}
	if (v->cfg->sampling)
		print_attach_failures(v);
	/* samples that can have no labels: many in a target means its g was not found */
	if (v->cfg->sampling && v->cfg->verbose)
		fprintf(stderr,
			"ctxprof-go: %llu samples outside any goroutine: %llu on threads whose TLS "
			"slot held no g, %llu of an M between goroutines (m.curg 0)\n",
			(unsigned long long)(totals[STAT_NO_G] + totals[STAT_NO_CURG]),
			(unsigned long long)totals[STAT_NO_G], (unsigned long long)totals[STAT_NO_CURG]);
	/* -p: ticks the sampler turned away; a forked child's, or a target it does not know */
	if (v->per_task && v->cfg->verbose)
		fprintf(stderr,
			"ctxprof-go: %llu ticks of followed threads turned away (children the targets "
			"forked): %llu of processes not marked in target_bits, %llu not in the targets "
			"map\n",
			(unsigned long long)(totals[STAT_UNMARKED] + totals[STAT_UNKNOWN]),
			(unsigned long long)totals[STAT_UNMARKED], (unsigned long long)totals[STAT_UNKNOWN]);
	/* where ctxprof-go's own time went: what make bench weighs */
	if (v->cfg->verbose) {
		fprintf(stderr, "ctxprof-go: own CPU: %.1f ms in all, %.1f ms of it writing records (%llu flush%s)",
			now_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e6, v->write_cpu_ns / 1e6,
			(unsigned long long)v->flushes, v->flushes == 1 ? "" : "es");
		if (v->cfg->wall)
			fprintf(stderr, ", %.1f ms in --wall snapshots", v->wall_cpu_ns / 1e6);
		fputc('\n', stderr);
	}
	if (totals[STAT_EVENTS])
		fprintf(stderr,
			"ctxprof-go: %llu custom-trace and uprobe events: %llu reported, %llu lost "
			"(ring buffer full), %llu not written\n",
			(unsigned long long)totals[STAT_EVENTS], (unsigned long long)st.events,
			(unsigned long long)totals[STAT_EVENTS_LOST],
			(unsigned long long)(totals[STAT_EVENTS] - totals[STAT_EVENTS_LOST] - st.events));
	if (totals[STAT_BUSY])
		fprintf(stderr,
			"ctxprof-go: %llu samples and events dropped: every work slot of their CPU was "
			"taken by programs they interrupted\n",
			(unsigned long long)totals[STAT_BUSY]);
	processes__stats(v->procs, &ps);
	if (ps.lost)
		fprintf(stderr,
			"ctxprof-go: %llu mmap, exec and exit records lost (perf ring full): frames of "
			"processes that started meanwhile may stay addresses\n",
			(unsigned long long)ps.lost);
	if (v->cfg->wall)
		print_wall_stats(v);
	if (v->cfg->alloc)
		print_alloc_stats(v);
	/* --wall: the requests behind each trace's elapsed time */
	if (v->cfg->wall && v->cfg->sampling)
		fprintf(stderr,
			"ctxprof-go: requests: %llu ended, %llu of them of traces never sampled (not "
			"written); %llu begins or ends lost (ring buffer full)\n",
			(unsigned long long)st.requests, (unsigned long long)st.requests_unsampled,
			(unsigned long long)totals[STAT_SPANS_LOST]);
	if (totals[STAT_HTTP_ERR])
		fprintf(stderr,
			"ctxprof-go: %llu requests and streams whose headers could not be read: "
			"their samples carry no trace ID from them\n",
			(unsigned long long)totals[STAT_HTTP_ERR]);
	if (totals[STAT_OWNERS_FULL])
		fprintf(stderr,
			"ctxprof-go: %llu label sets made while label_owners was full: their samples "
			"count as inherited from a request that ended\n",
			(unsigned long long)totals[STAT_OWNERS_FULL]);
	if (v->cfg->otlp.url)
		print_otlp_stats(v);
	if (totals[STAT_EXECED])
		fprintf(stderr,
			"ctxprof-go: %llu samples dropped from targets that no longer ran their Go "
			"program (an exec, or the end of an exit)\n",
			(unsigned long long)totals[STAT_EXECED]);
	if (v->kept.lost)
		fprintf(stderr,
			"ctxprof-go: %llu samples and events lost: read while the loop was busy, "
			"with %llu MiB held already\n",
			(unsigned long long)v->kept.lost, (unsigned long long)(v->kept.max_bytes >> 20));
	if (v->cfg->verbose)
		fprintf(stderr,
			"ctxprof-go: the rings were read %llu times while the loop was busy elsewhere: "
			"%llu samples and events held for it, %.1f MiB at most; their reader ran %s%s\n",
			(unsigned long long)v->kept.reads, (unsigned long long)v->kept.kept,
			v->kept.max_bytes / 1048576.0, v->kept.realtime ? "SCHED_FIFO" : "SCHED_OTHER",
			v->kept.realtime ? "" : realtime_why(v->kept.realtime_err));
}
