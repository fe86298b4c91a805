/* SPDX-License-Identifier: GPL-2.0 */
/* profdict.h: what a pprof profile and an OTLP request both hold once each: strings, functions, mappings, locations. */
#ifndef __PROFDICT_H
#define __PROFDICT_H

#include <stddef.h>
#include <stdint.h>

#include "rec.h"

/*
 * Strings are numbered from 0, which is ""; functions, mappings and
 * locations from 1, 0 meaning none: the numbers of pprof's profile.proto,
 * and the indexes of OTLP's tables, whose entry 0 is the empty one.
 */
struct profdict_function {
	uint64_t name, file; /* strings */
};

struct profdict_mapping {
	uint64_t start, limit, offset;
	uint64_t file, build_id; /* strings */
};

struct profdict_line {
	uint64_t function;
	int64_t line; /* 0: unknown */
};

/* One address: the frames inlined there, innermost first, then the function that holds it. */
struct profdict_location {
	uint64_t mapping, addr;
	size_t nlines;
	struct profdict_line lines[];
};

struct profdict;

struct profdict *profdict__new(void);
void profdict__free(struct profdict *d); /* accepts NULL */

/* The number of S, added when new; 0 also when out of memory (see profdict__oom). */
uint64_t profdict__string(struct profdict *d, const char *s);
/* The same for S[0..LEN) made valid UTF-8 (U+FFFD for invalid bytes). */
uint64_t profdict__valid(struct profdict *d, const uint8_t *s, size_t len);

/*
 * The location of ST's frames from *I on: every frame at one address (the
 * inlined ones, then the one that is not), in R's process; *I moves past
 * them. Its mapping is R's that covers the address, if any.
 */
uint64_t profdict__location(struct profdict *d, const struct rec *r, const struct rec_stack *st,
			    size_t *i);

/* Whether an allocation failed since the dictionary was made: its numbers may then be 0. */
/*
 * A location of no address, one frame named NAME ("[running]"): what a
 * sample with no frames stands in, so that pprof's -top shows it.
 */
uint64_t profdict__pseudo(struct profdict *d, const char *name);
bool profdict__oom(const struct profdict *d);

/* The tables, for encoders: entry I of each has the number I (strings) or I + 1 (the rest). */
const char *const *profdict__strings(const struct profdict *d, size_t *n);
const struct profdict_function *profdict__functions(const struct profdict *d, size_t *n);
const struct profdict_mapping *profdict__mappings(const struct profdict *d, size_t *n);
const struct profdict_location *const *profdict__locations(const struct profdict *d, size_t *n);

#endif /* __PROFDICT_H */
