// SPDX-License-Identifier: GPL-2.0
/* session.c: one recording: its BPF programs, a target set that grows and shrinks, the run loop and the report. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/output/folded.h"
#include "cmd/output/pprof.h"
#include "cmd/symbols/binaries.h"
#include "cmd/util/hashmap.h"
#include "offsets/go_binary.h"
#include "ctxprof.skel.h"
#include "aggregate.h"
#include "container.h"
#include "custom.h"
#include "processes.h"
#include "session.h"
#include "wall.h"

#define POLL_MS 100
#define NSEC_PER_SEC 1000000000ULL
/* time spent reading rings before the loop looks at the clock, signals and targets */
#define READ_BUDGET_NS (200 * 1000000ULL)

static const char *const span_keys[] = { AGG_DEFAULT_SPAN_KEYS };

struct target {
	pid_t pid;
	int pidfd; /* readable once the process has exited */
	char comm[32];
	/* held while sampled: replicas of one binary read its DWARF once */
	struct go_binary *gb;
	bool pending; /* its name, container and mappings are still to be read */
	/* the traceparent source's probes in this process, at its handlers' entries */
	struct bpf_link *http_links[MAX_TRACE_PROBES];
	size_t nhttp;
	struct wall_reader *wall; /* --wall: its goroutines; NULL when its binary cannot give them */
};

struct session {
	struct session_config cfg;
	struct ctxprof_bpf *skel;
	int ncpus;
	int *ring_fds;
	struct ring_buffer *rb;
	struct bpf_link **perf_links; /* per CPU, NULL where none */
	int nevents;
	struct bpf_link *uprobe_links[MAX_UPROBES];
	struct bpf_link *exec_link;
	struct pins *pins;
	struct pprof *pprof; /* --pprof */
	struct folded *folded; /* -f */
	struct aggregate *agg;
	struct processes *procs; /* every process's mappings, targets or not */
	struct hashmap *targets; /* pid -> struct target */
	int nadded; /* targets ever added, for the statistics */
	int npending; /* targets added since describe_pending last ran */
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
	bool reading; /* rings may be read between the records of a flush */
	/* --all: what each executable file is, so that each is checked once */
	struct hashmap *verdicts; /* struct file_key -> enum verdict */
	pid_t *execs; /* exec'd since the loop last looked */
	size_t nexecs, capexecs;
	bool targets_full; /* said once */
	char *cgroup_dir; /* --cgroup PATH below its cgroup2 mount, for --all */
	/* --wall: the kernel's trace contexts as of this snapshot, struct goid_key -> trace_ctx */
	struct hashmap *wall_ctxs;
	struct wall_stats wall_stats;
	uint64_t wall_cpu_ns; /* this process's CPU time in snapshots */
	/* the first failure that loses data (a write, memory): it ends the run */
	int fail;
	char fail_msg[PATH_MAX + 64]; /* what failed, for the last line; "" when said already */
};

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

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The first failure that loses data; WHAT ("write records to stdout") is said at the end. */
static void session__fail(struct session *s, int err, const char *what)
{
	if (s->fail)
		return;
	s->fail = err;
	snprintf(s->fail_msg, sizeof(s->fail_msg), "%s", what);
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
	f = fopen(s->cfg.output, "a");
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

static struct target *find_target(const struct session *s, pid_t pid)
{
	return hashmap__get(s->targets, &pid, sizeof(pid));
}

static bool lookup_target(void *ctx, uint32_t pid, uint64_t time_ns, struct agg_target *out)
{
	struct session *s = ctx;
	struct target *t = find_target(s, pid);

	/* a target gone since keeps the name it had */
	out->comm = t ? t->comm : processes__comm(s->procs, pid);
	/* events come from any process: its mappings as they were at the event */
	out->sym = processes__get(s->procs, pid, time_ns);
	out->container = processes__container(s->procs, pid);
	return true;
}

/* Every record, as written, into --pprof's profile and -f's stacks. */
static int to_outputs(void *ctx, const struct rec *r)
{
	struct session *s = ctx;
	int ret = 0;

	if (s->pprof)
		ret = pprof__add(s->pprof, r);
	if (!ret && s->folded)
		ret = folded__add(s->folded, r);
	return ret;
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

static int read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void detach_http(struct target *t)
{
	size_t i;

	for (i = 0; i < t->nhttp; i++)
		bpf_link__destroy(t->http_links[i]);
	t->nhttp = 0;
}

static void target__free(void *p)
{
	struct target *t = p;

	if (!t)
		return;
	detach_http(t);
	wall_reader__free(t->wall);
	binaries__put(t->gb);
	if (t->pidfd >= 0)
		close(t->pidfd);
	free(t);
}

/* A PIE's load bias in PID: where the kernel says its entry is, less the linked entry. */
static bool load_bias(pid_t pid, uint64_t entry, uint64_t *bias)
{
	uint64_t pair[2];
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fread(pair, sizeof(pair), 1, f) == 1 && pair[0]) {
		if (pair[0] == 9 /* AT_ENTRY */) {
			fclose(f);
			*bias = pair[1] - entry;
			return true;
		}
	}
	fclose(f);
	return false;
}

/* Checks T's process and fills INFO with its layout; -errno with a message unless QUIET. */
static int check_target(struct session *s, struct target *t, struct target_info *info,
			struct stat *exe_st, bool quiet)
{
	char exe[64], path[PATH_MAX], err[256];
	pid_t pid = t->pid;
	ssize_t n;
	size_t i;
	int ret;

	t->pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0) {
		ret = -errno;
		if (quiet)
			return ret;
		if (ret == -ESRCH)
			fprintf(stderr, "pid %d: no such process\n", (int)pid);
		else
			fprintf(stderr, "pid %d: failed to open: %s\n", (int)pid, strerror(-ret));
		return ret;
	}
	read_comm(pid, t->comm, sizeof(t->comm));
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	n = readlink(exe, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	if (stat(exe, exe_st) != 0) {
		ret = -errno;
		if (!quiet)
			fprintf(stderr, "pid %d (%s): cannot read its executable %s: %s\n", (int)pid,
				t->comm, path, strerror(-ret));
		return ret;
	}
	/* shared with the symbolizer, and with other targets running the same file */
	t->gb = binaries__get(exe, err, sizeof(err));
	if (!t->gb) {
		ret = -errno;
		if (!quiet)
			fprintf(stderr, "pid %d (%s): cannot read its executable %s: %s\n", (int)pid,
				t->comm, path, err);
		return ret;
	}
	if (!go_binary__supported(t->gb)) {
		if (quiet)
			return -ENOTSUP;
		/* without a version the problem already says it is not Go */
		fprintf(stderr, "pid %d (%s, %s): %s", (int)pid, t->comm, path,
			go_binary__version(t->gb) ? "unsupported Go build: " : "");
		for (i = 0; i < go_binary__nproblems(t->gb); i++)
			fprintf(stderr, "%s%s", i ? "; " : "", go_binary__problem(t->gb, i));
		fputc('\n', stderr);
		return -ENOTSUP;
	}
	go_binary__layout(t->gb, &info->layout);
	if (info->layout.gc_cycles && go_binary__pie(t->gb)) {
		uint64_t bias;

		if (load_bias(pid, go_binary__entry(t->gb), &bias))
			info->layout.gc_cycles += bias;
		else
			info->layout.gc_cycles = 0;
	}
	/* --all says them once per file, in consider() */
	for (i = 0; !quiet && i < go_binary__nwarnings(t->gb); i++)
		fprintf(stderr, "pid %d (%s): warning: %s\n", (int)pid, t->comm,
			go_binary__warning(t->gb, i));
	if (s->cfg.verbose)
		fprintf(stderr,
			"pid %d (%s, %s): %s, offsets from %s, labels %s, g at fs%+lld, g.m %u, "
			"m.curg %u, g.labels %u, g.goid %u\n",
			(int)pid, t->comm, path, go_binary__version(t->gb),
			go_layout_source__name(go_binary__source(t->gb)),
			go_labels_layout__name(info->layout.labels_layout) ?: "unknown",
			(long long)info->layout.tls_g_offset, info->layout.g_m, info->layout.m_curg,
			info->layout.g_labels, info->layout.g_goid);
	return 0;
}

/* A target's name, container and mappings, read now while the process lives. */
static void describe(struct session *s, struct target *t)
{
	processes__container(s->procs, t->pid);
	processes__comm(s->procs, t->pid);
	if (!symbolizer__known(processes__get(s->procs, t->pid, now_ns(CLOCK_MONOTONIC))))
		fprintf(stderr, "pid %d (%s): warning: cannot read its mappings: frames will be "
				"addresses\n",
			(int)t->pid, t->comm);
	t->pending = false;
}

static void describe_one(const void *key, size_t len, void *value, void *ctx)
{
	struct target *t = value;

	if (t->pending)
		describe(ctx, t);
}

/* Targets added by --all since the loop last looked: described now. */
static void describe_pending(struct session *s)
{
	if (s->npending) {
		hashmap__foreach(s->targets, describe_one, s);
		s->npending = 0;
	}
}

/*
 * The traceparent and otel-sdk sources in T's process: a uprobe at each
 * function entry .gopclntab names, filtered to that process, so that other
 * processes running the same file never take it. Through /proc/PID/exe,
 * which names the very file in any mount namespace and on any filesystem.
 */
static void attach_http(struct session *s, struct target *t, bool quiet)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	const struct go_trace_probe *probes;
	struct bpf_link *link;
	size_t i, n;
	char exe[64];
	int err;

	n = go_binary__trace_probes(t->gb, &probes);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)t->pid);
	for (i = 0; i < n; i++) {
		if (!(s->cfg.trace_sources & (1U << probes[i].source)))
			continue;
		opts.bpf_cookie = probes[i].cookie;
		link = bpf_program__attach_uprobe_opts(s->skel->progs.http_request, t->pid, exe,
						       probes[i].offset, &opts);
		if (!link) {
			err = -errno;
			if (!quiet || s->cfg.verbose)
				fprintf(stderr, "pid %d (%s): warning: failed to attach to %s: %s; "
						"no trace IDs from %s\n",
					(int)t->pid, t->comm, probes[i].func, strerror(-err),
					trace_source__name(probes[i].source));
			detach_http(t);
			return;
		}
		t->http_links[t->nhttp++] = link;
	}
	if (s->cfg.verbose && t->nhttp)
		fprintf(stderr, "pid %d (%s): %zu probes for request and span contexts (requests "
				"of: %s; SDK spans: %s)\n",
			(int)t->pid, t->comm, t->nhttp, *go_binary__trace_servers(t->gb) ?
			go_binary__trace_servers(t->gb) : "none",
			go_binary__trace_source_problem(t->gb, TRACE_SOURCE_OTEL_SDK) ? "no" : "yes");
	else if (s->cfg.verbose && go_binary__serves_requests(t->gb))
		fprintf(stderr, "pid %d (%s): no traceparent source: %s\n", (int)t->pid, t->comm,
			go_binary__trace_source_problem(t->gb, TRACE_SOURCE_TRACEPARENT) ?: "off");
}

/*
 * Deletes the entries of map FD (keys of KEY_SIZE bytes that start with
 * the tgid) that belong to PID. The keys are gathered first: a deleted key
 * makes the next get_next_key start over.
 */
static void forget_tgid(int fd, size_t key_size, pid_t pid)
{
	uint8_t key[32], *keys = NULL, *grown;
	size_t n = 0, cap = 0, i;
	void *prev = NULL;
	__u32 tgid;

	while (key_size <= sizeof(key) && bpf_map_get_next_key(fd, prev, key) == 0) {
		memcpy(&tgid, key, sizeof(tgid));
		if (tgid == (__u32)pid) {
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				grown = realloc(keys, cap * key_size);
				if (!grown)
					break;
				keys = grown;
			}
			memcpy(keys + n++ * key_size, key, key_size);
		}
		prev = key;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, keys + i * key_size);
	free(keys);
}

/* The request and span contexts a gone process left: its pid may come back, with goids from 1 again. */
static void forget_contexts(struct session *s, pid_t pid)
{
	forget_tgid(bpf_map__fd(s->skel->maps.trace_ctxs), sizeof(struct goid_key), pid);
	forget_tgid(bpf_map__fd(s->skel->maps.grpc_streams), sizeof(struct grpc_stream_key), pid);
}

/*
 * --wall: a reader of T's goroutines. A -p target whose binary cannot give
 * them is refused, saying why; under --all such a process gets CPU
 * samples only (said with -v).
 */
static int start_wall(struct session *s, struct target *t, bool quiet)
{
	const char *why = go_binary__wall_problem(t->gb);
	uint64_t bias = 0;
	int ret;

	if (!why && go_binary__pie(t->gb) && !load_bias(t->pid, go_binary__entry(t->gb), &bias))
		why = "cannot read its load address from /proc/PID/auxv";
	if (!why && !(t->wall = wall_reader__new(t->pid, t->gb, bias)))
		return -ENOMEM;
	if (!why) {
		ret = aggregate__name_reasons(s->agg, t->pid, go_binary__wall(t->gb));
		return ret;
	}
	if (quiet) {
		if (s->cfg.verbose)
			fprintf(stderr, "ctxprof-go: pid %d (%s): no --wall, CPU samples only: %s\n",
				(int)t->pid, t->comm, why);
		return 0;
	}
	fprintf(stderr, "pid %d (%s): --wall cannot read its goroutines: %s\n", (int)t->pid,
		t->comm, why);
	return -EOPNOTSUPP;
}

static int add_target(struct session *s, pid_t pid, bool quiet)
{
	struct target_info info = {};
	struct stat before, after;
	struct target *t;
	char exe[64];
	int ret;

	if (find_target(s, pid))
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->pidfd = -1;
	ret = check_target(s, t, &info, &before, quiet);
	if (!ret && s->cfg.wall)
		ret = start_wall(s, t, quiet);
	if (ret)
		goto fail;
	info.exe_ino = before.st_ino;
	/*
	 * --all defers the rest (its name, container and mappings, read from
	 * /proc while it lives) to the loop, right after: on a busy host with
	 * hundreds of Go processes, sampling them all starts sooner.
	 */
	if (quiet)
		t->pending = true;
	else
		describe(s, t);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.targets), &(__u32){ pid }, &info,
				BPF_ANY)) {
		ret = -errno;
		if (!quiet || !s->targets_full)
			fprintf(stderr, "pid %d: failed to add to the targets map: %s%s\n", (int)pid,
				strerror(-ret),
				ret == -E2BIG ? " (it is full: more Go processes than it holds)" : "");
		s->targets_full = ret == -E2BIG;
		goto fail;
	}
	/*
	 * An exec from now on is marked by the exec tracepoint; one that came
	 * between reading the executable and adding the layout shows here.
	 */
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (stat(exe, &after) != 0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino) {
		bpf_map_delete_elem(bpf_map__fd(s->skel->maps.targets), &(__u32){ pid });
		if (!quiet)
			fprintf(stderr, "pid %d (%s): exited or ran another program while being added\n",
				(int)pid, t->comm);
		ret = -ESRCH;
		goto fail;
	}
	ret = hashmap__add(s->targets, &pid, sizeof(pid), t);
	if (ret) {
		bpf_map_delete_elem(bpf_map__fd(s->skel->maps.targets), &(__u32){ pid });
		goto fail;
	}
	s->nadded++;
	s->npending += t->pending;
	attach_http(s, t, quiet);
	if (quiet && s->cfg.verbose)
		fprintf(stderr, "ctxprof-go: pid %d (%s, %s) added\n", (int)pid, t->comm,
			go_binary__version(t->gb));
	return 0;
fail:
	target__free(t);
	return ret;
}

int session__add_target(struct session *s, pid_t pid)
{
	return add_target(s, pid, false);
}

void session__remove_target(struct session *s, pid_t pid, const char *why)
{
	struct target *t = hashmap__del(s->targets, &pid, sizeof(pid));

	if (!t)
		return;
	/* what its snapshots counted stays counted */
	if (t->wall && wall_reader__settle(t->wall, s->agg))
		session__fail(s, -ENOMEM, "count goroutines");
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.targets), &(__u32){ pid });
	if (t->nhttp) {
		detach_http(t);
		forget_contexts(s, pid);
	}
	/* with --all processes come and go all the time: said with -v only */
	if (!s->cfg.all || s->cfg.verbose)
		fprintf(stderr, "ctxprof-go: pid %d (%s) %s\n", (int)pid, t->comm, why);
	target__free(t);
}

/* An executable file, as this process sees it: the key of what it was found to be. */
struct file_key {
	dev_t dev;
	ino_t ino;
	off_t size;
	time_t mtime; /* a binary rewritten in place is checked again */
	long mtime_ns;
};

enum verdict {
	VERDICT_GO = 1,
	VERDICT_NOT_GO,
	VERDICT_UNSUPPORTED,
};

/*
 * --all --cgroup: only processes of the cgroup become targets. The sampler
 * filters by cgroup anyway; this keeps the rest of the host out of the
 * target set (mappings, symbols, statistics). A process joins its
 * container's cgroup before it execs the container's program, so an exec
 * finds it there.
 */
static bool in_cgroup(const struct session *s, pid_t pid)
{
	return !s->cgroup_dir || container__in_cgroup(pid, s->cgroup_dir);
}

/*
 * --all: PID is sampled when it runs a supported Go build. Each file is
 * checked once: a non-Go file is skipped silently from then on (-v lists
 * each process), an unsupported Go build gets one note.
 */
static void consider(struct session *s, pid_t pid)
{
	char exe[64], path[PATH_MAX], comm[32] = "", err[256];
	struct file_key key = {};
	struct go_binary *gb;
	struct stat st;
	uintptr_t v;
	ssize_t n;
	size_t i;

	if (pid == getpid() || !in_cgroup(s, pid))
		return;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	/* kernel threads have no executable; a process may be gone already */
	if (stat(exe, &st) != 0)
		return;
	key = (struct file_key){ st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
				 st.st_mtim.tv_nsec };
	v = (uintptr_t)hashmap__get(s->verdicts, &key, sizeof(key));
	if (!v) {
		gb = binaries__get(exe, err, sizeof(err));
		if (!gb)
			return;
		v = !go_binary__version(gb)	     ? VERDICT_NOT_GO :
		    go_binary__supported(gb) ? VERDICT_GO :
					       VERDICT_UNSUPPORTED;
		n = readlink(exe, path, sizeof(path) - 1);
		path[n > 0 ? n : 0] = '\0';
		/*
		 * A host runs many Go programs that never set labels (the go
		 * command, its compiler): sampled all the same, and said once
		 * per file with -v only.
		 */
		for (i = 0; v == VERDICT_GO && s->cfg.verbose && i < go_binary__nwarnings(gb); i++)
			fprintf(stderr, "ctxprof-go: %s (%s): warning: %s\n", path,
				go_binary__version(gb), go_binary__warning(gb, i));
		if (v == VERDICT_UNSUPPORTED) {
			fprintf(stderr, "ctxprof-go: note: %s (%s) is not sampled: unsupported Go build: ",
				path, go_binary__version(gb));
			for (i = 0; i < go_binary__nproblems(gb); i++)
				fprintf(stderr, "%s%s", i ? "; " : "", go_binary__problem(gb, i));
			fputc('\n', stderr);
		}
		hashmap__add(s->verdicts, &key, sizeof(key), (void *)v);
		/* held until the target takes its own reference: parsed once */
		if (v == VERDICT_GO)
			add_target(s, pid, true);
		binaries__put(gb);
		if (v == VERDICT_GO)
			return;
	}
	if (v == VERDICT_GO) {
		add_target(s, pid, true);
		return;
	}
	if (s->cfg.verbose) {
		read_comm(pid, comm, sizeof(comm));
		fprintf(stderr, "ctxprof-go: pid %d (%s): %s, skipped\n", (int)pid, comm,
			v == VERDICT_NOT_GO ? "not a Go program" : "an unsupported Go build");
	}
}

void session__discover(struct session *s)
{
	struct dirent *de;
	DIR *proc;
	char *end;
	long pid;

	proc = opendir("/proc");
	if (!proc) {
		fprintf(stderr, "ctxprof-go: cannot list /proc: %s\n", strerror(errno));
		return;
	}
	while ((de = readdir(proc))) {
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		consider(s, pid);
	}
	closedir(proc);
}

/* An exec read from the kernel's records: looked at in the loop, outside any flush. */
static void on_exec(void *ctx, pid_t pid)
{
	struct session *s = ctx;
	size_t cap;
	pid_t *p;

	if (s->nexecs == s->capexecs) {
		cap = s->capexecs ? 2 * s->capexecs : 64;
		p = realloc(s->execs, cap * sizeof(*p));
		if (!p)
			return;
		s->execs = p;
		s->capexecs = cap;
	}
	s->execs[s->nexecs++] = pid;
}

/* --all: processes that exec'd are what they now run, Go or not. */
static void handle_execs(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nexecs; i++) {
		/* a target that execs runs another program: it is checked again */
		session__remove_target(s, s->execs[i], "ran another program (exec)");
		consider(s, s->execs[i]);
	}
	s->nexecs = 0;
}

int session__ntargets(const struct session *s)
{
	return hashmap__size(s->targets);
}

static int online_cpus(bool **online, int *n)
{
	int ncpus = libbpf_num_possible_cpus(), a, b, i;
	char buf[1024], *tok, *save = NULL, *end;
	FILE *f;

	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	*online = calloc(ncpus, sizeof(bool));
	if (!*online)
		return -ENOMEM;
	*n = ncpus;
	f = fopen("/sys/devices/system/cpu/online", "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		for (i = 0; i < ncpus; i++)
			(*online)[i] = true;
		return 0;
	}
	fclose(f);
	for (tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		a = strtol(tok, &end, 10);
		b = *end == '-' ? strtol(end + 1, &end, 10) : a;
		for (i = a < 0 ? 0 : a; i <= b && i < ncpus; i++)
			(*online)[i] = true;
	}
	return 0;
}

static int open_perf_event(int cpu, uint64_t period_ns)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = period_ns,
	};

	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * --cgroup PATH: its cgroup ID (the directory's inode number on cgroup2fs)
 * and its depth below the root of the cgroup2 mount, where the sampler
 * finds it among a task's ancestors. -errno with a message.
 */
static int resolve_cgroup(const char *path, __u64 *id, __u32 *level, char **rel)
{
	char buf[PATH_MAX], parent[PATH_MAX], *slash;
	size_t below; /* where buf's path below the cgroup2 mount starts */
	struct statfs sf;
	struct stat st;

	if (statfs(path, &sf) != 0 || stat(path, &st) != 0) {
		fprintf(stderr, "--cgroup %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (sf.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode) || !realpath(path, buf)) {
		fprintf(stderr, "--cgroup %s: not a directory of a cgroup v2 file system (see "
				"/proc/PID/cgroup's 0:: line and mount -t cgroup2)\n",
			path);
		return -EINVAL;
	}
	*id = st.st_ino;
	*level = 0;
	below = strlen(buf);
	strcpy(parent, buf);
	while ((slash = strrchr(parent, '/')) && slash != parent) {
		*slash = '\0';
		if (statfs(parent, &sf) != 0 || sf.f_type != CGROUP2_SUPER_MAGIC)
			break;
		++*level;
		below = slash - parent;
	}
	/* the path below the mount, as /proc/PID/cgroup's 0:: line names it */
	*rel = strdup(*level ? buf + below : "/");
	return *rel ? 0 : -ENOMEM;
}

/* Sets up what the options ask for, before the programs are loaded. */
static int configure(struct session *s)
{
	const struct session_config *c = &s->cfg;
	__u64 cgroup_id;
	__u32 level;
	int i, err;

	if (c->cgroup) {
		err = resolve_cgroup(c->cgroup, &cgroup_id, &level, &s->cgroup_dir);
		if (err)
			return err;
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
	s->skel->rodata->want_contexts =
		c->trace_sources & (1U << TRACE_SOURCE_TRACEPARENT | 1U << TRACE_SOURCE_OTEL_SDK);
	bpf_map__set_max_entries(s->skel->maps.events, s->ncpus);
	bpf_map__set_max_entries(s->skel->maps.targets,
				 c->max_targets > 1024 ? c->max_targets : 1024);
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

/* The cpu-clock event on every online CPU; a CPU that gives ENODEV is skipped. */
static int attach_sampling(struct session *s, const bool *online)
{
	int i, fd, err;

	for (i = 0; i < s->ncpus; i++) {
		if (!online[i])
			continue;
		fd = open_perf_event(i, s->period_ns);
		if (fd < 0) {
			if (errno == ENODEV)
				continue;
			err = -errno;
			fprintf(stderr, "failed to open perf event on CPU %d: %s\n", i, strerror(-err));
			return err;
		}
		s->perf_links[i] = bpf_program__attach_perf_event(s->skel->progs.on_sample, fd);
		if (!s->perf_links[i]) {
			err = -errno;
			close(fd);
			fprintf(stderr, "failed to attach to perf event on CPU %d: %s\n", i,
				strerror(-err));
			return err;
		}
		s->nevents++;
	}
	return 0;
}

/* The aggregator, and the converter that --pprof and -f read from. */
static int create_outputs(struct session *s)
{
	const struct session_config *c = &s->cfg;

	s->agg = aggregate__new(s->period_ns,
				(int64_t)(now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC)));
	if (!s->agg)
		return -ENOMEM;
	aggregate__set_keys(s->agg, c->trace_keys, c->ntrace_keys, span_keys,
			    sizeof(span_keys) / sizeof(span_keys[0]));
	aggregate__set_sources(s->agg, c->trace_sources & (1U << TRACE_SOURCE_LABEL),
			       c->trace_sources & (1U << TRACE_SOURCE_TRACEPARENT),
			       c->trace_sources & (1U << TRACE_SOURCE_OTEL_SDK));
	if (c->leaf_repair)
		aggregate__repair_leaves(s->agg, lookup_target, s);
	if (c->wall)
		aggregate__set_wall_period(s->agg, NSEC_PER_SEC / c->wall_hz);
	aggregate__set_progress(s->agg, read_rings, s);
	if (c->pprof || c->folded) {
		/* the same encoders as `ctxprof-go convert`, fed the same records */
		if ((c->pprof && !(s->pprof = pprof__new())) ||
		    (c->folded && !(s->folded = folded__new())))
			return -ENOMEM;
		/* folded stacks go to stdout; JSON lines then only to -o FILE, if given */
		aggregate__set_sink(s->agg, to_outputs, s, !c->folded || c->output);
	}
	return 0;
}

struct session *session__new(const struct session_config *cfg)
{
	struct session *s = calloc(1, sizeof(*s));
	char errbuf[256];
	bool *online = NULL;
	int err, i;

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
	if (!s->targets || !s->verdicts) {
		err = -ENOMEM;
		goto fail;
	}
	if (cfg->output) {
		s->out = fopen(cfg->output, cfg->append ? "a" : "w");
		if (!s->out) {
			err = -errno;
			fprintf(stderr, "failed to open %s: %s\n", cfg->output, strerror(-err));
			goto fail;
		}
	}
	err = online_cpus(&online, &s->ncpus);
	if (err) {
		fprintf(stderr, "failed to list CPUs: %s\n", strerror(-err));
		goto fail;
	}
	s->skel = ctxprof_bpf__open();
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "failed to open BPF skeleton: %s\n", strerror(-err));
		goto fail;
	}
	err = configure(s);
	if (err)
		goto fail;
	err = ctxprof_bpf__load(s->skel);
	if (err) {
		fprintf(stderr, "failed to load BPF programs: %s\n", strerror(-err));
		goto fail;
	}
	/* mappings are followed before any are read, so that none falls between */
	s->procs = processes__new(true, errbuf, sizeof(errbuf));
	if (!s->procs) {
		fprintf(stderr, "ctxprof-go: warning: %s; frames of processes that exit before "
				"their events are read will be addresses\n",
			errbuf);
		s->procs = processes__new(false, errbuf, sizeof(errbuf));
		if (!s->procs) {
			err = -ENOMEM;
			goto fail;
		}
	}
	if (cfg->all)
		processes__on_exec(s->procs, on_exec, s);
	err = create_outputs(s);
	if (!err)
		err = create_rings(s);
	if (err)
		goto fail;
	if (cfg->pin_dir) {
		s->pins = pins__create(s->skel, cfg->pin_dir);
		if (!s->pins) {
			err = -EINVAL;
			goto fail;
		}
		fprintf(stderr, "ctxprof-go: pinned %s/%s and %s/%s for tail calls\n", cfg->pin_dir,
			PIN_PROG, cfg->pin_dir, PIN_MAP);
	}
	for (i = 0; i < cfg->nuprobes; i++) {
		s->uprobe_links[i] = uprobe__attach(s->skel, cfg->uprobes[i], cfg->uprobe_abi, i);
		if (!s->uprobe_links[i]) {
			err = -EINVAL;
			goto fail;
		}
	}
	s->perf_links = calloc(s->ncpus, sizeof(*s->perf_links));
	if (!s->perf_links) {
		err = -ENOMEM;
		goto fail;
	}
	if (cfg->sampling) {
		/* before any target is added: an exec from then on is marked in the kernel */
		s->exec_link = bpf_program__attach(s->skel->progs.on_exec);
		if (!s->exec_link) {
			err = -errno;
			fprintf(stderr, "failed to attach to the sched_process_exec tracepoint: %s\n",
				strerror(-err));
			goto fail;
		}
		err = attach_sampling(s, online);
		if (err)
			goto fail;
	}
	free(online);
	return s;
fail:
	free(online);
	session__free(s);
	return NULL;
}

/* Stops sampling and probing: nothing new reaches the rings after this. */
static void stop_probes(struct session *s)
{
	int i;

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
	folded__free(s->folded);
	processes__free(s->procs);
	if (s->targets)
		hashmap__free(s->targets, target__free);
	if (s->verdicts)
		hashmap__free(s->verdicts, NULL);
	hashmap__free(s->wall_ctxs, free);
	free(s->execs);
	free(s->cgroup_dir);
	ctxprof_bpf__destroy(s->skel);
	if (s->out && s->out != stdout)
		fclose(s->out);
	free(s);
}

static void print_stats(const struct session *s)
{
	int ncpus = libbpf_num_possible_cpus(), i, k;
	__u64 totals[STAT_MAX] = {}, *vals;
	struct processes_stats ps;
	struct agg_stats st;

	vals = calloc(ncpus > 0 ? ncpus : 1, sizeof(*vals));
	for (k = 0; vals && k < STAT_MAX; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stats), &k, vals) != 0)
			continue;
		for (i = 0; i < ncpus; i++)
			totals[k] += vals[i];
	}
	free(vals);
	aggregate__stats(s->agg, &st);
	if (s->cfg.sampling)
		fprintf(stderr,
			"ctxprof-go: %llu samples from %d target%s, %llu (%.1f%%) with a trace ID, "
			"%llu records; lost %llu (ring buffer full), %llu label read errors, "
			"%llu without their label set, %llu filtered (--traced-only), %llu malformed; "
			"%llu stacks got back a leaf's caller\n",
			(unsigned long long)st.samples, s->nadded, s->nadded == 1 ? "" : "s",
			(unsigned long long)st.traced,
			st.samples ? 100.0 * st.traced / st.samples : 0.0,
			(unsigned long long)st.records, (unsigned long long)totals[STAT_LOST_RINGBUF],
			(unsigned long long)totals[STAT_READ_ERR], (unsigned long long)st.unresolved,
			(unsigned long long)totals[STAT_FILTERED], (unsigned long long)st.malformed,
			(unsigned long long)st.repaired);
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
		fprintf(stderr,
			"ctxprof-go: wall: %llu goroutine samples in %llu snapshots at %lu Hz, "
			"%llu read in full; %llu dropped as changed while read (%.2f%%), "
			"%llu unreadable; %.1f ms of CPU\n",
			(unsigned long long)s->wall_stats.goroutines,
			(unsigned long long)s->wall_stats.snapshots, s->cfg.wall_hz,
			(unsigned long long)s->wall_stats.reread,
			(unsigned long long)s->wall_stats.dropped,
			s->wall_stats.goroutines + s->wall_stats.dropped ?
				100.0 * s->wall_stats.dropped /
					(s->wall_stats.goroutines + s->wall_stats.dropped) :
				0.0,
			(unsigned long long)s->wall_stats.unreadable, s->wall_cpu_ns / 1e6);
	if (totals[STAT_EXECED])
		fprintf(stderr,
			"ctxprof-go: %llu samples dropped from targets that no longer ran their Go "
			"program (an exec, or the end of an exit)\n",
			(unsigned long long)totals[STAT_EXECED]);
}

struct reap {
	struct session *s;
	pid_t *exited, *execed;
	size_t nexited, nexeced;
};

static void check_one(const void *key, size_t len, void *value, void *ctx)
{
	struct target *t = value;
	struct reap *r = ctx;
	struct target_info info;
	struct pollfd pfd = { .fd = t->pidfd, .events = POLLIN };

	if (poll(&pfd, 1, 0) == 1)
		r->exited[r->nexited++] = t->pid;
	/* the kernel side already drops its samples; this says so, once */
	else if (bpf_map_lookup_elem(bpf_map__fd(r->s->skel->maps.targets), &(__u32){ t->pid },
				     &info) == 0 &&
		 info.execed)
		r->execed[r->nexeced++] = t->pid;
}

/* Drops targets that exited or exec'd; their last samples are read first. */
static void reap_targets(struct session *s)
{
	size_t n = hashmap__size(s->targets), i;
	struct reap r = { .s = s };

	if (!n)
		return;
	r.exited = calloc(n, sizeof(pid_t));
	r.execed = calloc(n, sizeof(pid_t));
	if (r.exited && r.execed)
		hashmap__foreach(s->targets, check_one, &r);
	if (r.nexited || r.nexeced)
		ring_buffer__consume(s->rb);
	for (i = 0; i < r.nexited; i++)
		session__remove_target(s, r.exited[i], "exited");
	for (i = 0; i < r.nexeced; i++)
		session__remove_target(s, r.execed[i],
				       "now runs another program (exec); no longer sampled");
	free(r.exited);
	free(r.execed);
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

struct any_probes {
	bool found;
};

static void has_probes(const void *key, size_t len, void *value, void *ctx)
{
	((struct any_probes *)ctx)->found |= ((struct target *)value)->nhttp > 0;
}

/*
 * The traceparent and otel-sdk contexts, read in batches once per
 * snapshot: thousands of goroutines then look theirs up here, not each
 * with a system call. NULL when no target has those probes.
 */
static void snapshot_contexts(struct session *s)
{
	struct goid_key keys[256];
	struct trace_ctx vals[256], *c;
	struct any_probes any = {};
	__u32 n, i;
	void *in = NULL;
	__u64 out;
	int fd = bpf_map__fd(s->skel->maps.trace_ctxs), ret;

	hashmap__free(s->wall_ctxs, free);
	s->wall_ctxs = NULL;
	hashmap__foreach(s->targets, has_probes, &any);
	if (!any.found || !(s->wall_ctxs = hashmap__new()))
		return;
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

struct settle_round {
	struct aggregate *agg;
	int err;
};

static void settle_one(const void *key, size_t len, void *value, void *ctx)
{
	struct target *t = value;
	struct settle_round *r = ctx;
	int ret;

	if (t->wall && !r->err && (ret = wall_reader__settle(t->wall, r->agg)))
		r->err = ret;
}

/* --wall: what snapshots counted, into the aggregate; before every flush. */
static void settle_wall(struct session *s)
{
	struct settle_round r = { .agg = s->agg };

	if (!s->cfg.wall)
		return;
	hashmap__foreach(s->targets, settle_one, &r);
	if (r.err)
		session__fail(s, r.err, "count goroutines");
}

struct wall_round {
	struct session *s;
	uint64_t time_ns;
	int err;
};

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
	/* no context to look up: most snapshots, with no request in flight */
	ret = wall_reader__snapshot(t->wall, w->s->agg, w->time_ns,
				    w->s->wall_ctxs && hashmap__size(w->s->wall_ctxs) ? wall_context : NULL,
				    w->s,
				    &w->s->wall_stats);
	/* a process that is gone is reaped by the loop */
	if (ret && ret != -ESRCH)
		w->err = ret;
}

/* --wall: every goroutine of every target, once. */
static void wall_snapshot(struct session *s)
{
	struct wall_round w = { .s = s, .time_ns = now_ns(CLOCK_MONOTONIC) };
	uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID);

	snapshot_contexts(s);
	hashmap__foreach(s->targets, snapshot_one, &w);
	s->wall_cpu_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu;
	if (w.err)
		session__fail(s, w.err, "count goroutines");
}

/* The last of it: probes stopped, rings drained, records, statistics, --pprof and -f. */
static int finish(struct session *s)
{
	const struct session_config *c = &s->cfg;
	struct agg_stats st;
	int ret, err = 0;

	s->reading = false;
	stop_probes(s);
	/* the probes are gone: what is in the rings is all there is */
	s->read_until_ns = UINT64_MAX;
	if (!s->fail)
		ring_buffer__consume(s->rb);
	flush_events(s);
	settle_wall(s);
	if (!s->fail && (ret = aggregate__flush(s->agg, s->out, lookup_target, s)) < 0)
		write_failed(s, ret);
	print_stats(s);
	if (s->fail) {
		aggregate__stats(s->agg, &st);
		if (*s->fail_msg)
			fprintf(stderr, "ctxprof-go: failed to %s: %s; %llu records not written\n",
				s->fail_msg, strerror(-s->fail), (unsigned long long)st.unwritten);
		return s->fail;
	}
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
	/* the last buffered bytes are written only now, and can fail too */
	if (s->out != stdout) {
		ret = fclose(s->out);
		s->out = stdout;
		if (ret != 0 && !err) {
			err = -errno;
			fprintf(stderr, "ctxprof-go: failed to write records to %s: %s\n", c->output,
				strerror(-err));
		}
	}
	return err;
}

int session__run(struct session *s, bool end_with_targets)
{
	const struct session_config *c = &s->cfg;
	uint64_t start, next_flush, next_scan, next_wall = 0, deadline = 0, consumed = 0, now;
	int err, ntargets = session__ntargets(s), timeout;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGUSR1, on_signal);
	/* a reader that went away is an error we report (EPIPE), after cleaning up our pins */
	signal(SIGPIPE, SIG_IGN);
	start = now_ns(CLOCK_MONOTONIC);
	next_flush = start + (uint64_t)(c->interval * NSEC_PER_SEC);
	next_scan = start + NSEC_PER_SEC;
	if (c->wall)
		next_wall = start;
	if (c->duration > 0)
		deadline = start + (uint64_t)(c->duration * NSEC_PER_SEC);
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
	describe_pending(s);

	s->reading = true;
	while (!exiting && !s->fail) {
		now = now_ns(CLOCK_MONOTONIC);
		if (next_wall && now >= next_wall) {
			wall_snapshot(s);
			/* a snapshot that overran its period skips the ones it missed */
			next_wall += NSEC_PER_SEC / c->wall_hz;
			now = now_ns(CLOCK_MONOTONIC);
			if (next_wall <= now)
				next_wall = now + NSEC_PER_SEC / c->wall_hz;
		}
		/* rounded up: a timeout of 0 would spin through the loop until the snapshot */
		timeout = POLL_MS;
		if (next_wall && (next_wall - now + 999999) / 1000000 < POLL_MS)
			timeout = (next_wall - now + 999999) / 1000000;
		s->read_until_ns = now + READ_BUDGET_NS;
		err = ring_buffer__poll(s->rb, timeout);
		/* every event before this moment is read below, unless the budget ran out */
		consumed = now_ns(CLOCK_MONOTONIC);
		if (err >= 0)
			err = ring_buffer__consume(s->rb);
		if (s->fail)
			break;
		if (err == -EAGAIN) {
			consumed = 0;
		} else if (err < 0 && err != -EINTR) {
			fprintf(stderr, "failed to read the ring buffer: %s\n", strerror(-err));
			session__fail(s, err, "");
			break;
		}
		flush_events(s);
		if (reopen) {
			reopen = 0;
			reopen_output(s);
		}
		if (report) {
			report = 0;
			print_stats(s);
		}
		/* `ctxprof-go ... | head -1`: stop at once, not at the next write */
		if (reader_gone(s->out) || (c->folded && reader_gone(stdout)))
			write_failed(s, -EPIPE);
		if (s->fail)
			break;
		reap_targets(s);
		if (end_with_targets && !session__ntargets(s)) {
			fprintf(stderr, "ctxprof-go: every target has exited\n");
			break;
		}
		processes__read(s->procs);
		handle_execs(s);
		describe_pending(s);
		/* without the kernel's exec records, new processes are found by looking */
		if (c->all && !processes__following(s->procs) && now_ns(CLOCK_MONOTONIC) >= next_scan) {
			session__discover(s);
			next_scan += NSEC_PER_SEC;
		}
		if (now_ns(CLOCK_MONOTONIC) >= next_flush) {
			settle_wall(s);
			err = aggregate__flush(s->agg, s->out, lookup_target, s);
			if (err < 0) {
				write_failed(s, err);
				break;
			}
			/* written: the mappings of processes gone before then are no longer needed */
			processes__release(s->procs, consumed);
			next_flush += (uint64_t)(c->interval * NSEC_PER_SEC);
		}
		if (deadline && now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
	}
	return finish(s);
}
