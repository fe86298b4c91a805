/* SPDX-License-Identifier: GPL-2.0 */
/* spawn_table.h: the contexts goroutines took as they started (Go < 1.21), where the kernel keeps them. */
#ifndef __SPAWN_TABLE_H
#define __SPAWN_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/ctxprof.h"

struct spawn_table;

/* The kernel's table (struct spawn_slot each) behind map FD, mapped; NULL with errno set. */
struct spawn_table *spawn_table__map(int fd);
void spawn_table__unmap(struct spawn_table *st);

/*
 * The context goroutine GOID of TGID took as it started, into OUT, while
 * its slot still holds it and no sample has moved it on (to spawn_ctxs).
 */
bool spawn_table__get(const struct spawn_table *st, uint32_t tgid, uint64_t goid,
		      struct trace_ctx *out);

/* TGID's slots emptied: its pid may come back, with goids from 1 again. */
void spawn_table__forget(struct spawn_table *st, uint32_t tgid);

#endif /* __SPAWN_TABLE_H */
