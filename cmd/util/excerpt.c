// SPDX-License-Identifier: GPL-2.0
/* excerpt.c: the start of a text from elsewhere (a server's answer) as one short, printable line. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "excerpt.h"

/*
 * The length of the UTF-8 character at P (at most N bytes), 0 when the
 * bytes are none; *PRINTABLE false for the C1 controls (U+0080..U+009F),
 * which terminals obey as the C0 ones.
 */
static size_t utf8_char(const uint8_t *p, size_t n, bool *printable)
{
	size_t len, i;

	*printable = true;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* overlong forms, surrogates, past U+10FFFF */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	*printable = !(p[0] == 0xc2 && p[1] < 0xa0);
	return len;
}

size_t excerpt(char *dst, size_t len, const void *src, size_t n, size_t max)
{
	const uint8_t *s = src;
	size_t i = 0, out = 0, c;
	bool space = false, printable;

	if (!len)
		return 0;
	if (max > len - 1)
		max = len - 1;
	while (i < n) {
		c = s[i] < 0x80 ? 1 : utf8_char(s + i, n - i, &printable);
		if (c == 1 && (s[i] <= ' ' || s[i] == 0x7f)) {
			/* a run of them is one space, and none before the first word */
			space = out > 0;
			i++;
			continue;
		}
		if (c > 1 && !printable) {
			space = out > 0;
			i += c;
			continue;
		}
		if (out + space + (c ? c : 1) > max)
			break;
		if (space)
			dst[out++] = ' ';
		space = false;
		if (c)
			memcpy(dst + out, s + i, c);
		else
			dst[out] = '?';
		out += c ? c : 1;
		i += c ? c : 1;
	}
	if (i < n && out + sizeof(EXCERPT_CUT) <= len) {
		memcpy(dst + out, EXCERPT_CUT, sizeof(EXCERPT_CUT) - 1);
		out += sizeof(EXCERPT_CUT) - 1;
	}
	dst[out] = '\0';
	return out;
}
