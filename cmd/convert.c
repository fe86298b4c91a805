// SPDX-License-Identifier: GPL-2.0
/* convert.c: `ctxprof-go convert`: JSON lines as a pprof profile or folded stacks, as the live options write them. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "cmd/output/folded.h"
#include "cmd/output/jsonl.h"
#include "cmd/output/pprof.h"
#include "cmd/output/rec.h"
#include "convert.h"

#define MAX_BAD_LINES 20

/* One record for the output asked for; -EINVAL with the reason in ERR when it is none. */
static int take(json_t *o, struct pprof *pp, struct folded *fo, char *err, size_t errlen)
{
	struct rec_mem mem = {};
	struct rec r;
	int ret;

	ret = rec__from_json(o, &r, &mem, err, errlen);
	if (!ret && (ret = pp ? pprof__add(pp, &r) : folded__add(fo, &r)))
		snprintf(err, errlen, "%s", strerror(-ret));
	rec_mem__free(&mem);
	return ret;
}

static const char usage[] =
	"Usage: ctxprof-go convert (--pprof FILE | -f [--folded-trace-root] [--folded-wall]) [INPUT]\n"
	"\n"
	"Reads ctxprof-go's JSON lines from INPUT (default: stdin), for example a\n"
	"jq selection of one trace, and writes them in another format. The result\n"
	"is the same as the live options give for the same records. A line that is\n"
	"not a ctxprof-go record stops it, with the line's number: nothing is\n"
	"written, and no record is left out silently. Records are held to the\n"
	"schema in ctxprof-go(8); a string over 1 MiB or a line over 1 GiB is refused.\n"
	"\n"
	"      --pprof FILE           gzip-compressed profile.proto, for go tool pprof\n"
	"  -f, --folded               comm;root;...;leaf COUNT lines (flame graphs)\n"
	"      --folded-trace-root    the trace ID as the root frame\n"
	"      --folded-wall          wall records only (--wall), the state or wait reason\n"
	"                             as the leaf, [chan_receive]; without it, the others\n"
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
	"  ctxprof-go convert -f cpu.jsonl | flamegraph.pl > cpu.svg\n";

int convert__main(int argc, char **argv)
{
	enum { OPT_PPROF = 256, OPT_TRACE_ROOT, OPT_WALL };
	static const struct option opts[] = {
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "folded", no_argument, NULL, 'f' },
		{ "folded-trace-root", no_argument, NULL, OPT_TRACE_ROOT },
		{ "folded-wall", no_argument, NULL, OPT_WALL },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *pprof = NULL, *input = "-";
	bool folded = false, trace_root = false, wall = false;
	size_t len, bad = 0, good = 0;
	const char *line;
	char err[256];
	struct jsonl *jl = NULL;
	struct pprof *pp = NULL;
	struct folded *fo = NULL;
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
	if (!pprof && !folded) {
		fprintf(stderr, "convert: no output format: give --pprof FILE or -f\n");
		goto usage;
	}
	if (pprof && folded) {
		fprintf(stderr, "convert: --pprof and -f (or --folded-*) both given: one format a run\n");
		goto usage;
	}
	if (strcmp(input, "-") && !(in = fopen(input, "r"))) {
		fprintf(stderr, "failed to open %s: %s\n", input, strerror(errno));
		return 1;
	}
	if (pprof)
		pp = pprof__new();
	else
		fo = folded__new();
	jl = jsonl__new(in);
	if ((!pp && !fo) || !jl) {
		fprintf(stderr, "out of memory\n");
		goto out;
	}
	while ((n = jsonl__next(jl, &line, &len, err, sizeof(err))) > 0) {
		if (len == 1 && line[0] == '\n')
			continue;
		/* labels may hold NUL, written as \u0000 */
		rec = json_loadb(line, len, JSON_ALLOW_NUL, &jerr);
		if (!rec) {
			snprintf(err, sizeof(err), "%s%s", line[len - 1] != '\n' ? "truncated last line: " : "",
				 jerr.text);
		} else if (take(rec, pp, fo, err, sizeof(err)) == 0) {
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
	if (pprof) {
		ret = pprof__write(pp, pprof);
		if (ret) {
			fprintf(stderr, "failed to write %s: %s\n", pprof, strerror(-ret));
			ret = 1;
			goto out;
		}
		fprintf(stderr, "ctxprof-go: %zu records in %s\n", good, pprof);
	} else if ((ret = folded__write(fo, stdout, trace_root, wall))) {
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
	pprof__free(pp);
	folded__free(fo);
	if (in && in != stdin)
		fclose(in);
	return ret;
usage:
	fprintf(stderr, "Try 'ctxprof-go convert --help'.\n");
	return 2;
}
