/* SPDX-License-Identifier: GPL-2.0 */
/* go_wall.h: where the runtime keeps its goroutines, for wall-clock sampling (--wall). */
#ifndef __GO_WALL_H
#define __GO_WALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* runtime.g's atomicstatus values, as every release since 1.4 numbers them */
#define GO_G_IDLE 0
#define GO_G_RUNNABLE 1
#define GO_G_RUNNING 2
#define GO_G_SYSCALL 3
#define GO_G_WAITING 4
#define GO_G_DEAD 6
#define GO_G_COPYSTACK 8
#define GO_G_PREEMPTED 9
#define GO_G_LEAKED 10 /* Go >= 1.26: a goroutine the GC found blocked for good */
#define GO_G_SCAN 0x1000 /* or'ed in while the GC scans the stack; the state is the rest */

/* What a wall record says a goroutine was doing. */
enum wall_state {
	WALL_RUNNING = 1,
	WALL_RUNNABLE,
	WALL_WAITING,
	WALL_SYSCALL,
};

#define MAX_WAIT_REASONS 64

/*
 * The runtime.g members the wall sampler reads, besides the ones CPU
 * sampling has (goid, labels, parentGoid): from DWARF, or the golayout
 * table's row for the release. g.stack is at 0.
 */
struct go_wall_offsets {
	bool ok;
	uint32_t g_status; /* atomicstatus */
	uint32_t g_waitreason; /* a uint8 index into runtime.waitReasonStrings */
	uint32_t g_sched; /* gobuf, where a goroutine off the CPU was left */
	uint32_t gobuf_sp, gobuf_pc, gobuf_bp;
	uint32_t g_syscallsp, g_syscallpc; /* entersyscall's caller */
	uint32_t gobuf_lr; /* arm64: the caller of a function parked at its entry */
};

/*
 * Everything --wall needs from one binary: the goroutine list's addresses
 * as linked (a PIE adds its load bias) and Go's own names of wait reasons.
 */
struct go_wall_layout {
	struct go_wall_offsets off;
	uint64_t allgs; /* runtime.allgs, a []*g */
	uint64_t allglen; /* runtime.allglen, a uintptr kept equal to len(allgs) */
	uint32_t g_read; /* bytes of a g that hold every member read, g.stack too */
	size_t nreasons;
	char reasons[MAX_WAIT_REASONS][40];
	/*
	 * Where each came from, for check: the offsets from "dwarf" or the
	 * golayout "table"; the goroutine list from the "symtab" or the
	 * "code" of runtime.allgadd; the reasons from the "symtab", the
	 * binary's "data" or the "table".
	 */
	const char *offsets_from, *goroutines_from, *reasons_from;
};

#endif /* __GO_WALL_H */
