/* SPDX-License-Identifier: GPL-2.0 */
/* jsonl.h: JSON lines read one at a time, bounded: a line or a string over its limit is refused as it arrives, not after it is all in memory. */
#ifndef __JSONL_H
#define __JSONL_H

#include <stddef.h>
#include <stdio.h>

/*
 * The limits of one line and of one string in it (as written, escapes
 * counted). The recorder writes no string longer (it cuts one there) and
 * no record comes near a line's.
 */
#define JSONL_MAX_STRING (1UL << 20)
#define JSONL_MAX_LINE (1UL << 30)

struct jsonl;

struct jsonl *jsonl__new(FILE *in);
void jsonl__free(struct jsonl *j); /* accepts NULL */

/*
 * The next line in *LINE, its newline kept when it has one (the last line
 * may not), valid until the next call. 1: a line; 0: end of input.
 * Negative, with the reason in ERR, and the input is read no further:
 * -E2BIG, a line or a string over its limit; -EINVAL, a byte that no JSON
 * holds outside a string (a binary file); -errno, a read error.
 */
int jsonl__next(struct jsonl *j, const char **line, size_t *len, char *err, size_t errlen);

/* The number of the line jsonl__next returned last, from 1. */
size_t jsonl__lineno(const struct jsonl *j);

#endif /* __JSONL_H */
