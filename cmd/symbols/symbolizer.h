/* SPDX-License-Identifier: GPL-2.0 */
/* symbolizer.h: one process's address space over time, from exec on, and the names of its addresses. */
#ifndef __SYMBOLIZER_H
#define __SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "objfile.h"

struct symbolizer;

/*
 * An empty address space for PID: mappings are added as the kernel reports
 * them (symbolizer__map), or read from /proc/PID/maps (symbolizer__load).
 * Frames are named against what was mapped when their event happened, so a
 * process that exits right after its events keeps its names.
 */
struct symbolizer *symbolizer__new(pid_t pid);
void symbolizer__free(struct symbolizer *s);

/*
 * Reads /proc/PID/maps now, as the mappings of every moment before the
 * first exec seen: for a process that was running before we looked.
 * -errno when it cannot be read (the process is gone).
 */
int symbolizer__load(struct symbolizer *s, char *err, size_t errlen);
/* PID exec'd at TIME_NS (CLOCK_MONOTONIC): a new, empty address space from then on. */
int symbolizer__exec(struct symbolizer *s, uint64_t time_ns);
/* A file mapped executable at START..START+LEN, from file offset PGOFF; "[vdso]" for the vdso. */
int symbolizer__map(struct symbolizer *s, uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *name);
/* CHILD forked from PARENT: it maps what the parent maps now. */
int symbolizer__fork(struct symbolizer *child, const struct symbolizer *parent);
/* Whether anything was ever mapped (a snapshot or a report). */
bool symbolizer__known(const struct symbolizer *s);

/*
 * Names ADDR as it was mapped at TIME_NS: sets *FRAMES to its frames,
 * innermost first (Go functions inlined there, then the function that
 * holds it), and returns how many; always at least one. LEAF is true for
 * the interrupted PC; other frames are return addresses, looked up one
 * byte earlier so that they land in the call. Frames live until the next
 * call.
 */
size_t symbolizer__frames(struct symbolizer *s, uint64_t time_ns, uint64_t addr, bool leaf,
			  const struct frame **frames);

/*
 * The caller that a frame-pointer walk from LEAF missed, or 0. A Go
 * function interrupted before it set up its frame pointer (frameless leaves,
 * prologues, epilogues) still has the caller's BP, so the walk goes from
 * LEAF to the caller's caller. The pcsp table tells whether that is so at
 * LEAF, and where the return address is: SP + delta. Any function at its
 * first instruction (a uprobe) has it at SP. TOP holds the words at SP and
 * SP + 8; FAR (amd64): the delta the instruction at LEAF says, and the word
 * there (SAMPLE_F_TOP_FAR). The result is one of those words, and only
 * when it returns into a named function.
 */
uint64_t symbolizer__leaf_caller(struct symbolizer *s, uint64_t time_ns, uint64_t leaf,
				 uint64_t sp, uint64_t bp, const uint64_t top[2], bool far);

/* The SP delta at PC (objfile__sp_delta), or -1 when not known. */
int32_t symbolizer__sp_delta(struct symbolizer *s, uint64_t time_ns, uint64_t pc);

/* The mapped file that holds an address: for pprof's mappings. */
struct mapping {
	uint64_t start, limit; /* in the process */
	uint64_t offset; /* file offset of START */
	const char *file; /* the path the process mapped, "[vdso]" for the vdso */
	const char *build_id; /* hex, "" when the file has none */
};

/* The mapping of ADDR at TIME_NS; false when no file holds it. Strings live as long as S. */
bool symbolizer__mapping(struct symbolizer *s, uint64_t time_ns, uint64_t addr,
			 struct mapping *out);

#endif /* __SYMBOLIZER_H */
