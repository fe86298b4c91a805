// SPDX-License-Identifier: GPL-2.0
/* uprobe_link.c: a uprobe limited to one process, by the kernel's uprobe PMU or, where that is refused, a tracefs event. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "uprobe_link.h"

/* A tracefs event's name: the ctxprof-go that made it (its pid) and its number there */
#define EVENT_NAME "ctxprof/p%d_%u"

struct uprobe_link {
	struct bpf_link *link;
	/* a tracefs event's name, "ctxprof/p<our pid>_<n>", and its tracefs; else "" */
	char event[64];
	const char *tracefs;
};

/* The kernel refused, rather than failed */
static bool refused(int err)
{
	return err == -EACCES || err == -EPERM;
}

const char *uprobe_link__hint(int err)
{
	return refused(err) ? " (the uprobe PMU needs CAP_SYS_ADMIN; without it, uprobe events "
			      "need tracefs, writable, at /sys/kernel/tracing)" :
			      "";
}

/* Where tracefs is mounted, with uprobe_events in it; NULL when nowhere. */
static const char *tracefs_dir(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[64];
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/uprobe_events", dirs[i]);
		if (access(path, W_OK) == 0)
			return dirs[i];
	}
	return NULL;
}

/* LINE appended to DIR's uprobe_events; 0 or -errno. */
static int write_events(const char *dir, const char *line)
{
	char path[64];
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, line, strlen(line));
	if (n < 0)
		err = -errno;
	else if ((size_t)n != strlen(line))
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* The id of DIR's event NAME; -errno. */
static long event_id(const char *dir, const char *name)
{
	char path[128];
	long id;
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/%s/id", dir, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%ld", &id) != 1)
		id = -EINVAL;
	fclose(f);
	return id;
}

/*
 * The events a ctxprof-go killed before it could remove them left in
 * DIR: those named for a process that no longer runs. One still open
 * (a ctxprof-go in another PID namespace) is busy, and the kernel keeps it.
 */
static void sweep_events(const char *dir)
{
	char path[64], line[PATH_MAX + 128], gone[80];
	unsigned int n;
	int pid, len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/uprobe_events", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		len = 0;
		if (sscanf(line, "p:" EVENT_NAME " %n", &pid, &n, &len) != 2 || !len ||
		    pid == getpid() || pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(gone, sizeof(gone), "-:" EVENT_NAME "\n", pid, n);
		write_events(dir, gone);
	}
	fclose(f);
}

/* The uprobe as a tracefs event, opened as a tracepoint of PID; the perf event's fd, or -errno. */
static int tracefs_event(struct uprobe_link *l, pid_t pid, const char *path, uint64_t offset)
{
	static unsigned int seq;
	static bool swept;
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
		.sample_period = 1,
		.wakeup_events = 1,
	};
	char line[PATH_MAX + 128];
	long id;
	int fd, err;

	l->tracefs = tracefs_dir();
	if (!l->tracefs)
		return -ENOENT;
	if (!swept) {
		sweep_events(l->tracefs);
		swept = true;
	}
	snprintf(l->event, sizeof(l->event), EVENT_NAME, (int)getpid(), seq++);
	snprintf(line, sizeof(line), "p:%s %s:0x%llx\n", l->event, path, (unsigned long long)offset);
	err = write_events(l->tracefs, line);
	if (err) {
		l->event[0] = '\0';
		return err;
	}
	id = event_id(l->tracefs, l->event);
	if (id < 0)
		return (int)id;
	attr.config = id;
	fd = syscall(__NR_perf_event_open, &attr, pid, pid < 0 ? 0 : -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* Removes L's tracefs event, if it has one. */
static void remove_event(struct uprobe_link *l)
{
	char line[80];

	if (!l->event[0])
		return;
	snprintf(line, sizeof(line), "-:%s\n", l->event);
	write_events(l->tracefs, line);
	l->event[0] = '\0';
}

struct uprobe_link *uprobe_link__attach(const struct bpf_program *prog, pid_t pid,
					const char *path, uint64_t offset, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uopts, .bpf_cookie = cookie);
	LIBBPF_OPTS(bpf_perf_event_opts, popts, .bpf_cookie = cookie);
	struct uprobe_link *l;
	int err, fd;

	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->link = bpf_program__attach_uprobe_opts(prog, pid, path, offset, &uopts);
	if (l->link)
		return l;
	err = -errno;
	/* refused by the uprobe PMU: the same probe through tracefs, when it may be written */
	if (!refused(err))
		goto fail;
	fd = tracefs_event(l, pid, path, offset);
	if (fd < 0) {
		/* nowhere to write it: the PMU's refusal is the cause */
		if (fd != -ENOENT && !refused(fd))
			err = fd;
		goto fail;
	}
	l->link = bpf_program__attach_perf_event_opts(prog, fd, &popts);
	if (l->link)
		return l;
	err = -errno;
	close(fd);
fail:
	remove_event(l);
	free(l);
	errno = -err;
	return NULL;
}

void uprobe_link__destroy(struct uprobe_link *l)
{
	if (!l)
		return;
	/* the perf event closes with the link; only then may its event go */
	bpf_link__destroy(l->link);
	remove_event(l);
	free(l);
}

bool uprobe_link__tracefs(const struct uprobe_link *l)
{
	return l && l->event[0];
}
