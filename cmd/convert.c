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
#include "cmd/output/writer.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/plural.h"
#include "cmd/util/strbuf.h"
#include "convert.h"

#define MAX_BAD_LINES 20

/* One record for the writers; -EINVAL with the reason in ERR when it is none. */
static int take(json_t *o, struct writers *ws, char *err, size_t errlen)
{
	struct rec_mem mem = {};
	struct rec r;
	int ret;

	ret = rec__from_json(o, &r, &mem, err, errlen);
	if (!ret && (ret = writers__add(ws, &r)))
		snprintf(err, errlen, "%s", strerror(-ret));
	rec_mem__free(&mem);
	return ret;
}

static const char usage[] =
	"Usage: ctxprof-go convert (--pprof FILE | -f [--folded-trace-root]\n"
	"                           [--folded-wall | --folded-alloc] |\n"
	"                           --html FILE | --speedscope FILE) [INPUT...]\n"
	"\n"
	"Reads ctxprof-go's JSON lines from each INPUT (default: stdin), for example a\n"
	"jq selection of one trace, or the records of several hosts, and writes them\n"
	"in another format, as one. The result is the same as the live options give\n"
	"for the same records. A line that is not a ctxprof-go record stops it, with\n"
	"the file and line: nothing is written, and no record is left out silently;\n"
	"a last line cut off before its end (a crash, a full disk) is left out, and\n"
	"said so. A record that came already in an earlier INPUT (a file given twice)\n"
	"is counted once, and said so. Records are held to the schema in\n"
	"ctxprof-go(8); a string over 1 MiB or a line over 1 GiB is refused.\n"
	"\n"
	"      --pprof FILE           gzip-compressed profile.proto, for go tool pprof\n"
	"  -f, --folded               comm;root;...;leaf COUNT lines (flame graphs)\n"
	"      --folded-trace-root    the trace ID as the root frame\n"
	"      --folded-wall          wall records only (--wall), the state or wait reason\n"
	"                             as the leaf, [chan_receive]; without it or\n"
	"                             --folded-alloc, the CPU samples and events\n"
	"      --folded-alloc         alloc records only (--alloc), each stack's count its\n"
	"                             bytes allocated\n"
	"      --html FILE            one self-contained page: every trace in a table, and\n"
	"                             for the costliest 500 their CPU, wall-clock and\n"
	"                             allocation flame graphs and a timeline of their\n"
	"                             samples; the whole run grouped by trace. Opens\n"
	"                             offline in any browser\n"
	"      --speedscope FILE      speedscope's JSON file format: a CPU, a wall-clock\n"
	"                             and an allocation profile for each of the costliest\n"
	"                             100 traces, and for the whole run grouped by trace\n"
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
	"  ctxprof-go convert --html request.html checkout.jsonl inventory.jsonl\n"
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

/* The inputs read so far: each record's line, by hash, and the input it came in. */
struct reading {
	struct writers *ws; /* the one output asked for */
	struct recset *rs; /* --html's or --speedscope's records, which say what came from where */
	FILE *out; /* -f's stream */
	struct hashmap *seen; /* hash of a line -> index of its input + 1 */
	size_t good; /* records taken, all inputs */
	bool cut; /* a last line was cut off */
	char **names; /* the inputs, by index */
	size_t ninputs;
};

/* NAME as messages say it */
static const char *shown(const char *name)
{
	return strcmp(name, "-") ? name : "<stdin>";
}

/*
 * Is LINE a record an earlier input held already (the same file read
 * twice, or a copy)? Else it is kept as of input IDX.
 */
static bool seen_before(struct reading *rd, const char *line, size_t len, size_t idx,
			size_t *from)
{
	uint64_t h = hash_bytes(line, len);
	uintptr_t v = (uintptr_t)hashmap__get(rd->seen, &h, sizeof(h));

	if (v && v - 1 != idx) {
		*from = v - 1;
		return true;
	}
	if (!v)
		hashmap__add(rd->seen, &h, sizeof(h), (void *)(uintptr_t)(idx + 1));
	return false;
}

/*
 * The records of input IDX (NAME, "-" for stdin) into RD's output. 0, or
 * -1 when it could not be read or held a line that is no record (said on
 * stderr: the caller writes nothing then).
 */
static int read_input(struct reading *rd, size_t idx, const char *name)
{
	size_t len, bad = 0, cut = 0, cut_len = 0, dup = 0, good = 0, from = 0;
	FILE *in = strcmp(name, "-") ? fopen(name, "r") : stdin;
	struct jsonl *jl = NULL;
	const char *line, *base;
	json_error_t jerr;
	char err[256];
	int n, ret = -1;
	json_t *rec;

	if (!in) {
		fprintf(stderr, "failed to open %s: %s\n", name, strerror(errno));
		return -1;
	}
	if (!json_lines(in, shown(name)))
		goto out;
	/* the page names an input by its file's name */
	base = strrchr(name, '/');
	if (rd->rs && recset__input(rd->rs, base ? base + 1 : shown(name)) < 0) {
		fprintf(stderr, "out of memory\n");
		goto out;
	}
	if (!(jl = jsonl__new(in))) {
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
		} else if (seen_before(rd, line, len - (line[len - 1] == '\n'), idx, &from)) {
			dup++;
			json_decref(rec);
			continue;
		} else if (take(rec, rd->ws, err, sizeof(err)) == 0) {
			good++;
			json_decref(rec);
			continue;
		}
		json_decref(rec);
		if (++bad <= MAX_BAD_LINES)
			fprintf(stderr, "%s:%zu: %s\n", shown(name), jsonl__lineno(jl), err);
	}
	if (n == -E2BIG || n == -EINVAL) {
		/* a binary file, or a line no record comes near: read no further */
		fprintf(stderr, "%s:%zu: %s; stopped reading, nothing written\n", shown(name),
			jsonl__lineno(jl), err);
		goto out;
	}
	if (n < 0) {
		fprintf(stderr, "failed to read %s: %s\n", shown(name), err);
		goto out;
	}
	if (bad) {
		fprintf(stderr, "%s: %zu of %zu lines are not ctxprof-go records; nothing written\n",
			shown(name), bad, jsonl__lineno(jl));
		goto out;
	}
	if (cut)
		fprintf(stderr, "ctxprof-go: %s:%zu: the last line is cut off (%zu bytes, no newline): %s\n",
			shown(name), cut, cut_len,
			good		  ? "left out; the lines before it are converted" :
			rd->ninputs > 1 ? "no whole line in it" :
					  "no whole line to convert, nothing written");
	rd->cut |= cut;
	if (dup) {
		fprintf(stderr, "ctxprof-go: %s: %zu record%s came already in %s (a file read twice?): "
				"counted once\n",
			shown(name), dup, plural(dup), shown(rd->names[from]));
		if (rd->rs)
			recset__duplicates(rd->rs, dup);
	}
	rd->good += good;
	ret = 0;
out:
	jsonl__free(jl);
	if (in != stdin)
		fclose(in);
	return ret;
}

/* What the run asked for. */
struct convert_args {
	const char *pprof, *html, *speedscope;
	bool folded, trace_root, wall, alloc;
	char **inputs;
	size_t ninputs;
};

/* ARGS from the command line; 0, or 2 after a usage error, or -1 after --help. */
static int parse_args(int argc, char **argv, struct convert_args *a)
{
	enum { OPT_PPROF = 256, OPT_TRACE_ROOT, OPT_WALL, OPT_ALLOC, OPT_HTML, OPT_SPEEDSCOPE };
	static const struct option opts[] = {
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "speedscope", required_argument, NULL, OPT_SPEEDSCOPE },
		{ "folded", no_argument, NULL, 'f' },
		{ "folded-trace-root", no_argument, NULL, OPT_TRACE_ROOT },
		{ "folded-wall", no_argument, NULL, OPT_WALL },
		{ "folded-alloc", no_argument, NULL, OPT_ALLOC },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	static char *std_in[] = { "-" };
	size_t i, j;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_PPROF:
			a->pprof = optarg;
			break;
		case OPT_HTML:
			a->html = optarg;
			break;
		case OPT_SPEEDSCOPE:
			a->speedscope = optarg;
			break;
		case 'f':
			a->folded = true;
			break;
		case OPT_TRACE_ROOT:
			a->folded = a->trace_root = true;
			break;
		case OPT_WALL:
			a->folded = a->wall = true;
			break;
		case OPT_ALLOC:
			a->folded = a->alloc = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return -1;
		default:
			/* getopt said which option */
			return 2;
		}
	}
	a->inputs = optind < argc ? argv + optind : std_in;
	a->ninputs = optind < argc ? (size_t)(argc - optind) : 1;
	if (!a->pprof && !a->folded && !a->html && !a->speedscope) {
		fprintf(stderr, "convert: no output format: give --pprof FILE, -f, --html FILE or "
				"--speedscope FILE\n");
		return 2;
	}
	if (a->pprof && a->folded) {
		fprintf(stderr, "convert: --pprof and -f (or --folded-*) both given: one format a run\n");
		return 2;
	}
	if (a->wall && a->alloc) {
		fprintf(stderr, "convert: --folded-wall and --folded-alloc both given: folded stacks "
				"count one thing, time or bytes\n");
		return 2;
	}
	if (!!a->pprof + a->folded + !!a->html + !!a->speedscope > 1) {
		fprintf(stderr, "convert: %s and %s both given: one format a run\n",
			a->pprof ? "--pprof" : a->folded ? "-f" : "--html",
			a->speedscope ? "--speedscope" : "--html");
		return 2;
	}
	for (i = 0; i < a->ninputs; i++) {
		for (j = 0; j < i; j++) {
			if (!strcmp(a->inputs[i], "-") && !strcmp(a->inputs[j], "-")) {
				fprintf(stderr, "convert: stdin (-) given twice\n");
				return 2;
			}
		}
		if (!strcmp(a->inputs[i], "-") && isatty(STDIN_FILENO)) {
			fprintf(stderr, "convert reads the JSON lines ctxprof-go writes, from INPUT or a "
					"pipe, and stdin is a terminal: give the file (ctxprof-go convert "
					"--html report.html records.jsonl)\n");
			return 2;
		}
	}
	return 0;
}

/* The page or file's name for its source: the inputs' names, not the directories above them. */
static char *source_name(const struct convert_args *a)
{
	struct strbuf b = {};
	const char *name;
	size_t i;

	for (i = 0; i < a->ninputs; i++) {
		name = strrchr(a->inputs[i], '/') ? strrchr(a->inputs[i], '/') + 1 : shown(a->inputs[i]);
		if (i)
			strbuf__put(&b, ", ", 2);
		strbuf__put(&b, name, strlen(name));
	}
	strbuf__put(&b, "", 1);
	return b.oom ? (strbuf__free(&b), NULL) : b.p;
}

/* The one writer A asks for, into RD; -errno, said. */
static int open_output(const struct convert_args *a, struct reading *rd, const char *source)
{
	struct writer_dest d = { .path = a->pprof ?: a->html ?: a->speedscope, .source = source };
	const struct writer_ops *ops = a->pprof ? &pprof_writer :
				       a->folded ? &folded_writer :
				       a->html ? &report_writer :
						 &speedscope_writer;
	int ret;

	rd->out = stdout;
	d.stream = &rd->out;
	d.trace_root = a->trace_root;
	d.wall_only = a->wall;
	d.alloc_only = a->alloc;
	if (!(rd->ws = writers__new()))
		return -ENOMEM;
	ret = writers__open(rd->ws, ops, &d);
	if (!ret && (a->html || a->speedscope))
		rd->rs = writers__get(rd->ws, ops);
	return ret;
}

/* RD's records in the format A asks for; 0 or 1 (said on stderr). */
static int write_output(const struct convert_args *a, struct reading *rd)
{
	const char *file = a->pprof ?: a->html ?: a->speedscope;
	size_t n;

	if (writers__write(rd->ws, false))
		return 1;
	if (a->folded)
		return 0;
	fprintf(stderr, "ctxprof-go: %zu records in %s\n", rd->good, file);
	if (rd->rs && (!recset__records(rd->rs, &n) || !n))
		fprintf(stderr, "ctxprof-go: no CPU, wall-clock or allocation record in the input: "
				"nothing to draw (%llu event records are moments, not time)\n",
			(unsigned long long)recset__events(rd->rs));
	return 0;
}

int convert__main(int argc, char **argv)
{
	struct convert_args a = {};
	struct reading rd = {};
	char *source = NULL;
	size_t i;
	int ret;

	if ((ret = parse_args(argc, argv, &a)))
		return ret < 0 ? 0 : (fprintf(stderr, "Try 'ctxprof-go convert --help'.\n"), 2);
	rd.names = a.inputs;
	rd.ninputs = a.ninputs;
	ret = 1;
	if (!(source = source_name(&a)) || !(rd.seen = hashmap__new())) {
		fprintf(stderr, "out of memory\n");
		goto out;
	}
	if (open_output(&a, &rd, source)) {
		if (!rd.ws)
			fprintf(stderr, "out of memory\n");
		goto out;
	}
	for (i = 0; i < a.ninputs; i++)
		if (read_input(&rd, i, a.inputs[i]))
			goto out;
	/* a cut line and nothing else: what a crash left, not an empty recording */
	if (rd.cut && !rd.good) {
		if (a.ninputs > 1)
			fprintf(stderr, "ctxprof-go: no whole line in the inputs, nothing written\n");
		goto out;
	}
	ret = write_output(&a, &rd);
	if (!ret && fclose(stdout) != 0) {
		fprintf(stderr, "failed to write to stdout: %s\n", strerror(errno));
		ret = 1;
	}
out:
	hashmap__free(rd.seen, NULL);
	writers__free(rd.ws);
	free(source);
	return ret;
}
