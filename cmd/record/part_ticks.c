// SPDX-License-Identifier: GPL-2.0
/* part_ticks.c: --pid: the sampler's cpu-clock event on each of a target's threads. */
#include <errno.h>

#include "part_ticks.h"
#include "sampler.h"
#include "target.h"
#include "ticks.h"

/* Without its events a -p target is never sampled: a failure drops it. */
static int ticks_attach(struct part_ctx *c, bool quiet, void **state)
{
	struct ticks *tk;
	int err;

	if (!c->env->per_task)
		return 0;
	tk = ticks__new(c->env->bpf->ticks.on_sample, c->env->period_ns);
	if (!tk)
		return -ENOMEM;
	err = ticks__follow(tk, c->pid, c->comm);
	if (err) {
		ticks__free(tk);
		return err;
	}
	*state = tk;
	return 0;
}

/* The events follow its threads through an exec. */
static int ticks_reexec(struct part_ctx *c, void **state)
{
	return 0;
}

static void ticks_detach(struct part_ctx *c, void *state)
{
	ticks__free(state);
}

const struct part_ops ticks_part = {
	.name = "per-thread events",
	.attach = ticks_attach,
	.reexec = ticks_reexec,
	.detach = ticks_detach,
};

void ticks_part__stop(struct part_ctx *c)
{
	ticks__stop(c->state[PART_TICKS]);
}

bool ticks_part__stalled(struct part_ctx *c, uint64_t cpu_seen_ns, uint64_t due_ns,
			 uint64_t *cpu_ns)
{
	return ticks__stalled(c->state[PART_TICKS], cpu_seen_ns, due_ns, cpu_ns);
}
