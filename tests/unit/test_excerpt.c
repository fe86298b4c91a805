// SPDX-License-Identifier: GPL-2.0
/* test_excerpt.c: a server's answer quoted on one line: spaces folded, controls gone, UTF-8 whole, cut with an ellipsis. */
#include <string.h>

#include "cmd/util/excerpt.h"
#include "tap.h"

static char out[512];

/* The excerpt of S (N bytes; strlen when 0) at MAX. */
static const char *of(const char *s, size_t n, size_t max)
{
	excerpt(out, sizeof(out), s, n ? n : strlen(s), max);
	return out;
}

int main(void)
{
	char html[2048], want[256];
	size_t n, i;

	check_str("a short message as it is", "the sink was told to answer so",
		  of("the sink was told to answer so\n", 0, 200));
	check_str("newlines, tabs and runs of spaces: one space each, none at the ends", "a b c d",
		  of("\r\n  a\n\nb\t\tc \r\n d \n", 0, 200));
	check_str("C0 controls and DEL become spaces", "a b c", of("a\x01\x02" "b\x7f" "c", 0, 200));
	check_str("an escape sequence loses its ESC", "a [31mb c", of("a\x1b[31mb\x7f" "c", 0, 200));
	check_str("a NUL is a control too", "a b", of("a\0b", 3, 200));
	check_str("UTF-8 kept", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		  of("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0, 200));
	check_str("bytes that are no UTF-8: '?' each", "a?b?c??",
		  of("a\xff" "b\xc3" "c\xed\xa0", 0, 200));
	check_str("overlong forms are no UTF-8", "?" "?/", of("\xc0\xaf/", 0, 200));
	check_str("a C1 control (U+009B, CSI) is a control", "a 2J", of("a\xc2\x9b" "2J", 0, 200));
	check_str("nothing, or only spaces: empty", "", of(" \n\t ", 0, 200));

	/* a proxy's 501 page: one line, 200 bytes and the ellipsis */
	n = 0;
	n += snprintf(html + n, sizeof(html) - n,
		      "<!DOCTYPE html>\n<html>\n<head><title>501 Not Implemented</title></head>\n<body>\n");
	for (i = 0; i < 40; i++)
		n += snprintf(html + n, sizeof(html) - n, "<p>line %zu of the page</p>\n", i);
	n += snprintf(html + n, sizeof(html) - n, "</body>\n</html>\n");
	n = excerpt(out, sizeof(out), html, strlen(html), 200);
	check(n <= 200 + strlen(EXCERPT_CUT) && n > 190, "a long page: at most 200 bytes and the ellipsis",
	      "190 to 203 bytes", desc("%zu bytes", n));
	check(!strchr(out, '\n') && !strchr(out, '\r') && !strchr(out, '\t'), "on one line", "no newline", out);
	check(n >= 3 && !strcmp(out + n - 3, EXCERPT_CUT), "ending in an ellipsis", EXCERPT_CUT, out);
	snprintf(want, sizeof(want), "%.70s", out);
	check_str("from its start", "<!DOCTYPE html> <html> <head><title>501 Not Implemented</title></head>",
		  want);

	check_str("exactly MAX bytes: not cut", "0123456789", of("0123456789", 0, 10));
	check_str("one more: cut", "012345678" "9" EXCERPT_CUT, of("0123456789a", 0, 10));
	check_str("trailing spaces past MAX are no text left over", "0123456789", of("0123456789 \n ", 0, 10));
	check_str("a cut at a space: no space before the ellipsis", "01234" EXCERPT_CUT, of("01234 6789a", 0, 5));
	check_str("never inside a character: a euro sign that does not fit is left out",
		  "0123456" EXCERPT_CUT, of("0123456\xe2\x82\xac", 0, 9));
	n = excerpt(out, 8, "0123456789", 10, 200);
	check_str("a small buffer bounds it too, the ellipsis left out where it does not fit", "0123456", out);
	check_int("its length", 7, n);
	n = excerpt(out, 11, "0123456789abc", 13, 7);
	check_str("where it fits, in", "0123456" EXCERPT_CUT, out);
	return tap_done();
}
