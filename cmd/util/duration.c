// SPDX-License-Identifier: GPL-2.0
/* duration.c: -d and -i's values: plain seconds, or durations as Go writes them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

/* A Go duration's units, two-letter ones first so that "ms" is not "m" then "s". */
static const struct {
	const char *name;
	double seconds;
} duration_units[] = {
	{ "ns", 1e-9 }, { "us", 1e-6 }, { "\xc2\xb5s", 1e-6 }, { "\xce\xbcs", 1e-6 },
	{ "ms", 1e-3 }, { "s", 1 },	{ "m", 60 },		   { "h", 3600 },
};

/* S as Go writes durations: decimal numbers each with a unit, "1m30s"; -1 if it is none. */
static int go_duration(const char *s, double *out)
{
	char num[32], *end;
	size_t n, i;
	double v;

	*out = 0;
	while (*s) {
		n = strspn(s, "0123456789.");
		if (!n || n >= sizeof(num) || !strpbrk(memcpy(num, s, n), "0123456789"))
			return -1;
		num[n] = '\0';
		v = strtod(num, &end);
		if (*end)
			return -1;
		s += n;
		for (i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++)
			if (!strncmp(s, duration_units[i].name, strlen(duration_units[i].name)))
				break;
		if (i == sizeof(duration_units) / sizeof(duration_units[0]))
			return -1;
		*out += v * duration_units[i].seconds;
		s += strlen(duration_units[i].name);
	}
	return 0;
}

int duration__seconds(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end) {
		errno = 0;
		if (!*s || go_duration(s, out))
			return -1;
	}
	return *out <= 0 || *out > 1e7 ? -1 : 0;
}
