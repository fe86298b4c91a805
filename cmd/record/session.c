// SPDX-License-Identifier: GPL-2.0
/* session.c: one recording: its outputs, the run loop over rings, targets and snapshots, and its end. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/output/metrics_http.h"
#include "cmd/output/otlp_export.h"
#include "cmd/util/clock.h"
#include "cmd/util/outfile.h"
#include "cmd/util/plural.h"
#include "aggregate.h"
#include "processes.h"
#include "outputs.h"
#include "part_alloc.h"
#include "part_spawn.h"
#include "ring_keeper.h"
#include "sampler.h"
#include "session.h"
#include "stats.h"
#include "target.h"
#include "targets.h"
#include "wall_snap.h"

#define POLL_MS 100
/* traces the exit's summary names, by CPU and by wall time */
#define SUMMARY_TRACES 5
/* time spent reading rings before the loop looks at the clock, signals and targets */
#define READ_BUDGET_NS (200 * 1000000ULL)
/*
 * The rings are read at least this often, by a thread of their own while
 * the loop is busy (adding a target that takes long): a ring of 256 KiB
 * holds some 0.2 s of a CPU's samples at 999 Hz, so a step of the loop
 * that takes longer cannot lose them. What the thread keeps meanwhile is
 * held in memory, up to KEEP_MAX_BYTES.
 */
#define KEEP_PERIOD_NS (20 * 1000000ULL)
#define KEEP_MAX_BYTES (64UL << 20)

/* The rings a kept event came from, for its replay. */
enum ring_kind { RING_SAMPLES, RING_BUDGET_NOTES, RING_SPANS };
/* time spent describing new targets before the rings are read again */
#define DESCRIBE_BUDGET_NS (20 * 1000000ULL)

struct session {
	const struct session_config *cfg; /* the caller's, which outlives the session */
	struct sampler *sampler;
	const struct sampler_bpf *bpf; /* the sampler's */
	struct ring_buffer *rb; /* the sampler's rings */
	struct ring_keeper *keeper; /* reads them while the loop cannot */
	struct outputs *outputs; /* JSON lines, --pprof, -f, --html, --otlp and the summary */
	struct metrics_http *metrics; /* --metrics-addr */
	struct aggregate *agg;
	struct processes *procs; /* every process's mappings, targets or not */
	struct targets *targets;
	struct wall_snap *wall; /* --wall */
	int nstart; /* targets there when sampling began */
	uint64_t period_ns;
	FILE *out;
	const char *out_name; /* for messages: the -o FILE, or "stdout" */
	bool unflushed; /* events written into OUT's buffer since its last flush */
	/*
	 * A ring that never empties (a flood of events) must not hold the
	 * loop: -d, signals, flushes and the reader's health wait on it.
	 * Reading stops for this round past this moment.
	 */
	uint64_t read_until_ns;
	uint64_t nread;
	bool reading; /* rings may be read between targets being added and records written */
	uint64_t write_cpu_ns; /* this process's CPU time writing records, over FLUSHES flushes */
	uint64_t flushes;
	/* the first failure that loses data (a write, memory): it ends the run */
	int fail;
	char fail_msg[PATH_MAX + 64]; /* what failed, for the last line; "" when said already */
};

static const char *const span_keys[] = { AGG_DEFAULT_SPAN_KEYS };

static volatile sig_atomic_t exiting, reopen, report;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reopen = 1;
	else if (sig == SIGUSR1)
		report = 1;
	else
		exiting = 1;
}

/* The first failure that loses data; WHAT ("write records to stdout") is said at the end. */
static void session__fail(struct session *s, int err, const char *what)
{
	if (s->fail)
		return;
	s->fail = err;
	snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", what);
}

/* targets' failures: the same */
static void targets_failed(void *ctx, int err, const char *what)
{
	session__fail(ctx, err, what);
}

static void write_failed(struct session *s, int err)
{
	char what[PATH_MAX + 32];

	snprintf(what, sizeof(what), "write records to %s", s->out_name);
	session__fail(s, err, what);
}

/*
 * SIGHUP: -o FILE is closed and opened again, appending, so that logrotate
 * can move it away. What was written before is flushed and checked first.
 */
static void reopen_output(struct session *s)
{
	FILE *f;

	if (!s->cfg->output || s->fail)
		return;
	errno = 0;
	if (fclose(s->out) != 0) {
		s->out = NULL;
		write_failed(s, errno ? -errno : -EIO);
	}
	f = outfile__fopen(s->cfg->output, true);
	if (!f) {
		fprintf(stderr, "ctxprof-go: failed to reopen %s: %s\n", s->cfg->output,
			strerror(errno));
		session__fail(s, -errno, "");
		/* nothing more can be written; the statistics still come */
		s->out = fopen("/dev/null", "w");
		return;
	}
	s->out = f;
	if (s->cfg->verbose)
		fprintf(stderr, "ctxprof-go: reopened %s\n", s->cfg->output);
}

static bool lookup_target(void *ctx, uint32_t pid, uint64_t time_ns, struct agg_target *out)
{
	struct session *s = ctx;
	struct target *t = s->targets ? targets__find(s->targets, pid) : NULL;

	/* a target gone since keeps the name it had */
	out->comm = t ? target__comm(t) : processes__comm(s->procs, pid);
	out->service_name = processes__service(s->procs, pid);
	/* events come from any process: its mappings as they were at the event */
	out->sym = processes__get(s->procs, pid, time_ns);
	out->container = processes__container(s->procs, pid);
	out->memprofile_rate = processes__memprofile_rate(s->procs, pid);
	return true;
}

/*
 * --otlp: what a process is, for its resource: the target's view of it,
 * and its allocation rate, which the process store keeps past its exit
 * for its last records as it does for their unbiasing.
 */
static bool describe_process(void *ctx, uint32_t pid, struct otlp_process *out)
{
	struct session *s = ctx;
	bool known = s->targets && targets__describe_process(s->targets, pid, out);

	out->memprofile_rate = processes__memprofile_rate(s->procs, pid);
	return known || out->memprofile_rate > 0;
}

/* One event from the ring; a failure that loses data stops the reading (malformed ones are counted). */
static int handle_event(void *ctx, void *data, size_t size)
{
	const struct sample_event *e = data;
	struct session *s = ctx;
	int ret;

	if (ring_keeper__keeping())
		return ring_keeper__keep(s->keeper, RING_SAMPLES, data, size), 0;
	if (size >= offsetof(struct sample_event, labels) && e->origin != ORIGIN_SAMPLING &&
	    e->origin != ORIGIN_ALLOC) {
		ret = aggregate__write_event(s->agg, data, size, lookup_target, s);
		if (ret && ret != -EINVAL)
			write_failed(s, ret);
		s->unflushed = true;
	} else {
		ret = aggregate__add(s->agg, data, size);
		if (ret && ret != -EINVAL)
			session__fail(s, ret, "count samples");
	}
	if (s->fail)
		return s->fail;
	/* the rest of the ring waits for the next round */
	if (++s->nread % 256 == 0 && now_ns(CLOCK_MONOTONIC) > s->read_until_ns)
		return -EAGAIN;
	return 0;
}

/* A target's goroutine-start or allocation probe spent its period's budget (budget_probe.h). */
static int budget_note(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	struct budget_note note;
	struct target *t;

	if (ring_keeper__keeping())
		return ring_keeper__keep(s->keeper, RING_BUDGET_NOTES, data, size), 0;
	if (size < sizeof(note) || !s->targets)
		return 0;
	memcpy(&note, data, sizeof(note));
	t = targets__find(s->targets, note.tgid);
	if (t && note.kind == BUDGET_SPAWN)
		spawn_part__spent(target__parts(t));
	else if (t && note.kind == BUDGET_ALLOC)
		alloc_part__spent(target__parts(t));
	return 0;
}

/* A request's span begins or ends: its trace's request record counts it. */
static int span_note(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;

	if (ring_keeper__keeping())
		return ring_keeper__keep(s->keeper, RING_SPANS, data, size), 0;
	if (aggregate__add_span(s->agg, data, size) == -ENOMEM)
		session__fail(s, -ENOMEM, "count a request");
	return 0;
}

static void tick_parts(struct target *t, void *ctx)
{
	target__tick(t);
}

/* Has the reader of F gone away (a closed pipe or socket)? Regular files never say so. */
static bool reader_gone(FILE *f)
{
	struct pollfd pfd = { .fd = fileno(f), .events = 0 };

	return poll(&pfd, 1, 0) == 1 && pfd.revents & (POLLERR | POLLHUP);
}

/* An event the keeper read while the loop could not, as its ring's callback takes it. */
static int replay(void *ctx, uint32_t kind, void *data, size_t size)
{
	struct session *s = ctx;

	switch (kind) {
	case RING_SAMPLES:
		return handle_event(s, data, size);
	case RING_BUDGET_NOTES:
		return budget_note(s, data, size);
	default:
		return span_note(s, data, size);
	}
}

/*
 * The loop reads the rings between these; what the keeper read meanwhile
 * comes first, whatever the read budget (it is out of the rings already).
 */
static void rings_enter(struct session *s)
{
	uint64_t until = s->read_until_ns;

	s->read_until_ns = UINT64_MAX;
	ring_keeper__enter(s->keeper, replay, s);
	s->read_until_ns = until;
}

/* Reads the rings between records of a long flush, within the usual budget. */
static void read_rings(void *ctx)
{
	struct session *s = ctx;

	if (s->fail || !s->reading)
		return;
	rings_enter(s);
	s->read_until_ns = now_ns(CLOCK_MONOTONIC) + READ_BUDGET_NS;
	ring_buffer__consume(s->rb);
	ring_keeper__leave(s->keeper);
}

/* Events go out as they come: a reader on a pipe sees them within a poll. */
static void flush_events(struct session *s)
{
	if (!s->unflushed || s->fail)
		return;
	s->unflushed = false;
	errno = 0;
	if (fflush(s->out) != 0)
		write_failed(s, errno ? -errno : -EIO);
}

/* The aggregator, and the writers it hands records to. */
static int create_outputs(struct session *s)
{
	const struct session_config *c = s->cfg;
	int err;

	s->agg = aggregate__new(s->period_ns,
				(int64_t)(now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC)));
	if (!s->agg)
		return -ENOMEM;
	aggregate__set_keys(s->agg, c->trace_keys, c->ntrace_keys, span_keys,
			    sizeof(span_keys) / sizeof(span_keys[0]));
	aggregate__set_sources(s->agg, c->trace_sources & (1U << TRACE_SOURCE_LABEL),
			       c->trace_sources & (1U << TRACE_SOURCE_TRACEPARENT),
			       c->trace_sources & (1U << TRACE_SOURCE_OTEL_SDK),
			       sampler__obi(s->sampler));
	aggregate__set_lookup(s->agg, lookup_target, s);
	aggregate__repair_leaves(s->agg, c->leaf_repair);
	if (c->wall && (err = aggregate__set_wall_period(s->agg, NSEC_PER_SEC / c->wall_hz)))
		return err;
	aggregate__set_progress(s->agg, read_rings, s);
	/* each sample's time and goroutine, for the records' times_us and goids */
	aggregate__keep_times(s->agg, AGG_MAX_TIMES, AGG_MAX_TIMES);
	if (!(s->outputs = outputs__new(c, s->period_ns, &s->out)))
		return -errno;
	aggregate__set_writers(s->agg, outputs__writers(s->outputs));
	return 0;
}

/* --metrics-addr: /metrics, from a thread of its own. */
static int serve_metrics(struct session *s)
{
	char err[256];

	if (!s->cfg->metrics_addr)
		return 0;
	s->metrics = metrics_http__start(s->cfg->metrics_addr, err, sizeof(err));
	if (!s->metrics) {
		fprintf(stderr, "failed to serve /metrics: %s\n", err);
		return -EINVAL;
	}
	return 0;
}

/* The session's own state. NULL with a message. */
static struct session *session_alloc(const struct session_config *cfg)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s) {
		fprintf(stderr, "out of memory\n");
		return NULL;
	}
	s->cfg = cfg;
	s->out = stdout;
	s->out_name = cfg->output ?: "stdout";
	s->period_ns = NSEC_PER_SEC / cfg->freq;
	return s;
}

/* PATH, written at exit, created now: a path that cannot be written stops the run at once. */
static int try_open(const char *path, const char *what)
{
	int err, fd;

	if (!path)
		return 0;
	fd = outfile__open(path, false);
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "failed to open the %s %s: %s\n", what, path, strerror(-err));
		return err;
	}
	close(fd);
	return 0;
}

/*
 * -o FILE, created 0600: records carry labels. --pprof and --html FILE
 * are written at the end, but opened now, so that a path that cannot be
 * written stops the run before the recording rather than losing it.
 */
static int open_output(struct session *s)
{
	int err;

	if ((err = try_open(s->cfg->pprof, "pprof profile")) || (err = try_open(s->cfg->html, "report")))
		return err;
	if (!s->cfg->output)
		return 0;
	s->out = outfile__fopen(s->cfg->output, s->cfg->append);
	if (!s->out) {
		err = -errno;
		fprintf(stderr, "failed to open %s: %s\n", s->cfg->output, strerror(-err));
		return err;
	}
	return 0;
}

/*
 * Every process's mappings, from the kernel's mmap records, before any are
 * read, so that none falls between. Without those records (a perf event
 * refused), mappings are read from /proc only.
 */
static int follow_processes(struct session *s)
{
	char errbuf[256];

	s->procs = processes__new(true, errbuf, sizeof(errbuf));
	if (!s->procs) {
		fprintf(stderr, "ctxprof-go: warning: %s; frames of processes that exit before "
				"their events are read will be addresses\n",
			errbuf);
		s->procs = processes__new(false, errbuf, sizeof(errbuf));
		if (!s->procs) {
			fprintf(stderr, "out of memory\n");
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The target set, sampled through the sampler's programs, counted into the
 * aggregate; --wall's snapshots of it. -errno with a message.
 */
static int create_targets(struct session *s)
{
	const struct session_config *c = s->cfg;
	struct targets_config tc = {
		.env = {
			.cfg = c,
			.bpf = s->bpf,
			.agg = s->agg,
			.procs = s->procs,
			.period_ns = s->period_ns,
			.keys = { c->trace_keys, c->ntrace_keys, span_keys,
				  sizeof(span_keys) / sizeof(span_keys[0]) },
			.request_ends = sampler__request_ends(s->sampler),
			.per_task = sampler__per_task(s->sampler),
		},
		.read_rings = read_rings,
		.cgroup_dir = sampler__take_cgroup_dir(s->sampler),
		.fail = targets_failed,
		.ctx = s,
	};

	s->targets = targets__new(&tc);
	if (!s->targets || (c->wall && !(s->wall = wall_snap__new(s->bpf, s->agg, s->targets,
								   c->wall_hz)))) {
		fprintf(stderr, "out of memory\n");
		return -ENOMEM;
	}
	if (c->all)
		processes__on_exec(s->procs, targets__on_exec, s->targets);
	outputs__set_processes(s->outputs, describe_process, s);
	return 0;
}

struct session *session__new(const struct session_config *cfg)
{
	struct session *s;
	int err;

	s = session_alloc(cfg);
	if (!s)
		return NULL;
	err = open_output(s);
	if (err)
		goto fail;
	s->sampler = sampler__new(s->cfg, s->period_ns);
	if (!s->sampler)
		goto fail;
	s->bpf = sampler__bpf(s->sampler);
	err = follow_processes(s);
	if (err)
		goto fail;
	err = create_outputs(s);
	if (err)
		goto fail;
	err = serve_metrics(s);
	if (err)
		goto fail;
	s->rb = sampler__rings(s->sampler, handle_event, s);
	if (!s->rb)
		goto fail;
	if (ring_buffer__add(s->rb, s->bpf->budget_notes_fd, budget_note, s)) {
		err = -errno;
		fprintf(stderr, "failed to read the budgeted probes' notes: %s\n", strerror(-err));
		goto fail;
	}
	if (ring_buffer__add(s->rb, s->bpf->requests.spans_fd, span_note, s)) {
		err = -errno;
		fprintf(stderr, "failed to read the requests' spans: %s\n", strerror(-err));
		goto fail;
	}
	s->keeper = ring_keeper__new(s->rb, KEEP_PERIOD_NS, KEEP_MAX_BYTES, s->cfg->realtime);
	if (!s->keeper) {
		err = -errno;
		fprintf(stderr, "failed to start the rings' reader: %s\n", strerror(-err));
		goto fail;
	}
	err = create_targets(s);
	if (err)
		goto fail;
	/* from the first target on, while the others are added */
	s->reading = true;
	if (sampler__attach_custom(s->sampler) || (cfg->sampling && sampler__attach(s->sampler)))
		goto fail;
	return s;
fail:
	session__free(s);
	return NULL;
}

/* Stops sampling and probing: nothing new reaches the rings after this. */
static void stop_probes(struct session *s)
{
	if (s->targets)
		targets__stop_ticks(s->targets);
	sampler__stop(s->sampler);
}

void session__free(struct session *s)
{
	if (!s)
		return;
	stop_probes(s);
	ring_keeper__free(s->keeper);
	wall_snap__free(s->wall);
	/* their probes and events go before the programs they run */
	targets__free(s->targets);
	aggregate__free(s->agg);
	outputs__free(s->outputs);
	metrics_http__stop(s->metrics);
	processes__free(s->procs);
	sampler__free(s->sampler);
	if (s->out && s->out != stdout)
		fclose(s->out);
	free(s);
}

int session__add_targets(struct session *s, const pid_t *pids, int n)
{
	return targets__add_all(s->targets, pids, n);
}

void session__remove_target(struct session *s, pid_t pid, const char *why)
{
	targets__remove(s->targets, pid, why);
}

int session__ntargets(const struct session *s)
{
	return targets__count(s->targets);
}

void session__discover(struct session *s)
{
	targets__discover(s->targets);
}

/* What stats.c says: the counts as of now. */
static struct stats_view stats_view(const struct session *s)
{
	struct stats_view v = {
		.cfg = s->cfg,
		.stats_fd = s->bpf->stats_fd,
		.agg = s->agg,
		.targets = s->targets,
		.procs = s->procs,
		.per_task = sampler__per_task(s->sampler),
		.nstart = s->nstart,
		.write_cpu_ns = s->write_cpu_ns,
		.flushes = s->flushes,
		.encoder = outputs__otlp(s->outputs),
	};

	if (s->wall)
		v.wall = wall_snap__stats(s->wall, &v.wall_cpu_ns);
	ring_keeper__stats(s->keeper, &v.kept);
	outputs__otlp_totals(s->outputs, &v.otlp);
	return v;
}

static void print_stats(const struct session *s, bool so_far)
{
	struct stats_view v = stats_view(s);

	stats__print(&v, so_far);
}

static void publish_metrics(struct session *s)
{
	struct stats_view v;

	if (!s->metrics)
		return;
	v = stats_view(s);
	stats__publish(&v, s->metrics);
}

/*
 * --wall, at the end: goroutines the last snapshot did not look at are
 * looked at as of it.
 */
static void finish_wall(struct session *s)
{
	int err;

	if (s->wall && !s->fail && (err = wall_snap__finish(s->wall)))
		session__fail(s, err, "count goroutines");
}

/* --wall: what snapshots counted, into the aggregate; before every flush. */
static void settle_wall(struct session *s)
{
	int err;

	if (s->wall && (err = wall_snap__settle(s->wall)))
		session__fail(s, err, "count goroutines");
}

/* The records counted so far, written; its CPU time kept for -v. As aggregate__flush. */
static int flush_records(struct session *s)
{
	uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	int ret = aggregate__flush(s->agg, lookup_target, s);

	s->write_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	s->flushes++;
	return ret;
}

/*
 * Probes stopped, what is in the rings read, the last records written;
 * then the statistics, and the failure that lost data, if one did.
 */
static int drain(struct session *s)
{
	struct agg_stats st;
	int ret;

	s->reading = false;
	stop_probes(s);
	/* the probes are gone: what is in the rings, and what the keeper kept, is all there is */
	ring_keeper__stop(s->keeper);
	s->read_until_ns = UINT64_MAX;
	if (!s->fail) {
		rings_enter(s);
		ring_buffer__consume(s->rb);
		ring_keeper__leave(s->keeper);
	}
	flush_events(s);
	/* targets that ended in the last moments: the statistics count them as gone */
	targets__reap(s->targets);
	finish_wall(s);
	settle_wall(s);
	if (!s->fail && (ret = flush_records(s)) < 0)
		write_failed(s, ret);
	/* what is queued goes out within the flush time; the rest is counted */
	outputs__stop_export(s->outputs);
	print_stats(s, false);
	/* stderr's lines start "ctxprof-go: ": 80 columns with it */
	outputs__summary(s->outputs, stderr, SUMMARY_TRACES, 80 - (int)strlen("ctxprof-go: "));
	publish_metrics(s);
	targets__warn_unsampled(s->targets);
	/* a reader that went away (| head) ends the run, as it ends perf's or jq's: no error */
	if (!s->fail || s->fail == -EPIPE)
		return 0;
	aggregate__stats(s->agg, &st);
	if (*s->fail_msg)
		fprintf(stderr, "ctxprof-go: failed to %s: %s; %llu records not written\n",
			s->fail_msg, strerror(-s->fail), (unsigned long long)st.unwritten);
	return s->fail;
}

/* -o FILE closed: the last buffered bytes are written only now, and can fail too. */
static int close_output(struct session *s)
{
	int err;

	if (s->out == stdout)
		return 0;
	err = fclose(s->out) ? -errno : 0;
	s->out = stdout;
	if (err)
		fprintf(stderr, "ctxprof-go: failed to write records to %s: %s\n", s->cfg->output,
			strerror(-err));
	return err;
}

/*
 * The last of it: records and statistics, then -f, --pprof and -o FILE;
 * then what --otlp could not deliver, said last, which fails the run too.
 */
static int finish(struct session *s)
{
	int err, ret;

	err = drain(s);
	if (!err) {
		err = outputs__write(s->outputs);
		ret = close_output(s);
		err = err ?: ret;
	}
	ret = outputs__otlp_failed(s->outputs);
	return err ?: ret;
}

/* When the loop does what it does on a timer; CLOCK_MONOTONIC ns, 0 for never. */
struct run_clock {
	uint64_t next_flush, next_scan, next_wall, next_metrics, deadline;
	uint64_t wall_start; /* --wall: when the snapshot of slot 0 was due */
	/* every event before this moment has been read: 0 when the read budget ran out */
	uint64_t consumed;
};

static void catch_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGUSR1, on_signal);
	/* a reader that went away ends the run (EPIPE), after our pins are cleaned up */
	signal(SIGPIPE, SIG_IGN);
}

static void start_clock(const struct session *s, struct run_clock *rc)
{
	const struct session_config *c = s->cfg;
	uint64_t start = now_ns(CLOCK_MONOTONIC);

	*rc = (struct run_clock){
		.next_flush = start + (uint64_t)(c->interval * NSEC_PER_SEC),
		.next_scan = start + NSEC_PER_SEC,
		.next_wall = c->wall ? start : 0,
		.wall_start = start,
		.deadline = c->duration > 0 ? start + (uint64_t)(c->duration * NSEC_PER_SEC) : 0,
	};
}

/* The line scripts wait for: every probe is attached. */
static void say_ready(struct session *s)
{
	const struct session_config *c = s->cfg;
	int ntargets = targets__count(s->targets);

	s->nstart = ntargets;
	/* once the recording is sure to run: a run refused says only why */
	outputs__warn_if_nowhere(s->outputs, s->out);
	if (c->otlp.url)
		fprintf(stderr, "ctxprof-go: sending OTLP profiles to %s%s every %g s\n", c->otlp.url,
			c->otlp.gzip ? " (gzip)" : "", c->interval);
	if (s->metrics)
		fprintf(stderr, "ctxprof-go: serving /metrics on http://%s/metrics\n",
			metrics_http__addr(s->metrics));

	if (c->all)
		fprintf(stderr,
			"ctxprof-go: sampling every Go process%s (%d now) at %lu Hz on %d CPUs%s; "
			"Ctrl-C to stop\n",
			c->cgroup ? " of the cgroup" : "", ntargets, c->freq, sampler__nevents(s->sampler),
			c->traced_only ? ", traced goroutines only" : "");
	else if (c->sampling)
		fprintf(stderr,
			"ctxprof-go: sampling %d target%s at %lu Hz on %d CPUs%s; Ctrl-C to stop\n",
			ntargets, plural(ntargets), c->freq, sampler__nevents(s->sampler),
			c->traced_only ? ", traced goroutines only" : "");
	else
		fprintf(stderr, "ctxprof-go: recording custom-trace events; Ctrl-C to stop\n");
}

/*
 * --wall: a snapshot when one is due; one that overran its period skips
 * the ones it missed, and the next counts them (snapshots are numbered by
 * periods since the start).
 */
static void snapshot_if_due(struct session *s, struct run_clock *rc)
{
	uint64_t period = NSEC_PER_SEC / s->cfg->wall_hz, now = now_ns(CLOCK_MONOTONIC);
	int err;

	if (!rc->next_wall || now < rc->next_wall)
		return;
	/* the CPU samples so far first: a running goroutine's look takes its latest's stack */
	read_rings(s);
	err = wall_snap__take(s->wall, (now - rc->wall_start + period / 2) / period);
	if (err)
		session__fail(s, err, "count goroutines");
	rc->next_wall += period;
	now = now_ns(CLOCK_MONOTONIC);
	if (rc->next_wall <= now)
		rc->next_wall = now + period;
}

/* --metrics-addr: the page anew once a second */
static void metrics_if_due(struct session *s, struct run_clock *rc)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (!s->metrics || now < rc->next_metrics)
		return;
	publish_metrics(s);
	rc->next_metrics = now + NSEC_PER_SEC;
}

/*
 * Waits for events until the next poll or snapshot, then reads every ring
 * within the read budget. The wait holds no lock, so that the keeper reads
 * the rings meanwhile when it is long. False when reading failed: the run
 * ends.
 */
static bool read_events(struct session *s, struct run_clock *rc)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int timeout = targets__pending(s->targets) ? 0 : POLL_MS, err;
	struct epoll_event ev;

	/* rounded up: a timeout of 0 would spin through the loop until the snapshot */
	if (rc->next_wall && (rc->next_wall - now + 999999) / 1000000 < (uint64_t)timeout)
		timeout = (rc->next_wall - now + 999999) / 1000000;
	err = epoll_wait(ring_buffer__epoll_fd(s->rb), &ev, 1, timeout) < 0 ? -errno : 0;
	rings_enter(s);
	s->read_until_ns = now + READ_BUDGET_NS;
	/* every event before this moment is read below, unless the budget ran out */
	rc->consumed = now_ns(CLOCK_MONOTONIC);
	if (err >= 0)
		err = ring_buffer__consume(s->rb);
	ring_keeper__leave(s->keeper);
	if (s->fail)
		return false;
	if (err == -EAGAIN) {
		rc->consumed = 0;
	} else if (err < 0 && err != -EINTR) {
		fprintf(stderr, "failed to read the ring buffer: %s\n", strerror(-err));
		session__fail(s, err, "");
		return false;
	}
	return true;
}

/* SIGHUP and SIGUSR1, and readers that went away. False when the run must end. */
static bool serve_outputs(struct session *s)
{
	flush_events(s);
	if (reopen) {
		reopen = 0;
		reopen_output(s);
	}
	if (report) {
		report = 0;
		print_stats(s, true);
	}
	/* `ctxprof-go ... | head -1`: stop at once, not at the next write */
	if (reader_gone(s->out) || (s->cfg->folded && reader_gone(stdout)))
		write_failed(s, -EPIPE);
	return !s->fail;
}

/*
 * --pid: where the kernel does not run the events on the targets' threads
 * (targets__stalled_ticks), the sampler's event goes on every CPU instead,
 * as with --all: other processes' ticks cost it a check each, and no
 * target goes unsampled.
 */
static void check_ticks(struct session *s)
{
	struct target *t;
	uint64_t cpu_ns;
	int err;

	if (!sampler__per_task(s->sampler) || !(t = targets__stalled_ticks(s->targets, &cpu_ns)))
		return;
	fprintf(stderr,
		"ctxprof-go: warning: pid %d (%s): the kernel did not run the cpu-clock events on "
		"its threads (%.2f s of CPU, none counted); sampling on every CPU from now on\n",
		(int)target__pid(t), target__comm(t), cpu_ns / 1e9);
	targets__stop_ticks(s->targets);
	err = sampler__every_cpu(s->sampler);
	if (err)
		session__fail(s, err, "sample on every CPU");
}

/*
 * Targets that exited or exec'd go, processes that exec'd come (--all).
 * False when, with END_WITH_TARGETS, none is left.
 */
static bool follow_targets(struct session *s, struct run_clock *rc, bool end_with_targets)
{
	targets__reap(s->targets);
	targets__sweep_owners(s->targets);
	targets__foreach(s->targets, tick_parts, NULL);
	check_ticks(s);
	if (end_with_targets && !targets__count(s->targets)) {
		fprintf(stderr, "ctxprof-go: every target has exited\n");
		return false;
	}
	processes__read(s->procs);
	targets__handle_execs(s->targets);
	targets__describe_pending(s->targets, now_ns(CLOCK_MONOTONIC) + DESCRIBE_BUDGET_NS);
	/* without the kernel's exec records, new processes are found by looking */
	if (s->cfg->all && !processes__following(s->procs) &&
	    now_ns(CLOCK_MONOTONIC) >= rc->next_scan) {
		targets__discover(s->targets);
		rc->next_scan += NSEC_PER_SEC;
	}
	return true;
}

/* Every --interval: the records counted so far. False when they could not be written. */
static bool flush_if_due(struct session *s, struct run_clock *rc)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int err;

	/* at the end, drain writes them once, after --wall's last look at every goroutine */
	if (now < rc->next_flush || (rc->deadline && now >= rc->deadline))
		return true;
	settle_wall(s);
	/* a context published or changed in this interval names its records already */
	targets__refresh_contexts(s->targets);
	err = flush_records(s);
	if (err < 0) {
		write_failed(s, err);
		return false;
	}
	/* written: the mappings of processes gone before then are no longer needed */
	processes__release(s->procs, rc->consumed);
	rc->next_flush += (uint64_t)(s->cfg->interval * NSEC_PER_SEC);
	return true;
}

int session__run(struct session *s, bool end_with_targets)
{
	struct run_clock rc;

	catch_signals();
	start_clock(s, &rc);
	say_ready(s);
	while (!exiting && !s->fail) {
		snapshot_if_due(s, &rc);
		metrics_if_due(s, &rc);
		if (!read_events(s, &rc) || !serve_outputs(s) ||
		    !follow_targets(s, &rc, end_with_targets) || !flush_if_due(s, &rc))
			break;
		if (rc.deadline && now_ns(CLOCK_MONOTONIC) >= rc.deadline)
			break;
	}
	return finish(s);
}
