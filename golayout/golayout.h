/* SPDX-License-Identifier: GPL-2.0 */
/* golayout.h: Go runtime layouts per Go release, for binaries that carry no DWARF. */
#ifndef __GOLAYOUT_H
#define __GOLAYOUT_H

#include <stdbool.h>
#include <stddef.h>

#include "../bpf/ctxprof.h"

/*
 * runtime.g's scheduling members, which --wall reads besides the ones CPU
 * sampling has; KNOWN only where a toolchain here measured them (the
 * public reference has none).
 */
struct golayout_wall {
	bool known;
	__u32 g_status, g_waitreason, g_sched, gobuf_sp, gobuf_pc, gobuf_bp, g_syscallsp,
		g_syscallpc, gobuf_lr;
};

struct golayout_row {
	int major, minor;
	/* true: extracted here from a build by that toolchain; false: public reference */
	bool verified;
	const char *toolchain; /* "go1.21.13" for verified rows, "" otherwise */
	struct go_layout layout; /* tls_g_offset is per binary and always 0 here */
	__u32 md_gofunc; /* runtime.moduledata.gofunc; 0 before Go 1.18, which has none */
	struct golayout_wall wall;
};

/* The row for Go MAJOR.MINOR, or NULL. Never a neighbouring version. */
const struct golayout_row *golayout__lookup(int major, int minor);

size_t golayout__count(void);
const struct golayout_row *golayout__row(size_t idx);

/*
 * Struct members of Go modules (grpc-go, x/net, the OpenTelemetry SDK) by
 * module version, for binaries that carry no DWARF: golayout/modules.tsv.
 */
struct golayout_member {
	const char *module; /* "google.golang.org/grpc" */
	const char *version; /* "v1.64.0" */
	const char *toolchain; /* the Go that built what it was read from */
	const char *member; /* "transport.Stream.id" */
	__u32 offset;
};

/* The offset of MEMBER in MODULE at VERSION; -ENOENT when the table has none. */
int golayout__member(const char *module, const char *version, const char *member, __u32 *offset);
/* "v1.64.0, v1.66.2": the versions of MODULE the table has, for messages ("" if none). */
const char *golayout__module_versions(const char *module);

/*
 * Go MAJOR.MINOR's names of wait reasons (runtime.waitReasonStrings, by
 * index) from golayout/waitreasons.tsv, into OUT[0..MAX): how many, 0 when
 * the table has none for that release.
 */
size_t golayout__wait_reasons(int major, int minor, const char **out, size_t max);

/* "1.17 to 1.27": the versions the table covers, for messages. */
const char *golayout__range(void);

#endif /* __GOLAYOUT_H */
