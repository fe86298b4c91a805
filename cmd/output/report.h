/* SPDX-License-Identifier: GPL-2.0 */
/* report.h: a whole run's records as one self-contained HTML page: traces, flame graphs, timelines. */
#ifndef __REPORT_H
#define __REPORT_H

#include <stddef.h>

#include "recset.h"
#include "writer.h"

/*
 * What one page holds in full: the costliest traces' stacks and times, as
 * many as fit these; every trace keeps its row and totals.
 */
#define REPORT_MAX_TRACES 500
#define REPORT_MAX_FRAMES 1000000
#define REPORT_MAX_TIMES 1000000
/* requests drawn on the traces' timelines: each trace's elapsed time counts them all */
#define REPORT_MAX_REQUESTS 200000

/*
 * Writes RS as a page to PATH (created 0600, or truncated): the records as
 * JSON in a <script> element that nothing in a string can end, the
 * project's own script and styles, and a Content-Security-Policy that lets
 * only those run and nothing load. SOURCE names where the records came
 * from, for the page's heading. 0, or -errno.
 */
int report__write(struct recset *rs, const char *path, const char *source);

/* --html: D->path, D->source naming where the records came from */
extern const struct writer_ops report_writer;

#endif /* __REPORT_H */
