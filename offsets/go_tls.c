// SPDX-License-Identifier: GPL-2.0
/* go_tls.c: where a Go binary keeps its g pointer, relative to the thread pointer (fsbase). */
#include <errno.h>
#include <string.h>

#include "go_tls.h"

/* No sane TLS block is larger than this; anything beyond is a corrupt header. */
#define MAX_TLS_BLOCK (1ULL << 30)

int go_tls__from_tlsg(uint64_t tlsg, uint64_t memsz, uint64_t align, int64_t *offset)
{
	uint64_t block;

	if (align == 0)
		align = 1;
	if (align & (align - 1) || align > MAX_TLS_BLOCK || memsz > MAX_TLS_BLOCK)
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
