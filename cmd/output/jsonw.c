// SPDX-License-Identifier: GPL-2.0
/* jsonw.c: pieces of JSON text, safe inside an HTML <script> element. */
#include <stdio.h>
#include <string.h>

#include "jsonw.h"

void jsonw__raw(struct strbuf *b, const char *s)
{
	strbuf__put(b, s, strlen(s));
}

/* Without printf: a page holds millions of numbers */
void jsonw__i64(struct strbuf *b, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do
		*--p = '0' + u % 10;
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	strbuf__put(b, p, buf + sizeof(buf) - p);
}

/*
 * What could end a <script> element (</script>, <!--) or what old parsers
 * take for line ends, at S[I]: its escape in OUT and the bytes it takes,
 * or 0.
 */
static size_t script_escape(const char *s, size_t len, size_t i, char out[8])
{
	const unsigned char c = s[i];

	if (c == '<' || c == '>' || c == '&') {
		snprintf(out, 8, "\\u%04x", c);
		return 1;
	}
	if (c == 0xe2 && i + 2 < len && (unsigned char)s[i + 1] == 0x80 &&
	    ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
		snprintf(out, 8, "\\u%04x", (unsigned char)s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
		return 3;
	}
	return 0;
}

void jsonw__text(struct strbuf *b, const char *s, size_t len)
{
	size_t i = 0, run = 0, n;
	char esc[8];

	while (i < len) {
		if (!(n = script_escape(s, len, i, esc))) {
			i++;
			run++;
			continue;
		}
		strbuf__put(b, s + i - run, run);
		strbuf__put(b, esc, 6);
		run = 0;
		i += n;
	}
	strbuf__put(b, s + i - run, run);
}

void jsonw__str(struct strbuf *b, const char *s, size_t len)
{
	size_t i = 0, run = 0, n = 0;
	unsigned char c;
	char esc[8];

	strbuf__put(b, "\"", 1);
	while (i < len) {
		c = s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && !(n = script_escape(s, len, i, esc))) {
			i++;
			run++;
			continue;
		}
		strbuf__put(b, s + i - run, run);
		run = 0;
		if (c < 0x20 || c == '"' || c == '\\') {
			if (c == '"' || c == '\\')
				snprintf(esc, sizeof(esc), "\\%c", c);
			else
				snprintf(esc, sizeof(esc), "\\u%04x", c);
			strbuf__put(b, esc, strlen(esc));
			i++;
		} else {
			strbuf__put(b, esc, 6);
			i += n;
		}
	}
	strbuf__put(b, s + i - run, run);
	strbuf__put(b, "\"", 1);
}

void jsonw__cstr(struct strbuf *b, const char *s)
{
	jsonw__str(b, s, strlen(s));
}
