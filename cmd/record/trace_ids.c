// SPDX-License-Identifier: GPL-2.0
/* trace_ids.c: the trace and span IDs in a goroutine's labels, or in a traceparent. */
#include <string.h>

#include "trace_ids.h"

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool trace_ids__pack_hex(const uint8_t *digits, size_t nbytes, uint8_t *out)
{
	size_t i;
	int hi, lo;

	for (i = 0; i < nbytes; i++) {
		hi = hexval(digits[2 * i]);
		lo = hexval(digits[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = hi << 4 | lo;
	}
	return true;
}

void trace_ids__hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Packs a value of exactly 2 * NBYTES hex digits into OUT; false on anything else. */
static bool pack_hex(const struct go_label *l, uint8_t *out, size_t nbytes)
{
	return l->value_len == 2 * nbytes && trace_ids__pack_hex(l->value, nbytes, out);
}

/*
 * A span ID written as a decimal u64 (dd-trace-go's "span id"), big-endian
 * into OUT, as its 16 hex digits read; false unless 1 to 20 digits that fit.
 */
static bool pack_decimal(const struct go_label *l, uint8_t out[SPAN_ID_LEN])
{
	uint64_t v = 0;
	uint32_t i;
	int d;

	if (l->value_len == 0 || l->value_len > 20)
		return false;
	for (i = 0; i < l->value_len; i++) {
		if (l->value[i] < '0' || l->value[i] > '9')
			return false;
		d = l->value[i] - '0';
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	for (i = 0; i < SPAN_ID_LEN; i++)
		out[i] = v >> (8 * (SPAN_ID_LEN - 1 - i));
	return true;
}

/* The label with the most preferred of KEYS, or NULL: the first key present decides. */
static const struct go_label *find_key(const struct go_label *labels, uint32_t n,
				       const char *const *keys, size_t nkeys)
{
	size_t k, len;
	uint32_t i;

	for (k = 0; k < nkeys; k++) {
		len = strlen(keys[k]);
		for (i = 0; i < n; i++) {
			if (labels[i].key_len == len && len <= MAX_KEY_LEN &&
			    !memcmp(labels[i].key, keys[k], len))
				return &labels[i];
		}
	}
	return NULL;
}

unsigned int trace_ids__from_labels(const struct go_label *labels, uint32_t n,
				    const struct trace_keys *keys, uint8_t trace[TRACE_ID_LEN],
				    uint8_t span[SPAN_ID_LEN])
{
	const struct go_label *l;
	unsigned int found = 0;
	bool dec;

	l = find_key(labels, n, keys->trace, keys->ntrace);
	if (l && pack_hex(l, trace, TRACE_ID_LEN))
		found |= TRACE_IDS_TRACE;
	l = find_key(labels, n, keys->span, keys->nspan);
	if (!l)
		return found;
	dec = l->key_len == 7 && !memcmp(l->key, "span id", 7);
	if (dec ? pack_decimal(l, span) || pack_hex(l, span, SPAN_ID_LEN) :
		  pack_hex(l, span, SPAN_ID_LEN) || pack_decimal(l, span))
		found |= TRACE_IDS_SPAN;
	return found;
}

/* N digits of lowercase hex, as W3C Trace Context requires, packed into OUT. */
static bool pack_lower_hex(const uint8_t *s, size_t n, uint8_t *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if ((s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f'))
			return false;
		out[i / 2] = (i % 2 ? out[i / 2] << 4 : 0) | hexval(s[i]);
	}
	return true;
}

static bool all_zero(const uint8_t *b, size_t n)
{
	while (n--) {
		if (*b++)
			return false;
	}
	return true;
}

bool trace_ids__from_traceparent(const struct go_label *l, uint8_t trace[TRACE_ID_LEN],
				 uint8_t span[SPAN_ID_LEN])
{
	uint8_t ver, flags, t[TRACE_ID_LEN], s[SPAN_ID_LEN];
	const uint8_t *v = l->value;

	if (l->value_len != TRACEPARENT_LEN || v[2] != '-' || v[35] != '-' || v[52] != '-' ||
	    !pack_lower_hex(v, 2, &ver) || ver == 0xff || !pack_lower_hex(v + 53, 2, &flags) ||
	    !pack_lower_hex(v + 3, 2 * TRACE_ID_LEN, t) || all_zero(t, TRACE_ID_LEN) ||
	    !pack_lower_hex(v + 36, 2 * SPAN_ID_LEN, s) || all_zero(s, SPAN_ID_LEN))
		return false;
	memcpy(trace, t, TRACE_ID_LEN);
	memcpy(span, s, SPAN_ID_LEN);
	return true;
}
