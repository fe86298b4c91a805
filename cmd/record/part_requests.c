// SPDX-License-Identifier: GPL-2.0
/* part_requests.c: the traceparent and otel-sdk sources in a target: a probe at each request's and span's start. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/map_copy.h"
#include "offsets/go_binary.h"
#include "part.h"
#include "sampler.h"
#include "session_config.h"
#include "target.h"
#include "uprobe_link.h"

/* The probes attached in one process, at its handlers' and spans' entries. */
struct requests {
	struct uprobe_link *links[MAX_TRACE_PROBES];
	size_t n;
};

/*
 * --trace-sources named traceparent or otel-sdk, and the binary cannot
 * have it: said when the target is described (under --all once per file),
 * not only as an untraced share at exit.
 */
static void say_unavailable(struct part_ctx *c, bool quiet)
{
	static const enum trace_source probed[] = { TRACE_SOURCE_TRACEPARENT, TRACE_SOURCE_OTEL_SDK };
	const struct session_config *cfg = c->env->cfg;
	const char *why;
	size_t i;

	if (!cfg->sources_asked || (quiet && !cfg->verbose && go_binary__said(c->gb, SAID_ASKED)))
		return;
	for (i = 0; i < sizeof(probed) / sizeof(probed[0]); i++) {
		if (!(cfg->trace_sources & (1U << probed[i])) ||
		    !(why = go_binary__trace_source_problem(c->gb, probed[i])))
			continue;
		fprintf(stderr, "pid %d (%s): warning: --trace-sources %s: not in this binary: %s\n",
			(int)c->pid, c->comm, trace_source__name(probed[i]), why);
	}
}

static void destroy(struct requests *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		uprobe_link__destroy(r->links[i]);
	free(r);
}

/*
 * A uprobe at each function entry .gopclntab names, filtered to this
 * process, so that other processes running the same file never take it.
 * Through /proc/PID/exe, which names the very file in any mount namespace
 * and on any filesystem. One that fails leaves the process without any.
 */
static void *attach_probes(struct part_ctx *c, bool quiet)
{
	const struct target_env *env = c->env;
	const struct go_trace_probe *probes;
	struct requests *r;
	uint64_t cookie;
	size_t i, n;
	char exe[64];
	int err;

	say_unavailable(c, quiet);
	if (!(r = calloc(1, sizeof(*r))))
		return NULL;
	n = go_binary__trace_probes(c->gb, &probes);
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)c->pid);
	for (i = 0; i < n; i++) {
		/* the goroutine-start probe is a part of its own */
		if (probes[i].source == TRACE_SOURCE_COUNT ||
		    !(env->cfg->trace_sources & (1U << probes[i].source)) ||
		    (probes[i].cookie == HTTP_PROBE_END && !env->request_ends))
			continue;
		cookie = probes[i].cookie;
		/* a request's start finds its goroutine with no look at the target */
		if (probes[i].cookie == HTTP_PROBE_REQ_RDI || probes[i].cookie == HTTP_PROBE_REQ_RCX)
			cookie |= (__u64)c->layout->g_goid << PROBE_GOID_SHIFT;
		/*
		 * before Go 1.21 the goroutine-start probe's share, where it
		 * has one, pays for these hits too: with them the source keeps
		 * to it
		 */
		if (!c->layout->g_parent_goid && session_config__starts_probed(env->cfg))
			cookie |= PROBE_PAID;
		r->links[r->n] = uprobe_link__attach(env->bpf->requests.http_request, c->pid, exe,
						     probes[i].offset, cookie);
		if (!r->links[r->n]) {
			err = -errno;
			env->attach_failures[probes[i].source]++;
			/* --all: once per file, whichever process runs it */
			if (!quiet || env->cfg->verbose || !go_binary__said(c->gb, SAID_ATTACH))
				fprintf(stderr, "pid %d (%s): warning: failed to attach to %s: %s%s; "
						"no trace IDs from %s\n",
					(int)c->pid, c->comm, probes[i].func, strerror(-err),
					uprobe_link__hint(err), trace_source__name(probes[i].source));
			destroy(r);
			return NULL;
		}
		r->n++;
	}
	if (!r->n) {
		free(r);
		return NULL;
	}
	return r;
}

static void requests_note(const struct part_ctx *c, const void *state)
{
	const struct requests *r = state;

	if (r)
		fprintf(stderr, "pid %d (%s): %zu probes for request and span contexts%s (requests "
				"of: %s; SDK spans: %s)\n",
			(int)c->pid, c->comm, r->n,
			uprobe_link__tracefs(r->links[0]) ? ", as tracefs uprobe events" : "",
			*go_binary__trace_servers(c->gb) ? go_binary__trace_servers(c->gb) : "none",
			go_binary__trace_source_problem(c->gb, TRACE_SOURCE_OTEL_SDK) ? "no" : "yes");
	else if (go_binary__serves_requests(c->gb))
		fprintf(stderr, "pid %d (%s): no traceparent source: %s\n", (int)c->pid, c->comm,
			go_binary__trace_source_problem(c->gb, TRACE_SOURCE_TRACEPARENT) ?:
			c->env->cfg->trace_sources & (1U << TRACE_SOURCE_TRACEPARENT) ?
			"its probes failed to attach" : "off");
}

static bool requests_why_untraced(const struct part_ctx *c, const void *state,
				  const struct bare_requests *bare, char *buf, size_t len)
{
	const char *why;

	if (!state) {
		if (!go_binary__serves_requests(c->gb)) {
			if (go_binary__sets_labels(c->gb))
				return false;
			snprintf(buf, len, "it sets no goroutine labels, serves no net/http or grpc-go "
					   "requests and records no SDK spans");
			return true;
		}
		why = go_binary__trace_source_problem(c->gb, TRACE_SOURCE_TRACEPARENT);
		snprintf(buf, len, "its requests give none: %s",
			 why ?: "--trace-sources leaves traceparent out, or its probes failed");
		return true;
	}
	if (bare->bare && bare->cut)
		snprintf(buf, len, "%llu requests came without a traceparent header, and %llu with "
				   "more than %d header fields and none among those read",
			 (unsigned long long)bare->bare, (unsigned long long)bare->cut,
			 HDR_FIELDS_READ);
	else if (bare->bare)
		snprintf(buf, len, "%llu requests came without a traceparent header",
			 (unsigned long long)bare->bare);
	else if (bare->cut)
		snprintf(buf, len, "%llu requests came with more than %d header fields and no "
				   "traceparent among those read",
			 (unsigned long long)bare->cut, HDR_FIELDS_READ);
	return bare->bare || bare->cut;
}

/* Detached; the request and span contexts they left forgotten: the pid may come back, with goids from 1 again. */
static void requests_detach(struct part_ctx *c, void *state)
{
	const struct requests_bpf *bpf = &c->env->bpf->requests;

	if (!state)
		return;
	destroy(state);
	map_forget_tgid(bpf->trace_ctxs_fd, sizeof(struct goid_key), c->pid);
	map_forget_tgid(bpf->spawn_ctxs_fd, sizeof(struct goid_key), c->pid);
	map_forget_tgid(bpf->grpc_streams_fd, sizeof(struct grpc_stream_key), c->pid);
}

/* Its failures are said and counted: the process goes without it. */
static int requests_attach(struct part_ctx *c, bool quiet, void **state)
{
	*state = attach_probes(c, quiet);
	return 0;
}

const struct part_ops requests_part = {
	.name = "requests",
	.attach = requests_attach,
	.note = requests_note,
	.why_untraced = requests_why_untraced,
	.detach = requests_detach,
};
