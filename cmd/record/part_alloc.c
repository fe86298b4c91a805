// SPDX-License-Identifier: GPL-2.0
/* part_alloc.c: --alloc: a probe where a target's runtime samples an allocation, and the rate it samples at. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "cmd/util/clock.h"
#include "cmd/util/procfs.h"
#include "offsets/go_binary.h"
#include "part.h"
#include "processes.h"
#include "sampler.h"
#include "session_config.h"
#include "target.h"
#include "uprobe_link.h"

/* How often runtime.MemProfileRate is read again: a program may set it while it runs. */
#define RATE_READ_NS 1000000000ULL

struct alloc {
	struct uprobe_link *link;
	uint64_t rate_at; /* runtime.MemProfileRate in the process */
	int64_t rate; /* as last read; -1 while it could not be */
	bool disabled; /* the linker turned memory profiling off */
	uint64_t next_read_ns;
};

/* runtime.MemProfileRate as the process holds it now; -1 when it cannot be read. */
static int64_t read_rate(pid_t pid, uint64_t at)
{
	int64_t rate;
	struct iovec local = { &rate, sizeof(rate) }, remote = { (void *)(uintptr_t)at, sizeof(rate) };

	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != sizeof(rate))
		return -1;
	return rate;
}

/* Why the process takes no allocation samples, as its line says. */
static const char *why_none(const struct alloc *a)
{
	if (a->disabled)
		return "the linker turned memory profiling off (the program never references "
		       "runtime.MemProfile)";
	return "the program set it to 0, or never references runtime.MemProfile (then the "
	       "linker turns memory profiling off)";
}

/* The rate read again; a change said, a rate of 0 said once (never a silent zero). */
static void note_rate(struct part_ctx *c, struct alloc *a)
{
	int64_t rate = read_rate(c->pid, a->rate_at);

	if (rate < 0 || rate == a->rate)
		return;
	if (rate == 0)
		fprintf(stderr, "pid %d (%s): --alloc: no allocations are sampled: "
				"runtime.MemProfileRate is 0: %s\n",
			(int)c->pid, c->comm, why_none(a));
	else if (a->rate >= 0 && c->env->cfg->verbose)
		fprintf(stderr, "ctxprof-go: pid %d (%s): runtime.MemProfileRate is %lld now\n",
			(int)c->pid, c->comm, (long long)rate);
	a->rate = rate;
	processes__set_memprofile_rate(c->env->procs, c->pid, rate);
}

static void alloc_free(struct alloc *a)
{
	if (!a)
		return;
	uprobe_link__destroy(a->link);
	free(a);
}

/*
 * runtime.mProf_Malloc, probed through /proc/PID/exe for this process
 * only. A binary whose rate cannot be found goes without: its samples
 * could not be unbiased, and a rate is never guessed.
 */
static int alloc_attach(struct part_ctx *c, bool quiet, void **state)
{
	const struct target_env *env = c->env;
	struct go_alloc_probe ap;
	struct alloc *a;
	uint64_t bias = 0;
	char exe[64], why[160];
	int err;

	if (!env->cfg->alloc)
		return 0;
	err = go_binary__alloc_probe(c->gb, &ap);
	if (err) {
		snprintf(why, sizeof(why), "%s", go_binary__alloc_problem(c->gb) ?: strerror(-err));
	} else if (!ap.rate_addr) {
		err = -ENOENT;
		snprintf(why, sizeof(why), "%s",
			 go_binary__alloc_rate_problem(c->gb) ?: "runtime.MemProfileRate not found");
	}
	if (!err && go_binary__pie(c->gb) && !procfs__load_bias(c->pid, go_binary__entry(c->gb), &bias)) {
		err = -ESRCH;
		snprintf(why, sizeof(why), "its load address could not be read");
	}
	if (err) {
		if (!quiet || env->cfg->verbose || !go_binary__said(c->gb, SAID_ATTACH_ALLOC))
			fprintf(stderr, "pid %d (%s): warning: --alloc: %s; no allocations recorded\n",
				(int)c->pid, c->comm, why);
		return 0;
	}
	if (!(a = calloc(1, sizeof(*a))))
		return 0;
	a->rate_at = ap.rate_addr + bias;
	a->rate = -1;
	a->disabled = ap.memprof_disabled > 0;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)c->pid);
	a->link = uprobe_link__attach(env->bpf->alloc.alloc_sample, c->pid, exe, ap.offset,
				      ap.size_arg);
	if (!a->link) {
		err = -errno;
		env->attach_failures[ATTACH_ALLOC]++;
		if (!quiet || env->cfg->verbose || !go_binary__said(c->gb, SAID_ATTACH_ALLOC))
			fprintf(stderr, "pid %d (%s): warning: failed to attach to runtime.mProf_Malloc: "
					"%s%s; no allocations recorded\n",
				(int)c->pid, c->comm, strerror(-err), uprobe_link__hint(err));
		alloc_free(a);
		return 0;
	}
	note_rate(c, a);
	a->next_read_ns = now_ns(CLOCK_MONOTONIC) + RATE_READ_NS;
	*state = a;
	return 0;
}

static void alloc_note(const struct part_ctx *c, const void *state)
{
	const struct alloc *a = state;

	if (a)
		fprintf(stderr, "pid %d (%s): allocations: sampled one per %lld bytes on average "
				"(runtime.MemProfileRate)\n",
			(int)c->pid, c->comm, (long long)a->rate);
}

static void alloc_tick(struct part_ctx *c, void *state)
{
	struct alloc *a = state;
	uint64_t now;

	if (!a || (now = now_ns(CLOCK_MONOTONIC)) < a->next_read_ns)
		return;
	a->next_read_ns = now + RATE_READ_NS;
	note_rate(c, a);
}

/* Its last rate read before it goes: the records still to be written are unbiased with it. */
static int alloc_retire(struct part_ctx *c, void *state)
{
	if (state)
		note_rate(c, state);
	return 0;
}

static void alloc_detach(struct part_ctx *c, void *state)
{
	alloc_free(state);
}

const struct part_ops alloc_part = {
	.name = "allocation probe",
	.attach = alloc_attach,
	.retire = alloc_retire,
	.note = alloc_note,
	.tick = alloc_tick,
	.detach = alloc_detach,
};
