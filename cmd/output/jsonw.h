/* SPDX-License-Identifier: GPL-2.0 */
/* jsonw.h: pieces of JSON text for the writers that build whole documents (the report page, speedscope). */
#ifndef __JSONW_H
#define __JSONW_H

#include <stddef.h>
#include <stdint.h>

#include "cmd/util/strbuf.h"

void jsonw__raw(struct strbuf *b, const char *s);
void jsonw__i64(struct strbuf *b, int64_t v);

/*
 * S[0..LEN), valid UTF-8 already, as a JSON string. Besides what JSON
 * escapes, '<', '>', '&', U+2028 and U+2029 are written as \u escapes:
 * the string can then sit in an HTML <script> element, which nothing in
 * it can end.
 */
void jsonw__str(struct strbuf *b, const char *s, size_t len);
void jsonw__cstr(struct strbuf *b, const char *s);

/* JSON text, copied with the escapes above inside its strings (the only place such characters are). */
void jsonw__text(struct strbuf *b, const char *s, size_t len);

#endif /* __JSONW_H */
