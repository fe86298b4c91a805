// SPDX-License-Identifier: GPL-2.0
/* profiles.c: the encoders a recording feeds besides JSON lines: --pprof, -f, --html, --otlp and the exit's summary. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/output/folded.h"
#include "cmd/output/otlp.h"
#include "cmd/output/otlp_export.h"
#include "cmd/output/pprof.h"
#include "cmd/output/recset.h"
#include "cmd/output/report.h"
#include "cmd/output/summary.h"
#include "cmd/util/clock.h"
#include "cmd/util/otel_env.h"
#include "aggregate.h"
#include "profiles.h"
#include "session_config.h"

/* the same encoders as `ctxprof-go convert`, fed the same records */
struct profiles {
	const struct session_config *cfg;
	struct pprof *pprof; /* --pprof */
	struct recset *report; /* --html: every record of the run */
	struct folded *folded; /* -f */
	struct summary *summary; /* the costliest traces, said at exit; NULL with --quiet */
	struct otlp *otlp; /* --otlp: the request of this interval */
	struct otlp_export *export; /* --otlp: the thread that sends them */
	struct otlp_export_stats otlp_stats; /* its totals, once it has stopped */
};

static int agent_attribute(void *ctx, const char *k, const char *v)
{
	return otlp__set_attribute(ctx, k, v);
}

/* The labels that carry IDs: every convention's, and --trace-key's. -ENOMEM. */
static int otlp_id_keys(struct profiles *p)
{
	const char *keys[AGG_MAX_ID_KEYS];
	size_t n = aggregate__id_keys(p->cfg->trace_keys, p->cfg->ntrace_keys, keys);

	return otlp__set_id_keys(p->otlp, keys, n);
}

/*
 * --otlp: the encoder, with what is said of every process (the agent's
 * OTEL_RESOURCE_ATTRIBUTES, and host.name unless they name it), which
 * labels it sends, and the thread that sends its requests. -errno with a
 * message.
 */
static int start_otlp(struct profiles *p, uint64_t period_ns)
{
	const struct session_config *c = p->cfg;
	const char *attrs = getenv("OTEL_RESOURCE_ATTRIBUTES");
	char err[256], host[256] = "";
	int ret;

	p->otlp = otlp__new(CTXPROF_VERSION, period_ns, c->wall ? NSEC_PER_SEC / c->wall_hz : 0);
	if (!p->otlp || otlp_id_keys(p) ||
	    (c->otlp_labels_set && otlp__set_labels(p->otlp, c->otlp_labels, c->notlp_labels))) {
		fprintf(stderr, "out of memory\n");
		return -ENOMEM;
	}
	if (attrs && (ret = otel_kv_list(attrs, agent_attribute, p->otlp, err, sizeof(err)))) {
		fprintf(stderr, "OTEL_RESOURCE_ATTRIBUTES: %s\n", ret == -ENOMEM ? strerror(-ret) : err);
		return ret;
	}
	if ((!attrs || !strstr(attrs, "host.name")) && !gethostname(host, sizeof(host) - 1) &&
	    (ret = otlp__set_attribute(p->otlp, "host.name", host))) {
		fprintf(stderr, "out of memory\n");
		return ret;
	}
	p->export = otlp_export__start(c->otlp, CTXPROF_VERSION, err, sizeof(err));
	if (!p->export) {
		fprintf(stderr, "failed to start sending OTLP profiles: %s\n", err);
		return -EINVAL;
	}
	return 0;
}

struct profiles *profiles__new(const struct session_config *cfg, uint64_t period_ns)
{
	struct profiles *p = calloc(1, sizeof(*p));
	int err = -ENOMEM;

	if (!p) {
		fprintf(stderr, "out of memory\n");
		errno = ENOMEM;
		return NULL;
	}
	p->cfg = cfg;
	if ((cfg->pprof && !(p->pprof = pprof__new())) ||
	    (cfg->folded && !(p->folded = folded__new())) ||
	    (cfg->html && !(p->report = recset__new())) ||
	    (!cfg->quiet && !(p->summary = summary__new()))) {
		fprintf(stderr, "out of memory\n");
		goto fail;
	}
	if (cfg->otlp && (err = start_otlp(p, period_ns)))
		goto fail;
	return p;
fail:
	profiles__free(p);
	errno = -err;
	return NULL;
}

void profiles__free(struct profiles *p)
{
	if (!p)
		return;
	pprof__free(p->pprof);
	recset__free(p->report);
	summary__free(p->summary);
	folded__free(p->folded);
	otlp_export__stop(p->export, NULL);
	otlp__free(p->otlp);
	free(p);
}

int profiles__add(struct profiles *p, const struct rec *r)
{
	int ret = 0;

	if (p->pprof)
		ret = pprof__add(p->pprof, r);
	if (!ret && p->report)
		ret = recset__add(p->report, r);
	if (!ret && p->folded)
		ret = folded__add(p->folded, r);
	if (!ret && p->summary)
		ret = summary__add(p->summary, r);
	if (!ret && p->otlp)
		ret = otlp__add(p->otlp, r);
	return ret;
}

void profiles__set_processes(struct profiles *p, otlp_process_fn fn, void *ctx)
{
	if (p->otlp)
		otlp__set_processes(p->otlp, fn, ctx);
}

int profiles__send(struct profiles *p)
{
	struct otlp_batch batch;
	uint8_t *buf;
	size_t len;

	if (!p->otlp)
		return 0;
	if (otlp__take(p->otlp, &buf, &len, &batch))
		return -ENOMEM;
	if (buf)
		otlp_export__push(p->export, buf, len, batch.samples);
	return 0;
}

void profiles__stop_export(struct profiles *p)
{
	/* what is queued goes out within the flush time; the rest is counted */
	if (p->export) {
		otlp_export__stop(p->export, &p->otlp_stats);
		p->export = NULL;
	}
}

void profiles__otlp_totals(const struct profiles *p, struct otlp_export_stats *st)
{
	*st = p->otlp_stats;
	if (p->export)
		otlp_export__stats(p->export, st);
}

struct otlp *profiles__otlp(const struct profiles *p)
{
	return p->otlp;
}

void profiles__summary(const struct profiles *p, FILE *f, int ntraces, int width)
{
	summary__print(p->summary, f, ntraces, width);
}

int profiles__write(struct profiles *p)
{
	const struct session_config *c = p->cfg;
	int ret, err = 0;

	if (c->folded && (ret = folded__write(p->folded, stdout, c->folded_trace_root,
					      c->folded_wall))) {
		fprintf(stderr, "ctxprof-go: failed to write folded stacks to stdout: %s\n",
			strerror(-ret));
		err = ret;
	}
	if (c->pprof) {
		ret = pprof__write(p->pprof, c->pprof);
		if (ret) {
			fprintf(stderr, "ctxprof-go: failed to write the pprof profile %s: %s\n",
				c->pprof, strerror(-ret));
			err = err ?: ret;
		} else {
			fprintf(stderr, "ctxprof-go: wrote the pprof profile %s\n", c->pprof);
		}
	}
	if (c->html) {
		ret = report__write(p->report, c->html, "live recording");
		if (ret) {
			fprintf(stderr, "ctxprof-go: failed to write the report %s: %s\n", c->html,
				strerror(-ret));
			err = err ?: ret;
		} else {
			fprintf(stderr, "ctxprof-go: wrote the report %s\n", c->html);
		}
	}
	return err;
}
