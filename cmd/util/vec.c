// SPDX-License-Identifier: GPL-2.0
/* vec.c: a growable array of fixed-size items. */
#include <stdlib.h>
#include <string.h>

#include "vec.h"

void *vec__extend(struct vec *v, size_t n)
{
	size_t cap = v->cap ? v->cap : 64;
	void *items;

	while (cap - v->n < n)
		cap *= 2;
	if (cap != v->cap) {
		items = realloc(v->items, cap * v->size);
		if (!items)
			return NULL;
		v->items = items;
		v->cap = cap;
	}
	v->n += n;
	return memset((char *)v->items + (v->n - n) * v->size, 0, n * v->size);
}

void *vec__push(struct vec *v)
{
	return vec__extend(v, 1);
}
