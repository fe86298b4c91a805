/* SPDX-License-Identifier: GPL-2.0 */
/* obi_map.h: OBI's traces_ctx_v1 in bpffs: taken where OBI pinned it, else made and pinned as OBI makes it. */
#ifndef __OBI_MAP_H
#define __OBI_MAP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The map at BPFFS/otel/traces_ctx_v1: OBI's when it is there (and is a map
 * of its kind), else one made as OBI and the OpenTelemetry eBPF profiler
 * make it and pinned there (*CREATED), so that whichever starts first, both
 * share one. Its fd; -errno with the cause in WHY.
 */
int obi_map__open(const char *bpffs, bool *created, char *why, size_t len);

#endif /* __OBI_MAP_H */
