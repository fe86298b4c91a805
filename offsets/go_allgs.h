/* SPDX-License-Identifier: GPL-2.0 */
/* go_allgs.h: where runtime.allgs and runtime.allglen are, read from runtime.allgadd's code. */
#ifndef __GO_ALLGS_H
#define __GO_ALLGS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A stripped binary has no symbol for the goroutine list, but .gopclntab
 * still says where runtime.allgadd is, and every release from 1.19 ends
 * it with atomic.Storeuintptr(&allglen, uintptr(len(allgs))):
 *   mov allgs+8(%rip),%rA; lea allglen(%rip),%rB; xchg %rA,(%rB)
 * (the mov and the lea in either order). CODE is the function's bytes,
 * ENTRY its link-time address. The store alone is not trusted: allgadd
 * must also reference allgs and allgs+16, the slice's pointer and cap.
 * Returns 0 with both addresses, or -ENOENT when the pattern is not there.
 */
int go_allgs__decode_allgadd(const uint8_t *code, size_t len, uint64_t entry, uint64_t *allgs,
			     uint64_t *allglen);

/*
 * The same on arm64, where the store is
 *   adrp/ldr (or adrp/add/ldr) xV, allgs+8; adrp xB; add xB, xB, #lo; stlr xV, [xB]
 * and allgadd must also load or store allgs and allgs+16.
 */
int go_allgs__decode_allgadd_arm64(const uint8_t *code, size_t len, uint64_t entry,
				   uint64_t *allgs, uint64_t *allglen);

#endif /* __GO_ALLGS_H */
