/* SPDX-License-Identifier: GPL-2.0 */
/* go_tls.h: where a Go binary keeps its g pointer, relative to the thread pointer (fsbase). */
#ifndef __GO_TLS_H
#define __GO_TLS_H

#include <stddef.h>
#include <stdint.h>

/* Offset for binaries without PT_TLS: Go's internal linker uses the slot just below fsbase. */
#define GO_TLS_DEFAULT_OFFSET (-8)

/*
 * x86-64 puts the TLS block just below the thread pointer, rounded up to its
 * alignment; runtime.tlsg holds g's offset inside that block.
 * Returns -EINVAL for an alignment that is not a power of two or a result
 * that cannot be an fs-relative slot.
 */
int go_tls__from_tlsg(uint64_t tlsg, uint64_t memsz, uint64_t align, int64_t *offset);

/*
 * Decodes the load of g at the start of runtime.stackcheck, in one of the
 * forms Go's linkers emit:
 *   mov %fs:OFFSET,%rax                   64 48 8b 04 25 <disp32>
 *   mov $OFFSET,%rcx; mov %fs:(%rcx),%rax 48 c7 c1 <imm32> 64 48 8b 01
 * Returns -ENOENT when the code is neither.
 */
int go_tls__decode_stackcheck(const uint8_t *code, size_t len, int64_t *offset);

#endif /* __GO_TLS_H */
