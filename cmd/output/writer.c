// SPDX-License-Identifier: GPL-2.0
/* writer.c: the set of outputs a run writes each record to, through the one interface they implement. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "writer.h"

/* Outputs a run has at most: one of each kind. */
#define MAX_WRITERS 8

struct writer {
	const struct writer_ops *ops;
	void *impl;
	struct writer_dest dest;
};

struct writers {
	struct writer w[MAX_WRITERS];
	size_t n;
};

struct writers *writers__new(void)
{
	return calloc(1, sizeof(struct writers));
}

void writers__free(struct writers *ws)
{
	size_t i;

	if (!ws)
		return;
	for (i = 0; i < ws->n; i++)
		ws->w[i].ops->free(ws->w[i].impl);
	free(ws);
}

int writers__open(struct writers *ws, const struct writer_ops *ops, const struct writer_dest *d)
{
	struct writer *w;

	if (ws->n == MAX_WRITERS || writers__get(ws, ops))
		return -EEXIST;
	w = &ws->w[ws->n];
	errno = 0;
	w->impl = ops->new(d);
	if (!w->impl) {
		if (errno == ENOMEM || !errno)
			fprintf(stderr, "out of memory\n");
		return errno ? -errno : -ENOMEM;
	}
	w->ops = ops;
	w->dest = *d;
	ws->n++;
	return 0;
}

int writers__add(struct writers *ws, const struct rec *r)
{
	size_t i;
	int ret;

	for (i = 0; i < ws->n; i++)
		if ((ret = ws->w[i].ops->add(ws->w[i].impl, r)))
			return ret;
	return 0;
}

int writers__flush(struct writers *ws)
{
	int ret, err = 0;
	size_t i;

	for (i = 0; i < ws->n; i++)
		if (ws->w[i].ops->flush && (ret = ws->w[i].ops->flush(ws->w[i].impl, &ws->w[i].dest)))
			err = err ?: ret;
	return err;
}

int writers__write(struct writers *ws, bool say)
{
	const struct writer *w;
	int ret, err = 0;
	size_t i;

	for (i = 0; i < ws->n; i++) {
		w = &ws->w[i];
		if (!w->ops->write)
			continue;
		ret = w->ops->write(w->impl, &w->dest);
		if (ret)
			fprintf(stderr, "ctxprof-go: failed to write %s %s%s: %s\n", w->ops->what,
				w->dest.path ? "" : "to ", w->dest.path ?: "stdout", strerror(-ret));
		else if (say && w->dest.path)
			fprintf(stderr, "ctxprof-go: wrote %s %s\n", w->ops->what, w->dest.path);
		err = err ?: ret;
	}
	return err;
}

void *writers__get(const struct writers *ws, const struct writer_ops *ops)
{
	size_t i;

	for (i = 0; i < ws->n; i++)
		if (ws->w[i].ops == ops)
			return ws->w[i].impl;
	return NULL;
}
