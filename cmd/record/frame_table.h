/* SPDX-License-Identifier: GPL-2.0 */
/* frame_table.h: each function's frame size by slot of code, for the sampler's walk of arm64 Go before 1.21. */
#ifndef __FRAME_TABLE_H
#define __FRAME_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "offsets/go_binary.h"

/*
 * A BPF array (ctxprof.h, FRAME_SLOT_*): the frame size of the function
 * whose code holds each 16-byte slot from TEXT, a link-time address, on.
 */
struct frame_table {
	int fd;
	uint64_t text;
	uint64_t slots;
};

/*
 * Does the sampler need GB's table? Go before 1.21 leaves saved frame
 * pointers in a moved stack pointing into the old one on arm64 only.
 */
bool frame_table__needed(const struct go_binary *gb);
/* GB's table, from .gopclntab; NULL with errno (ENOENT: no table to build it from). */
struct frame_table *frame_table__new(const struct go_binary *gb);
/* Accepts NULL. */
void frame_table__free(struct frame_table *ft);

#endif /* __FRAME_TABLE_H */
