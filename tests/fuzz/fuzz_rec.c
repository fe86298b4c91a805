// SPDX-License-Identifier: GPL-2.0
/* fuzz_rec.c: libFuzzer target for what convert reads: JSON lines, records against the schema, the pprof and folded writers. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "cmd/output/folded.h"
#include "cmd/output/jsonl.h"
#include "cmd/output/pprof.h"
#include "cmd/output/rec.h"

/* A record taken once must be taken again as the writer writes it back. */
static void round_trip(const struct rec *r)
{
	struct rec_mem mem = {};
	struct strbuf b = {};
	struct rec again;
	char err[256];
	json_t *o;

	if (rec__json(r, &b))
		abort();
	o = json_loadb(b.p, b.n, JSON_ALLOW_NUL, NULL);
	if (!o || rec__from_json(o, &again, &mem, err, sizeof(err))) {
		fprintf(stderr, "written back, refused: %s\n%.*s", err, (int)b.n, b.p);
		abort();
	}
	json_decref(o);
	rec_mem__free(&mem);
	strbuf__free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *in = fmemopen((void *)data, size, "r"), *out = fopen("/dev/null", "w");
	struct pprof *pp = pprof__new();
	struct folded *fo = folded__new();
	struct jsonl *j = jsonl__new(in);
	struct rec_mem mem;
	const char *line;
	char err[256];
	struct rec r;
	size_t len;
	json_t *o;
	int n;

	if (!in || !out || !pp || !fo || !j)
		abort();
	while ((n = jsonl__next(j, &line, &len, err, sizeof(err))) > 0) {
		o = json_loadb(line, len, JSON_ALLOW_NUL, NULL);
		if (!o)
			continue;
		memset(&mem, 0, sizeof(mem));
		if (rec__from_json(o, &r, &mem, err, sizeof(err)) == 0) {
			if (pprof__add(pp, &r) || folded__add(fo, &r))
				abort();
			round_trip(&r);
		}
		rec_mem__free(&mem);
		json_decref(o);
	}
	if (folded__write(fo, out, false, FOLDED_CPU) || folded__write(fo, out, true, FOLDED_WALL) ||
	    folded__write(fo, out, true, FOLDED_ALLOC))
		abort();
	if (pprof__write(pp, "/dev/null"))
		abort();
	jsonl__free(j);
	pprof__free(pp);
	folded__free(fo);
	fclose(out);
	fclose(in);
	return 0;
}
