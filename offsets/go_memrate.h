/* SPDX-License-Identifier: GPL-2.0 */
/* go_memrate.h: where runtime.MemProfileRate is, read from runtime.profilealloc's code. */
#ifndef __GO_MEMRATE_H
#define __GO_MEMRATE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A stripped binary has no symbol for runtime.MemProfileRate, but
 * .gopclntab still says where runtime.profilealloc is. Every release from
 * 1.19 to 1.27 inlines getMCache and nextSample into it: a load of
 * runtime.mcache0, then of MemProfileRate, then the call of
 * runtime.fastexprand(MemProfileRate). On amd64 each load is
 *   mov disp(%rip),%reg
 * and MemProfileRate is the last 64-bit one before the call to
 * FASTEXPRAND (that function's entry). CODE is profilealloc's bytes,
 * ENTRY its link-time address. Returns 0 with the address the load reads,
 * or -ENOENT when there is no such call or no such load before it; the
 * caller checks that the address is where the linker puts an int.
 */
int go_memrate__decode_profilealloc(const uint8_t *code, size_t len, uint64_t entry,
				    uint64_t fastexprand, uint64_t *rate);

/*
 * The same on arm64, where each load is
 *   adrp xB, page; ldr xT, [xB, #lo]   (Go 1.21 to 1.27)
 *   adrp xB, page; add xB, xB, #lo; ldr xT, [xB]   (Go 1.19)
 * and the call a BL.
 */
int go_memrate__decode_profilealloc_arm64(const uint8_t *code, size_t len, uint64_t entry,
					  uint64_t fastexprand, uint64_t *rate);

#endif /* __GO_MEMRATE_H */
