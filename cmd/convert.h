/* SPDX-License-Identifier: GPL-2.0 */
/* convert.h: ctxprof-go's JSON records as a pprof profile or folded stacks, live or from a file. */
#ifndef __CONVERT_H
#define __CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>

struct convert;

struct convert *convert__new(void);
void convert__free(struct convert *c);

/*
 * Takes one record, as ctxprof-go writes it. Returns -EINVAL with the
 * reason in ERR when REC is not one, and then takes none of it.
 */
int convert__add(struct convert *c, json_t *rec, char *err, size_t errlen);

/* A gzip-compressed profile.proto of every record added. */
int convert__write_pprof(struct convert *c, const char *path);

/*
 * One "comm;root;...;leaf count" line per distinct stack, counts summed;
 * with TRACE_ROOT, the trace ID ("no-trace" for none) comes first. WALL:
 * the wall records (--wall) only, their state or wait reason as the leaf;
 * otherwise every other record.
 */
int convert__write_folded(struct convert *c, FILE *out, bool trace_root, bool wall);

/* `ctxprof-go convert`. */
int convert__main(int argc, char **argv);

#endif /* __CONVERT_H */
