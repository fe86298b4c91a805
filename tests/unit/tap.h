/* SPDX-License-Identifier: GPL-2.0 */
/* tap.h: TAP-style verdicts for the unit tests, one line per check, and the exit status. */
#ifndef __TAP_H
#define __TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int *tap_failures(void)
{
	static int failures;

	return &failures;
}

/* Verdicts printed so far, for the plan that tap_done prints. */
static inline int *tap_verdicts(void)
{
	static int verdicts;

	return &verdicts;
}

/*
 * printf into one shared buffer, for building a description in place:
 * check_int(desc("lookup 0x%llx", pc), ...). One description at a time.
 */
static inline const char *desc(const char *fmt, ...)
{
	static char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return buf;
}

/* The one place a verdict is printed; GOT is what the check saw. */
static inline bool verdict(bool pass, const char *what, const char *expected, const char *got)
{
	(*tap_verdicts())++;
	if (pass) {
		printf("ok - %s: %s\n", what, got);
	} else {
		printf("not ok - %s: expected %s, got %s\n", what, expected, got);
		(*tap_failures())++;
	}
	return pass;
}

static inline bool check_int(const char *what, long long expected, long long got)
{
	char e[32], g[32];

	snprintf(e, sizeof(e), "%lld", expected);
	snprintf(g, sizeof(g), "%lld", got);
	return verdict(expected == got, what, e, g);
}

static inline bool check_hex(const char *what, unsigned long long expected,
			     unsigned long long got)
{
	char e[32], g[32];

	snprintf(e, sizeof(e), "0x%llx", expected);
	snprintf(g, sizeof(g), "0x%llx", got);
	return verdict(expected == got, what, e, g);
}

static inline const char *quote(char *buf, size_t size, const char *s)
{
	if (s)
		snprintf(buf, size, "\"%s\"", s);
	else
		snprintf(buf, size, "NULL");
	return buf;
}

static inline bool check_str(const char *what, const char *expected, const char *got)
{
	char e[128], g[128];
	bool same = expected && got ? strcmp(expected, got) == 0 : expected == got;

	return verdict(same, what, quote(e, sizeof(e), expected), quote(g, sizeof(g), got));
}

/* A condition with words for both outcomes: check(x != NULL, "open", "a table", "NULL"). */
static inline bool check(bool cond, const char *what, const char *expected, const char *got)
{
	return verdict(cond, what, expected, cond ? expected : got);
}

static inline void skip(const char *what, const char *why)
{
	(*tap_verdicts())++;
	printf("ok - %s # SKIP %s\n", what, why);
}

/* An exact-size heap copy, so that ASan reports any read past LEN. */
static inline uint8_t *dup_exact(const void *p, size_t len)
{
	uint8_t *q = malloc(len ? len : 1);

	if (!q) {
		perror("malloc");
		exit(2);
	}
	if (len)
		memcpy(q, p, len);
	return q;
}

/*
 * The plan, "1..N" for the N verdicts printed, and the exit status for
 * main: 1 if any check failed. tests/run.sh fails a test whose plan is
 * missing or does not match, which is what a crash half-way leaves.
 */
static inline int tap_done(void)
{
	printf("1..%d\n", *tap_verdicts());
	fflush(stdout);
	return *tap_failures() ? 1 : 0;
}

#endif /* __TAP_H */
