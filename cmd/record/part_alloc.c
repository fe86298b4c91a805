// SPDX-License-Identifier: GPL-2.0
/* part_alloc.c: --alloc: a probe where a target's runtime samples an allocation, within its share of the target's CPU, and the rate it samples at. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "cmd/util/clock.h"
#include "cmd/util/procfs.h"
#include "offsets/go_binary.h"
#include "budget_probe.h"
#include "part_alloc.h"
#include "processes.h"
#include "sampler.h"
#include "session_config.h"
#include "target.h"
#include "uprobe_link.h"

/* Sampled allocations a second the probe may always take: twice 1 GB/s's at the default rate. */
#define ALLOC_MIN_PER_SEC 4000
/* How often runtime.MemProfileRate is read again: a program may set it while it runs. */
#define RATE_READ_NS 1000000000ULL

struct alloc {
	struct budget_probe *probe;
	uint64_t rate_at; /* runtime.MemProfileRate in the process */
	int64_t rate; /* as last read; -1 while it could not be */
	bool disabled; /* the linker turned memory profiling off */
	bool quiet; /* --all: a rate of 0 is said once per file */
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

/*
 * The rate read again; a change said, a rate of 0 said once (never a
 * silent zero): under --all once per file, whichever process runs it.
 */
static void note_rate(struct part_ctx *c, struct alloc *a)
{
	int64_t rate = read_rate(c->pid, a->rate_at);

	if (rate < 0 || rate == a->rate)
		return;
	if (rate == 0) {
		if (!a->quiet || c->env->cfg->verbose || !go_binary__said(c->gb, SAID_ALLOC_OFF))
			fprintf(stderr, "pid %d (%s): --alloc: no allocations are sampled: "
					"runtime.MemProfileRate is 0: %s\n",
				(int)c->pid, c->comm, why_none(a));
	} else if (a->rate >= 0 && c->env->cfg->verbose) {
		fprintf(stderr, "ctxprof-go: pid %d (%s): runtime.MemProfileRate is %lld now\n",
			(int)c->pid, c->comm, (long long)rate);
	}
	a->rate = rate;
	processes__set_memprofile_rate(c->env->procs, c->pid, rate);
}

static void alloc_free(struct alloc *a)
{
	if (!a)
		return;
	budget_probe__free(a->probe);
	free(a);
}

/*
 * runtime.mProf_Malloc, probed through /proc/PID/exe for this process
 * only, within --alloc-share of its CPU. A binary whose rate cannot be
 * found goes without: its samples could not be unbiased, and a rate is
 * never guessed.
 */
static int alloc_attach(struct part_ctx *c, bool quiet, void **state)
{
	const struct target_env *env = c->env;
	struct budget_policy policy;
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
	a->quiet = quiet;
	policy = (struct budget_policy){
		.share = env->cfg->alloc_share,
		/* a process allocating 1 GB/s takes 2,000 at the default rate, whatever its CPU */
		.min_per_sec = ALLOC_MIN_PER_SEC,
		.max_per_sec = UINT_MAX,
		.trap_ns = budget_account__trap_ns(&env->budget_accounts[BUDGET_ALLOC],
						   env->bpf->alloc.alloc_sample, ap.size_arg,
						   env->cfg->verbose),
		.name = "allocation probe",
		.hits = "sampled allocations",
		.loss = "its allocations from now on are not recorded",
	};
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)c->pid);
	err = budget_probe__attach(env->bpf->alloc.alloc_sample, &env->bpf->alloc.budget, c->pid,
				   exe, ap.offset,
				   ap.size_arg | (ap.at_check ? ALLOC_COOKIE_AT_CHECK : 0), &policy,
				   &a->probe);
	if (err) {
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

	if (!a)
		return;
	budget_probe__tick(a->probe);
	if ((now = now_ns(CLOCK_MONOTONIC)) < a->next_read_ns)
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

/* What a rested probe missed, said; with -v, what its hits cost its process. */
static void alloc_say(const struct part_ctx *c, const void *state, bool verbose)
{
	const struct alloc *a = state;
	struct budget_probe_stats st;

	if (!a)
		return;
	budget_probe__stats(a->probe, &st);
	if (st.paused_ns)
		fprintf(stderr,
			"ctxprof-go: pid %d (%s): its allocation probe saw %llu sampled allocations "
			"and rested %.1f of %.1f s%s, past its share, %g%% of the process's CPU (%llu "
			"a second at %.1f us a hit); about %.0f sampled meanwhile are not recorded\n",
			(int)c->pid, c->comm, (unsigned long long)st.watched, st.paused_ns / 1e9,
			(st.paused_ns + st.on_ns) / 1e9,
			st.failed ? " (for good: it could not be attached again)" : "",
			c->env->cfg->alloc_share * 100, (unsigned long long)st.allowed,
			st.price_ns / 1e3, st.missed);
	if (verbose)
		budget_probe__say_cost(a->probe, c->pid, c->comm);
}

/* What it saw and missed stays counted after it. */
static void alloc_detach(struct part_ctx *c, void *state)
{
	struct alloc *a = state;

	if (a)
		budget_account__add(&c->env->budget_accounts[BUDGET_ALLOC], a->probe);
	alloc_free(a);
}

const struct part_ops alloc_part = {
	.name = "allocation probe",
	.attach = alloc_attach,
	.retire = alloc_retire,
	.note = alloc_note,
	.tick = alloc_tick,
	.say = alloc_say,
	.detach = alloc_detach,
};

void alloc_part__spent(struct part_ctx *c)
{
	struct alloc *a = c->state[PART_ALLOC];

	if (a)
		budget_probe__spent(a->probe);
}

bool alloc_part__stats(const struct part_ctx *c, struct budget_probe_stats *st)
{
	const struct alloc *a = c->state[PART_ALLOC];

	if (a)
		budget_probe__stats(a->probe, st);
	return a;
}
