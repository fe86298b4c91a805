/* SPDX-License-Identifier: GPL-2.0 */
/* symbolizer.h: names the addresses of one process: Go and C functions, file and line. */
#ifndef __SYMBOLIZER_H
#define __SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symbolizer;

struct frame {
	const char *func; /* "main.burn", or "0x7f3a..." when nothing names it */
	const char *file; /* NULL when unknown */
	int line; /* 0 when unknown */
	bool inlined; /* its code was inlined into the next frame's function */
};

/*
 * Reads PID's mappings and opens the files behind them now, while the
 * process is alive, so that its samples can still be named after it exits.
 */
struct symbolizer *symbolizer__new(pid_t pid, char *err, size_t errlen);
void symbolizer__free(struct symbolizer *s);

/*
 * Names ADDR: sets *FRAMES to its frames, innermost first (Go functions
 * inlined there, then the function that holds it), and returns how many;
 * always at least one. LEAF is true for the interrupted PC; other frames
 * are return addresses, looked up one byte earlier so that they land in
 * the call. Frames and strings live as long as the symbolizer.
 */
size_t symbolizer__frames(struct symbolizer *s, uint64_t addr, bool leaf,
			  const struct frame **frames);

/*
 * The caller that a frame-pointer walk from LEAF missed, or 0. A Go
 * function interrupted before it set up its frame pointer (frameless leaves,
 * prologues, epilogues) still has the caller's BP, so the walk goes from
 * LEAF to the caller's caller. The pcsp table tells whether that is so at
 * LEAF, and where the return address is: SP + delta. Any function at its
 * first instruction (a uprobe) has it at SP. TOP holds the words at SP and
 * SP + 8; the result is one of them, and only when it returns into a named
 * function.
 */
uint64_t symbolizer__leaf_caller(struct symbolizer *s, uint64_t leaf, uint64_t sp, uint64_t bp,
				 const uint64_t top[2]);

/* The mapped file that holds an address: for pprof's mappings. */
struct mapping {
	uint64_t start, limit; /* in the process */
	const char *file; /* "" for anonymous memory or the vdso */
	const char *build_id; /* hex, "" when the file has none */
};

/* The mapping of ADDR; false when no file holds it. Strings live as long as S. */
bool symbolizer__mapping(struct symbolizer *s, uint64_t addr, struct mapping *out);

#endif /* __SYMBOLIZER_H */
