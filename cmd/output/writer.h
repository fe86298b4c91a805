/* SPDX-License-Identifier: GPL-2.0 */
/* writer.h: the one interface every output implements, and the set of them a run writes each record to. */
#ifndef __WRITER_H
#define __WRITER_H

#include <stdbool.h>
#include <stdio.h>

struct rec;

/* Where a writer writes, and how; each reads what it needs. */
struct writer_dest {
	const char *path; /* the file: --pprof, --html, --speedscope */
	FILE **stream; /* JSON lines: the stream, which its owner may replace (SIGHUP); folded: stdout */
	const char *source; /* the report page, speedscope: what the records came from */
	bool trace_root; /* folded: the trace ID as the root frame */
	bool wall_only; /* folded: wall records only */
	bool alloc_only; /* folded: alloc records only, weighed by bytes */
	const void *cfg; /* a writer's own settings (OTLP's) */
};

/*
 * An output. new starts one for D (NULL, with errno, and said on stderr
 * when it is more than memory); add takes one record as the run writes
 * it; flush, at the end of each interval, sends what the interval added;
 * write, at the end of the run, writes the whole output. flush and write
 * may be NULL. Each returns 0 or -errno.
 */
struct writer_ops {
	const char *what; /* for messages: "the pprof profile" */
	void *(*new)(const struct writer_dest *d);
	int (*add)(void *w, const struct rec *r);
	int (*flush)(void *w, const struct writer_dest *d);
	int (*write)(void *w, const struct writer_dest *d);
	void (*free)(void *w);
};

/* The outputs a run writes to, in the order they were opened. */
struct writers;

struct writers *writers__new(void);
void writers__free(struct writers *ws); /* accepts NULL */
/* An output of OPS to D (copied; its strings must outlive WS); -errno, said. */
int writers__open(struct writers *ws, const struct writer_ops *ops, const struct writer_dest *d);
/* R to each output in turn; the first -errno stops it. */
int writers__add(struct writers *ws, const struct rec *r);
/* The end of an interval: each output's flush; the first -errno, after all are done. */
int writers__flush(struct writers *ws);
/*
 * The end of the run: each output written, each failure said on stderr,
 * and with SAY, each file written; 0 or the first -errno.
 */
int writers__write(struct writers *ws, bool say);
/* OPS's output, as its new made it; NULL when none was opened. */
void *writers__get(const struct writers *ws, const struct writer_ops *ops);

#endif /* __WRITER_H */
