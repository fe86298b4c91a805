/* SPDX-License-Identifier: GPL-2.0 */
/* trace_ids.h: the trace and span IDs in a goroutine's labels, or in the traceparent of what it serves. */
#ifndef __TRACE_IDS_H
#define __TRACE_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/ctxprof.h"

#define TRACE_ID_LEN (TRACE_HEX_LEN / 2)
#define SPAN_ID_LEN 8

/* Which labels hold the IDs, in order of preference: the first key present decides. */
struct trace_keys {
	const char *const *trace;
	size_t ntrace;
	const char *const *span;
	size_t nspan;
};

/* What trace_ids__from_labels found. */
#define TRACE_IDS_TRACE (1U << 0)
#define TRACE_IDS_SPAN (1U << 1)

/*
 * The IDs the N LABELS hold under KEYS, packed into TRACE and SPAN: a key
 * whose value is not hex of the right length gives none. The trace ID is
 * 32 hex digits; Datadog's "span id" is a decimal u64, other span keys 16
 * hex digits, or else decimal (a 16-digit decimal value there reads as
 * hex). TRACE_IDS_* bits of what was found.
 */
unsigned int trace_ids__from_labels(const struct go_label *labels, uint32_t n,
				    const struct trace_keys *keys, uint8_t trace[TRACE_ID_LEN],
				    uint8_t span[SPAN_ID_LEN]);

/* 2 * NBYTES hex digits at DIGITS (either case) packed into OUT; false on anything else. */
bool trace_ids__pack_hex(const uint8_t *digits, size_t nbytes, uint8_t *out);

/* N bytes as 2 * N lowercase hex digits and a NUL, into OUT. */
void trace_ids__hex(const uint8_t *b, size_t n, char *out);

/*
 * A W3C traceparent, "VV-<32 hex trace ID>-<16 hex parent span ID>-FF", in
 * L's value: its IDs into TRACE and SPAN. False for what W3C Trace Context
 * calls invalid in its first 55 characters: version ff, anything but
 * lowercase hex, an all-zero ID.
 */
bool trace_ids__from_traceparent(const struct go_label *l, uint8_t trace[TRACE_ID_LEN],
				 uint8_t span[SPAN_ID_LEN]);

#endif /* __TRACE_IDS_H */
