// SPDX-License-Identifier: GPL-2.0
/* util.c: bounds checks and error messages shared by the binary readers. */
#include <stdarg.h>
#include <stdio.h>

#include "util.h"

void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}
