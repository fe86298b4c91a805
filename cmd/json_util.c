// SPDX-License-Identifier: GPL-2.0
/* json_util.c: JSON values from bytes a target controls: any bytes in, valid UTF-8 JSON out. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_util.h"

size_t utf8_seq(const uint8_t *s, size_t len)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Copies S into a fresh buffer of valid UTF-8; *OUTLEN gets its length. */
static char *valid_utf8(const uint8_t *s, size_t len, size_t *outlen)
{
	static const char replacement[] = "\xef\xbf\xbd";
	char *out = malloc(3 * len + 1), *p = out;
	size_t i = 0, n;

	if (!out)
		return NULL;
	while (i < len) {
		n = utf8_seq(s + i, len - i);
		if (n) {
			memcpy(p, s + i, n);
			p += n;
			i += n;
		} else {
			memcpy(p, replacement, 3);
			p += 3;
			i++;
		}
	}
	*p = '\0';
	*outlen = p - out;
	return out;
}

json_t *json_lossy_string(const uint8_t *s, size_t len)
{
	size_t n;
	char *v = valid_utf8(s, len, &n);
	json_t *j;

	if (!v)
		return NULL;
	j = json_stringn(v, n);
	free(v);
	return j;
}

int json_object_set_lossy(json_t *obj, const uint8_t *key, size_t len, json_t *value)
{
	size_t n;
	char *k = valid_utf8(key, len, &n);
	int ret;

	if (!k) {
		json_decref(value);
		return -1;
	}
	ret = json_object_setn_new(obj, k, n, value);
	free(k);
	return ret;
}

void format_rfc3339(uint64_t realtime_ns, char *buf, size_t len)
{
	time_t sec = realtime_ns / 1000000000ULL;
	struct tm tm;
	char date[32];

	gmtime_r(&sec, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%06uZ", date, (unsigned int)(realtime_ns % 1000000000ULL / 1000));
}
