/* SPDX-License-Identifier: GPL-2.0 */
/* go_tls.h: where a Go binary keeps its g pointer, relative to the thread pointer (fsbase, tpidr_el0). */
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

/*
 * arm64 puts the executable's TLS block after the thread pointer (variant
 * I), past the 16-byte thread control block rounded up to the block's
 * alignment; runtime.tls_g is g's offset inside that block.
 */
int go_tls__from_tls_g_arm64(uint64_t tls_g, uint64_t memsz, uint64_t align, int64_t *offset);

/*
 * Decodes runtime.load_g on arm64, which Go's linkers emit as
 *   mrs xT, tpidr_el0; movz xO, #OFFSET (movk ...)*; ldr x28, [xT, xO]
 * Returns -ENOENT when the code is not that.
 */
int go_tls__decode_load_g_arm64(const uint8_t *code, size_t len, int64_t *offset);

#endif /* __GO_TLS_H */
