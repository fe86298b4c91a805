// SPDX-License-Identifier: GPL-2.0
/* part_labels.c: who sets a target's label sets, so that a request counts only while it lives. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/map_copy.h"
#include "cmd/util/procfs.h"
#include "cmd/util/vec.h"
#include "offsets/go_binary.h"
#include "owners.h"
#include "part_labels.h"
#include "sampler.h"
#include "session_config.h"
#include "target.h"
#include "uprobe_link.h"

/* The label sets C's goroutines hold, and who holds each in pprof.Do (owners__scan). */
static int scan_labels(const struct part_ctx *c, struct vec *found)
{
	uint64_t bias = 0;

	if (go_binary__pie(c->gb) && !procfs__load_bias(c->pid, go_binary__entry(c->gb), &bias))
		return -ENOENT;
	return owners__scan(c->pid, c->gb, bias, &c->env->keys, found);
}

/*
 * A probe where labels are set, then the sets the goroutines hold
 * already, and who holds each in pprof.Do (owners__scan), so that the
 * goroutines that only inherited a set are told apart once its setter has
 * left it. Without the scan, no sample of the process is judged: its
 * state is the probe, NULL when it goes without.
 */
static void *follow_labels(struct part_ctx *c, bool quiet)
{
	const struct target_env *env = c->env;
	struct vec found = { .size = sizeof(struct owner_found) };
	long off = go_binary__label_probe(c->gb), at_do = go_binary__do_probe(c->gb);
	/* --wall's request spans need each set's end, which only label_set sees */
	bool one_hit = at_do >= 0 && !env->cfg->wall;
	struct uprobe_link *link;
	char exe[64];
	int err;

	if (off < 0 || !env->cfg->sampling || !(env->cfg->trace_sources & (1U << TRACE_SOURCE_LABEL)))
		return NULL;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)c->pid);
	link = uprobe_link__attach(one_hit ? env->bpf->labels.label_do : env->bpf->labels.label_set, c->pid, exe,
				   one_hit ? at_do : off, 0);
	if (!link) {
		err = -errno;
		env->attach_failures[TRACE_SOURCE_LABEL]++;
		if (!quiet || env->cfg->verbose || !go_binary__said(c->gb, SAID_ATTACH_LABELS))
			fprintf(stderr, "pid %d (%s): warning: failed to attach to %s: %s%s; "
					"goroutines that inherit a request's labels count as it "
					"even once it ends\n",
				(int)c->pid, c->comm,
				one_hit ? "runtime/pprof.Do" : "runtime/pprof.runtime_setProfLabel",
				strerror(-err), uprobe_link__hint(err));
		return NULL;
	}
	err = scan_labels(c, &found);
	if (!err)
		err = owners__add(env->bpf->labels.owners_fd, c->pid, found.items, found.n);
	free(found.items);
	if (err) {
		if (env->cfg->verbose)
			fprintf(stderr, "pid %d (%s): the label sets its goroutines hold could not be "
					"read (%s): goroutines that inherit a request's labels count "
					"as it even once it ends\n",
				(int)c->pid, c->comm, strerror(-err));
		uprobe_link__destroy(link);
		return NULL;
	}
	if (env->cfg->verbose)
		fprintf(stderr, "pid %d (%s): label sets followed (%s); %zu with a trace ID "
				"held in pprof.Do or on a CPU now\n",
			(int)c->pid, c->comm,
			one_hit ? "pprof.Do's set, one hit a request" :
				  "every set, at runtime_setProfLabel",
			found.n);
	return link;
}

/* Its entries of label_owners forgotten: the pid may come back. */
static void labels_detach(struct part_ctx *c, void *state)
{
	if (!state)
		return;
	uprobe_link__destroy(state);
	map_forget_tgid(c->env->bpf->labels.owners_fd, sizeof(struct labels_key), c->pid);
}

/* Its failures are said and counted: the process goes without it. */
static int labels_attach(struct part_ctx *c, bool quiet, void **state)
{
	*state = follow_labels(c, quiet);
	return 0;
}

const struct part_ops labels_part = {
	.name = "label setters",
	.attach = labels_attach,
	.detach = labels_detach,
};

size_t labels_part__sweep(struct part_ctx *c, struct owners *copy)
{
	struct vec found = { .size = sizeof(struct owner_found) };
	int fd = c->env->bpf->labels.owners_fd;

	if (!c->state[PART_LABELS])
		return 0;
	/* sets whose setter ran when looked for: looked for again */
	if (owners__unknown(copy, c->pid) && !scan_labels(c, &found))
		owners__settle(copy, fd, c->pid, found.items, found.n);
	free(found.items);
	return owners__sweep(copy, fd, c->pid, c->layout);
}
