// SPDX-License-Identifier: GPL-2.0
/* vec.c: a growable array of fixed-size items. */
#include <stdlib.h>
#include <string.h>

#include "vec.h"

void *vec__push(struct vec *v)
{
	size_t cap = v->cap ? 2 * v->cap : 64;
	void *items;

	if (v->n == v->cap) {
		items = realloc(v->items, cap * v->size);
		if (!items)
			return NULL;
		v->items = items;
		v->cap = cap;
	}
	return memset((char *)v->items + v->n++ * v->size, 0, v->size);
}
