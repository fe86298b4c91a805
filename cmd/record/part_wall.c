// SPDX-License-Identifier: GPL-2.0
/* part_wall.c: --wall: the reader of a target's goroutines, from user space. */
#include <errno.h>
#include <stdio.h>

#include "cmd/util/procfs.h"
#include "offsets/go_binary.h"
#include "aggregate.h"
#include "part.h"
#include "session_config.h"
#include "target.h"
#include "wall.h"

/*
 * A reader of the process's goroutines. A -p target whose binary cannot
 * give them is dropped, saying why; under --all such a process gets CPU
 * samples only (said with -v).
 */
static int wall_attach(struct part_ctx *c, bool quiet, void **state)
{
	const char *why = go_binary__wall_problem(c->gb);
	struct wall_reader *r;
	uint64_t bias = 0;

	if (!c->env->cfg->wall)
		return 0;
	if (!why && go_binary__pie(c->gb) &&
	    !procfs__load_bias(c->pid, go_binary__entry(c->gb), &bias))
		why = "cannot read its load address from /proc/PID/auxv";
	if (!why) {
		if (!(r = wall_reader__new(c->pid, c->gb, bias)))
			return -ENOMEM;
		*state = r;
		return aggregate__name_reasons(c->env->agg, c->pid, go_binary__wall(c->gb));
	}
	if (quiet) {
		if (c->env->cfg->verbose)
			fprintf(stderr, "ctxprof-go: pid %d (%s): no --wall, CPU samples only: %s\n",
				(int)c->pid, c->comm, why);
		return 0;
	}
	fprintf(stderr, "pid %d (%s): --wall cannot read its goroutines: %s\n", (int)c->pid,
		c->comm, why);
	return -EOPNOTSUPP;
}

/* What its snapshots counted, kept counted as it goes. */
static int wall_retire(struct part_ctx *c, void *state)
{
	int err = 0;

	if (state)
		err = wall_reader__settle(state, c->env->agg);
	wall_reader__release(state, c->env->agg);
	return err;
}

/* Its goroutines read afresh, at the image's new address; what the old one's counted stays counted. */
static int wall_reexec(struct part_ctx *c, void **state)
{
	int err;

	if (!*state)
		return 0;
	err = wall_retire(c, *state);
	wall_reader__free(*state);
	*state = NULL;
	if (wall_attach(c, true, state))
		return -ENOMEM;
	if (c->env->cfg->verbose)
		fprintf(stderr, "ctxprof-go: pid %d (%s) ran its program again: its goroutines "
				"are read at its new address\n",
			(int)c->pid, c->comm);
	return err;
}

static void wall_detach(struct part_ctx *c, void *state)
{
	wall_reader__free(state);
}

const struct part_ops wall_part = {
	.name = "goroutine reader",
	.attach = wall_attach,
	.reexec = wall_reexec,
	.retire = wall_retire,
	.detach = wall_detach,
};
