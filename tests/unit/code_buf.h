/* SPDX-License-Identifier: GPL-2.0 */
/* code_buf.h: hand-built amd64 and arm64 machine code for the unit tests of the code decoders. */
#ifndef __CODE_BUF_H
#define __CODE_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The code of one function: its bytes and the address it is loaded at.
 * The test sets ENTRY once; the builders only reset LEN, so that every
 * PC-relative operand they write is measured from the same address the
 * decoder is then given.
 */
struct code {
	uint8_t b[160];
	size_t len;
	uint64_t entry;
};

static inline void put(struct code *c, const uint8_t *bytes, size_t n)
{
	/* a builder that outgrows b is a bug in the test, not a verdict */
	if (n > sizeof(c->b) - c->len) {
		fprintf(stderr, "code_buf: %zu bytes past the %zu of struct code\n",
			c->len + n - sizeof(c->b), sizeof(c->b));
		abort();
	}
	memcpy(c->b + c->len, bytes, n);
	c->len += n;
}

/* amd64: REX, OP, MODRM, then the disp32 that makes it refer to TARGET */
static inline void rip(struct code *c, uint8_t rex, uint8_t op, uint8_t modrm, uint64_t target)
{
	int32_t disp = (int32_t)(target - (c->entry + c->len + 7));
	uint8_t b[7] = { rex, op, modrm };

	memcpy(b + 3, &disp, 4);
	put(c, b, sizeof(b));
}

/* amd64: call rel32 of TARGET */
static inline void call(struct code *c, uint64_t target)
{
	int32_t rel = (int32_t)(target - (c->entry + c->len + 5));
	uint8_t b[5] = { 0xe8 };

	memcpy(b + 1, &rel, 4);
	put(c, b, sizeof(b));
}

/* arm64 encodings, as go1.19 to go1.27 emit them; instructions are little-endian */
static inline void a64(struct code *c, uint32_t insn)
{
	put(c, (const uint8_t[]){ insn, insn >> 8, insn >> 16, insn >> 24 }, 4);
}

/* adrp xRD, TARGET's page */
static inline void a64_adrp(struct code *c, unsigned int rd, uint64_t target)
{
	int64_t pages = (int64_t)(target >> 12) - (int64_t)((c->entry + c->len) >> 12);
	uint32_t imm = (uint32_t)pages & 0x1fffff;

	a64(c, 0x90000000 | (imm & 3) << 29 | (imm >> 2) << 5 | rd);
}

/* add xRD, xRN, #IMM12 */
static inline void a64_add(struct code *c, unsigned int rd, unsigned int rn, uint32_t imm12)
{
	a64(c, 0x91000000 | imm12 << 10 | rn << 5 | rd);
}

/* ldr xRT, [xRN, #OFF], OFF a multiple of 8 */
static inline void a64_ldr(struct code *c, unsigned int rt, unsigned int rn, uint32_t off)
{
	a64(c, 0xf9400000 | (off / 8) << 10 | rn << 5 | rt);
}

/* bl TARGET */
static inline void a64_bl(struct code *c, uint64_t target)
{
	int64_t rel = ((int64_t)target - (int64_t)(c->entry + c->len)) / 4;

	a64(c, 0x94000000 | ((uint32_t)rel & 0x03ffffff));
}

#endif /* __CODE_BUF_H */
