// SPDX-License-Identifier: GPL-2.0
/* targets.c: a recording's targets: checked, installed in the kernel, probed, described, reaped; --all's discovery. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/output/otlp_export.h"
#include "cmd/symbols/binaries.h"
#include "cmd/util/clock.h"
#include "cmd/util/hashmap.h"
#include "offsets/go_binary.h"
#include "ctxprof.skel.h"
#include "aggregate.h"
#include "container.h"
#include "processes.h"
#include "session.h"
#include "session_state.h"
#include "wall.h"

struct target *session__find_target(const struct session *s, pid_t pid)
{
	return hashmap__get(s->targets, &pid, sizeof(pid));
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
	t->spawn_probed = false;
}

void target__free(void *p)
{
	struct target *t = p;

	if (!t)
		return;
	detach_http(t);
	target__stop_ticks(t);
	free(t->ticks.items);
	if (t->frames && !--t->frames->refs) {
		frame_table__free(t->frames->ft);
		t->frames->ft = NULL;
	}
	wall_reader__free(t->wall);
	binaries__put(t->gb);
	free(t->env_service);
	proc_ctx__free(t->ctx);
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

/*
 * T's process held by a pidfd (readable once it exits), its name, and its
 * executable, parsed or shared with other targets running the same file:
 * PATH names it, EXE_ST is what it was. -errno with a message unless QUIET.
 */
static int open_target(struct target *t, char *path, size_t pathlen, struct stat *exe_st,
		       bool quiet)
{
	char exe[64], err[256];
	pid_t pid = t->pid;
	ssize_t n;
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
	n = readlink(exe, path, pathlen - 1);
	path[n > 0 ? n : 0] = '\0';
	if (stat(exe, exe_st) != 0) {
		ret = -errno;
		/* its pidfd is readable once it has exited: a zombie has no executable */
		if (ret == -ENOENT && poll(&(struct pollfd){ .fd = t->pidfd, .events = POLLIN }, 1, 0) > 0) {
			if (!quiet)
				fprintf(stderr, "pid %d (%s): has exited\n", (int)pid, t->comm);
			return -ESRCH;
		}
		/* a link nothing may read names no file: no name, then, and no stray space */
		if (!quiet)
			fprintf(stderr, "pid %d (%s): cannot read its executable%s%s: %s\n", (int)pid,
				t->comm, *path ? " " : "", path, strerror(-ret));
		return ret;
	}
	/* shared with the symbolizer, and with other targets running the same file */
	t->gb = binaries__get(exe, err, sizeof(err));
	if (!t->gb) {
		ret = -errno;
		if (!quiet)
			fprintf(stderr, "pid %d (%s): cannot read its executable%s%s: %s\n", (int)pid,
				t->comm, *path ? " " : "", path, err);
		return ret;
	}
	return 0;
}

/* -ENOTSUP, saying why unless QUIET, when T runs no Go build we can read. */
static int refuse_unsupported(const struct target *t, const char *path, bool quiet)
{
	size_t i;

	if (go_binary__supported(t->gb))
		return 0;
	if (quiet)
		return -ENOTSUP;
	/* without a version the problem already says it is not Go */
	fprintf(stderr, "pid %d (%s, %s): %s", (int)t->pid, t->comm, path,
		go_binary__version(t->gb) ? "unsupported Go build: " : "");
	for (i = 0; i < go_binary__nproblems(t->gb); i++)
		fprintf(stderr, "%s%s", i ? "; " : "", go_binary__problem(t->gb, i));
	fputc('\n', stderr);
	return -ENOTSUP;
}

/* T's layout for the sampler; a PIE's addresses moved to where it is loaded. */
static void target_layout(const struct target *t, struct target_info *info)
{
	struct go_layout *l = &info->layout;
	uint64_t bias = 0;
	bool moved = true;

	go_binary__layout(t->gb, l);
	/* the bias, read from /proc only when an address needs it */
	if ((l->gc_cycles || t->frames) && go_binary__pie(t->gb))
		moved = load_bias(t->pid, go_binary__entry(t->gb), &bias);
	if (l->gc_cycles)
		l->gc_cycles = moved ? l->gc_cycles + bias : 0;
	if (t->frames && moved) {
		l->frame_text = t->frames->ft->text + bias;
		l->frame_slots = t->frames->ft->slots;
	}
}

/*
 * arm64, Go before 1.21: T's binary's frame sizes (frame_table.h), built
 * once for every process that runs it. Without them (said unless QUIET),
 * T's stacks end where Go left a stale frame pointer, as they always did.
 */
static void find_frames(struct session *s, struct target *t, bool quiet)
{
	struct frame_entry *fe;

	if (!frame_table__needed(t->gb))
		return;
	fe = hashmap__get(s->frame_tables, &t->gb, sizeof(t->gb));
	if (!fe) {
		fe = calloc(1, sizeof(*fe));
		if (!fe || hashmap__add(s->frame_tables, &t->gb, sizeof(t->gb), fe)) {
			free(fe);
			return;
		}
	}
	if (!fe->ft && !(fe->ft = frame_table__new(t->gb))) {
		if (!quiet)
			fprintf(stderr, "pid %d (%s): warning: cannot read its functions' frame "
					"sizes (%s): stacks end where Go %s left a stale frame pointer\n",
				(int)t->pid, t->comm, strerror(errno), go_binary__version(t->gb));
		return;
	}
	fe->refs++;
	t->frames = fe;
}

/* The binary's warnings (--all says them once per file, in consider()), and with -v the layout. */
static void say_layout(const struct session *s, const struct target *t, const char *path,
		       const struct target_info *info, bool quiet)
{
	const struct go_layout *l = &info->layout;
	size_t i;

	for (i = 0; !quiet && i < go_binary__nwarnings(t->gb); i++)
		fprintf(stderr, "pid %d (%s, %s): warning: %s\n", (int)t->pid, t->comm, path,
			go_binary__warning(t->gb, i));
	if (s->cfg.verbose)
		fprintf(stderr,
			"pid %d (%s, %s): %s, offsets from %s, labels %s, g at fs%+lld, g.m %u, "
			"m.curg %u, g.labels %u, g.goid %u\n",
			(int)t->pid, t->comm, path, go_binary__version(t->gb),
			go_layout_source__name(go_binary__source(t->gb)),
			go_labels_layout__name(l->labels_layout) ?: "unknown",
			(long long)l->tls_g_offset, l->g_m, l->m_curg, l->g_labels, l->g_goid);
}

/* Checks T's process and fills INFO with its layout; -errno with a message unless QUIET. */
static int check_target(struct session *s, struct target *t, struct target_info *info,
			struct stat *exe_st, bool quiet)
{
	int ret;

	ret = open_target(t, t->exe, sizeof(t->exe), exe_st, quiet);
	if (!ret)
		ret = refuse_unsupported(t, t->exe, quiet);
	if (ret)
		return ret;
	find_frames(s, t, quiet);
	target_layout(t, info);
	say_layout(s, t, t->exe, info, quiet);
	return 0;
}

static int take_service_name(void *ctx, const char *k, const char *v)
{
	char **name = ctx;

	if (!strcmp(k, "service.name") && !*name)
		*name = strdup(v);
	return 0;
}

/*
 * The service a process says it is, as its OpenTelemetry SDK would:
 * OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES, from
 * its environment at exec. "" when neither (or unreadable), NULL when out
 * of memory.
 */
static char *service_name(pid_t pid)
{
	char path[64], *env = NULL, *name = NULL, err[128];
	const char *attrs = NULL, *p;
	size_t n = 0, cap = 0, got;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "re");
	while (f && cap < (1 << 20)) {
		char *grown = realloc(env, cap + 65536 + 1);

		if (!grown)
			break;
		env = grown;
		cap += 65536;
		got = fread(env + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
	}
	if (f)
		fclose(f);
	if (env)
		env[n] = '\0';
	for (p = env; env && p < env + n; p += strlen(p) + 1) {
		if (!strncmp(p, "OTEL_SERVICE_NAME=", 18) && p[18]) {
			name = strdup(p + 18);
			free(env);
			return name;
		}
		if (!strncmp(p, "OTEL_RESOURCE_ATTRIBUTES=", 25))
			attrs = p + 25;
	}
	/* a list that does not parse names no service */
	if (attrs)
		otlp_kv_list(attrs, take_service_name, &name, err, sizeof(err));
	free(env);
	return name ?: strdup("");
}

/*
 * T's service, as its records and OTLP resource name it: its process
 * context's service.name, else its environment's, else its executable's
 * name. Kept with the process, so that its last records say it too.
 */
static void name_service(struct session *s, struct target *t)
{
	const char *name = proc_ctx__service_name(t->ctx), *slash;

	if (!name && t->env_service && *t->env_service)
		name = t->env_service;
	if (!name && t->exe[0])
		name = (slash = strrchr(t->exe, '/')) ? slash + 1 : t->exe;
	if (processes__set_service(s->procs, t->pid, name && *name ? name : t->comm))
		session__fail(s, -ENOMEM, "name a service");
}

/* T's process context looked at again; -v says what came of it, once for each new cause. */
static void refresh_context(struct session *s, struct target *t)
{
	char why[sizeof(t->ctx_why)] = "";
	const char *name;
	size_t n;
	int ret;

	ret = proc_ctx__refresh(t->ctx, why, sizeof(why));
	if (ret < 0 && s->cfg.verbose && strcmp(why, t->ctx_why))
		fprintf(stderr, "ctxprof-go: pid %d (%s): process context skipped: %s\n", (int)t->pid,
			t->comm, why);
	snprintf(t->ctx_why, sizeof(t->ctx_why), "%s", ret < 0 ? why : "");
	if (ret > 0 && s->cfg.verbose) {
		name = proc_ctx__service_name(t->ctx);
		proc_ctx__attrs(t->ctx, &n);
		fprintf(stderr, "ctxprof-go: pid %d (%s): process context: %zu resource attributes%s%s\n",
			(int)t->pid, t->comm, n, name ? ", service.name " : "", name ?: "");
	}
	name_service(s, t);
}

static void refresh_one(const void *key, size_t len, void *value, void *ctx)
{
	struct target *t = value;

	if (!t->pending)
		refresh_context(ctx, t);
}

void session__refresh_contexts(struct session *s)
{
	hashmap__foreach(s->targets, refresh_one, s);
}

/* A target's name, container, mappings and service, read now while the process lives. */
static void describe(struct session *s, struct target *t)
{
	processes__container(s->procs, t->pid);
	processes__comm(s->procs, t->pid);
	if (!symbolizer__known(processes__get(s->procs, t->pid, now_ns(CLOCK_MONOTONIC))))
		fprintf(stderr, "pid %d (%s): warning: cannot read its mappings: frames will be "
				"addresses\n",
			(int)t->pid, t->comm);
	if (!t->env_service)
		t->env_service = service_name(t->pid);
	refresh_context(s, t);
	t->pending = false;
}

struct describe_round {
	struct session *s;
	uint64_t until_ns;
};

static void describe_one(const void *key, size_t len, void *value, void *ctx)
{
	struct describe_round *r = ctx;
	struct target *t = value;

	if (!t->pending || now_ns(CLOCK_MONOTONIC) >= r->until_ns)
		return;
	describe(r->s, t);
	r->s->npending--;
}

/*
 * Targets added since the loop last looked: described until UNTIL_NS, the
 * rest in the next rounds, so that the rings are read in between: 400 new
 * targets on a busy host take seconds, longer than a ring holds samples.
 */
void session__describe_pending(struct session *s, uint64_t until_ns)
{
	struct describe_round r = { .s = s, .until_ns = until_ns };

	if (s->npending)
		hashmap__foreach(s->targets, describe_one, &r);
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
		/* the goroutine-start probe hands on what the others found */
		if (probes[i].source == TRACE_SOURCE_COUNT ? !t->nhttp :
							    !(s->cfg.trace_sources & (1U << probes[i].source)))
			continue;
		opts.bpf_cookie = probes[i].cookie;
		link = bpf_program__attach_uprobe_opts(s->skel->progs.http_request, t->pid, exe,
						       probes[i].offset, &opts);
		if (!link && probes[i].source == TRACE_SOURCE_COUNT) {
			err = -errno;
			if (!quiet || s->cfg.verbose)
				fprintf(stderr, "pid %d (%s): warning: failed to attach to %s: %s; "
						"goroutines a request starts carry no trace ID\n",
					(int)t->pid, t->comm, probes[i].func, strerror(-err));
			continue;
		}
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
		t->spawn_probed |= probes[i].source == TRACE_SOURCE_COUNT;
		t->http_links[t->nhttp++] = link;
	}
	if (s->cfg.verbose && t->nhttp)
		fprintf(stderr, "pid %d (%s): %zu probes for request and span contexts (requests "
				"of: %s; SDK spans: %s; goroutines they start: %s)\n",
			(int)t->pid, t->comm, t->nhttp, *go_binary__trace_servers(t->gb) ?
			go_binary__trace_servers(t->gb) : "none",
			go_binary__trace_source_problem(t->gb, TRACE_SOURCE_OTEL_SDK) ? "no" : "yes",
			t->spawn_probed ? "at their start" : "by g.parentGoid, one level");
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
	forget_tgid(bpf_map__fd(s->skel->maps.spawn_ctxs), sizeof(struct goid_key), pid);
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

/*
 * Go's string constants, label keys and values a program spells out among
 * them, are in the executable's .rodata, whose pages a process maps only
 * as it touches them, and Go copies a constant's header, never its bytes:
 * a label's bytes can lie on a page the target never mapped, or one that
 * reclaim took out of its page tables, and the sampler, which cannot take
 * a page fault, fails to read them. One byte of each page read through
 * process_vm_readv maps it in, as the target's own fault would.
 */
static void map_strings(const struct target *t)
{
	struct iovec local, remote[1024];
	uint64_t addr, len, bias = 0, page, end;
	uint8_t sink[1024];
	size_t n;

	if (go_binary__rodata(t->gb, &addr, &len) ||
	    (go_binary__pie(t->gb) && !load_bias(t->pid, go_binary__entry(t->gb), &bias)))
		return;
	end = addr + len + bias;
	for (page = (addr + bias) & ~4095ULL; page < end;) {
		for (n = 0; n < sizeof(sink) && page < end; n++, page += 4096)
			remote[n] = (struct iovec){ (void *)(uintptr_t)page, 1 };
		local = (struct iovec){ sink, n };
		if (process_vm_readv(t->pid, &local, 1, remote, n, 0) < 0)
			return;
	}
}

static void map_strings_one(const void *key, size_t len, void *value, void *ctx)
{
	map_strings(value);
}

void session__map_strings(struct session *s)
{
	hashmap__foreach(s->targets, map_strings_one, s);
}

void session__map_binary_strings(struct session *s, const char *path)
{
	struct target t = { .pidfd = -1 };
	struct stat want, st;
	char exe[64], err[256];
	struct dirent *d;
	DIR *dir;

	if (stat(path, &want) != 0 || !(t.gb = binaries__get(path, err, sizeof(err))))
		return;
	if ((dir = opendir("/proc"))) {
		while ((d = readdir(dir))) {
			t.pid = atoi(d->d_name);
			if (t.pid <= 0)
				continue;
			snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)t.pid);
			if (stat(exe, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino)
				map_strings(&t);
		}
		closedir(dir);
	}
	binaries__put(t.gb);
}

/*
 * The CPU time T's per-thread events counted so far, threads they passed
 * on to included: what the kernel scheduled them for, sampled or not.
 */
static uint64_t ticks_ns(const struct target *t)
{
	const struct thread_ticks *tt = t->ticks.items;
	uint64_t sum = 0, v;
	size_t i;

	for (i = 0; i < t->ticks.n; i++) {
		if (read(tt[i].fd, &v, sizeof(v)) == sizeof(v))
			sum += v;
	}
	return sum;
}

void target__stop_ticks(struct target *t)
{
	struct thread_ticks *tt = t->ticks.items;
	size_t i;

	t->ticked_ns += ticks_ns(t);
	t->ticked_threads += t->ticks.n;
	for (i = 0; i < t->ticks.n; i++)
		bpf_link__destroy(tt[i].link);
	t->ticks.n = 0;
}

/* CPU time, in sampling periods, that chance alone does not leave without a sample */
#define MIN_DUE_SAMPLES 20

/*
 * Where the per-thread events never count, the kernel does not schedule
 * them in with their threads: Linux 6.1 under qemu's arm64 emulation did
 * so for a whole recording, now and then, warning in event_function that
 * a running thread's perf context was not active. Checked until a
 * target's events have counted once; MIN_DUE_SAMPLES of CPU are enough.
 */
struct stalled {
	struct session *s;
	struct target *found;
};

static void stalled_one(const void *key, size_t len, void *value, void *ctx)
{
	struct stalled *st = ctx;
	struct target *t = value;

	if (st->found || t->ticks_ran || !t->ticks.n || t->cpu_seen_ns < t->cpu_ticked_ns ||
	    t->cpu_seen_ns - t->cpu_ticked_ns < MIN_DUE_SAMPLES * st->s->period_ns)
		return;
	if (ticks_ns(t))
		t->ticks_ran = true;
	else
		st->found = t;
}

struct target *session__stalled_ticks(struct session *s)
{
	struct stalled st = { .s = s };

	hashmap__foreach(s->targets, stalled_one, &st);
	return st.found;
}

static bool has_ticks(const struct target *t, pid_t tid)
{
	const struct thread_ticks *tt = t->ticks.items;
	size_t i;

	for (i = 0; i < t->ticks.n; i++) {
		if (tt[i].tid == tid)
			return true;
	}
	return false;
}

/* The cpu-clock event on thread TID of T; 1 when it is gone already. */
static int tick_thread(struct session *s, struct target *t, pid_t tid)
{
	struct bpf_link *link;
	struct thread_ticks *tt;
	int fd, err;

	fd = session__open_task_ticks(s, tid);
	if (fd < 0)
		return errno == ESRCH ? 1 : -errno;
	link = bpf_program__attach_perf_event(s->skel->progs.on_sample, fd);
	if (!link) {
		err = -errno;
		close(fd);
		return err;
	}
	tt = vec__push(&t->ticks);
	if (!tt) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	tt->tid = tid;
	tt->fd = fd;
	tt->link = link;
	return 0;
}

/*
 * --pid: the sampler's event on every thread of T, rather than on every
 * CPU, so that no tick of another process runs it. A thread's event is
 * inherited by the threads it makes from then on (and by its children,
 * whose ticks the targets map turns away); a thread made while the events
 * are opened is found by listing the threads again, until a pass finds
 * none new. A thread that exits meanwhile is passed over.
 */
static int follow_threads(struct session *s, struct target *t)
{
	char path[64];
	struct dirent *d;
	bool fresh;
	DIR *dir;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
	do {
		fresh = false;
		dir = opendir(path);
		if (!dir) {
			err = -errno;
			fprintf(stderr, "ctxprof-go: pid %d (%s): cannot list its threads: %s\n",
				(int)t->pid, t->comm, strerror(-err));
			return err;
		}
		while ((d = readdir(dir))) {
			pid_t tid = atoi(d->d_name);

			if (tid <= 0 || has_ticks(t, tid))
				continue;
			err = tick_thread(s, t, tid);
			if (err < 0) {
				closedir(dir);
				fprintf(stderr, "ctxprof-go: pid %d (%s): cannot sample thread %d: %s%s\n",
					(int)t->pid, t->comm, (int)tid, strerror(-err),
					err == -EMFILE ? " (an open file a thread: raise the hard limit, ulimit -Hn)" : "");
				return err;
			}
			fresh |= err == 0;
		}
		closedir(dir);
	} while (fresh);
	return 0;
}

/*
 * PID's bit in the sampler's first filter, counted up (DELTA 1) or down
 * (-1): it stays set while any target's tgid has it. The word changes in
 * place, in the skeleton's mapping of the array (every kernel with
 * bpf_loop maps global data).
 */
static void mark_target(struct session *s, pid_t pid, int delta)
{
	__u64 *words = s->skel->data_target_bits->target_bits;
	__u32 bit = (__u32)pid % TARGET_BITS;

	s->target_bit_refs[bit] += delta;
	if (s->target_bit_refs[bit])
		__atomic_or_fetch(&words[bit / 64], 1ULL << (bit % 64), __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&words[bit / 64], ~(1ULL << (bit % 64)), __ATOMIC_RELAXED);
}

/* what install_target put in the kernel for PID, taken out */
static void uninstall_target(struct session *s, pid_t pid)
{
	if (!bpf_map_delete_elem(bpf_map__fd(s->skel->maps.targets), &(__u32){ pid }))
		mark_target(s, pid, -1);
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.frame_sizes), &(__u32){ pid });
}

/* T's layout into the kernel's targets map: from now on its samples are taken. */
static int install_target(struct session *s, const struct target *t,
			  const struct target_info *info, bool quiet)
{
	int ret;

	if (t->frames && bpf_map_update_elem(bpf_map__fd(s->skel->maps.frame_sizes),
					     &(__u32){ t->pid }, &t->frames->ft->fd, BPF_ANY)) {
		ret = -errno;
		fprintf(stderr, "pid %d: failed to add its frame sizes: %s\n", (int)t->pid,
			strerror(-ret));
		return ret;
	}
	if (!bpf_map_update_elem(bpf_map__fd(s->skel->maps.targets), &(__u32){ t->pid }, info,
				 BPF_ANY)) {
		mark_target(s, t->pid, 1);
		return 0;
	}
	ret = -errno;
	uninstall_target(s, t->pid);
	if (!quiet || !s->targets_full)
		fprintf(stderr, "pid %d: failed to add to the targets map: %s%s\n", (int)t->pid,
			strerror(-ret),
			ret == -E2BIG ? " (it is full: more Go processes than it holds)" : "");
	s->targets_full = ret == -E2BIG;
	return ret;
}

/*
 * An exec from now on is marked by the exec tracepoint; one that came
 * between reading the executable (BEFORE) and installing the layout shows
 * here: -ESRCH, and the layout is taken out again.
 */
static int confirm_exe(struct session *s, const struct target *t, const struct stat *before,
		       bool quiet)
{
	struct stat after;
	char exe[64];

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)t->pid);
	if (stat(exe, &after) == 0 && after.st_dev == before->st_dev &&
	    after.st_ino == before->st_ino)
		return 0;
	uninstall_target(s, t->pid);
	if (!quiet)
		fprintf(stderr, "pid %d (%s): exited or ran another program while being added\n",
			(int)t->pid, t->comm);
	return -ESRCH;
}

/*
 * PID becomes a target: checked, its layout installed, its probes
 * attached. QUIET (--all) says nothing of processes it passes over.
 */
static int add_target(struct session *s, pid_t pid, bool quiet)
{
	struct target_info info = {};
	struct stat exe_st;
	struct target *t;
	int ret;

	if (session__find_target(s, pid))
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->ctx = proc_ctx__new(pid))) {
		free(t);
		return -ENOMEM;
	}
	t->pid = pid;
	t->pidfd = -1;
	t->ticks.size = sizeof(struct thread_ticks);
	/* before its events: CPU it uses from then on should show in samples */
	process_cpu_ns(pid, &t->cpu_added_ns);
	t->cpu_seen_ns = t->cpu_added_ns;
	ret = check_target(s, t, &info, &exe_st, quiet);
	if (!ret && s->cfg.wall)
		ret = start_wall(s, t, quiet);
	if (ret)
		goto fail;
	info.exe_ino = exe_st.st_ino;
	/*
	 * --all defers the rest (its name, container and mappings, read from
	 * /proc while it lives) to the loop, right after: on a busy host with
	 * hundreds of Go processes, sampling them all starts sooner.
	 */
	if (quiet)
		t->pending = true;
	else
		describe(s, t);
	map_strings(t);
	ret = install_target(s, t, &info, quiet);
	if (!ret)
		ret = confirm_exe(s, t, &exe_st, quiet);
	if (!ret && s->per_task) {
		ret = follow_threads(s, t);
		/* CPU it used before is no event's to count */
		process_cpu_ns(pid, &t->cpu_ticked_ns);
	}
	if (ret) {
		uninstall_target(s, pid);
		goto fail;
	}
	ret = hashmap__add(s->targets, &pid, sizeof(pid), t);
	if (ret) {
		uninstall_target(s, pid);
		goto fail;
	}
	s->nadded++;
	s->npending += t->pending;
	attach_http(s, t, quiet);
	if (quiet && s->cfg.verbose)
		fprintf(stderr, "ctxprof-go: pid %d (%s, %s) added\n", (int)pid, t->comm,
			go_binary__version(t->gb));
	/*
	 * It is sampled from now on, while the next hundred targets may take
	 * seconds to add on a busy host: its samples are read meanwhile.
	 */
	aggregate__progress(s->agg);
	return 0;
fail:
	target__free(t);
	return ret;
}

int session__add_target(struct session *s, pid_t pid)
{
	return add_target(s, pid, false);
}

/*
 * Samples due to T, by the CPU time its threads used since it was added,
 * and none taken: said, rather than left to an empty profile (its events
 * never ran, or every sample was lost). Only where MIN_DUE_SAMPLES were
 * due, which chance alone does not leave out; not under --traced-only,
 * which drops the untraced in the kernel.
 */
static void warn_unsampled(struct session *s, struct target *t)
{
	uint64_t now = 0, used, due;

	if (!s->cfg.sampling || s->cfg.traced_only)
		return;
	if (!process_cpu_ns(t->pid, &now) && now > t->cpu_seen_ns)
		t->cpu_seen_ns = now;
	used = t->cpu_seen_ns > t->cpu_added_ns ? t->cpu_seen_ns - t->cpu_added_ns : 0;
	due = used / s->period_ns;
	if (due < MIN_DUE_SAMPLES || aggregate__pid_samples(s->agg, t->pid))
		return;
	fprintf(stderr,
		"ctxprof-go: warning: pid %d (%s): no sample taken, though its threads used %.2f s "
		"of CPU while sampled (%llu samples due at %lu Hz)",
		(int)t->pid, t->comm, used / 1e9, (unsigned long long)due, s->cfg.freq);
	/* whether the kernel ran its events at all: the cause differs */
	if (t->ticks.n + t->ticked_threads)
		fprintf(stderr, "; the cpu-clock events on its %zu threads counted %.2f s",
			t->ticks.n + t->ticked_threads, (ticks_ns(t) + t->ticked_ns) / 1e9);
	fputc('\n', stderr);
}

static void warn_unsampled_one(const void *key, size_t len, void *value, void *ctx)
{
	warn_unsampled(ctx, value);
}

void session__warn_unsampled(struct session *s)
{
	hashmap__foreach(s->targets, warn_unsampled_one, s);
}

void session__remove_target(struct session *s, pid_t pid, const char *why)
{
	struct target *t = hashmap__del(s->targets, &pid, sizeof(pid));

	if (!t)
		return;
	/* its samples are counted by now: the ring was read before it goes */
	warn_unsampled(s, t);
	/* what its snapshots counted stays counted */
	if (t->wall && wall_reader__settle(t->wall, s->agg))
		session__fail(s, -ENOMEM, "count goroutines");
	wall_reader__release(t->wall, s->agg);
	uninstall_target(s, pid);
	s->npending -= t->pending;
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
 * A file's verdict, said once, of the first process found running it, in
 * the words -p uses: an unsupported Go build gets a note; with -v, a Go
 * build's warnings too. A host runs many Go programs that never set
 * labels (the go command, its compiler): sampled all the same.
 */
static void say_verdict(const struct session *s, pid_t pid, const char *exe,
			const struct go_binary *gb, enum verdict v)
{
	char path[PATH_MAX], comm[32] = "";
	ssize_t n;
	size_t i;

	if (v == VERDICT_NOT_GO || (v == VERDICT_GO && (!s->cfg.verbose || !go_binary__nwarnings(gb))))
		return;
	n = readlink(exe, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	read_comm(pid, comm, sizeof(comm));
	for (i = 0; v == VERDICT_GO && i < go_binary__nwarnings(gb); i++)
		fprintf(stderr, "pid %d (%s, %s): warning: %s\n", (int)pid, comm, path,
			go_binary__warning(gb, i));
	if (v == VERDICT_UNSUPPORTED) {
		fprintf(stderr, "pid %d (%s, %s): unsupported Go build: ", (int)pid, comm, path);
		for (i = 0; i < go_binary__nproblems(gb); i++)
			fprintf(stderr, "%s%s", i ? "; " : "", go_binary__problem(gb, i));
		fprintf(stderr, "; not sampled, nor other processes of the file\n");
	}
}

/*
 * What the executable EXE (as ST) is, from what this file was found to be,
 * or read now: then *HELD keeps it parsed for the caller to put. 0 when it
 * cannot be read.
 */
static enum verdict file_verdict(struct session *s, pid_t pid, const char *exe,
				 const struct stat *st, struct go_binary **held)
{
	struct file_key key = { st->st_dev, st->st_ino, st->st_size, st->st_mtim.tv_sec,
				st->st_mtim.tv_nsec };
	char err[256];
	struct go_binary *gb;
	enum verdict v;

	v = (uintptr_t)hashmap__get(s->verdicts, &key, sizeof(key));
	if (v)
		return v;
	gb = binaries__get(exe, err, sizeof(err));
	if (!gb)
		return 0;
	v = !go_binary__version(gb) ? VERDICT_NOT_GO :
	    go_binary__supported(gb) ? VERDICT_GO : VERDICT_UNSUPPORTED;
	say_verdict(s, pid, exe, gb, v);
	hashmap__add(s->verdicts, &key, sizeof(key), (void *)(uintptr_t)v);
	*held = gb;
	return v;
}

/*
 * --all: PID is sampled when it runs a supported Go build. Each file is
 * checked once: a non-Go file is skipped silently from then on (-v lists
 * each process), an unsupported Go build gets one note.
 */
static void consider(struct session *s, pid_t pid)
{
	struct go_binary *held = NULL;
	char exe[64], comm[32] = "";
	enum verdict v;
	struct stat st;

	if (pid == getpid() || !in_cgroup(s, pid))
		return;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	/* kernel threads have no executable; a process may be gone already */
	if (stat(exe, &st) != 0)
		return;
	v = file_verdict(s, pid, exe, &st, &held);
	if (v == VERDICT_GO)
		add_target(s, pid, true);
	/* held until the target took its own reference: the file is parsed once */
	binaries__put(held);
	if (!v || v == VERDICT_GO || !s->cfg.verbose)
		return;
	read_comm(pid, comm, sizeof(comm));
	fprintf(stderr, "ctxprof-go: pid %d (%s): %s, skipped\n", (int)pid, comm,
		v == VERDICT_NOT_GO ? "not a Go program" : "an unsupported Go build");
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
void session__on_exec(void *ctx, pid_t pid)
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
void session__handle_execs(struct session *s)
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

struct reap {
	struct session *s;
	pid_t *exited, *execed, *reexeced;
	size_t nexited, nexeced, nreexeced;
};

static void check_one(const void *key, size_t len, void *value, void *ctx)
{
	struct target *t = value;
	struct reap *r = ctx;
	struct target_info info;
	struct pollfd pfd = { .fd = t->pidfd, .events = POLLIN };

	if (poll(&pfd, 1, 0) == 1) {
		r->exited[r->nexited++] = t->pid;
		return;
	}
	/* its CPU time while it can be read: once reaped, it cannot */
	process_cpu_ns(t->pid, &t->cpu_seen_ns);
	if (bpf_map_lookup_elem(bpf_map__fd(r->s->skel->maps.targets), &(__u32){ t->pid }, &info) != 0)
		return;
	/* the kernel side already drops its samples; this says so, once */
	if (info.execed)
		r->execed[r->nexeced++] = t->pid;
	else if (info.reexecs != t->reexecs)
		r->reexeced[r->nreexeced++] = t->pid;
}

/*
 * A target that exec'd its own file again: a new Go runtime, at a new
 * load address when a PIE. Its goroutines are read afresh at the new
 * bias, and so is the GC cycle count the sampler keys label sets by.
 */
static void reexeced(struct session *s, pid_t pid)
{
	struct target *t = session__find_target(s, pid);
	struct target_info info;
	int fd = bpf_map__fd(s->skel->maps.targets);

	if (!t || bpf_map_lookup_elem(fd, &(__u32){ pid }, &info))
		return;
	t->reexecs = info.reexecs;
	/* a new image: none of its string pages are mapped yet */
	map_strings(t);
	target_layout(t, &info);
	if (bpf_map_update_elem(fd, &(__u32){ pid }, &info, BPF_EXIST))
		fprintf(stderr, "pid %d (%s): failed to update its layout after it ran its "
				"program again: %s\n",
			(int)pid, t->comm, strerror(errno));
	if (!t->wall)
		return;
	/* what the old image's snapshots counted stays counted */
	if (wall_reader__settle(t->wall, s->agg))
		session__fail(s, -ENOMEM, "count goroutines");
	wall_reader__release(t->wall, s->agg);
	wall_reader__free(t->wall);
	t->wall = NULL;
	if (start_wall(s, t, true))
		session__fail(s, -ENOMEM, "read goroutines");
	else if (s->cfg.verbose)
		fprintf(stderr, "ctxprof-go: pid %d (%s) ran its program again: its goroutines "
				"are read at its new address\n",
			(int)pid, t->comm);
}

/* Drops targets that exited or exec'd; their last samples are read first. */
void session__reap_targets(struct session *s)
{
	size_t n = hashmap__size(s->targets), i;
	struct reap r = { .s = s };

	if (!n)
		return;
	r.exited = calloc(n, sizeof(pid_t));
	r.execed = calloc(n, sizeof(pid_t));
	r.reexeced = calloc(n, sizeof(pid_t));
	if (r.exited && r.execed && r.reexeced)
		hashmap__foreach(s->targets, check_one, &r);
	if (r.nexited || r.nexeced)
		ring_buffer__consume(s->rb);
	for (i = 0; i < r.nexited; i++)
		session__remove_target(s, r.exited[i], "exited");
	for (i = 0; i < r.nexeced; i++)
		session__remove_target(s, r.execed[i],
				       "now runs another program (exec); no longer sampled");
	for (i = 0; i < r.nreexeced; i++)
		reexeced(s, r.reexeced[i]);
	free(r.exited);
	free(r.execed);
	free(r.reexeced);
}

bool session__describe_process(void *ctx, uint32_t pid, struct otlp_process *out)
{
	struct target *t = session__find_target(ctx, pid);

	if (!t)
		return false;
	if (!t->env_service)
		t->env_service = service_name(pid);
	out->service_name = proc_ctx__service_name(t->ctx);
	if (!out->service_name && t->env_service && *t->env_service)
		out->service_name = t->env_service;
	out->attrs = proc_ctx__attrs(t->ctx, &out->nattrs);
	out->exe_path = t->exe[0] ? t->exe : NULL;
	out->go_version = go_binary__version(t->gb);
	return true;
}
