/* SPDX-License-Identifier: GPL-2.0 */
/* util.h: bounds checks and error messages shared by the binary readers. */
#ifndef __OFFSETS_UTIL_H
#define __OFFSETS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when [off, off + len) lies inside a buffer of SIZE bytes, without overflow. */
static inline bool in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* Formats a message into ERR[0..ERRLEN); does nothing when ERR is NULL. */
void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* __OFFSETS_UTIL_H */
