// SPDX-License-Identifier: GPL-2.0
/* convert.c: `ctxprof-go convert`: JSON lines as a pprof profile, folded stacks, a report page or a speedscope file. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "cmd/output/folded.h"
#include "cmd/output/jsonl.h"
#include "cmd/output/pprof.h"
#include "cmd/output/rec.h"
#include "cmd/output/recset.h"
#include "cmd/output/report.h"
#include "cmd/output/speedscope.h"
#include "convert.h"

#define MAX_BAD_LINES 20

/* Where the records go: one of these a run. */
struct outputs {
	struct pprof *pp;
	struct folded *fo;
	struct recset *rs; /* --html, --speedscope */
};

/* One record for the output asked for; -EINVAL with the reason in ERR when it is none. */
static int take(json_t *o, struct outputs *out, char *err, size_t errlen)
{
	struct rec_mem mem = {};
	struct rec r;
	int ret;

	ret = rec__from_json(o, &r, &mem, err, errlen);
	if (!ret && (ret = out->pp ? pprof__add(out->pp, &r) :
			   out->fo ? folded__add(out->fo, &r) :
				     recset__add(out->rs, &r)))
		snprintf(err, errlen, "%s", strerror(-ret));
	rec_mem__free(&mem);
	return ret;
}

static const char usage[] =
	"Usage: ctxprof-go convert (--pprof FILE | -f [--folded-trace-root] [--folded-wall] |\n"
	"                           --html FILE | --speedscope FILE) [INPUT]\n"
	"\n"
	"Reads ctxprof-go's JSON lines from INPUT (default: stdin), for example a\n"
	"jq selection of one trace, and writes them in another format. The result\n"
	"is the same as the live options give for the same records. A line that is\n"
	"not a ctxprof-go record stops it, with the line's number: nothing is\n"
	"written, and no record is left out silently; a last line cut off before its\n"
	"end (a crash, a full disk) is left out, and said so. Records are held to the\n"
	"schema in ctxprof-go(8); a string over 1 MiB or a line over 1 GiB is refused.\n"
	"\n"
	"      --pprof FILE           gzip-compressed profile.proto, for go tool pprof\n"
	"  -f, --folded               comm;root;...;leaf COUNT lines (flame graphs)\n"
	"      --folded-trace-root    the trace ID as the root frame\n"
	"      --folded-wall          wall records only (--wall), the state or wait reason\n"
	"                             as the leaf, [chan_receive]; without it, the others\n"
	"      --html FILE            one self-contained page: every trace in a table, and\n"
	"                             for the costliest 500 their CPU and wall-clock flame\n"
	"                             graphs and a timeline of their samples; the whole run\n"
	"                             grouped by trace. Opens offline in any browser\n"
	"      --speedscope FILE      speedscope's JSON file format: a CPU and a wall-clock\n"
	"                             profile for each of the costliest 100 traces, and\n"
	"                             for the whole run grouped by trace\n"
	"  -h, --help                 show this help\n"
	"\n"
	"pprof sample types: samples (count), cpu and wall (nanoseconds); wall records\n"
	"carry state and wait_reason labels. Pick one with go tool pprof -sample_index.\n"
	"\n"
	"Examples:\n"
	"  jq -c 'select(.trace_id==\"4bf92f3577b34da6a3ce929d0e0e4736\")' cpu.jsonl |\n"
	"      ctxprof-go convert --pprof trace.pb.gz\n"
	"  go tool pprof -top trace.pb.gz\n"
	"  go tool pprof -sample_index=wall -tagfocus=wait_reason='chan receive' -top trace.pb.gz\n"
	"  ctxprof-go convert -f cpu.jsonl | flamegraph.pl > cpu.svg\n"
	"  ctxprof-go convert --html report.html prof.jsonl; xdg-open report.html\n"
	"  ctxprof-go convert --speedscope prof.speedscope.json prof.jsonl\n";

/*
 * Does IN, named NAME, start as JSON lines do? Else it says what the file
 * looks like instead and what convert reads: an HTML page or a gzip'd
 * profile is most often an output given where the input goes.
 */
static bool json_lines(FILE *in, const char *name)
{
	int c = getc(in);
	const char *what;

	if (c == EOF || ungetc(c, in) == EOF || strchr("{ \t\r\n", c))
		return true;
	what = c == '<' ? "an HTML or XML page" : c == 0x1f ? "gzip data (a pprof profile?)" :
								"no JSON record";
	fprintf(stderr,
		"%s is %s, not the JSON lines ctxprof-go writes: convert reads records "
		"(ctxprof-go -p PID -o records.jsonl; ctxprof-go convert --html report.html "
		"records.jsonl)\n",
		name, what);
	return false;
}

int convert__main(int argc, char **argv)
{
	enum { OPT_PPROF = 256, OPT_TRACE_ROOT, OPT_WALL, OPT_HTML, OPT_SPEEDSCOPE };
	static const struct option opts[] = {
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "speedscope", required_argument, NULL, OPT_SPEEDSCOPE },
		{ "folded", no_argument, NULL, 'f' },
		{ "folded-trace-root", no_argument, NULL, OPT_TRACE_ROOT },
		{ "folded-wall", no_argument, NULL, OPT_WALL },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *pprof = NULL, *html = NULL, *speedscope = NULL, *input = "-", *name;
	bool folded = false, trace_root = false, wall = false;
	size_t len, bad = 0, good = 0, cut = 0, cut_len = 0;
	const char *line;
	char err[256];
	struct jsonl *jl = NULL;
	struct outputs out = {};
	json_error_t jerr;
	FILE *in = stdin;
	json_t *rec;
	int opt, n, ret = 1;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_PPROF:
			pprof = optarg;
			break;
		case OPT_HTML:
			html = optarg;
			break;
		case OPT_SPEEDSCOPE:
			speedscope = optarg;
			break;
		case 'f':
			folded = true;
			break;
		case OPT_TRACE_ROOT:
			folded = trace_root = true;
			break;
		case OPT_WALL:
			folded = wall = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			/* getopt said which option */
			goto usage;
		}
	}
	if (optind < argc)
		input = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "convert: one INPUT at most: '%s' is a second\n", argv[optind]);
		goto usage;
	}
	if (!pprof && !folded && !html && !speedscope) {
		fprintf(stderr, "convert: no output format: give --pprof FILE, -f, --html FILE or "
				"--speedscope FILE\n");
		goto usage;
	}
	if (pprof && folded) {
		fprintf(stderr, "convert: --pprof and -f (or --folded-*) both given: one format a run\n");
		goto usage;
	}
	if (!!pprof + folded + !!html + !!speedscope > 1) {
		fprintf(stderr, "convert: %s and %s both given: one format a run\n",
			pprof ? "--pprof" : folded ? "-f" : "--html", speedscope ? "--speedscope" : "--html");
		goto usage;
	}
	if (!strcmp(input, "-") && isatty(STDIN_FILENO)) {
		fprintf(stderr, "convert reads the JSON lines ctxprof-go writes, from INPUT or a pipe, "
				"and stdin is a terminal: give the file (ctxprof-go convert --html "
				"report.html records.jsonl)\n");
		goto usage;
	}
	if (strcmp(input, "-") && !(in = fopen(input, "r"))) {
		fprintf(stderr, "failed to open %s: %s\n", input, strerror(errno));
		return 1;
	}
	if (!json_lines(in, strcmp(input, "-") ? input : "<stdin>"))
		goto out;
	if (pprof)
		out.pp = pprof__new();
	else if (folded)
		out.fo = folded__new();
	else
		out.rs = recset__new();
	jl = jsonl__new(in);
	if ((!out.pp && !out.fo && !out.rs) || !jl) {
		fprintf(stderr, "out of memory\n");
		goto out;
	}
	while ((n = jsonl__next(jl, &line, &len, err, sizeof(err))) > 0) {
		if (len == 1 && line[0] == '\n')
			continue;
		/* labels may hold NUL, written as \u0000 */
		rec = json_loadb(line, len, JSON_ALLOW_NUL, &jerr);
		if (!rec && line[len - 1] != '\n') {
			/* the last line, cut before its end: what a crash, kill -9 or a full disk leaves */
			cut = jsonl__lineno(jl);
			cut_len = len;
			continue;
		}
		if (!rec) {
			snprintf(err, sizeof(err), "%s", jerr.text);
		} else if (take(rec, &out, err, sizeof(err)) == 0) {
			good++;
			json_decref(rec);
			continue;
		}
		json_decref(rec);
		if (++bad <= MAX_BAD_LINES)
			fprintf(stderr, "%s:%zu: %s\n", strcmp(input, "-") ? input : "<stdin>",
				jsonl__lineno(jl), err);
	}
	if (n == -E2BIG || n == -EINVAL) {
		/* a binary file, or a line no record comes near: read no further */
		fprintf(stderr, "%s:%zu: %s; stopped reading, nothing written\n",
			strcmp(input, "-") ? input : "<stdin>", jsonl__lineno(jl), err);
		goto out;
	}
	if (n < 0) {
		fprintf(stderr, "failed to read %s: %s\n", input, err);
		goto out;
	}
	if (bad) {
		fprintf(stderr, "%zu of %zu lines are not ctxprof-go records; nothing written\n", bad,
			jsonl__lineno(jl));
		goto out;
	}
	if (cut) {
		fprintf(stderr, "ctxprof-go: %s:%zu: the last line is cut off (%zu bytes, no newline): %s\n",
			strcmp(input, "-") ? input : "<stdin>", cut, cut_len,
			good ? "left out; the lines before it are converted" : "no whole line to convert, nothing written");
		if (!good)
			goto out;
	}
	if (pprof) {
		ret = pprof__write(out.pp, pprof);
		if (ret) {
			fprintf(stderr, "failed to write %s: %s\n", pprof, strerror(-ret));
			ret = 1;
			goto out;
		}
		fprintf(stderr, "ctxprof-go: %zu records in %s\n", good, pprof);
	} else if (html || speedscope) {
		/* the page names its source: the file's name, not the directories above it */
		name = strcmp(input, "-") ? strrchr(input, '/') : NULL;
		name = name ? name + 1 : strcmp(input, "-") ? input : "<stdin>";
		ret = html ? report__write(out.rs, html, name) : speedscope__write(out.rs, speedscope, name);
		if (ret) {
			fprintf(stderr, "failed to write %s: %s\n", html ?: speedscope, strerror(-ret));
			ret = 1;
			goto out;
		}
		fprintf(stderr, "ctxprof-go: %zu records in %s\n", good, html ?: speedscope);
		if (!recset__records(out.rs, &len) || !len)
			fprintf(stderr, "ctxprof-go: no CPU or wall-clock record in %s: nothing to draw "
					"(%llu event records are moments, not time)\n",
				strcmp(input, "-") ? input : "<stdin>",
				(unsigned long long)recset__events(out.rs));
	} else if ((ret = folded__write(out.fo, stdout, trace_root, wall))) {
		fprintf(stderr, "failed to write folded stacks to stdout: %s\n", strerror(-ret));
		ret = 1;
		goto out;
	}
	ret = 0;
	if (fclose(stdout) != 0) {
		fprintf(stderr, "failed to write to stdout: %s\n", strerror(errno));
		ret = 1;
	}
out:
	jsonl__free(jl);
	pprof__free(out.pp);
	folded__free(out.fo);
	recset__free(out.rs);
	if (in && in != stdin)
		fclose(in);
	return ret;
usage:
	fprintf(stderr, "Try 'ctxprof-go convert --help'.\n");
	return 2;
}
