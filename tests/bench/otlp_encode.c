// SPDX-License-Identifier: GPL-2.0
/* otlp_encode.c: make bench: the cost of one OTLP export of N records, encoded and sent, from real records. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "cmd/output/otlp.h"
#include "cmd/output/otlp_export.h"
#include "cmd/output/rec.h"
#include "cmd/util/clock.h"

#define MAX_BASE 4096

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Usage: otlp-encode RECORDS.jsonl N ROUNDS [URL]: the records of a real
 * run, repeated as N records of distinct processes and trace IDs, through
 * the encoder ROUNDS times; with URL, each request is also sent there.
 * Prints the median time to encode, to send, and the request's size.
 */
int main(int argc, char **argv)
{
	static struct rec base[MAX_BASE];
	static struct rec_mem mem[MAX_BASE];
	static json_t *objs[MAX_BASE];
	uint64_t enc[64], snd[64], t0;
	struct otlp_export_config cfg;
	struct otlp_export_stats st;
	struct otlp_batch batch;
	struct otlp_export *ex;
	size_t nbase = 0, n, rounds, r, i, len = 0, cap = 0;
	char *line = NULL, err[256], trace[64];
	struct otlp *o;
	json_error_t jerr;
	uint8_t *buf;
	FILE *f;

	if (argc < 4 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: otlp-encode RECORDS.jsonl N ROUNDS [URL]\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	rounds = strtoul(argv[3], NULL, 10);
	if (rounds > 64)
		rounds = 64;
	while (nbase < MAX_BASE && getline(&line, &cap, f) > 0) {
		objs[nbase] = json_loads(line, 0, &jerr);
		if (objs[nbase] &&
		    !rec__from_json(objs[nbase], &base[nbase], &mem[nbase], err, sizeof(err)) &&
		    base[nbase].origin == REC_SAMPLING)
			nbase++;
	}
	fclose(f);
	if (!nbase) {
		fprintf(stderr, "otlp-encode: no sampling records in %s\n", argv[1]);
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		o = otlp__new("bench", 10101010, 0);
		if (!o)
			return 1;
		t0 = now_ns(CLOCK_MONOTONIC);
		for (i = 0; i < n; i++) {
			struct rec rc = base[i % nbase];

			/* a trace of its own each time around, in one of 16 processes */
			rc.pid += i / nbase % 16;
			if (rc.trace_id) {
				snprintf(trace, sizeof(trace), "%08zx%.24s", i % 0xffffffff, rc.trace_id + 8);
				rc.trace_id = trace;
			}
			if (otlp__add(o, &rc))
				return 1;
		}
		if (otlp__take(o, &buf, &len, &batch))
			return 1;
		enc[r] = now_ns(CLOCK_MONOTONIC) - t0;
		snd[r] = 0;
		if (argc > 4) {
			if (otlp_export__config(&cfg, argv[4], err, sizeof(err)) != 1) {
				fprintf(stderr, "otlp-encode: %s\n", err);
				return 1;
			}
			/* one large request: time enough to be taken whole */
			cfg.flush_ms = cfg.timeout_ms = 120000;
			ex = otlp_export__start(&cfg, "bench", err, sizeof(err));
			if (!ex) {
				fprintf(stderr, "otlp-encode: %s\n", err);
				return 1;
			}
			t0 = now_ns(CLOCK_MONOTONIC);
			otlp_export__push(ex, buf, len, batch.samples);
			otlp_export__stop(ex, &st);
			snd[r] = now_ns(CLOCK_MONOTONIC) - t0;
			otlp_export__config_free(&cfg);
			if (st.requests != 1) {
				fprintf(stderr, "otlp-encode: the request was not taken\n");
				return 1;
			}
		} else {
			free(buf);
		}
		otlp__free(o);
	}
	qsort(enc, rounds, sizeof(enc[0]), by_u64);
	qsort(snd, rounds, sizeof(snd[0]), by_u64);
	printf("%zu records (%llu samples, %llu processes): encoded in %.1f ms, sent in %.1f ms, "
	       "%zu bytes\n",
	       n, (unsigned long long)batch.samples, (unsigned long long)batch.resources,
	       enc[rounds / 2] / 1e6, snd[rounds / 2] / 1e6, len);
	for (i = 0; i < nbase; i++) {
		rec_mem__free(&mem[i]);
		json_decref(objs[i]);
	}
	free(line);
	return 0;
}
