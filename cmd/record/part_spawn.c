// SPDX-License-Identifier: GPL-2.0
/* part_spawn.c: Go < 1.21: the goroutine-start probe in a target, within its share of the target's CPU. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "offsets/go_binary.h"
#include "part_spawn.h"
#include "sampler.h"
#include "session_config.h"
#include "spawn_table.h"
#include "budget_probe.h"
#include "target.h"
#include "uprobe_link.h"

/* The flag that left it out, as -v says so. */
static const char *spawn_off_flag(const struct session_config *cfg)
{
	return cfg->start_share > 0 ? "--max-goroutine-starts 0" : "--goroutine-start-share 0";
}

/* The probe's place in the binary, among the trace probes; NULL when it has none. */
static const struct go_trace_probe *spawn_probe_of(struct go_binary *gb)
{
	const struct go_trace_probe *probes;
	size_t i, n = go_binary__trace_probes(gb, &probes);

	for (i = 0; i < n; i++)
		if (probes[i].source == TRACE_SOURCE_COUNT)
			return &probes[i];
	return NULL;
}

/* It hands on what the request probes found: only where they are attached. */
static void *attach_probe(struct part_ctx *c, bool quiet)
{
	const struct target_env *env = c->env;
	const struct go_trace_probe *at = spawn_probe_of(c->gb);
	struct budget_probe *sp = NULL;
	struct budget_policy policy;
	char exe[64];
	int err;

	if (!at || !c->state[PART_REQUESTS] || !session_config__starts_probed(env->cfg))
		return NULL;
	policy = (struct budget_policy){
		.share = env->cfg->start_share,
		/* a few requests' worth */
		.min_per_sec = 100,
		.max_per_sec = env->cfg->max_starts > UINT_MAX ? UINT_MAX : env->cfg->max_starts,
		.trap_ns = budget_account__trap_ns(&env->budget_accounts[BUDGET_SPAWN],
						   env->bpf->spawn.go_start, at->cookie, env->cfg->verbose),
		.name = "goroutine-start probe",
		.hits = "starts",
		.loss = "the goroutines it starts from now on carry no trace ID",
		.paid = "request probe hits",
	};
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)c->pid);
	err = budget_probe__attach(env->bpf->spawn.go_start, &env->bpf->spawn.budget, c->pid, exe,
				  at->offset, at->cookie, &policy, &sp);
	if (err)
		env->attach_failures[ATTACH_SPAWN]++;
	if (err && (!quiet || env->cfg->verbose || !go_binary__said(c->gb, SAID_ATTACH_SPAWN)))
		fprintf(stderr, "pid %d (%s): warning: failed to attach to %s: %s%s; "
				"goroutines a request starts carry no trace ID\n",
			(int)c->pid, c->comm, at->func, strerror(-err), uprobe_link__hint(err));
	return sp;
}

/* How the goroutines a request starts get its context, where requests are probed. */
static void spawn_note(const struct part_ctx *c, const void *state)
{
	const char *how = "none (its probe failed to attach)";
	char buf[64];

	if (!c->state[PART_REQUESTS])
		return;
	if (state)
		how = "at their start";
	else if (!spawn_probe_of(c->gb))
		how = "by g.parentGoid, one level";
	else if (!session_config__starts_probed(c->env->cfg))
		how = (snprintf(buf, sizeof(buf), "none (%s)", spawn_off_flag(c->env->cfg)), buf);
	fprintf(stderr, "pid %d (%s): goroutines they start: %s\n", (int)c->pid, c->comm, how);
}

static void spawn_tick(struct part_ctx *c, void *state)
{
	if (state)
		budget_probe__tick(state);
}

/* Where requests are probed and none came bare: the goroutines they start, when no probe follows them. */
static bool spawn_why_untraced(const struct part_ctx *c, const void *state,
			       const struct bare_requests *bare, char *buf, size_t len)
{
	/* a rested probe is said apart (spawn_say) */
	if (state || !c->state[PART_REQUESTS])
		return false;
	if (!c->layout->g_parent_goid && spawn_probe_of(c->gb) && !session_config__starts_probed(c->env->cfg))
		snprintf(buf, len, "the goroutines its handlers start carry none: no g.parentGoid, and "
				   "%s leaves out the goroutine-start probe", spawn_off_flag(c->env->cfg));
	else if (!c->layout->g_parent_goid)
		snprintf(buf, len, "the goroutines its handlers start carry none: no g.parentGoid, and "
				   "no goroutine-start probe (check says why)");
	else
		snprintf(buf, len, "on Go 1.21 and later the goroutines its handlers start carry "
				   "their request (g.parentGoid), not the goroutines those start");
	return true;
}

/* A probe that rested, its budget spent: for how long, and about how many starts it missed. */
static bool rested(const struct part_ctx *c, const struct budget_probe_stats *st, char *buf,
		   size_t len)
{
	const struct session_config *cfg = c->env->cfg;
	char past[128];

	if (!st->paused_ns)
		return false;
	if (st->capped)
		snprintf(past, sizeof(past), "--max-goroutine-starts %lu a second", cfg->max_starts);
	else
		snprintf(past, sizeof(past),
			 "its share, %g%% of the process's CPU (%llu starts a second at %.1f us a hit)",
			 cfg->start_share * 100, (unsigned long long)st->allowed, st->price_ns / 1e3);
	snprintf(buf, len, "its goroutine-start probe saw %llu goroutine starts and rested %.1f of "
			   "%.1f s%s, past %s; the goroutines started meanwhile, about %.0f, carry no "
			   "trace ID",
		 (unsigned long long)st->watched, st->paused_ns / 1e9, (st->paused_ns + st->on_ns) / 1e9,
		 st->failed ? " (for good: it could not be attached again)" : "", past, st->missed);
	return true;
}

/* The starts a rested probe did not see; with -v, what every one cost its process. */
static void spawn_say(const struct part_ctx *c, const void *state, bool verbose)
{
	struct budget_probe_stats st;
	char why[384];

	if (!state)
		return;
	budget_probe__stats(state, &st);
	if (rested(c, &st, why, sizeof(why)))
		fprintf(stderr, "ctxprof-go: pid %d (%s): %s\n", (int)c->pid, c->comm, why);
	if (verbose)
		budget_probe__say_cost(state, c->pid, c->comm);
}

/* What it saw and missed stays counted after it. */
static void spawn_detach(struct part_ctx *c, void *state)
{
	if (!state)
		return;
	budget_account__add(&c->env->budget_accounts[BUDGET_SPAWN], state);
	budget_probe__free(state);
	spawn_table__forget(c->env->bpf->spawn.table, c->pid);
}

/* Its failures are said and counted: the process goes without it. */
static int spawn_attach(struct part_ctx *c, bool quiet, void **state)
{
	*state = attach_probe(c, quiet);
	return 0;
}

const struct part_ops spawn_part = {
	.name = "goroutine starts",
	.attach = spawn_attach,
	.note = spawn_note,
	.tick = spawn_tick,
	.why_untraced = spawn_why_untraced,
	.say = spawn_say,
	.detach = spawn_detach,
};

void spawn_part__spent(struct part_ctx *c)
{
	if (c->state[PART_SPAWN])
		budget_probe__spent(c->state[PART_SPAWN]);
}

bool spawn_part__stats(const struct part_ctx *c, struct budget_probe_stats *st)
{
	if (!c->state[PART_SPAWN])
		return false;
	budget_probe__stats(c->state[PART_SPAWN], st);
	return true;
}
