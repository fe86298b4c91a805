// SPDX-License-Identifier: GPL-2.0
/* strbuf.c: a growable byte buffer that remembers running out of memory. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

void strbuf__free(struct strbuf *b)
{
	free(b->p);
	*b = (struct strbuf){};
}

void strbuf__put(struct strbuf *b, const void *s, size_t n)
{
	size_t cap;
	char *p;

	/* nothing to put, and S may be NULL (an empty list's items): memcpy must not see it */
	if (!n)
		return;

	if (b->n + n > b->cap) {
		cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n)
			cap *= 2;
		p = b->oom ? NULL : realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

void strbuf__printf(struct strbuf *b, const char *fmt, ...)
{
	char small[256], *big;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		strbuf__put(b, small, n);
		return;
	}
	big = malloc(n + 1);
	if (!big) {
		b->oom = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, n + 1, fmt, ap);
	va_end(ap);
	strbuf__put(b, big, n);
	free(big);
}
