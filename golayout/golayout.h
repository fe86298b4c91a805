/* SPDX-License-Identifier: GPL-2.0 */
/* golayout.h: Go runtime layouts per Go release, for binaries that carry no DWARF. */
#ifndef __GOLAYOUT_H
#define __GOLAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "../bpf/ctxprof.h"

struct golayout_row {
	int major, minor;
	/* true: extracted here from a build by that toolchain; false: public reference */
	bool verified;
	const char *toolchain; /* "go1.21.13" for verified rows, "" otherwise */
	struct go_layout layout; /* tls_g_offset is per binary and always 0 here */
	__u32 md_gofunc; /* runtime.moduledata.gofunc; 0 before Go 1.18, which has none */
};

/* The row for Go MAJOR.MINOR, or NULL. Never a neighbouring version. */
const struct golayout_row *golayout__lookup(int major, int minor);

size_t golayout__count(void);
const struct golayout_row *golayout__row(size_t idx);

/* "1.17 to 1.27": the versions the table covers, for messages. */
const char *golayout__range(void);

#endif /* __GOLAYOUT_H */
