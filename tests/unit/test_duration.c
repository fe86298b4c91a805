// SPDX-License-Identifier: GPL-2.0
/* test_duration.c: -d and -i's values, plain seconds or Go durations, and what is refused. */
#include "cmd/util/duration.h"
#include "tap.h"

/* The seconds S gives, or "refused" */
static const char *seconds(const char *s)
{
	double d;

	return duration__seconds(s, &d) ? "refused" : desc("%g", d);
}

int main(void)
{
	check_str("plain seconds", "10", seconds("10"));
	check_str("a fraction of a second", "0.5", seconds("0.5"));
	check_str("milliseconds, not minutes then seconds", "1.5", seconds("1500ms"));
	check_str("minutes and seconds", "90", seconds("1m30s"));
	check_str("microseconds, as Go writes them", "2e-06", seconds("2\xc2\xb5s"));
	check_str("an hour", "3600", seconds("1h"));
	check_str("zero is refused", "refused", seconds("0"));
	check_str("past 1e7 s is refused", "refused", seconds("10000001"));
	check_str("an unknown unit", "refused", seconds("10x"));
	check_str("a unit alone", "refused", seconds("ms"));
	check_str("nothing", "refused", seconds(""));
	check_str("a negative duration", "refused", seconds("-5"));
	return tap_done();
}
