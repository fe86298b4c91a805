// SPDX-License-Identifier: GPL-2.0
/* part_strings.c: Go's string constants mapped into a target's page tables, where the sampler can read them. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "cmd/symbols/binaries.h"
#include "cmd/util/clock.h"
#include "cmd/util/procfs.h"
#include "offsets/go_binary.h"
#include "aggregate.h"
#include "part.h"
#include "part_strings.h"
#include "target.h"

/* At most this often, a target's pages are mapped again after labels failed to read. */
#define REMAP_NS 1000000000ULL

struct strings {
	uint64_t read_errors; /* the recording's, when its pages were last mapped */
	uint64_t next_remap_ns;
};

/*
 * Go's string constants, label keys and values a program spells out among
 * them, are in the executable's .rodata, whose pages a process maps only
 * as it touches them, and Go copies a constant's header, never its bytes:
 * a label's bytes can lie on a page the target never mapped, or one that
 * reclaim took out of its page tables, and the sampler, which cannot take
 * a page fault, fails to read them. One byte of each page read through
 * process_vm_readv maps it in, as the target's own fault would.
 */
static void map_strings(pid_t pid, const struct go_binary *gb)
{
	struct iovec local, remote[1024];
	uint64_t addr, len, bias = 0, page, end;
	uint8_t sink[1024];
	size_t n;

	if (go_binary__rodata(gb, &addr, &len) ||
	    (go_binary__pie(gb) && !procfs__load_bias(pid, go_binary__entry(gb), &bias)))
		return;
	end = addr + len + bias;
	for (page = (addr + bias) & ~4095ULL; page < end;) {
		for (n = 0; n < sizeof(sink) && page < end; n++, page += 4096)
			remote[n] = (struct iovec){ (void *)(uintptr_t)page, 1 };
		local = (struct iovec){ sink, n };
		if (process_vm_readv(pid, &local, 1, remote, n, 0) < 0)
			return;
	}
}

static uint64_t read_errors(const struct part_ctx *c)
{
	struct agg_stats st;

	aggregate__stats(c->env->agg, &st);
	return st.read_errors;
}

/* Before the sampler can see the process: its first samples find the pages there. */
static int strings_open(struct part_ctx *c, void **state)
{
	struct strings *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	map_strings(c->pid, c->gb);
	s->read_errors = read_errors(c);
	*state = s;
	return 0;
}

/* A new image: none of its string pages are mapped yet. */
static int strings_reexec(struct part_ctx *c, void **state)
{
	if (*state)
		map_strings(c->pid, c->gb);
	return 0;
}

/*
 * Samples whose labels could not be read, most often a string constant's
 * page the target never mapped or reclaim took back: its pages are mapped
 * again, at most once a second.
 */
static void strings_tick(struct part_ctx *c, void *state)
{
	struct strings *s = state;
	uint64_t now = now_ns(CLOCK_MONOTONIC), errors;

	if (!s || now < s->next_remap_ns || (errors = read_errors(c)) == s->read_errors)
		return;
	s->read_errors = errors;
	s->next_remap_ns = now + REMAP_NS;
	map_strings(c->pid, c->gb);
}

static void strings_detach(struct part_ctx *c, void *state)
{
	free(state);
}

const struct part_ops strings_part = {
	.name = "string pages",
	.open = strings_open,
	.reexec = strings_reexec,
	.tick = strings_tick,
	.detach = strings_detach,
};

void strings_part__map_file(const char *path)
{
	struct stat want, st;
	char exe[64], err[256];
	struct go_binary *gb;
	struct dirent *d;
	DIR *dir;
	pid_t pid;

	if (stat(path, &want) != 0 || !(gb = binaries__get(path, err, sizeof(err))))
		return;
	if ((dir = opendir("/proc"))) {
		while ((d = readdir(dir))) {
			pid = atoi(d->d_name);
			if (pid <= 0)
				continue;
			snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
			if (stat(exe, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino)
				map_strings(pid, gb);
		}
		closedir(dir);
	}
	binaries__put(gb);
}
