// SPDX-License-Identifier: GPL-2.0
/* golayout.c: Go runtime layouts per Go release, for binaries that carry no DWARF. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "golayout.h"

/* generated from golayout/golayout.tsv by golayout/tsv2c.awk */
#include "golayout_rows.inc"
/* generated from golayout/modules.tsv by golayout/modules2c.awk */
#include "golayout_members.inc"

/* generated from golayout/waitreasons.tsv by golayout/reasons2c.awk */
#include "golayout_reasons.inc"

#define NMEMBERS (sizeof(members) / sizeof(members[0]))

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

int golayout__member(const char *module, const char *version, const char *member, __u32 *offset)
{
	size_t i;

	for (i = 0; i < NMEMBERS; i++) {
		if (members[i].module && !strcmp(members[i].module, module) &&
		    !strcmp(members[i].version, version) && !strcmp(members[i].member, member)) {
			*offset = members[i].offset;
			return 0;
		}
	}
	return -ENOENT;
}

const char *golayout__module_versions(const char *module)
{
	static char buf[256];
	size_t i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < NMEMBERS; i++) {
		if (!members[i].module || strcmp(members[i].module, module) ||
		    (i && members[i - 1].module && !strcmp(members[i - 1].module, module) &&
		     !strcmp(members[i - 1].version, members[i].version)))
			continue;
		len += snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s%s",
				len ? ", " : "", members[i].version);
		if (len >= sizeof(buf))
			break;
	}
	return buf;
}

size_t golayout__wait_reasons(int major, int minor, const char **out, size_t max)
{
	size_t i, n = 0;

	/* the generator checked that each release's indices run 0, 1, 2... in order */
	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		if (reasons[i].major == major && reasons[i].minor == minor && n < max)
			out[n++] = reasons[i].reason;
	}
	return n;
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
