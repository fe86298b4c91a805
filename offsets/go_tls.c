// SPDX-License-Identifier: GPL-2.0
/* go_tls.c: where a Go binary keeps its g pointer, relative to the thread pointer (fsbase, tpidr_el0). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "go_tls.h"

/* No sane TLS block is larger than this; anything beyond is a corrupt header. */
#define MAX_TLS_BLOCK (1ULL << 30)

/* A PT_TLS block's size and alignment (0 taken as 1) as a sane linker leaves them. */
static bool sane_block(uint64_t memsz, uint64_t *align)
{
	if (*align == 0)
		*align = 1;
	return !(*align & (*align - 1)) && *align <= MAX_TLS_BLOCK && memsz <= MAX_TLS_BLOCK;
}

int go_tls__from_tlsg(uint64_t tlsg, uint64_t memsz, uint64_t align, int64_t *offset)
{
	uint64_t block;

	if (!sane_block(memsz, &align))
		return -EINVAL;
	block = (memsz + align - 1) & ~(align - 1);
	/* g is a pointer inside the block: at least 8 bytes below the thread pointer */
	if (tlsg > block || block - tlsg < 8)
		return -EINVAL;
	*offset = (int64_t)tlsg - (int64_t)block;
	return 0;
}

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

static int plausible(int32_t off, int64_t *offset)
{
	/* the slot is below fsbase and pointer-aligned */
	if (off >= 0 || off % 8 != 0 || -(int64_t)off > (int64_t)MAX_TLS_BLOCK)
		return -ENOENT;
	*offset = off;
	return 0;
}

int go_tls__decode_stackcheck(const uint8_t *code, size_t len, int64_t *offset)
{
	static const uint8_t mov_fs_abs[] = { 0x64, 0x48, 0x8b, 0x04, 0x25 };
	static const uint8_t mov_imm_rcx[] = { 0x48, 0xc7, 0xc1 };
	static const uint8_t mov_fs_rcx[] = { 0x64, 0x48, 0x8b, 0x01 };

	if (len >= sizeof(mov_fs_abs) + 4 && memcmp(code, mov_fs_abs, sizeof(mov_fs_abs)) == 0)
		return plausible(le32(code + sizeof(mov_fs_abs)), offset);
	if (len >= sizeof(mov_imm_rcx) + 4 + sizeof(mov_fs_rcx) &&
	    memcmp(code, mov_imm_rcx, sizeof(mov_imm_rcx)) == 0 &&
	    memcmp(code + sizeof(mov_imm_rcx) + 4, mov_fs_rcx, sizeof(mov_fs_rcx)) == 0)
		return plausible(le32(code + sizeof(mov_imm_rcx)), offset);
	return -ENOENT;
}

/* glibc's and musl's arm64 thread control block: the DTV pointer and one word */
#define ARM64_TCB_SIZE 16

int go_tls__from_tls_g_arm64(uint64_t tls_g, uint64_t memsz, uint64_t align, int64_t *offset)
{
	uint64_t start;

	if (!sane_block(memsz, &align))
		return -EINVAL;
	if (tls_g > memsz || memsz - tls_g < 8 || tls_g % 8)
		return -EINVAL;
	start = (ARM64_TCB_SIZE + align - 1) & ~(align - 1);
	*offset = (int64_t)(start + tls_g);
	return 0;
}

#define ARM64_INSNS 16

int go_tls__decode_load_g_arm64(const uint8_t *code, size_t len, int64_t *offset)
{
	uint32_t insn, tp = 32, reg = 32;
	uint64_t val = 0;
	size_t i;

	for (i = 0; i + 4 <= len && i / 4 < ARM64_INSNS; i += 4) {
		insn = (uint32_t)le32(code + i);
		if ((insn & ~0x1fU) == 0xd53bd040) {
			/* mrs xT, tpidr_el0 */
			tp = insn & 0x1f;
			reg = 32;
		} else if (tp < 32 && (insn & 0xff800000U) == 0xd2800000) {
			/* movz xO, #imm16, lsl #(16 * hw) */
			reg = insn & 0x1f;
			val = (uint64_t)((insn >> 5) & 0xffff) << (16 * ((insn >> 21) & 3));
		} else if (reg < 32 && (insn & 0xff800000U) == 0xf2800000 && (insn & 0x1f) == reg) {
			/* movk xO, #imm16, lsl #(16 * hw) */
			unsigned int sh = 16 * ((insn >> 21) & 3);

			val = (val & ~(0xffffULL << sh)) | (uint64_t)((insn >> 5) & 0xffff) << sh;
		} else if (reg < 32 && (insn & 0xffe0fc00U) == 0xf8606800 && (insn & 0x1f) == 28 &&
			   ((insn >> 5) & 0x1f) == tp && ((insn >> 16) & 0x1f) == reg) {
			/* ldr x28, [xT, xO]: g is R28 in Go's arm64 ABI */
			if (val < ARM64_TCB_SIZE || val % 8 || val > MAX_TLS_BLOCK)
				return -ENOENT;
			*offset = (int64_t)val;
			return 0;
		}
	}
	return -ENOENT;
}
