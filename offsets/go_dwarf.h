/* SPDX-License-Identifier: GPL-2.0 */
/* go_dwarf.h: runtime struct offsets and the labels layout, read from a Go binary's DWARF. */
#ifndef __GO_DWARF_H
#define __GO_DWARF_H

#include <stdbool.h>
#include <stddef.h>

#include "elf_image.h"
#include "go_wall.h"

#include "../bpf/ctxprof.h"

struct go_dwarf_result {
	/* offsets and labels_layout; tls_g_offset is left alone */
	struct go_layout layout;
	/*
	 * False when the binary does not link runtime/pprof: its labels type is
	 * absent and labels_layout stays 0.
	 */
	bool have_labels_type;
	/* runtime.moduledata.gofunc, where inlining trees are found (Go 1.18+); 0 if absent */
	__u32 md_gofunc;
	/* runtime.workType.cycles, the number of GC cycles started; 0 if absent */
	__u32 work_cycles;
	/* WANT_HTTP and layout.hdr.map is 0: why net/http's request headers were not found */
	char http_err[160];
	/* likewise for WANT_GRPC and layout.grpc.ok, WANT_OTEL and layout.otel.ok */
	char grpc_err[160];
	char otel_err[160];
	/* the scheduling members of runtime.g, for --wall; wall.ok false when one is missing */
	struct go_wall_offsets wall;
};

/*
 * Reads the members ctxprof-go needs from the "runtime" compile units only,
 * where Go's linker puts every type, inflating no more of .debug_info than
 * it takes to reach them. Returns 0; -ENOENT when a needed type
 * or member is missing; -EINVAL when there is no readable DWARF. ERR says which.
 *
 * WANT_HTTP also reads net/http.Request's header map for the traceparent
 * source, inflating the units until it is found (a binary that never
 * serves HTTP need not look). Whether it was found is layout.hdr.map, and
 * if not, http_err says why; it never fails the read. WANT_GRPC does the
 * same for grpc-go's server (layout.grpc.ok, grpc_err), WANT_OTEL for the
 * OpenTelemetry Go SDK's spans (layout.otel.ok, otel_err).
 */
int go_dwarf__read(const struct elf_image *img, bool want_http, bool want_grpc, bool want_otel,
		   struct go_dwarf_result *res, char *err, size_t errlen);

#endif /* __GO_DWARF_H */
