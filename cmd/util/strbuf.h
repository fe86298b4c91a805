/* SPDX-License-Identifier: GPL-2.0 */
/* strbuf.h: a growable byte buffer that remembers running out of memory, for writers that check once at the end. */
#ifndef __STRBUF_H
#define __STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

void strbuf__free(struct strbuf *b);
/* Appends S[0..N) to B; on failure B keeps what it had and oom is set. */
void strbuf__put(struct strbuf *b, const void *s, size_t n);
/* Appends the text printf makes of FMT; on failure as strbuf__put. */
void strbuf__printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* __STRBUF_H */
