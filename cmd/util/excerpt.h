/* SPDX-License-Identifier: GPL-2.0 */
/* excerpt.h: the start of a text from elsewhere (a server's answer) as one short, printable line. */
#ifndef __EXCERPT_H
#define __EXCERPT_H

#include <stddef.h>

/* what an excerpt ends with when it is cut: U+2026 */
#define EXCERPT_CUT "\xe2\x80\xa6"

/*
 * At most MAX bytes of SRC[0..N) on one line, into DST (LEN bytes; more
 * than MAX + 3 for every cut excerpt to fit): white space and control
 * characters, newlines included, become single spaces, a byte that is no
 * part of valid UTF-8 becomes '?', none of either at the ends, and a
 * character is never cut. When text is left over, the excerpt ends in
 * EXCERPT_CUT. Returns its length.
 */
size_t excerpt(char *dst, size_t len, const void *src, size_t n, size_t max);

#endif /* __EXCERPT_H */
