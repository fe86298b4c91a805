// SPDX-License-Identifier: GPL-2.0
/* golayout.c: Go runtime layouts per Go release, for binaries that carry no DWARF. */
#include <stdio.h>

#include "golayout.h"

/* generated from golayout/golayout.tsv by golayout/tsv2c.awk */
#include "golayout_rows.inc"

#define NROWS (sizeof(rows) / sizeof(rows[0]))

const struct golayout_row *golayout__lookup(int major, int minor)
{
	size_t i;

	for (i = 0; i < NROWS; i++) {
		if (rows[i].major == major && rows[i].minor == minor)
			return &rows[i];
	}
	return NULL;
}

size_t golayout__count(void)
{
	return NROWS;
}

const struct golayout_row *golayout__row(size_t idx)
{
	return idx < NROWS ? &rows[idx] : NULL;
}

const char *golayout__range(void)
{
	static char buf[32];
	const struct golayout_row *lo = &rows[0], *hi = &rows[0];
	size_t i;

	for (i = 1; i < NROWS; i++) {
		if (rows[i].major * 1000 + rows[i].minor < lo->major * 1000 + lo->minor)
			lo = &rows[i];
		if (rows[i].major * 1000 + rows[i].minor > hi->major * 1000 + hi->minor)
			hi = &rows[i];
	}
	snprintf(buf, sizeof(buf), "%d.%d to %d.%d", lo->major, lo->minor, hi->major, hi->minor);
	return buf;
}
