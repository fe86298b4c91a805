// SPDX-License-Identifier: GPL-2.0
/* jsonl.c: JSON lines read one at a time, each line and each string in it bounded as the bytes arrive. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"

#define CHUNK (64 * 1024)

struct jsonl {
	FILE *in;
	char *buf;
	size_t cap;
	size_t start, end; /* the unread bytes: buf[start..end) */
	size_t lineno;
	bool failed, eof;
};

struct jsonl *jsonl__new(FILE *in)
{
	struct jsonl *j = calloc(1, sizeof(*j));

	if (j)
		j->in = in;
	return j;
}

void jsonl__free(struct jsonl *j)
{
	if (!j)
		return;
	free(j->buf);
	free(j);
}

size_t jsonl__lineno(const struct jsonl *j)
{
	return j->lineno;
}

/* Bytes JSON allows outside its strings: white space, punctuation, numbers, true, false, null. */
static bool json_outside(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || (c >= '0' && c <= '9') ||
	       (c && strchr("{}[],:-+.eEtrufalsn", c));
}

/* Room for CHUNK more bytes after the unread ones, which move to the front. */
static int make_room(struct jsonl *j)
{
	size_t cap;
	char *p;

	if (j->start) {
		memmove(j->buf, j->buf + j->start, j->end - j->start);
		j->end -= j->start;
		j->start = 0;
	}
	if (j->cap - j->end >= CHUNK)
		return 0;
	cap = j->cap ? j->cap * 2 : 4 * CHUNK;
	while (cap - j->end < CHUNK)
		cap *= 2;
	p = realloc(j->buf, cap);
	if (!p)
		return -ENOMEM;
	j->buf = p;
	j->cap = cap;
	return 0;
}

/* Stops J for good: ERR says why (FMT), and RC is what jsonl__next returns. */
__attribute__((format(printf, 5, 6))) static int fail(struct jsonl *j, int rc, char *err,
						      size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	j->failed = true;
	return rc;
}

int jsonl__next(struct jsonl *j, const char **line, size_t *len, char *err, size_t errlen)
{
	size_t pos = 0, str_start = 0, n;
	bool in_str = false, esc = false;
	unsigned char c;
	int ret;

	if (j->failed || (j->eof && j->start == j->end))
		return 0;
	j->lineno++;
	for (;;) {
		/* pos counts from the line's start, which make_room may move */
		for (; j->start + pos < j->end; pos++) {
			c = j->buf[j->start + pos];
			if (c == '\n') {
				*line = j->buf + j->start;
				*len = pos + 1;
				j->start += pos + 1;
				return 1;
			}
			if (in_str) {
				if (esc)
					esc = false;
				else if (c == '\\')
					esc = true;
				else if (c == '"')
					in_str = false;
				if (pos - str_start > JSONL_MAX_STRING)
					return fail(j, -E2BIG, err, errlen,
						    "a string longer than %lu MiB, the limit of one "
						    "(from column %zu)",
						    JSONL_MAX_STRING >> 20, str_start + 1);
			} else if (c == '"') {
				in_str = true;
				str_start = pos;
			} else if (!json_outside(c)) {
				return fail(j, -EINVAL, err, errlen,
					    "byte 0x%02x at column %zu is not JSON (a binary file?)", c,
					    pos + 1);
			}
		}
		if (pos >= JSONL_MAX_LINE)
			return fail(j, -E2BIG, err, errlen,
				    "a line longer than %lu MiB, the limit of a record",
				    JSONL_MAX_LINE >> 20);
		if (j->eof) {
			/* the last line, with no newline */
			*line = j->buf + j->start;
			*len = pos;
			j->start = j->end;
			return 1;
		}
		if ((ret = make_room(j)))
			return fail(j, ret, err, errlen, "%s", strerror(-ret));
		n = fread(j->buf + j->end, 1, j->cap - j->end, j->in);
		j->end += n;
		if (n == 0) {
			if (ferror(j->in)) {
				ret = errno ? -errno : -EIO;
				return fail(j, ret, err, errlen, "%s", strerror(-ret));
			}
			j->eof = true;
			if (pos == 0) {
				j->lineno--;
				return 0;
			}
		}
	}
}
