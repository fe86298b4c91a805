/* SPDX-License-Identifier: GPL-2.0 */
/* outfile.h: files ctxprof-go writes are private: records carry labels, which may name tenants and users. */
#ifndef __OUTFILE_H
#define __OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Opens PATH for writing, truncated or, with APPEND, appended to; "-" is
 * stdout. A file it creates gets mode 0600 (as perf record's); an existing
 * one keeps its mode. A descriptor (close-on-exec), or -errno.
 */
int outfile__open(const char *path, bool append);
/* The same as a stdio stream; NULL with errno set. */
FILE *outfile__fopen(const char *path, bool append);
/* PATH made anew (as outfile__open) holding LEN bytes of BUF, every write and the close checked; 0 or -errno. */
int outfile__write(const char *path, const void *buf, size_t len);

#endif /* __OUTFILE_H */
