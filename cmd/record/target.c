// SPDX-License-Identifier: GPL-2.0
/* target.c: one process a recording samples: its binary and layout, installed for the sampler, and its parts. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/output/otlp.h"
#include "cmd/symbols/binaries.h"
#include "cmd/util/clock.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/procfs.h"
#include "offsets/go_binary.h"
#include "aggregate.h"
#include "frame_table.h"
#include "part.h"
#include "part_service.h"
#include "part_ticks.h"
#include "processes.h"
#include "sampler.h"
#include "session_config.h"
#include "target.h"
#include "ticks.h"
#include "wall.h"

/* CPU time, in sampling periods, that chance alone does not leave without a sample */
#define MIN_DUE_SAMPLES 20

struct target {
	int pidfd; /* readable once the process has exited */
	char comm[32];
	struct stat exe_st; /* its executable when added */
	bool pending; /* its name, container and mappings are still to be read */
	/*
	 * its parts' view of it and their states (part.h), and its own: the
	 * recording's environment, its pid, and its binary, held while sampled
	 * (replicas of one binary read its DWARF once)
	 */
	struct part_ctx parts;
	struct go_layout layout; /* as in the targets map */
	__u32 reexecs; /* execs of its own file seen so far (target_info.reexecs) */
	char exe[PATH_MAX]; /* /proc/PID/exe's target when added */
	/* arm64, Go before 1.21: its binary's frame sizes, shared by its processes */
	struct frame_entry *frames;
	/* its CPU time when added, and when last seen alive: what the sampler should have seen */
	uint64_t cpu_added_ns, cpu_seen_ns;
};

/* a binary's frame_table, while a target uses it; left empty, by address of its go_binary */
struct frame_entry {
	struct frame_table *ft;
	unsigned int refs;
};

pid_t target__pid(const struct target *t)
{
	return t->parts.pid;
}

const char *target__comm(const struct target *t)
{
	return t->comm;
}

const struct go_binary *target__binary(const struct target *t)
{
	return t->parts.gb;
}

struct wall_reader *target__wall(const struct target *t)
{
	return t->parts.state[PART_WALL];
}

bool target__pending(const struct target *t)
{
	return t->pending;
}

bool target__follows_labels(const struct target *t)
{
	return t->parts.state[PART_LABELS];
}

const struct go_layout *target__go_layout(const struct target *t)
{
	return &t->layout;
}

bool target__probed(const struct target *t)
{
	return t->parts.state[PART_REQUESTS];
}

struct part_ctx *target__parts(struct target *t)
{
	return &t->parts;
}

__u32 target__reexecs(const struct target *t)
{
	return t->reexecs;
}

int target__frame_fd(const struct target *t)
{
	return t->frames ? t->frames->ft->fd : -1;
}

void target__free(struct target *t)
{
	if (!t)
		return;
	target__detach_parts(t);
	if (t->frames && !--t->frames->refs) {
		frame_table__free(t->frames->ft);
		t->frames->ft = NULL;
	}
	binaries__put(t->parts.gb);
	if (t->pidfd >= 0)
		close(t->pidfd);
	free(t);
}

/*
 * T's process held by a pidfd (readable once it exits), its name, and its
 * executable, parsed or shared with other targets running the same file.
 * -errno with a message unless QUIET.
 */
static int open_process(struct target *t, bool quiet)
{
	char exe[64], err[256], *path = t->exe;
	pid_t pid = t->parts.pid;
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
	procfs__comm(pid, t->comm, sizeof(t->comm));
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	n = readlink(exe, path, sizeof(t->exe) - 1);
	path[n > 0 ? n : 0] = '\0';
	if (stat(exe, &t->exe_st) != 0) {
		ret = -errno;
		/* its pidfd is readable once it has exited: a zombie has no executable */
		if (ret == -ENOENT && poll(&(struct pollfd){ .fd = t->pidfd, .events = POLLIN }, 1, 0) > 0) {
			if (!quiet)
				fprintf(stderr, "pid %d (%s): has exited\n", (int)pid, t->comm);
			return -ESRCH;
		}
		if (ret == -ENOENT && procfs__kernel_thread(pid)) {
			if (!quiet)
				fprintf(stderr, "pid %d (%s): a kernel thread, which runs no program\n",
					(int)pid, t->comm);
			return -ENOTSUP;
		}
		/* a link nothing may read names no file: no name, then, and no stray space */
		if (!quiet)
			fprintf(stderr, "pid %d (%s): cannot read its executable%s%s: %s\n", (int)pid,
				t->comm, *path ? " " : "", path, strerror(-ret));
		return ret;
	}
	/* shared with the symbolizer, and with other targets running the same file */
	t->parts.gb = binaries__get(exe, err, sizeof(err));
	if (!t->parts.gb) {
		ret = -errno;
		if (!quiet)
			fprintf(stderr, "pid %d (%s): cannot read its executable%s%s: %s\n", (int)pid,
				t->comm, *path ? " " : "", path, err);
		return ret;
	}
	return 0;
}

/* -ENOTSUP, saying why unless QUIET, when T runs no Go build we can read. */
static int refuse_unsupported(const struct target *t, bool quiet)
{
	size_t i;

	if (go_binary__supported(t->parts.gb))
		return 0;
	if (quiet)
		return -ENOTSUP;
	/* without a version the problem already says it is not Go */
	fprintf(stderr, "pid %d (%s, %s): %s", (int)t->parts.pid, t->comm, t->exe,
		go_binary__version(t->parts.gb) ? "unsupported Go build: " : "");
	for (i = 0; i < go_binary__nproblems(t->parts.gb); i++)
		fprintf(stderr, "%s%s", i ? "; " : "", go_binary__problem(t->parts.gb, i));
	fputc('\n', stderr);
	return -ENOTSUP;
}

/* T's layout for the sampler; a PIE's addresses moved to where it is loaded. */
static void target_layout(struct target *t, struct target_info *info)
{
	struct go_layout *l = &info->layout;
	uint64_t bias = 0;
	bool moved = true;

	go_binary__layout(t->parts.gb, l);
	/* the bias, read from /proc only when an address needs it */
	if ((l->gc_cycles || l->morestack || t->frames) && go_binary__pie(t->parts.gb))
		moved = procfs__load_bias(t->parts.pid, go_binary__entry(t->parts.gb), &bias);
	if (l->gc_cycles)
		l->gc_cycles = moved ? l->gc_cycles + bias : 0;
	l->morestack = moved && l->morestack ? l->morestack + bias : 0;
	l->morestack_end = l->morestack ? l->morestack_end + bias : 0;
	if (t->frames && moved) {
		l->frame_text = t->frames->ft->text + bias;
		l->frame_slots = t->frames->ft->slots;
	}
	t->layout = *l;
}

/*
 * arm64, Go before 1.21: T's binary's frame sizes (frame_table.h), built
 * once for every process that runs it. Without them (said unless QUIET),
 * T's stacks end where Go left a stale frame pointer.
 */
static void find_frames(struct target *t, bool quiet)
{
	struct hashmap *tables = t->parts.env->frame_tables;
	struct frame_entry *fe;

	if (!frame_table__needed(t->parts.gb))
		return;
	fe = hashmap__get(tables, &t->parts.gb, sizeof(t->parts.gb));
	if (!fe) {
		fe = calloc(1, sizeof(*fe));
		if (!fe || hashmap__add(tables, &t->parts.gb, sizeof(t->parts.gb), fe)) {
			free(fe);
			return;
		}
	}
	if (!fe->ft && !(fe->ft = frame_table__new(t->parts.gb))) {
		if (!quiet)
			fprintf(stderr, "pid %d (%s): warning: cannot read its functions' frame "
					"sizes (%s): stacks end where Go %s left a stale frame pointer\n",
				(int)t->parts.pid, t->comm, strerror(errno), go_binary__version(t->parts.gb));
		return;
	}
	fe->refs++;
	t->frames = fe;
}

/* The binary's warnings (--all says them once per file), and with -v the layout. */
static void say_layout(const struct target *t, const struct target_info *info, bool quiet)
{
	const struct go_layout *l = &info->layout;
	size_t i;

	for (i = 0; !quiet && i < go_binary__nwarnings(t->parts.gb); i++)
		fprintf(stderr, "pid %d (%s, %s): warning: %s\n", (int)t->parts.pid, t->comm, t->exe,
			go_binary__warning(t->parts.gb, i));
	if (t->parts.env->cfg->verbose)
		fprintf(stderr,
			"pid %d (%s, %s): %s, offsets from %s, labels %s, g at fs%+lld, g.m %u, "
			"m.curg %u, g.labels %u, g.goid %u\n",
			(int)t->parts.pid, t->comm, t->exe, go_binary__version(t->parts.gb),
			go_layout_source__name(go_binary__source(t->parts.gb)),
			go_labels_layout__name(l->labels_layout) ?: "unknown",
			(long long)l->tls_g_offset, l->g_m, l->m_curg, l->g_labels, l->g_goid);
}

/* Its parts' open, in order, before it enters the targets map. */
static int open_parts(struct target *t)
{
	size_t i;
	int err;

	for (i = 0; i < PART_COUNT; i++)
		if (target_parts[i]->open &&
		    (err = target_parts[i]->open(&t->parts, &t->parts.state[i])))
			return err;
	return 0;
}

int target__open(const struct target_env *env, pid_t pid, bool quiet, struct target_info *info,
		 struct target **out)
{
	struct target *t;
	int ret;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->parts.env = env;
	t->parts.pid = pid;
	t->pidfd = -1;
	t->parts.comm = t->comm;
	t->parts.exe = t->exe;
	t->parts.layout = &t->layout;
	t->pending = true;
	/* before its events: CPU it uses from then on should show in samples */
	process_cpu_ns(pid, &t->cpu_added_ns);
	t->cpu_seen_ns = t->cpu_added_ns;
	ret = open_process(t, quiet);
	if (!ret)
		ret = refuse_unsupported(t, quiet);
	if (!ret) {
		find_frames(t, quiet);
		target_layout(t, info);
		say_layout(t, info, quiet);
		info->exe_ino = t->exe_st.st_ino;
		ret = open_parts(t);
	}
	if (ret) {
		target__free(t);
		return ret;
	}
	*out = t;
	return 0;
}

bool target__same_exe(const struct target *t)
{
	struct stat now;
	char exe[64];

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)t->parts.pid);
	return stat(exe, &now) == 0 && now.st_dev == t->exe_st.st_dev &&
	       now.st_ino == t->exe_st.st_ino;
}

/* Each part's describe, in order; the first failure. */
static int describe_parts(struct target *t)
{
	size_t i;
	int ret, err = 0;

	for (i = 0; i < PART_COUNT; i++)
		if (target_parts[i]->describe &&
		    (ret = target_parts[i]->describe(&t->parts, t->parts.state[i])))
			err = err ?: ret;
	return err;
}

int target__refresh_context(struct target *t)
{
	return describe_parts(t);
}

int target__describe(struct target *t)
{
	struct processes *procs = t->parts.env->procs;

	processes__container(procs, t->parts.pid);
	processes__comm(procs, t->parts.pid);
	if (!symbolizer__known(processes__get(procs, t->parts.pid, now_ns(CLOCK_MONOTONIC))))
		fprintf(stderr, "pid %d (%s): warning: cannot read its mappings: frames will be "
				"addresses\n",
			(int)t->parts.pid, t->comm);
	t->pending = false;
	return describe_parts(t);
}

void target__describe_process(struct target *t, struct otlp_process *out)
{
	out->attrs = service_part__attrs(&t->parts, &out->nattrs);
	out->exe_path = t->exe[0] ? t->exe : NULL;
	out->go_version = go_binary__version(t->parts.gb);
}

int target__attach_parts(struct target *t, bool quiet)
{
	size_t i;
	int err;

	for (i = 0; i < PART_COUNT; i++)
		if (target_parts[i]->attach &&
		    (err = target_parts[i]->attach(&t->parts, quiet, &t->parts.state[i])))
			return err;
	if (!t->parts.env->cfg->verbose)
		return 0;
	for (i = 0; i < PART_COUNT; i++)
		if (target_parts[i]->note)
			target_parts[i]->note(&t->parts, t->parts.state[i]);
	return 0;
}

void target__detach_parts(struct target *t)
{
	size_t i = PART_COUNT;

	/* the last first: a part may rely on those before it */
	while (i--) {
		if (t->parts.state[i])
			target_parts[i]->detach(&t->parts, t->parts.state[i]);
		t->parts.state[i] = NULL;
	}
}

void target__tick(struct target *t)
{
	size_t i;

	for (i = 0; i < PART_COUNT; i++)
		if (target_parts[i]->tick)
			target_parts[i]->tick(&t->parts, t->parts.state[i]);
}

bool target__untraced_cause(const struct target *t, const struct bare_requests *bare, char *buf,
			    size_t len)
{
	size_t i;

	for (i = 0; i < PART_COUNT; i++)
		if (target_parts[i]->why_untraced &&
		    target_parts[i]->why_untraced(&t->parts, t->parts.state[i], bare, buf, len))
			return true;
	return false;
}

void target__say(const struct target *t, bool verbose)
{
	size_t i;

	for (i = 0; i < PART_COUNT; i++)
		if (target_parts[i]->say)
			target_parts[i]->say(&t->parts, t->parts.state[i], verbose);
}

void target__stop_ticks(struct target *t)
{
	ticks_part__stop(&t->parts);
}

/* Its per-thread events never counted, MIN_DUE_SAMPLES of its CPU time after they were opened. */
bool target__ticks_stalled(struct target *t, uint64_t *cpu_ns)
{
	return ticks_part__stalled(&t->parts, t->cpu_seen_ns, MIN_DUE_SAMPLES * t->parts.env->period_ns,
				   cpu_ns);
}

/*
 * Samples due to T, by the CPU time its threads used since it was added,
 * and none taken: said, rather than left to an empty profile (its events
 * never ran, or every sample was lost). Only where MIN_DUE_SAMPLES were
 * due, which chance alone does not leave out; not under --traced-only,
 * which drops the untraced in the kernel.
 */
void target__warn_unsampled(struct target *t)
{
	const struct target_env *env = t->parts.env;
	uint64_t now = 0, used, due;

	if (!env->cfg->sampling || env->cfg->traced_only)
		return;
	if (!process_cpu_ns(t->parts.pid, &now) && now > t->cpu_seen_ns)
		t->cpu_seen_ns = now;
	used = t->cpu_seen_ns > t->cpu_added_ns ? t->cpu_seen_ns - t->cpu_added_ns : 0;
	due = used / env->period_ns;
	if (due < MIN_DUE_SAMPLES || aggregate__pid_samples(env->agg, t->parts.pid))
		return;
	fprintf(stderr,
		"ctxprof-go: warning: pid %d (%s): no sample taken, though its threads used %.2f s "
		"of CPU while sampled (%llu samples due at %lu Hz)",
		(int)t->parts.pid, t->comm, used / 1e9, (unsigned long long)due, env->cfg->freq);
	/* whether the kernel ran its events at all: the cause differs */
	if (ticks__threads(t->parts.state[PART_TICKS]))
		fprintf(stderr, "; the cpu-clock events on its %zu threads counted %.2f s",
			ticks__threads(t->parts.state[PART_TICKS]),
			ticks__ns(t->parts.state[PART_TICKS]) / 1e9);
	fputc('\n', stderr);
}

int target__pidfd(const struct target *t)
{
	return t->pidfd;
}

bool target__exited(struct target *t)
{
	struct pollfd pfd = { .fd = t->pidfd, .events = POLLIN };

	if (poll(&pfd, 1, 0) == 1)
		return true;
	/* its CPU time while it can be read: once reaped, it cannot */
	process_cpu_ns(t->parts.pid, &t->cpu_seen_ns);
	return false;
}

int target__reexec(struct target *t, struct target_info *info)
{
	const struct part_ops *p;
	int ret, err = 0;
	size_t i;

	t->reexecs = info->reexecs;
	target_layout(t, info);
	/*
	 * Probes of the old image (an exec from another thread than the first
	 * ends the task they followed), and its label sets, go: they are
	 * attached again, unless the part knows better
	 */
	for (i = 0; i < PART_COUNT; i++) {
		p = target_parts[i];
		if (p->reexec) {
			ret = p->reexec(&t->parts, &t->parts.state[i]);
		} else {
			if (t->parts.state[i])
				p->detach(&t->parts, t->parts.state[i]);
			t->parts.state[i] = NULL;
			ret = p->attach ? p->attach(&t->parts, true, &t->parts.state[i]) : 0;
		}
		err = err ?: ret;
	}
	info->label_owners = target__follows_labels(t);
	return err;
}

int target__retire(struct target *t)
{
	int ret, err = 0;
	size_t i;

	for (i = 0; i < PART_COUNT; i++)
		if (target_parts[i]->retire &&
		    (ret = target_parts[i]->retire(&t->parts, t->parts.state[i])))
			err = err ?: ret;
	return err;
}
