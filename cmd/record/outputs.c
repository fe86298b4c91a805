// SPDX-License-Identifier: GPL-2.0
/* outputs.c: the writers a recording feeds, as its configuration asks: JSON lines, --pprof, -f, --html, --otlp and the exit's summary. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cmd/output/folded.h"
#include "cmd/output/otlp.h"
#include "cmd/output/otlp_export.h"
#include "cmd/output/pprof.h"
#include "cmd/output/rec.h"
#include "cmd/output/report.h"
#include "cmd/output/summary.h"
#include "cmd/util/clock.h"
#include "cmd/util/otel_env.h"
#include "cmd/util/plural.h"
#include "cmd/util/strbuf.h"
#include "cmd/util/version.h"
#include "aggregate.h"
#include "outputs.h"
#include "session_config.h"

/* the same writers as `ctxprof-go convert`, fed the same records, and --otlp's */
struct outputs {
	struct writers *ws;
	FILE *stdout_stream; /* -f's */
	struct otlp_settings {
		const struct session_config *cfg;
		uint64_t period_ns;
	} otlp_settings;
};

/* --otlp: an interval's request encoded, and the thread that sends them. */
struct otlp_out {
	struct otlp *otlp; /* the request of this interval */
	struct otlp_export *export; /* the thread that sends them */
	struct otlp_export_stats stats; /* its totals, once it has stopped */
};

static int agent_attribute(void *ctx, const char *k, const char *v)
{
	return otlp__set_attribute(ctx, k, v);
}

/* The labels that carry IDs: every convention's, and --trace-key's. -ENOMEM. */
static int otlp_id_keys(struct otlp *o, const struct session_config *c)
{
	const char *keys[AGG_MAX_ID_KEYS];
	size_t n = aggregate__id_keys(c->trace_keys, c->ntrace_keys, keys);

	return otlp__set_id_keys(o, keys, n);
}

/*
 * The encoder, with what is said of every process (the agent's
 * OTEL_RESOURCE_ATTRIBUTES, and host.name unless they name it), which
 * labels it sends, and the thread that sends its requests. -errno with a
 * message.
 */
static int start_otlp(struct otlp_out *o, const struct session_config *c, uint64_t period_ns)
{
	const char *attrs = getenv("OTEL_RESOURCE_ATTRIBUTES");
	char err[256], host[256] = "";
	int ret;

	o->otlp = otlp__new(ctxprof_version, period_ns, c->wall ? NSEC_PER_SEC / c->wall_hz : 0);
	if (!o->otlp || otlp_id_keys(o->otlp, c) ||
	    (c->otlp_labels_set && otlp__set_labels(o->otlp, c->otlp_labels, c->notlp_labels)))
		return -ENOMEM;
	if (attrs && (ret = otel_kv_list(attrs, agent_attribute, o->otlp, err, sizeof(err)))) {
		if (ret == -ENOMEM)
			return ret;
		fprintf(stderr, "OTEL_RESOURCE_ATTRIBUTES: %s\n", err);
		return ret;
	}
	if ((!attrs || !strstr(attrs, "host.name")) && !gethostname(host, sizeof(host) - 1) &&
	    (ret = otlp__set_attribute(o->otlp, "host.name", host)))
		return ret;
	o->export = otlp_export__start(&c->otlp, ctxprof_version, err, sizeof(err));
	if (!o->export) {
		fprintf(stderr, "failed to start sending OTLP profiles: %s\n", err);
		return -EINVAL;
	}
	return 0;
}

static void otlp_out_free(void *w)
{
	struct otlp_out *o = w;

	if (!o)
		return;
	otlp_export__stop(o->export, NULL);
	otlp__free(o->otlp);
	free(o);
}

static void *otlp_out_new(const struct writer_dest *d)
{
	const struct otlp_settings *set = d->cfg;
	struct otlp_out *o = calloc(1, sizeof(*o));
	int err;

	if (!o)
		return NULL;
	err = start_otlp(o, set->cfg, set->period_ns);
	if (err) {
		otlp_out_free(o);
		errno = -err;
		return NULL;
	}
	return o;
}

static int otlp_out_add(void *w, const struct rec *r)
{
	return otlp__add(((struct otlp_out *)w)->otlp, r);
}

/* The records added since the last call, as one request to the export thread; -ENOMEM. */
static int otlp_out_flush(void *w, const struct writer_dest *d)
{
	struct otlp_out *o = w;
	struct otlp_batch batch;
	uint8_t *buf;
	size_t len;

	if (otlp__take(o->otlp, &buf, &len, &batch))
		return -ENOMEM;
	if (buf)
		otlp_export__push(o->export, buf, len, batch.samples);
	return 0;
}

/* --otlp: the export thread keeps what it could not send yet; outputs__stop_export ends it. */
static const struct writer_ops otlp_out_writer = {
	.what = "OTLP profiles",
	.new = otlp_out_new,
	.add = otlp_out_add,
	.flush = otlp_out_flush,
	.free = otlp_out_free,
};

/* Opens each writer CFG asks for; -errno, said. */
static int open_writers(struct outputs *o, const struct session_config *c, FILE **out)
{
	struct writer_dest d;
	int err;

	/* folded stacks go to stdout; JSON lines then only to -o FILE, if given */
	d = (struct writer_dest){ .stream = out };
	if ((!c->folded || c->output) && (err = writers__open(o->ws, &json_lines_writer, &d)))
		return err;
	d = (struct writer_dest){ .path = c->pprof };
	if (c->pprof && (err = writers__open(o->ws, &pprof_writer, &d)))
		return err;
	d = (struct writer_dest){ .stream = &o->stdout_stream,
				  .trace_root = c->folded_trace_root,
				  .wall_only = c->folded_wall,
				  .alloc_only = c->folded_alloc };
	if (c->folded && (err = writers__open(o->ws, &folded_writer, &d)))
		return err;
	d = (struct writer_dest){ .path = c->html, .source = "live recording" };
	if (c->html && (err = writers__open(o->ws, &report_writer, &d)))
		return err;
	d = (struct writer_dest){};
	if (!c->quiet && (err = writers__open(o->ws, &summary_writer, &d)))
		return err;
	d = (struct writer_dest){ .cfg = &o->otlp_settings };
	if (c->otlp.url && (err = writers__open(o->ws, &otlp_out_writer, &d)))
		return err;
	return 0;
}

/*
 * Is an output the null device (1:3, whatever its name)? FD when it is
 * open, else PATH ("-": stdout); said into B when so.
 */
static bool null_output(struct strbuf *b, const char *opt, const char *path, int fd)
{
	bool out = !path || !strcmp(path, "-");
	struct stat st;

	if (fd < 0 && out)
		fd = STDOUT_FILENO;
	if (fd >= 0 ? fstat(fd, &st) : stat(path, &st))
		return false;
	if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
		return false;
	if (out)
		strbuf__printf(b, "%sstdout is /dev/null", b->n ? ", " : "");
	else
		strbuf__printf(b, "%s%s %s", b->n ? ", " : "", opt, path);
	return true;
}

/*
 * The image's default command (-o /dev/null) run without
 * OTEL_EXPORTER_OTLP_ENDPOINT keeps nothing: found out at the start, not
 * after the run. JSON lines go to OUT (-o FILE or stdout), -f to stdout;
 * the summary at exit and /metrics are counts, not records.
 */
void outputs__warn_if_nowhere(const struct outputs *o, FILE *out)
{
	const struct session_config *c = o->otlp_settings.cfg;
	struct strbuf b = {};
	bool nowhere = !c->otlp.url;

	if (nowhere && (!c->folded || c->output))
		nowhere = null_output(&b, "-o", c->output, fileno(out));
	if (nowhere && c->folded)
		nowhere = null_output(&b, "-f", NULL, STDOUT_FILENO);
	if (nowhere && c->pprof)
		nowhere = null_output(&b, "--pprof", c->pprof, -1);
	if (nowhere && c->html)
		nowhere = null_output(&b, "--html", c->html, -1);
	if (nowhere && !b.oom)
		fprintf(stderr, "ctxprof-go: warning: the records go nowhere: %.*s, and %s%s\n",
			(int)b.n, b.p,
			c->sampling ? "no OTLP endpoint (give --otlp URL or set "
				      "OTEL_EXPORTER_OTLP_ENDPOINT)" :
				      "no other output",
			c->metrics_addr ? "; /metrics serves counts, not records" : "");
	strbuf__free(&b);
}

struct outputs *outputs__new(const struct session_config *cfg, uint64_t period_ns, FILE **out)
{
	struct outputs *o = calloc(1, sizeof(*o));
	int err = -ENOMEM;

	if (!o || !(o->ws = writers__new())) {
		fprintf(stderr, "out of memory\n");
		goto fail;
	}
	o->stdout_stream = stdout;
	o->otlp_settings.cfg = cfg;
	o->otlp_settings.period_ns = period_ns;
	if ((err = open_writers(o, cfg, out)))
		goto fail;
	return o;
fail:
	outputs__free(o);
	errno = -err;
	return NULL;
}

void outputs__free(struct outputs *o)
{
	if (!o)
		return;
	writers__free(o->ws);
	free(o);
}

struct writers *outputs__writers(struct outputs *o)
{
	return o->ws;
}

void outputs__set_processes(struct outputs *o, otlp_process_fn fn, void *ctx)
{
	struct otlp_out *ot = writers__get(o->ws, &otlp_out_writer);

	if (ot)
		otlp__set_processes(ot->otlp, fn, ctx);
}

void outputs__stop_export(struct outputs *o)
{
	struct otlp_out *ot = writers__get(o->ws, &otlp_out_writer);

	/* what is queued goes out within the flush time; the rest is counted */
	if (ot && ot->export) {
		otlp_export__stop(ot->export, &ot->stats);
		ot->export = NULL;
	}
}

void outputs__otlp_totals(const struct outputs *o, struct otlp_export_stats *st)
{
	const struct otlp_out *ot = writers__get(o->ws, &otlp_out_writer);

	memset(st, 0, sizeof(*st));
	if (!ot)
		return;
	*st = ot->stats;
	if (ot->export)
		otlp_export__stats(ot->export, st);
}

int outputs__otlp_failed(const struct outputs *o)
{
	struct otlp_export_stats st;

	outputs__otlp_totals(o, &st);
	if (!st.dropped && !st.rejected)
		return 0;
	fprintf(stderr, "ctxprof-go: failed to send OTLP profiles to %s: ",
		o->otlp_settings.cfg->otlp.url);
	if (st.dropped)
		fprintf(stderr, "%llu sample%s in %llu request%s not delivered%s",
			(unsigned long long)st.dropped_samples, plural(st.dropped_samples),
			(unsigned long long)st.dropped, plural(st.dropped),
			st.rejected ? ", and " : "");
	if (st.rejected)
		fprintf(stderr, "%llu profile%s rejected by the collector",
			(unsigned long long)st.rejected, plural(st.rejected));
	fprintf(stderr, " (the statistics line says why)\n");
	return -EIO;
}

struct otlp *outputs__otlp(const struct outputs *o)
{
	const struct otlp_out *ot = writers__get(o->ws, &otlp_out_writer);

	return ot ? ot->otlp : NULL;
}

void outputs__summary(const struct outputs *o, FILE *f, int ntraces, int width)
{
	summary__print(writers__get(o->ws, &summary_writer), f, ntraces, width);
}

int outputs__write(struct outputs *o)
{
	return writers__write(o->ws, true);
}
