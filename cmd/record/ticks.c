// SPDX-License-Identifier: GPL-2.0
/* ticks.c: --pid's cpu-clock events on every thread of one process, and the CPU time they counted. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "cmd/util/clock.h"
#include "cmd/util/vec.h"
#include "cpu_clock.h"
#include "ticks.h"

/* a cpu-clock event on one thread, and the thread */
struct thread_tick {
	pid_t tid;
	int fd; /* the event's, owned by LINK: read for the time it counted */
	struct bpf_link *link;
};

struct ticks {
	struct bpf_program *prog;
	uint64_t period_ns;
	struct vec open; /* struct thread_tick each */
	/* what the events counted, and on how many threads, once stopped */
	uint64_t stopped_ns;
	size_t stopped_threads;
	bool ran; /* its events counted CPU time: the kernel runs them */
	uint64_t cpu_opened_ns; /* its process's CPU time once its events were open */
};

struct ticks *ticks__new(struct bpf_program *prog, uint64_t period_ns)
{
	struct ticks *tk = calloc(1, sizeof(*tk));

	if (!tk)
		return NULL;
	tk->prog = prog;
	tk->period_ns = period_ns;
	tk->open.size = sizeof(struct thread_tick);
	return tk;
}

void ticks__free(struct ticks *tk)
{
	if (!tk)
		return;
	ticks__stop(tk);
	free(tk->open.items);
	free(tk);
}

/* What the open events counted so far, threads they passed on to included. */
static uint64_t open_ns(const struct ticks *tk)
{
	const struct thread_tick *tt = tk->open.items;
	uint64_t sum = 0, v;
	size_t i;

	for (i = 0; i < tk->open.n; i++) {
		if (read(tt[i].fd, &v, sizeof(v)) == sizeof(v))
			sum += v;
	}
	return sum;
}

uint64_t ticks__ns(const struct ticks *tk)
{
	return tk ? open_ns(tk) + tk->stopped_ns : 0;
}

size_t ticks__threads(const struct ticks *tk)
{
	return tk ? tk->open.n + tk->stopped_threads : 0;
}

void ticks__stop(struct ticks *tk)
{
	struct thread_tick *tt;
	size_t i;

	if (!tk)
		return;
	tt = tk->open.items;
	tk->stopped_ns += open_ns(tk);
	tk->stopped_threads += tk->open.n;
	for (i = 0; i < tk->open.n; i++)
		bpf_link__destroy(tt[i].link);
	tk->open.n = 0;
}

/*
 * Where the per-thread events never count, the kernel does not schedule
 * them in with their threads: Linux 6.1 under qemu's arm64 emulation does
 * so for a whole recording, now and then, warning in event_function that
 * a running thread's perf context was not active. Checked until the
 * events have counted once.
 */
bool ticks__stalled(struct ticks *tk, uint64_t cpu_seen_ns, uint64_t due_ns, uint64_t *cpu_ns)
{
	if (!tk || tk->ran || !tk->open.n || cpu_seen_ns < tk->cpu_opened_ns ||
	    cpu_seen_ns - tk->cpu_opened_ns < due_ns)
		return false;
	if (open_ns(tk)) {
		tk->ran = true;
		return false;
	}
	*cpu_ns = cpu_seen_ns - tk->cpu_opened_ns;
	return true;
}

static bool has_tick(const struct ticks *tk, pid_t tid)
{
	const struct thread_tick *tt = tk->open.items;
	size_t i;

	for (i = 0; i < tk->open.n; i++) {
		if (tt[i].tid == tid)
			return true;
	}
	return false;
}

/* The cpu-clock event on thread TID; 1 when it is gone already. */
static int tick_thread(struct ticks *tk, pid_t tid)
{
	struct bpf_link *link;
	struct thread_tick *tt;
	int fd;

	fd = cpu_clock__attach(tk->prog, tid, -1, tk->period_ns, 0, &link);
	if (fd < 0)
		return fd == -ESRCH ? 1 : fd;
	tt = vec__push(&tk->open);
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
 * The sampler's event on every thread, rather than on every CPU, so that
 * no tick of another process runs it. A thread's event is inherited by
 * the threads it makes from then on (and by its children, whose ticks the
 * targets map turns away); a thread made while the events are opened is
 * found by listing the threads again, until a pass finds none new. A
 * thread that exits meanwhile is passed over.
 */
int ticks__follow(struct ticks *tk, pid_t pid, const char *comm)
{
	char path[64];
	struct dirent *d;
	bool fresh;
	DIR *dir;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	do {
		fresh = false;
		dir = opendir(path);
		if (!dir) {
			err = -errno;
			fprintf(stderr, "ctxprof-go: pid %d (%s): cannot list its threads: %s\n", (int)pid,
				comm, strerror(-err));
			return err;
		}
		while ((d = readdir(dir))) {
			pid_t tid = atoi(d->d_name);

			if (tid <= 0 || has_tick(tk, tid))
				continue;
			err = tick_thread(tk, tid);
			if (err < 0) {
				closedir(dir);
				fprintf(stderr, "ctxprof-go: pid %d (%s): cannot sample thread %d: %s%s\n",
					(int)pid, comm, (int)tid, strerror(-err),
					err == -EMFILE ? " (an open file a thread: raise the hard limit, ulimit -Hn)" : "");
				return err;
			}
			fresh |= err == 0;
		}
		closedir(dir);
	} while (fresh);
	/* CPU it used before is no event's to count */
	process_cpu_ns(pid, &tk->cpu_opened_ns);
	return 0;
}
