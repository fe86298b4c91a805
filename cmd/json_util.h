/* SPDX-License-Identifier: GPL-2.0 */
/* json_util.h: JSON values from bytes a target controls: any bytes in, valid UTF-8 JSON out. */
#ifndef __JSON_UTIL_H
#define __JSON_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* A JSON string of S[0..LEN): invalid UTF-8 becomes U+FFFD, NUL stays \u0000. */
json_t *json_lossy_string(const uint8_t *s, size_t len);
/* Sets OBJ[KEY[0..LEN)] = VALUE (stolen), the key made valid the same way. */
int json_object_set_lossy(json_t *obj, const uint8_t *key, size_t len, json_t *value);

/* Length of the valid UTF-8 sequence at S (at most LEN bytes, LEN > 0), or 0. */
size_t utf8_seq(const uint8_t *s, size_t len);

/* "2026-11-22T11:40:01.123456Z" for a CLOCK_REALTIME time in ns. */
void format_rfc3339(uint64_t realtime_ns, char *buf, size_t len);

#endif /* __JSON_UTIL_H */
