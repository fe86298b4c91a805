// SPDX-License-Identifier: GPL-2.0
/* session.c: one recording: its BPF programs, outputs and rings, the run loop and the report. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/output/folded.h"
#include "cmd/output/metrics_http.h"
#include "cmd/output/pprof.h"
#include "cmd/output/report.h"
#include "cmd/symbols/binaries.h"
#include "cmd/symbols/objfile.h"
#include "cmd/util/clock.h"
#include "cmd/util/cpus.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/outfile.h"
#include "cmd/util/strbuf.h"
#include "cmd/util/user_va.h"
#include "offsets/go_binary.h"
#include "ctxprof.skel.h"
#include "aggregate.h"
#include "container.h"
#include "core_btf.h"
#include "custom.h"
#include "obi_map.h"
#include "processes.h"
#include "session.h"
#include "session_state.h"
#include "wall.h"

#define POLL_MS 100
/* traces the exit's summary names, by CPU and by wall time */
#define SUMMARY_TRACES 5
/* time spent reading rings before the loop looks at the clock, signals and targets */
#define READ_BUDGET_NS (200 * 1000000ULL)
/* time spent describing new targets before the rings are read again */
#define DESCRIBE_BUDGET_NS (20 * 1000000ULL)

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

	if (!s->cfg.output || s->fail)
		return;
	errno = 0;
	if (fclose(s->out) != 0) {
		s->out = NULL;
		write_failed(s, errno ? -errno : -EIO);
	}
	f = outfile__fopen(s->cfg.output, true);
	if (!f) {
		fprintf(stderr, "ctxprof-go: failed to reopen %s: %s\n", s->cfg.output,
			strerror(errno));
		session__fail(s, -errno, "");
		/* nothing more can be written; the statistics still come */
		s->out = fopen("/dev/null", "w");
		return;
	}
	s->out = f;
	if (s->cfg.verbose)
		fprintf(stderr, "ctxprof-go: reopened %s\n", s->cfg.output);
}

static bool lookup_target(void *ctx, uint32_t pid, uint64_t time_ns, struct agg_target *out)
{
	struct session *s = ctx;
	struct target *t = session__find_target(s, pid);

	/* a target gone since keeps the name it had */
	out->comm = t ? t->comm : processes__comm(s->procs, pid);
	out->service_name = processes__service(s->procs, pid);
	/* events come from any process: its mappings as they were at the event */
	out->sym = processes__get(s->procs, pid, time_ns);
	out->container = processes__container(s->procs, pid);
	return true;
}

/* Every record, as written, into --pprof's profile, -f's stacks, --otlp's request and --html's page. */
static int to_outputs(void *ctx, const struct rec *r)
{
	struct session *s = ctx;
	int ret = 0;

	if (s->pprof)
		ret = pprof__add(s->pprof, r);
	if (!ret && s->report)
		ret = recset__add(s->report, r);
	if (!ret && s->folded)
		ret = folded__add(s->folded, r);
	if (!ret && s->otlp)
		ret = otlp__add(s->otlp, r);
	if (!ret && s->summary)
		ret = summary__add(s->summary, r);
	return ret;
}

/* --otlp: the records of the interval just written, as one request to the export thread. */
static void send_otlp(struct session *s)
{
	struct otlp_batch batch;
	uint8_t *buf;
	size_t len;

	if (!s->otlp)
		return;
	if (otlp__take(s->otlp, &buf, &len, &batch)) {
		session__fail(s, -ENOMEM, "encode OTLP profiles");
		return;
	}
	if (buf)
		otlp_export__push(s->export, buf, len, batch.samples);
}

/* One event from the ring; a failure that loses data stops the reading (malformed ones are counted). */
static int handle_event(void *ctx, void *data, size_t size)
{
	const struct sample_event *e = data;
	struct session *s = ctx;
	int ret;

	if (size >= offsetof(struct sample_event, labels) && e->origin != ORIGIN_SAMPLING) {
		ret = aggregate__write_event(s->agg, data, size, s->out, lookup_target, s);
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

/* Has the reader of F gone away (a closed pipe or socket)? Regular files never say so. */
static bool reader_gone(FILE *f)
{
	struct pollfd pfd = { .fd = fileno(f), .events = 0 };

	return poll(&pfd, 1, 0) == 1 && pfd.revents & (POLLERR | POLLHUP);
}

/* Reads the rings between records of a long flush, within the usual budget. */
static void read_rings(void *ctx)
{
	struct session *s = ctx;

	if (s->fail || !s->reading)
		return;
	s->read_until_ns = now_ns(CLOCK_MONOTONIC) + READ_BUDGET_NS;
	ring_buffer__consume(s->rb);
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

/*
 * The sampler's cpu-clock event: on CPU for every task (PID -1) or a
 * cgroup's (PID its directory's fd, FLAGS PERF_FLAG_PID_CGROUP), or on
 * thread PID on every CPU, inherited by the threads and children it makes
 * from then on.
 */
static int open_ticks(const struct session *s, int pid, int cpu, unsigned long flags)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = s->period_ns,
		.inherit = cpu < 0,
	};

	return syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC | flags);
}

int session__open_task_ticks(const struct session *s, pid_t tid)
{
	return open_ticks(s, tid, -1, 0);
}

/* Sets up what the options ask for, before the programs are loaded. */
/*
 * The obi source: OBI's traces_ctx_v1, shared by fd. Where it cannot be
 * (no bpffs, a map of another kind there), the source is off: an error
 * when --trace-sources names it, said with -v when it came with the
 * default. Without it, the sampler's copy is a map of one entry.
 */
static int share_obi_map(struct session *s)
{
	struct session_config *c = &s->cfg;
	char why[PATH_MAX + 160];
	bool created;
	int fd, err;

	if (c->sampling && (c->trace_sources & (1U << TRACE_SOURCE_OBI))) {
		fd = obi_map__open(c->bpffs, &created, why, sizeof(why));
		if (fd < 0 && c->obi_asked) {
			fprintf(stderr, "ctxprof-go: the obi trace source: %s\n", why);
			return fd;
		}
		if (fd >= 0) {
			err = bpf_map__reuse_fd(s->skel->maps.traces_ctx_v1, fd);
			close(fd);
			if (err) {
				fprintf(stderr, "failed to share OBI's map: %s\n", strerror(-err));
				return err;
			}
			s->skel->rodata->want_obi = true;
			if (c->verbose)
				fprintf(stderr, "ctxprof-go: OBI's traces from %s/otel/%s%s\n", c->bpffs,
					OBI_MAP_NAME, created ? ", pinned there for OBI" : "");
			return 0;
		}
		if (c->verbose)
			fprintf(stderr, "ctxprof-go: no obi trace source: %s\n", why);
		c->trace_sources &= ~(1U << TRACE_SOURCE_OBI);
	}
	bpf_map__set_max_entries(s->skel->maps.traces_ctx_v1, 1);
	return 0;
}

static int configure(struct session *s)
{
	const struct session_config *c = &s->cfg;
	__u32 max_targets = c->max_targets > 1024 ? c->max_targets : 1024;
	char why[256];
	uint64_t cgroup_id;
	uint32_t level;
	int i, err;

	/*
	 * --pid: the cpu-clock event follows each target's threads, not every
	 * CPU, so that no other process's tick runs the sampler
	 */
	s->per_task = c->sampling && !c->all && !c->cgroup;
	s->skel->rodata->per_task = s->per_task;
	if (c->cgroup) {
		err = container__resolve_cgroup(c->cgroup, &cgroup_id, &level, &s->cgroup_dir, why,
						 sizeof(why));
		if (err) {
			fprintf(stderr, "--cgroup %s: %s\n", c->cgroup, why);
			return err;
		}
		s->skel->rodata->cgroup_id = cgroup_id;
		s->skel->rodata->cgroup_level = level;
	}
	for (i = 0; i < c->ntrace_keys; i++) {
		s->skel->rodata->trace_keys[i].len = strlen(c->trace_keys[i]);
		memcpy(s->skel->rodata->trace_keys[i].name, c->trace_keys[i],
		       strlen(c->trace_keys[i]));
	}
	s->skel->rodata->ntrace_keys = c->ntrace_keys;
	s->skel->rodata->traced_only = c->traced_only;
	s->skel->rodata->leaf_repair = c->leaf_repair;
#if defined(__aarch64__)
	s->skel->rodata->user_va_mask = user_va__mask();
	s->skel->rodata->sigreturn_off = objfile__vdso_symbol("__kernel_rt_sigreturn");
#endif
	s->skel->rodata->want_contexts =
		c->trace_sources & (1U << TRACE_SOURCE_TRACEPARENT | 1U << TRACE_SOURCE_OTEL_SDK);
	err = share_obi_map(s);
	if (err)
		return err;
	bpf_map__set_max_entries(s->skel->maps.events, s->ncpus);
	/* one entry per target in each */
	bpf_map__set_max_entries(s->skel->maps.targets, max_targets);
	bpf_map__set_max_entries(s->skel->maps.frame_sizes, max_targets);
	/* only what this run uses is loaded: the verifier's time is start-up time */
	bpf_program__set_autoload(s->skel->progs.on_sample, c->sampling);
	bpf_program__set_autoload(s->skel->progs.on_exec, c->sampling);
	bpf_program__set_autoload(s->skel->progs.http_request,
				  c->sampling && (c->trace_sources & (1U << TRACE_SOURCE_TRACEPARENT |
								     1U << TRACE_SOURCE_OTEL_SDK)));
	bpf_program__set_autoload(s->skel->progs.uprobe_event, c->nuprobes > 0);
	bpf_program__set_autoload(s->skel->progs.custom__generic, c->pin_dir != NULL);
	return 0;
}

/* One ring buffer per CPU, in the events array of maps, all read by one ring_buffer. */
static int create_rings(struct session *s)
{
	int i, err;

	s->ring_fds = calloc(s->ncpus, sizeof(*s->ring_fds));
	if (!s->ring_fds)
		return -ENOMEM;
	for (i = 0; i < s->ncpus; i++)
		s->ring_fds[i] = -1;
	for (i = 0; i < s->ncpus; i++) {
		s->ring_fds[i] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ctxprof_ring", 0, 0,
						s->cfg.ring_kib * 1024, NULL);
		if (s->ring_fds[i] < 0) {
			err = -errno;
			fprintf(stderr, "failed to create ring buffer for CPU %d: %s\n", i,
				strerror(-err));
			return err;
		}
		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.events), &i, &s->ring_fds[i], 0)) {
			err = -errno;
			fprintf(stderr, "failed to install ring buffer for CPU %d: %s\n", i,
				strerror(-err));
			return err;
		}
		err = s->rb ? ring_buffer__add(s->rb, s->ring_fds[i], handle_event, s) : 0;
		if (!s->rb)
			s->rb = ring_buffer__new(s->ring_fds[i], handle_event, s, NULL);
		if (!s->rb || err) {
			err = err ?: -errno;
			fprintf(stderr, "failed to read ring buffer of CPU %d: %s\n", i,
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The sampler's cpu-clock event on every online CPU, for CGROUP_FD's tasks when >= 0. */
static int open_cpu_ticks(struct session *s, int cgroup_fd)
{
	int i, fd, err = 0;

	for (i = 0; i < s->ncpus && !err; i++) {
		if (!s->online[i])
			continue;
		fd = open_ticks(s, cgroup_fd, i, cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP : 0);
		if (fd < 0) {
			if (errno == ENODEV)
				continue;
			err = -errno;
			fprintf(stderr, "failed to open perf event on CPU %d: %s\n", i, strerror(-err));
			break;
		}
		s->perf_links[i] = bpf_program__attach_perf_event(s->skel->progs.on_sample, fd);
		if (!s->perf_links[i]) {
			err = -errno;
			close(fd);
			fprintf(stderr, "failed to attach to perf event on CPU %d: %s\n", i,
				strerror(-err));
			break;
		}
		s->nevents++;
	}
	return err;
}

/*
 * The exec tracepoint, then the cpu-clock event on every online CPU (a CPU
 * that gives ENODEV is skipped), for the cgroup's tasks only under
 * --cgroup; under --pid, on each target's threads instead, as it is added
 * (targets.c). Either way, other processes' ticks do not run the sampler.
 */
static int attach_sampling(struct session *s)
{
	struct rlimit nofile;
	int i, err = 0, cgroup_fd = -1;

	/* before any target is added: an exec from then on is marked in the kernel */
	s->exec_link = bpf_program__attach(s->skel->progs.on_exec);
	if (!s->exec_link) {
		err = -errno;
		fprintf(stderr, "failed to attach to the sched_process_exec tracepoint: %s\n",
			strerror(-err));
		return err;
	}
	s->perf_links = calloc(s->ncpus, sizeof(*s->perf_links));
	if (!s->perf_links)
		return -ENOMEM;
	/*
	 * --pid: each target's threads get theirs as it is added, an open
	 * file each: as many as the hard limit allows
	 */
	if (s->per_task && !getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	if (s->cfg.cgroup && (cgroup_fd = open(s->cfg.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		err = -errno;
		fprintf(stderr, "failed to open --cgroup %s: %s\n", s->cfg.cgroup, strerror(-err));
		return err;
	}
	if (s->per_task) {
		/* what the "on N CPUs" line counts */
		for (i = 0; i < s->ncpus; i++)
			s->nevents += s->online[i];
		return 0;
	}
	err = open_cpu_ticks(s, cgroup_fd);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	return err;
}

static int agent_attribute(void *ctx, const char *k, const char *v)
{
	return otlp__set_attribute(ctx, k, v);
}

/* The labels that carry IDs: every convention's, and --trace-key's. -ENOMEM. */
static int otlp_id_keys(struct session *s)
{
	const char *keys[AGG_MAX_ID_KEYS];
	size_t n = aggregate__id_keys(s->cfg.trace_keys, s->cfg.ntrace_keys, keys);

	return otlp__set_id_keys(s->otlp, keys, n);
}

/*
 * --otlp: the encoder, with what is said of every process (the agent's
 * OTEL_RESOURCE_ATTRIBUTES, and host.name unless they name it), which
 * labels it sends, and the thread that sends its requests. -errno with a
 * message.
 */
static int start_otlp(struct session *s)
{
	const struct session_config *c = &s->cfg;
	const char *attrs = getenv("OTEL_RESOURCE_ATTRIBUTES");
	char err[256], host[256] = "";
	int ret;

	s->otlp = otlp__new(CTXPROF_VERSION, s->period_ns, c->wall ? NSEC_PER_SEC / c->wall_hz : 0);
	if (!s->otlp || otlp_id_keys(s) ||
	    (c->otlp_labels_set && otlp__set_labels(s->otlp, c->otlp_labels, c->notlp_labels)))
		return -ENOMEM;
	/*
	 * each CPU sample's own time (kept for the records anyway): a backend
	 * lays a request's samples along its spans; a wall sample is one
	 * value, sent without them
	 */
	otlp__set_processes(s->otlp, session__describe_process, s);
	if (attrs && (ret = otlp_kv_list(attrs, agent_attribute, s->otlp, err, sizeof(err)))) {
		if (ret != -ENOMEM)
			fprintf(stderr, "OTEL_RESOURCE_ATTRIBUTES: %s\n", err);
		return ret;
	}
	if ((!attrs || !strstr(attrs, "host.name")) && !gethostname(host, sizeof(host) - 1) &&
	    (ret = otlp__set_attribute(s->otlp, "host.name", host)))
		return ret;
	s->export = otlp_export__start(c->otlp, CTXPROF_VERSION, err, sizeof(err));
	if (!s->export) {
		fprintf(stderr, "failed to start sending OTLP profiles: %s\n", err);
		return -EINVAL;
	}
	return 0;
}

/* The aggregator, and the encoders that --pprof, -f and --otlp read from. */
static int create_outputs(struct session *s)
{
	const struct session_config *c = &s->cfg;
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
			       c->trace_sources & (1U << TRACE_SOURCE_OBI));
	if (c->leaf_repair)
		aggregate__repair_leaves(s->agg, lookup_target, s);
	if (c->wall && (err = aggregate__set_wall_period(s->agg, NSEC_PER_SEC / c->wall_hz)))
		return err;
	aggregate__set_progress(s->agg, read_rings, s);
	/* each sample's time and goroutine, for the records' times_us and goids */
	aggregate__keep_times(s->agg, AGG_MAX_TIMES, AGG_MAX_TIMES);
	if (c->pprof || c->folded || c->otlp || c->html) {
		/* the same encoders as `ctxprof-go convert`, fed the same records */
		if ((c->pprof && !(s->pprof = pprof__new())) ||
		    (c->folded && !(s->folded = folded__new())) ||
		    (c->html && !(s->report = recset__new())))
			return -ENOMEM;
		if (c->otlp && (err = start_otlp(s)))
			return err;
	}
	if (!c->quiet && !(s->summary = summary__new()))
		return -ENOMEM;
	/* folded stacks go to stdout; JSON lines then only to -o FILE, if given */
	aggregate__set_sink(s->agg, to_outputs, s, !c->folded || c->output);
	return 0;
}

/* --metrics-addr: /metrics, from a thread of its own. */
static int serve_metrics(struct session *s)
{
	char err[256];

	if (!s->cfg.metrics_addr)
		return 0;
	s->metrics = metrics_http__start(s->cfg.metrics_addr, err, sizeof(err));
	if (!s->metrics) {
		fprintf(stderr, "failed to serve /metrics: %s\n", err);
		return -EINVAL;
	}
	return 0;
}

/* The session's own state: its maps of targets and files, the CPUs. NULL with a message. */
static struct session *session_alloc(const struct session_config *cfg)
{
	struct session *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		fprintf(stderr, "out of memory\n");
		return NULL;
	}
	s->cfg = *cfg;
	s->out = stdout;
	s->out_name = cfg->output ?: "stdout";
	s->period_ns = NSEC_PER_SEC / cfg->freq;
	s->targets = hashmap__new();
	s->verdicts = hashmap__new();
	s->frame_tables = hashmap__new();
	s->target_bit_refs = calloc(TARGET_BITS, sizeof(*s->target_bit_refs));
	if (!s->targets || !s->verdicts || !s->frame_tables || !s->target_bit_refs) {
		fprintf(stderr, "out of memory\n");
		goto fail;
	}
	/* a CPU list that cannot be read counts every possible CPU as online */
	err = cpus__online(&s->online, &s->ncpus);
	if (!s->online) {
		fprintf(stderr, "failed to list CPUs: %s\n", strerror(-err));
		goto fail;
	}
	return s;
fail:
	session__free(s);
	return NULL;
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

	if ((err = try_open(s->cfg.pprof, "pprof profile")) || (err = try_open(s->cfg.html, "report")))
		return err;
	if (!s->cfg.output)
		return 0;
	s->out = outfile__fopen(s->cfg.output, s->cfg.append);
	if (!s->out) {
		err = -errno;
		fprintf(stderr, "failed to open %s: %s\n", s->cfg.output, strerror(-err));
		return err;
	}
	return 0;
}

/* The skeleton, set up for what the options ask, through the verifier. */
static int load_bpf(struct session *s)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct core_btf *cb;
	const void *elf;
	size_t size;
	int err;

	/* without the cut (an older kernel's BTF this cannot read, say), libbpf reads all of it */
	elf = ctxprof_bpf__elf_bytes(&size);
	cb = core_btf__new(elf, size);
	if (cb) {
		opts.btf_custom_path = core_btf__path(cb);
		if (s->cfg.verbose)
			fprintf(stderr, "CO-RE: %u of the kernel's %u BTF types\n",
				core_btf__types(cb), core_btf__kernel_types(cb));
	} else if (s->cfg.verbose) {
		fprintf(stderr, "CO-RE: all of the kernel's BTF (%s)\n", strerror(errno));
	}
	s->skel = ctxprof_bpf__open_opts(&opts);
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "failed to open BPF skeleton: %s\n", strerror(-err));
		goto out;
	}
	err = configure(s);
	if (err)
		goto out;
	err = ctxprof_bpf__load(s->skel);
	if (err)
		fprintf(stderr, "failed to load BPF programs: %s\n", strerror(-err));
out:
	core_btf__free(cb);
	return err;
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
	if (s->cfg.all)
		processes__on_exec(s->procs, session__on_exec, s);
	return 0;
}

/* --uprobe BINARY:SYMBOL: BINARY's string pages in the processes that run it. */
static void map_uprobe_strings(struct session *s, const char *spec)
{
	const char *colon = strrchr(spec, ':');
	char path[PATH_MAX];

	if (!colon || (size_t)(colon - spec) >= sizeof(path))
		return;
	memcpy(path, spec, colon - spec);
	path[colon - spec] = '\0';
	session__map_binary_strings(s, path);
}

/* --pin DIR and --uprobe BINARY:SYMBOL: their messages are their own. */
static int attach_custom(struct session *s)
{
	const struct session_config *cfg = &s->cfg;
	int i;

	if (cfg->pin_dir) {
		s->pins = pins__create(s->skel, cfg->pin_dir);
		if (!s->pins)
			return -EINVAL;
		fprintf(stderr, "ctxprof-go: pinned %s/%s and %s/%s for tail calls\n", cfg->pin_dir,
			PIN_PROG, cfg->pin_dir, PIN_MAP);
	}
	for (i = 0; i < cfg->nuprobes; i++) {
		s->uprobe_links[i] = uprobe__attach(s->skel, cfg->uprobes[i], cfg->uprobe_abi, i);
		if (!s->uprobe_links[i])
			return -EINVAL;
		map_uprobe_strings(s, cfg->uprobes[i]);
	}
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
	err = load_bpf(s);
	if (err)
		goto fail;
	err = follow_processes(s);
	if (err)
		goto fail;
	err = create_outputs(s);
	if (err)
		goto fail;
	err = serve_metrics(s);
	if (err)
		goto fail;
	err = create_rings(s);
	if (err)
		goto fail;
	/* from the first target on, while the others are added */
	s->reading = true;
	err = attach_custom(s);
	if (err)
		goto fail;
	if (cfg->sampling) {
		err = attach_sampling(s);
		if (err)
			goto fail;
	}
	return s;
fail:
	session__free(s);
	return NULL;
}

/* Stops sampling and probing: nothing new reaches the rings after this. */
static void stop_ticks_one(const void *key, size_t len, void *value, void *ctx)
{
	target__stop_ticks(value);
}

static void stop_probes(struct session *s)
{
	int i;

	if (s->targets)
		hashmap__foreach(s->targets, stop_ticks_one, NULL);

	for (i = 0; s->perf_links && i < s->ncpus; i++) {
		bpf_link__destroy(s->perf_links[i]);
		s->perf_links[i] = NULL;
	}
	for (i = 0; i < MAX_UPROBES; i++) {
		bpf_link__destroy(s->uprobe_links[i]);
		s->uprobe_links[i] = NULL;
	}
	pins__remove(s->pins);
	s->pins = NULL;
}

void session__free(struct session *s)
{
	int i;

	if (!s)
		return;
	stop_probes(s);
	bpf_link__destroy(s->exec_link);
	free(s->perf_links);
	ring_buffer__free(s->rb);
	for (i = 0; s->ring_fds && i < s->ncpus; i++) {
		if (s->ring_fds[i] >= 0)
			close(s->ring_fds[i]);
	}
	free(s->ring_fds);
	aggregate__free(s->agg);
	pprof__free(s->pprof);
	recset__free(s->report);
	summary__free(s->summary);
	folded__free(s->folded);
	otlp_export__stop(s->export, NULL);
	otlp__free(s->otlp);
	metrics_http__stop(s->metrics);
	processes__free(s->procs);
	if (s->targets)
		hashmap__free(s->targets, target__free);
	/* emptied by the targets' going */
	hashmap__free(s->frame_tables, free);
	if (s->verdicts)
		hashmap__free(s->verdicts, NULL);
	hashmap__free(s->wall_ctxs, free);
	free(s->execs);
	free(s->target_bit_refs);
	free(s->cgroup_dir);
	free(s->online);
	ctxprof_bpf__destroy(s->skel);
	if (s->out && s->out != stdout)
		fclose(s->out);
	free(s);
}

/* The kernel's counters (enum stat_idx), summed over CPUs. */
static void kernel_stats(const struct session *s, __u64 totals[STAT_MAX])
{
	int ncpus = libbpf_num_possible_cpus(), i, k;
	__u64 *vals;

	vals = calloc(ncpus > 0 ? ncpus : 1, sizeof(*vals));
	for (k = 0; vals && k < STAT_MAX; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stats), &k, vals) != 0)
			continue;
		for (i = 0; i < ncpus; i++)
			totals[k] += vals[i];
	}
	free(vals);
}

/* "s" for any count but 1: "1 sample", "2 samples" */
static const char *plural(unsigned long long n)
{
	return n == 1 ? "" : "s";
}

static void print_sampling_stats(const struct session *s, const __u64 *totals,
				 const struct agg_stats *st, bool so_far)
{
	int now = session__ntargets(s), came = s->nadded - s->nstart, went = s->nadded - now;
	char moves[96] = "";

	/* targets that came or went: why the count at the start is not this one */
	if (came || went)
		snprintf(moves, sizeof(moves), " (%d at the start, %d came, %d went)", s->nstart, came,
			 went);
	fprintf(stderr,
		"ctxprof-go: %s%llu sample%s from %d target%s%s, %llu (%.1f%%) with a trace ID, "
		"%llu record%s; lost %llu (ring buffer full), %llu label read error%s, "
		"%llu without their label set, %llu filtered (--traced-only), %llu malformed; "
		"%llu stack%s got back a leaf's caller\n",
		so_far ? "so far, " : "", (unsigned long long)st->samples, plural(st->samples),
		s->nadded, plural(s->nadded), moves, (unsigned long long)st->traced,
		st->samples ? 100.0 * st->traced / st->samples : 0.0, (unsigned long long)st->records,
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
static void print_targets(const struct session *s)
{
	struct pid_list l = { .cap = (size_t)s->nadded + 1 };
	size_t i;

	l.items = calloc(l.cap, sizeof(*l.items));
	if (!l.items)
		return;
	aggregate__pids(s->agg, list_pid, &l);
	qsort(l.items, l.n, sizeof(*l.items), by_samples);
	for (i = 0; i < l.n; i++)
		fprintf(stderr, "ctxprof-go: pid %u (%s): %llu sample%s, %.1f%% with a trace ID%s\n",
			l.items[i].pid, l.items[i].comm, (unsigned long long)l.items[i].samples,
			plural(l.items[i].samples), 100.0 * l.items[i].traced / l.items[i].samples,
			session__find_target(s, l.items[i].pid) ? "" : "; gone");
	free(l.items);
}

/*
 * Why T's samples lack a trace ID, where a cause is known: into BUF, or
 * false. TOTALS are the kernel's counters (their requests are every
 * target's).
 */
static bool untraced_cause(const struct target *t, const __u64 *totals, char *buf, size_t len)
{
	const char *why;
	struct go_layout l;

	if (!t->nhttp) {
		if (!go_binary__serves_requests(t->gb)) {
			if (go_binary__sets_labels(t->gb))
				return false;
			snprintf(buf, len, "it sets no goroutine labels, serves no net/http or grpc-go "
					   "requests and records no SDK spans");
			return true;
		}
		why = go_binary__trace_source_problem(t->gb, TRACE_SOURCE_TRACEPARENT);
		snprintf(buf, len, "its requests give none: %s",
			 why ?: "--trace-sources leaves traceparent out, or its probes failed");
		return true;
	}
	if (totals[STAT_HTTP_BARE]) {
		snprintf(buf, len, "%llu requests came without a traceparent header",
			 (unsigned long long)totals[STAT_HTTP_BARE]);
		return true;
	}
	if (t->spawn_probed || go_binary__layout(t->gb, &l) != 0)
		return false;
	if (!l.g_parent_goid)
		snprintf(buf, len, "the goroutines its handlers start carry none: no g.parentGoid, and "
				   "no goroutine-start probe (check says why)");
	else
		snprintf(buf, len, "on Go 1.21 and later the goroutines its handlers start carry "
				   "their request (g.parentGoid), not the goroutines those start");
	return true;
}

struct hint_round {
	const struct session *s;
	const __u64 *totals;
};

/* A target with samples, under half of them with a trace ID: the cause, when one is known. */
static void hint_one(const struct agg_pid_stats *p, void *ctx)
{
	const struct hint_round *r = ctx;
	const struct target *t = session__find_target(r->s, p->pid);
	char why[256];

	if (!t || p->samples < 50 || 2 * p->traced >= p->samples ||
	    !untraced_cause(t, r->totals, why, sizeof(why)))
		return;
	fprintf(stderr, "ctxprof-go: pid %u (%s): %.1f%% of its %llu samples with a trace ID: %s\n",
		p->pid, t->comm, 100.0 * p->traced / p->samples, (unsigned long long)p->samples, why);
}

static void print_wall_stats(const struct session *s)
{
	const struct wall_stats *w = &s->wall_stats;
	char stride[64] = "";
	struct agg_stats st;

	aggregate__stats(s->agg, &st);
	if (w->stride > 1)
		snprintf(stride, sizeof(stride), " (each goroutine in 1 of %llu snapshots)",
			 (unsigned long long)w->stride);
	fprintf(stderr,
		"ctxprof-go: wall: %llu goroutine samples in %llu snapshots at %lu Hz from %llu looks%s, "
		"%llu read in full; %llu dropped as changed while read (%.2f%%), "
		"%llu unreadable; %.1f ms of CPU; %llu looks at running goroutines, %llu of them with "
		"the stack of their CPU sample nearest in time\n",
		(unsigned long long)w->goroutines, (unsigned long long)w->snapshots, s->cfg.wall_hz,
		(unsigned long long)w->looks, stride, (unsigned long long)w->reread, (unsigned long long)w->dropped,
		w->looks + w->dropped ? 100.0 * w->dropped / (w->looks + w->dropped) : 0.0,
		(unsigned long long)w->unreadable, s->wall_cpu_ns / 1e6,
		(unsigned long long)st.wall_running, (unsigned long long)st.wall_running_framed);
}

/* --otlp's totals: the export thread's so far, or what it left when it stopped. */
static struct otlp_export_stats otlp_totals(const struct session *s)
{
	struct otlp_export_stats st = s->otlp_stats;

	if (s->export)
		otlp_export__stats(s->export, &st);
	return st;
}

/* --otlp: what reached the collector, and what did not; during the run, what so far. */
static void print_otlp_stats(const struct session *s)
{
	struct otlp_export_stats st = otlp_totals(s);
	struct otlp_stats es = {};
	size_t i;

	fprintf(stderr,
		"ctxprof-go: otlp: %llu requests sent to %s (%llu samples, %llu bytes), %llu retries, "
		"%llu dropped (%llu samples), %llu profiles rejected by the collector; queue high "
		"water %llu of %zu",
		(unsigned long long)st.requests, s->cfg.otlp->url, (unsigned long long)st.samples,
		(unsigned long long)st.bytes, (unsigned long long)st.retries,
		(unsigned long long)st.dropped, (unsigned long long)st.dropped_samples,
		(unsigned long long)st.rejected, (unsigned long long)st.queue_high,
		s->cfg.otlp->queue_max);
	if (st.splits)
		fprintf(stderr, "; %llu requests cut in halves for their size",
			(unsigned long long)st.splits);
	if (st.dropped)
		fprintf(stderr,
			"; dropped for: a full queue %llu, refusal %llu, size %llu, no answer in time %llu",
			(unsigned long long)st.dropped_full, (unsigned long long)st.dropped_refused,
			(unsigned long long)st.dropped_too_large, (unsigned long long)st.dropped_unsent);
	if (s->otlp)
		otlp__stats(s->otlp, &es);
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

/* One metric of the page: its help and type once, then its samples. */
static void metric(struct strbuf *b, const char *name, const char *type, const char *help)
{
	strbuf__printf(b, "# HELP ctxprof_%s %s\n# TYPE ctxprof_%s %s\n", name, help, name, type);
}

static void value(struct strbuf *b, const char *name, const char *labels, unsigned long long v)
{
	strbuf__printf(b, "ctxprof_%s%s %llu\n", name, labels, v);
}

/* --metrics-addr: what the statistics lines say, as Prometheus's text format. */
static void publish_metrics(struct session *s)
{
	struct otlp_export_stats o;
	__u64 totals[STAT_MAX] = {};
	struct strbuf b = {};
	struct agg_stats st;

	if (!s->metrics)
		return;
	kernel_stats(s, totals);
	aggregate__stats(s->agg, &st);
	o = otlp_totals(s);
	metric(&b, "samples_total", "counter", "CPU samples and wall looks taken of targets.");
	value(&b, "samples_total", "", st.samples);
	metric(&b, "samples_traced_total", "counter", "Samples with a trace ID.");
	value(&b, "samples_traced_total", "", st.traced);
	metric(&b, "samples_lost_total", "counter", "Samples lost, by cause.");
	value(&b, "samples_lost_total", "{cause=\"ring_buffer_full\"}", totals[STAT_LOST_RINGBUF]);
	value(&b, "samples_lost_total", "{cause=\"cpu_busy\"}", totals[STAT_BUSY]);
	value(&b, "samples_lost_total", "{cause=\"exec\"}", totals[STAT_EXECED]);
	value(&b, "samples_lost_total", "{cause=\"malformed\"}", st.malformed);
	metric(&b, "samples_filtered_total", "counter", "Samples without a trace ID dropped by --traced-only.");
	value(&b, "samples_filtered_total", "", totals[STAT_FILTERED]);
	metric(&b, "label_read_errors_total", "counter", "Samples whose goroutine labels could not be read.");
	value(&b, "label_read_errors_total", "", totals[STAT_READ_ERR]);
	metric(&b, "records_total", "counter", "Records written.");
	value(&b, "records_total", "", st.records);
	metric(&b, "targets", "gauge", "Processes sampled now.");
	value(&b, "targets", "", session__ntargets(s));
	metric(&b, "targets_added_total", "counter", "Processes ever sampled in this run.");
	value(&b, "targets_added_total", "", s->nadded);
	if (s->cfg.otlp) {
		metric(&b, "otlp_requests_sent_total", "counter", "OTLP requests the collector took.");
		value(&b, "otlp_requests_sent_total", "", o.requests);
		metric(&b, "otlp_samples_sent_total", "counter", "Samples in them.");
		value(&b, "otlp_samples_sent_total", "", o.samples);
		metric(&b, "otlp_bytes_sent_total", "counter", "Bytes of them, as sent.");
		value(&b, "otlp_bytes_sent_total", "", o.bytes);
		metric(&b, "otlp_retries_total", "counter", "Attempts that failed and were tried again.");
		value(&b, "otlp_retries_total", "", o.retries);
		metric(&b, "otlp_requests_failed_total", "counter",
		       "OTLP requests never delivered, by cause.");
		value(&b, "otlp_requests_failed_total", "{cause=\"queue_full\"}", o.dropped_full);
		value(&b, "otlp_requests_failed_total", "{cause=\"refused\"}", o.dropped_refused);
		value(&b, "otlp_requests_failed_total", "{cause=\"too_large\"}", o.dropped_too_large);
		value(&b, "otlp_requests_failed_total", "{cause=\"unsent\"}", o.dropped_unsent);
		metric(&b, "otlp_samples_failed_total", "counter", "Samples in them.");
		value(&b, "otlp_samples_failed_total", "", o.dropped_samples);
		metric(&b, "otlp_profiles_rejected_total", "counter",
		       "Profiles the collector took a request without (partial success).");
		value(&b, "otlp_profiles_rejected_total", "", o.rejected);
		metric(&b, "otlp_requests_split_total", "counter", "Requests cut in halves for their size.");
		value(&b, "otlp_requests_split_total", "", o.splits);
		metric(&b, "otlp_requests_queued", "gauge", "OTLP requests waiting to be sent, or being sent.");
		value(&b, "otlp_requests_queued", "", o.queued);
	}
	if (!b.oom)
		metrics_http__publish(s->metrics, b.p, b.n);
	strbuf__free(&b);
}

/* The statistics: at exit, and on SIGUSR1 (SO_FAR). Lines about what did not happen are left out. */
static void print_stats(const struct session *s, bool so_far)
{
	__u64 totals[STAT_MAX] = {};
	struct processes_stats ps;
	struct agg_stats st;

	kernel_stats(s, totals);
	aggregate__stats(s->agg, &st);
	if (s->cfg.sampling)
		print_sampling_stats(s, totals, &st, so_far);
	if (s->cfg.sampling && s->cfg.verbose)
		print_targets(s);
	if (s->cfg.sampling)
		aggregate__pids(s->agg, hint_one, &(struct hint_round){ .s = s, .totals = totals });
	/* samples that can have no labels: many in a target means its g was not found */
	if (s->cfg.sampling && s->cfg.verbose)
		fprintf(stderr,
			"ctxprof-go: %llu samples outside any goroutine: %llu on threads whose TLS "
			"slot held no g, %llu of an M between goroutines (m.curg 0)\n",
			(unsigned long long)(totals[STAT_NO_G] + totals[STAT_NO_CURG]),
			(unsigned long long)totals[STAT_NO_G], (unsigned long long)totals[STAT_NO_CURG]);
	/* -p: ticks the sampler turned away; a forked child's, or a target it does not know */
	if (s->per_task && s->cfg.verbose)
		fprintf(stderr,
			"ctxprof-go: %llu ticks of followed threads turned away (children the targets "
			"forked): %llu of processes not marked in target_bits, %llu not in the targets "
			"map\n",
			(unsigned long long)(totals[STAT_UNMARKED] + totals[STAT_UNKNOWN]),
			(unsigned long long)totals[STAT_UNMARKED], (unsigned long long)totals[STAT_UNKNOWN]);
	/* where ctxprof-go's own time went: what make bench weighs */
	if (s->cfg.verbose) {
		fprintf(stderr, "ctxprof-go: own CPU: %.1f ms in all, %.1f ms of it writing records (%llu flush%s)",
			now_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e6, s->write_cpu_ns / 1e6,
			(unsigned long long)s->flushes, s->flushes == 1 ? "" : "es");
		if (s->cfg.wall)
			fprintf(stderr, ", %.1f ms in --wall snapshots", s->wall_cpu_ns / 1e6);
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
	processes__stats(s->procs, &ps);
	if (ps.lost)
		fprintf(stderr,
			"ctxprof-go: %llu mmap, exec and exit records lost (perf ring full): frames of "
			"processes that started meanwhile may stay addresses\n",
			(unsigned long long)ps.lost);
	if (s->cfg.wall)
		print_wall_stats(s);
	if (s->cfg.otlp)
		print_otlp_stats(s);
	if (totals[STAT_EXECED])
		fprintf(stderr,
			"ctxprof-go: %llu samples dropped from targets that no longer ran their Go "
			"program (an exec, or the end of an exit)\n",
			(unsigned long long)totals[STAT_EXECED]);
}

/* Only handed to snapshots when wall_ctxs holds any. */
static bool wall_context(void *ctx, uint32_t tgid, uint64_t goid, struct trace_ctx *out)
{
	struct session *s = ctx;
	struct goid_key key = { .tgid = tgid, .goid = goid };
	struct trace_ctx *c;

	c = hashmap__get(s->wall_ctxs, &key, sizeof(key));
	if (c)
		*out = *c;
	return c;
}

/* NULL with no context to look up: most snapshots, with no request in flight. */
static wall_ctx_fn wall_context_fn(const struct session *s)
{
	return s->wall_ctxs && hashmap__size(s->wall_ctxs) ? wall_context : NULL;
}

struct any_probes {
	bool found;
};

static void has_probes(const void *key, size_t len, void *value, void *ctx)
{
	((struct any_probes *)ctx)->found |= ((struct target *)value)->nhttp > 0;
}

/* Adds the entries of map FD to the snapshot (the first of a goroutine wins). */
static void snapshot_map(struct session *s, int fd)
{
	struct goid_key keys[256];
	struct trace_ctx vals[256], *c;
	__u32 n, i;
	void *in = NULL;
	__u64 out;
	int ret;

	do {
		n = sizeof(keys) / sizeof(keys[0]);
		ret = bpf_map_lookup_batch(fd, in, &out, keys, vals, &n, NULL);
		if (ret && errno != ENOENT)
			return;
		for (i = 0; i < n; i++) {
			if (hashmap__get(s->wall_ctxs, &keys[i], sizeof(keys[i])) ||
			    !(c = malloc(sizeof(*c))))
				continue;
			*c = vals[i];
			if (hashmap__add(s->wall_ctxs, &keys[i], sizeof(keys[i]), c))
				free(c);
		}
		in = &out;
	} while (!ret);
}

/*
 * The traceparent and otel-sdk contexts, read in batches once per
 * snapshot: thousands of goroutines then look theirs up here, not each
 * with a system call. NULL when no target has those probes.
 */
static void snapshot_contexts(struct session *s)
{
	struct any_probes any = {};

	hashmap__free(s->wall_ctxs, free);
	s->wall_ctxs = NULL;
	hashmap__foreach(s->targets, has_probes, &any);
	if (!any.found || !(s->wall_ctxs = hashmap__new()))
		return;
	/* a goroutine's own context first, then one it took from its starter */
	snapshot_map(s, bpf_map__fd(s->skel->maps.trace_ctxs));
	snapshot_map(s, bpf_map__fd(s->skel->maps.spawn_ctxs));
}

struct settle_round {
	struct session *s;
	int err;
};

static void settle_one(const void *key, size_t len, void *value, void *ctx)
{
	struct target *t = value;
	struct settle_round *r = ctx;
	int ret;

	if (t->wall && !r->err && (ret = wall_reader__settle(t->wall, r->s->agg)))
		r->err = ret;
}

static void finish_one(const void *key, size_t len, void *value, void *ctx)
{
	struct target *t = value;
	struct settle_round *r = ctx;
	int ret;

	if (!t->wall || r->err)
		return;
	ret = wall_reader__finish(t->wall, r->s->agg, wall_context_fn(r->s), r->s,
				  &r->s->wall_stats);
	if (ret && ret != -ESRCH)
		r->err = ret;
}

/*
 * --wall, at the end: goroutines the last snapshot did not look at (it
 * looked at a share) are looked at as of it, so that each one's count runs
 * to the end of the recording.
 */
static void finish_wall(struct session *s)
{
	struct settle_round r = { .s = s };
	uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);

	if (!s->cfg.wall || s->fail)
		return;
	hashmap__foreach(s->targets, finish_one, &r);
	s->wall_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	if (r.err)
		session__fail(s, r.err, "count goroutines");
}

/* --wall: what snapshots counted, into the aggregate; before every flush. */
static void settle_wall(struct session *s)
{
	struct settle_round r = { .s = s };

	if (!s->cfg.wall)
		return;
	hashmap__foreach(s->targets, settle_one, &r);
	if (r.err)
		session__fail(s, r.err, "count goroutines");
}

/*
 * Goroutine looks a second --wall may spend: about 275 ns each (make
 * bench: most of it the kernel pinning and copying the target's pages),
 * 0.8% of a core. With more goroutines than a snapshot's share (1578 at
 * 19 Hz), each snapshot looks at a rotating part of them.
 */
#define WALL_LOOKS_PER_SEC 30000
/*
 * Reading a goroutine whole (labels, context, stack) costs some 20 looks:
 * with a rotating part, a snapshot reads at most its share / this whole
 * again, so that goroutines that keep changing cost at most as much again
 * as the looks. (The first read of each is not limited: that is once.)
 */
#define WALL_FULL_COST 32

struct wall_round {
	struct session *s;
	uint64_t time_ns;
	struct wall_share share;
	uint64_t goroutines;
	int err;
};

/* A target's goroutines as its last snapshot listed them. */
static void count_goroutines(const void *key, size_t len, void *value, void *ctx)
{
	struct target *t = value;
	struct wall_round *w = ctx;

	if (t->wall)
		w->goroutines += wall_reader__goroutines(t->wall);
}

static void snapshot_one(const void *key, size_t len, void *value, void *ctx)
{
	struct target *t = value;
	struct wall_round *w = ctx;
	struct target_info info;
	int ret;

	if (!t->wall || w->err)
		return;
	/* a target that exec'd runs another program: its goroutine list is gone */
	if (bpf_map_lookup_elem(bpf_map__fd(w->s->skel->maps.targets), &(__u32){ t->pid }, &info) ||
	    info.execed)
		return;
	ret = wall_reader__snapshot(t->wall, w->s->agg, &w->share, w->time_ns, wall_context_fn(w->s),
				    w->s, &w->s->wall_stats);
	/* a process that is gone is reaped by the loop */
	if (ret && ret != -ESRCH)
		w->err = ret;
}

/*
 * --wall: the goroutines of every target, in the snapshot of SLOT; all of
 * them unless they are more than WALL_LOOKS_PER_SEC allows a snapshot.
 */
static void wall_snapshot(struct session *s, uint32_t slot)
{
	struct wall_round w = { .s = s, .share.slot = slot };
	uint64_t cpu, share = WALL_LOOKS_PER_SEC / s->cfg.wall_hz;
	uint64_t stride;

	/* the CPU samples so far first: a running goroutine's look takes its latest's stack */
	read_rings(s);
	w.time_ns = now_ns(CLOCK_MONOTONIC);
	cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	snapshot_contexts(s);
	hashmap__foreach(s->targets, count_goroutines, &w);
	share = share ? share : 1;
	stride = (w.goroutines + share - 1) / share;
	w.share.stride = stride > 1 ? stride : 1;
	/* every goroutine in each snapshot: fewer than a share, each read whole at most once */
	w.share.full = stride > 1 ? share / WALL_FULL_COST + 1 : UINT32_MAX;
	if (w.share.stride > s->wall_stats.stride)
		s->wall_stats.stride = w.share.stride;
	hashmap__foreach(s->targets, snapshot_one, &w);
	s->wall_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	if (w.err)
		session__fail(s, w.err, "count goroutines");
}

/* The records counted so far, written; its CPU time kept for -v. As aggregate__flush. */
static int flush_records(struct session *s)
{
	uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);
	int ret = aggregate__flush(s->agg, s->out, lookup_target, s);

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
	/* the probes are gone: what is in the rings is all there is */
	s->read_until_ns = UINT64_MAX;
	if (!s->fail)
		ring_buffer__consume(s->rb);
	flush_events(s);
	/* targets that ended in the last moments: the statistics count them as gone */
	session__reap_targets(s);
	finish_wall(s);
	settle_wall(s);
	if (!s->fail && (ret = flush_records(s)) < 0)
		write_failed(s, ret);
	if (!s->fail)
		send_otlp(s);
	/* what is queued goes out within the flush time; the rest is counted */
	if (s->export) {
		otlp_export__stop(s->export, &s->otlp_stats);
		s->export = NULL;
	}
	print_stats(s, false);
	/* stderr's lines start "ctxprof-go: ": 80 columns with it */
	summary__print(s->summary, stderr, SUMMARY_TRACES, 80 - (int)strlen("ctxprof-go: "));
	publish_metrics(s);
	session__warn_unsampled(s);
	/* a reader that went away (| head) ends the run, as it ends perf's or jq's: no error */
	if (!s->fail || s->fail == -EPIPE)
		return 0;
	aggregate__stats(s->agg, &st);
	if (*s->fail_msg)
		fprintf(stderr, "ctxprof-go: failed to %s: %s; %llu records not written\n",
			s->fail_msg, strerror(-s->fail), (unsigned long long)st.unwritten);
	return s->fail;
}

/* -f's folded stacks, --pprof's profile and --html's page, written from the whole run. */
static int write_profiles(struct session *s)
{
	const struct session_config *c = &s->cfg;
	int ret, err = 0;

	if (c->folded && (ret = folded__write(s->folded, stdout, c->folded_trace_root,
					      c->folded_wall))) {
		fprintf(stderr, "ctxprof-go: failed to write folded stacks to stdout: %s\n",
			strerror(-ret));
		err = ret;
	}
	if (c->pprof) {
		ret = pprof__write(s->pprof, c->pprof);
		if (ret) {
			fprintf(stderr, "ctxprof-go: failed to write the pprof profile %s: %s\n",
				c->pprof, strerror(-ret));
			err = err ?: ret;
		} else {
			fprintf(stderr, "ctxprof-go: wrote the pprof profile %s\n", c->pprof);
		}
	}
	if (c->html) {
		ret = report__write(s->report, c->html, "live recording");
		if (ret) {
			fprintf(stderr, "ctxprof-go: failed to write the report %s: %s\n", c->html,
				strerror(-ret));
			err = err ?: ret;
		} else {
			fprintf(stderr, "ctxprof-go: wrote the report %s\n", c->html);
		}
	}
	return err;
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
		fprintf(stderr, "ctxprof-go: failed to write records to %s: %s\n", s->cfg.output,
			strerror(-err));
	return err;
}

/* The last of it: records and statistics, then -f, --pprof and -o FILE. */
static int finish(struct session *s)
{
	int err, ret;

	err = drain(s);
	if (err)
		return err;
	err = write_profiles(s);
	ret = close_output(s);
	return err ?: ret;
}

/* When the loop does what it does on a timer; CLOCK_MONOTONIC ns, 0 for never. */
struct run_clock {
	uint64_t next_flush, next_scan, next_wall, next_metrics, deadline;
	uint64_t wall_start; /* --wall: when the snapshot of slot 0 was due */
	/* label read errors seen so far, and when string pages may be mapped again */
	uint64_t read_errors, next_remap;
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
	const struct session_config *c = &s->cfg;
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
	const struct session_config *c = &s->cfg;
	int ntargets = session__ntargets(s);

	s->nstart = ntargets;
	if (c->otlp)
		fprintf(stderr, "ctxprof-go: sending OTLP profiles to %s%s every %g s\n", c->otlp->url,
			c->otlp->gzip ? " (gzip)" : "", c->interval);
	if (s->metrics)
		fprintf(stderr, "ctxprof-go: serving /metrics on http://%s/metrics\n",
			metrics_http__addr(s->metrics));

	if (c->all)
		fprintf(stderr,
			"ctxprof-go: sampling every Go process%s (%d now) at %lu Hz on %d CPUs%s; "
			"Ctrl-C to stop\n",
			c->cgroup ? " of the cgroup" : "", ntargets, c->freq, s->nevents,
			c->traced_only ? ", traced goroutines only" : "");
	else if (c->sampling)
		fprintf(stderr,
			"ctxprof-go: sampling %d target%s at %lu Hz on %d CPUs%s; Ctrl-C to stop\n",
			ntargets, ntargets == 1 ? "" : "s", c->freq, s->nevents,
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
	uint64_t period = NSEC_PER_SEC / s->cfg.wall_hz, now = now_ns(CLOCK_MONOTONIC);

	if (!rc->next_wall || now < rc->next_wall)
		return;
	wall_snapshot(s, (now - rc->wall_start + period / 2) / period);
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
 * within the read budget. False when reading failed: the run ends.
 */
static bool read_events(struct session *s, struct run_clock *rc)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int timeout = s->npending ? 0 : POLL_MS, err;

	/* rounded up: a timeout of 0 would spin through the loop until the snapshot */
	if (rc->next_wall && (rc->next_wall - now + 999999) / 1000000 < (uint64_t)timeout)
		timeout = (rc->next_wall - now + 999999) / 1000000;
	s->read_until_ns = now + READ_BUDGET_NS;
	err = ring_buffer__poll(s->rb, timeout);
	/* every event before this moment is read below, unless the budget ran out */
	rc->consumed = now_ns(CLOCK_MONOTONIC);
	if (err >= 0)
		err = ring_buffer__consume(s->rb);
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
	if (reader_gone(s->out) || (s->cfg.folded && reader_gone(stdout)))
		write_failed(s, -EPIPE);
	return !s->fail;
}

/*
 * Samples whose labels could not be read, most often a string constant's
 * page the target never mapped or reclaim took back: its targets' string
 * pages are mapped again, at most once a second.
 */
static void remap_strings(struct session *s, struct run_clock *rc)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct agg_stats st;

	aggregate__stats(s->agg, &st);
	if (st.read_errors == rc->read_errors || now < rc->next_remap)
		return;
	rc->read_errors = st.read_errors;
	rc->next_remap = now + 1000000000ULL;
	session__map_strings(s);
}

/*
 * --pid: where the kernel does not run the events on the targets' threads
 * (session__stalled_ticks), the sampler's event goes on every CPU instead,
 * as with --all: other processes' ticks cost it a check each, and no
 * target goes unsampled.
 */
static void check_ticks(struct session *s)
{
	struct target *t;
	int err;

	if (!s->per_task || !(t = session__stalled_ticks(s)))
		return;
	fprintf(stderr,
		"ctxprof-go: warning: pid %d (%s): the kernel did not run the cpu-clock events on "
		"its threads (%.2f s of CPU, none counted); sampling on every CPU from now on\n",
		(int)t->pid, t->comm, (t->cpu_seen_ns - t->cpu_ticked_ns) / 1e9);
	hashmap__foreach(s->targets, stop_ticks_one, NULL);
	s->per_task = false;
	s->nevents = 0;
	err = open_cpu_ticks(s, -1);
	if (err)
		session__fail(s, err, "sample on every CPU");
}

/*
 * Targets that exited or exec'd go, processes that exec'd come (--all).
 * False when, with END_WITH_TARGETS, none is left.
 */
static bool follow_targets(struct session *s, struct run_clock *rc, bool end_with_targets)
{
	session__reap_targets(s);
	check_ticks(s);
	if (end_with_targets && !session__ntargets(s)) {
		fprintf(stderr, "ctxprof-go: every target has exited\n");
		return false;
	}
	processes__read(s->procs);
	session__handle_execs(s);
	session__describe_pending(s, now_ns(CLOCK_MONOTONIC) + DESCRIBE_BUDGET_NS);
	remap_strings(s, rc);
	/* without the kernel's exec records, new processes are found by looking */
	if (s->cfg.all && !processes__following(s->procs) &&
	    now_ns(CLOCK_MONOTONIC) >= rc->next_scan) {
		session__discover(s);
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
	session__refresh_contexts(s);
	err = flush_records(s);
	if (err < 0) {
		write_failed(s, err);
		return false;
	}
	send_otlp(s);
	/* written: the mappings of processes gone before then are no longer needed */
	processes__release(s->procs, rc->consumed);
	rc->next_flush += (uint64_t)(s->cfg.interval * NSEC_PER_SEC);
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
