// SPDX-License-Identifier: GPL-2.0
/* part_service.c: the service a target's records name, from its process context, environment or executable. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/otel_env.h"
#include "part_service.h"
#include "proc_ctx.h"
#include "processes.h"
#include "session_config.h"
#include "target.h"

struct service {
	/* OTEL_SERVICE_NAME in its environment, or service.name in OTEL_RESOURCE_ATTRIBUTES; NULL until read, "" when none */
	char *env_name;
	struct proc_ctx *ctx; /* what its OpenTelemetry SDK publishes (OTEP 4719) */
	char ctx_why[160]; /* why its context was skipped last; "" when it was not */
};

static int service_open(struct part_ctx *c, void **state)
{
	struct service *s = calloc(1, sizeof(*s));

	if (!s || !(s->ctx = proc_ctx__new(c->pid))) {
		free(s);
		return -ENOMEM;
	}
	*state = s;
	return 0;
}

/* Its environment is read once, its executable's name kept: the same service through an exec. */
static int service_reexec(struct part_ctx *c, void **state)
{
	return 0;
}

/*
 * Its service, as its records and OTLP resource name it: its process
 * context's service.name, else its environment's, else its executable's
 * name. Kept with the process, so that its last records say it too.
 */
static int name_service(struct part_ctx *c, struct service *s)
{
	const char *name = proc_ctx__service_name(s->ctx), *slash;

	if (!s->env_name)
		s->env_name = otel_env_service(c->pid);
	if (!name && s->env_name && *s->env_name)
		name = s->env_name;
	if (!name && c->exe[0])
		name = (slash = strrchr(c->exe, '/')) ? slash + 1 : c->exe;
	return processes__set_service(c->env->procs, c->pid, name && *name ? name : c->comm);
}

/* Its process context looked at again (a context published or changed names its records at once). */
static int service_describe(struct part_ctx *c, void *state)
{
	struct service *s = state;
	char why[sizeof(s->ctx_why)] = "";
	int verbose = c->env->cfg->verbose, ret;
	const char *name;
	size_t n;

	ret = proc_ctx__refresh(s->ctx, why, sizeof(why));
	/* -v says what came of it, once for each new cause */
	if (ret < 0 && verbose && strcmp(why, s->ctx_why))
		fprintf(stderr, "ctxprof-go: pid %d (%s): process context skipped: %s\n", (int)c->pid,
			c->comm, why);
	snprintf(s->ctx_why, sizeof(s->ctx_why), "%s", ret < 0 ? why : "");
	if (ret > 0 && verbose) {
		name = proc_ctx__service_name(s->ctx);
		proc_ctx__attrs(s->ctx, &n);
		fprintf(stderr, "ctxprof-go: pid %d (%s): process context: %zu resource attributes%s%s\n",
			(int)c->pid, c->comm, n, name ? ", service.name " : "", name ?: "");
	}
	return name_service(c, s);
}

static void service_detach(struct part_ctx *c, void *state)
{
	struct service *s = state;

	free(s->env_name);
	proc_ctx__free(s->ctx);
	free(s);
}

const struct part_ops service_part = {
	.name = "service name",
	.open = service_open,
	.reexec = service_reexec,
	.describe = service_describe,
	.detach = service_detach,
};

const struct otlp_attr *service_part__attrs(const struct part_ctx *c, size_t *n)
{
	const struct service *s = c->state[PART_SERVICE];

	*n = 0;
	return s ? proc_ctx__attrs(s->ctx, n) : NULL;
}
