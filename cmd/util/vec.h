/* SPDX-License-Identifier: GPL-2.0 */
/* vec.h: a growable array of fixed-size items, for the tables the encoders build. */
#ifndef __VEC_H
#define __VEC_H

#include <stddef.h>

struct vec {
	void *items;
	size_t n, cap;
	size_t size; /* of one item; set before the first push */
};

/* A new zeroed item at the end; NULL when out of memory (V unchanged). */
void *vec__push(struct vec *v);
/* N new zeroed items at the end, the first of them; NULL when out of memory (V unchanged). */
void *vec__extend(struct vec *v, size_t n);

#endif /* __VEC_H */
