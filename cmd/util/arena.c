// SPDX-License-Identifier: GPL-2.0
/* arena.c: allocations freed all at once, for the protobuf-c structures of one message. */
#include <stdlib.h>
#include <string.h>

#include "arena.h"

void *arena__alloc(struct arena *a, size_t n, size_t size)
{
	void **blocks, *p;

	if (a->oom)
		return NULL;
	if (a->n == a->cap) {
		blocks = realloc(a->blocks, (a->cap ? 2 * a->cap : 1024) * sizeof(*blocks));
		if (!blocks) {
			a->oom = true;
			return NULL;
		}
		a->blocks = blocks;
		a->cap = a->cap ? 2 * a->cap : 1024;
	}
	p = calloc(n ? n : 1, size);
	if (!p) {
		a->oom = true;
		return NULL;
	}
	a->blocks[a->n++] = p;
	return p;
}

void *arena__dup(struct arena *a, const void *p, size_t size)
{
	void *q = arena__alloc(a, 1, size);

	if (q)
		memcpy(q, p, size);
	return q;
}

void arena__free(struct arena *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->blocks[i]);
	free(a->blocks);
	a->blocks = NULL;
	a->n = a->cap = 0;
	a->oom = false;
}
