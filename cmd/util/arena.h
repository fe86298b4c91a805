/* SPDX-License-Identifier: GPL-2.0 */
/* arena.h: allocations freed all at once, for the protobuf-c structures of one message. */
#ifndef __ARENA_H
#define __ARENA_H

#include <stdbool.h>
#include <stddef.h>

struct arena {
	void **blocks;
	size_t n, cap;
	bool oom; /* an allocation failed: every later one fails too */
};

/* N zeroed elements of SIZE (N may be 0); NULL once out of memory. */
void *arena__alloc(struct arena *a, size_t n, size_t size);
/* A copy of SIZE bytes at P. */
void *arena__dup(struct arena *a, const void *p, size_t size);
/* Frees every allocation; A may be reused after. */
void arena__free(struct arena *a);

#endif /* __ARENA_H */
