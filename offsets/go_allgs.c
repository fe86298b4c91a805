// SPDX-License-Identifier: GPL-2.0
/* go_allgs.c: where runtime.allgs and runtime.allglen are, read from runtime.allgadd's code. */
#include <errno.h>
#include <stdbool.h>

#include "go_allgs.h"

#define RIP_INSN_LEN 7 /* REX.W, opcode, ModRM, disp32 */
#define XCHG_LEN 3 /* REX.W, 0x87, ModRM */

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* A 64-bit operand: REX with W set, whatever its R, X and B. */
static bool rex_w(uint8_t b)
{
	return (b & 0xf8) == 0x48;
}

/*
 * OP with a RIP-relative memory operand at CODE + AT: its register and the
 * address it refers to. mod 00 with r/m 101 is [rip + disp32] in 64-bit mode.
 */
static bool rip_insn(const uint8_t *code, size_t len, size_t at, uint8_t op, uint64_t entry,
		     unsigned int *reg, uint64_t *target)
{
	const uint8_t *p = code + at;

	if (at + RIP_INSN_LEN > len || !rex_w(p[0]) || p[1] != op || (p[2] & 0xc7) != 0x05)
		return false;
	*reg = (p[0] & 0x4) << 1 | (p[2] >> 3 & 7);
	*target = entry + at + RIP_INSN_LEN + (int64_t)le32(p + 3);
	return true;
}

/* xchg %rREG,(%rBASE) at CODE + AT: no SIB, no displacement. */
static bool xchg_insn(const uint8_t *code, size_t len, size_t at, unsigned int reg,
		      unsigned int base)
{
	const uint8_t *p = code + at;

	if (at + XCHG_LEN > len || !rex_w(p[0]) || p[1] != 0x87 || (p[2] & 0xc0) != 0 ||
	    (p[2] & 7) == 4 || (p[2] & 7) == 5)
		return false;
	return (unsigned int)((p[0] & 0x4) << 1 | (p[2] >> 3 & 7)) == reg &&
	       (unsigned int)((p[0] & 0x1) << 3 | (p[2] & 7)) == base;
}

/* Does any mov, store, lea or cmp in CODE refer to ADDR, RIP-relative? */
static bool refers_to(const uint8_t *code, size_t len, uint64_t entry, uint64_t addr)
{
	static const uint8_t ops[] = { 0x8b, 0x89, 0x8d, 0x39, 0x3b };
	unsigned int reg;
	uint64_t target;
	size_t at, i;

	for (at = 0; at < len; at++) {
		for (i = 0; i < sizeof(ops); i++) {
			if (rip_insn(code, len, at, ops[i], entry, &reg, &target) && target == addr)
				return true;
		}
		/* cmpq $imm8, addr(%rip): 48 83 3d <disp32> <imm8> */
		if (at + 8 <= len && rex_w(code[at]) && code[at + 1] == 0x83 &&
		    (code[at + 2] & 0xc7) == 0x05 &&
		    entry + at + 8 + (int64_t)le32(code + at + 3) == addr)
			return true;
	}
	return false;
}

int go_allgs__decode_allgadd(const uint8_t *code, size_t len, uint64_t entry, uint64_t *allgs,
			     uint64_t *allglen)
{
	/* where the mov and the lea sit before the xchg: either order */
	static const size_t order[2][2] = { { 0, RIP_INSN_LEN }, { RIP_INSN_LEN, 0 } };
	unsigned int val, base;
	uint64_t len_field, glen;
	size_t at, k;

	for (at = 0; at + 2 * RIP_INSN_LEN + XCHG_LEN <= len; at++) {
		for (k = 0; k < 2; k++) {
			if (!rip_insn(code, len, at + order[k][0], 0x8b, entry, &val, &len_field) ||
			    !rip_insn(code, len, at + order[k][1], 0x8d, entry, &base, &glen) ||
			    val == base || !xchg_insn(code, len, at + 2 * RIP_INSN_LEN, val, base))
				continue;
			if (len_field < 8 || !refers_to(code, len, entry, len_field - 8) ||
			    !refers_to(code, len, entry, len_field + 8))
				continue;
			*allgs = len_field - 8;
			*allglen = glen;
			return 0;
		}
	}
	return -ENOENT;
}

/* What one register holds as the arm64 decoder follows straight-line code. */
struct a64_reg {
	bool addr_ok, loaded_ok;
	uint64_t addr; /* the address it holds (adrp, add) */
	uint64_t loaded; /* the address it was loaded from (ldr) */
};

#define A64_MAX_REFS 64

/* Addresses of the 64-bit loads and stores whose base the decoder knew. */
struct a64_refs {
	uint64_t at[A64_MAX_REFS];
	size_t n;
};

static bool a64_referred(const struct a64_refs *refs, uint64_t addr)
{
	size_t i;

	for (i = 0; i < refs->n; i++) {
		if (refs->at[i] == addr)
			return true;
	}
	return false;
}

static uint64_t a64_adrp(uint32_t insn, uint64_t pc)
{
	int64_t imm = (int64_t)((((insn >> 5) & 0x7ffff) << 2) | ((insn >> 29) & 3));

	/* a signed 21-bit count of 4 KiB pages */
	imm = (imm ^ (1LL << 20)) - (1LL << 20);
	return (pc & ~0xfffULL) + ((uint64_t)imm << 12);
}

int go_allgs__decode_allgadd_arm64(const uint8_t *code, size_t len, uint64_t entry,
				   uint64_t *allgs, uint64_t *allglen)
{
	struct a64_reg r[32] = {};
	struct a64_refs refs = {}, lens = {}, glens = {};
	uint32_t insn, rd, rn;
	size_t at, i;

	for (at = 0; at + 4 <= len; at += 4) {
		insn = (uint32_t)le32(code + at);
		rd = insn & 0x1f;
		rn = (insn >> 5) & 0x1f;
		if ((insn & 0x9f000000U) == 0x90000000) {
			/* adrp xD, page */
			r[rd] = (struct a64_reg){ .addr_ok = true, .addr = a64_adrp(insn, entry + at) };
		} else if ((insn & 0xff800000U) == 0x91000000) {
			/* add xD, xN, #imm12 (lsl #12) */
			uint64_t imm = (insn >> 10) & 0xfff;
			struct a64_reg v = {};

			if (r[rn].addr_ok)
				v = (struct a64_reg){ .addr_ok = true,
						      .addr = r[rn].addr +
							      (insn & (1U << 22) ? imm << 12 : imm) };
			r[rd] = v;
		} else if ((insn & 0xffc00000U) == 0xf9400000 || (insn & 0xffc00000U) == 0xf9000000) {
			/* ldr/str xT, [xN, #imm12 * 8] */
			uint64_t a = r[rn].addr + ((insn >> 10) & 0xfff) * 8;
			bool load = insn & (1U << 22);

			if (r[rn].addr_ok && refs.n < A64_MAX_REFS)
				refs.at[refs.n++] = a;
			if (load)
				r[rd] = (struct a64_reg){ .loaded_ok = r[rn].addr_ok, .loaded = a };
		} else if ((insn & 0xfffffc00U) == 0xc89ffc00) {
			/* stlr xT, [xN]: an atomic store of a word loaded from a known place */
			if (r[rn].addr_ok && r[rd].loaded_ok && r[rd].loaded >= 8 &&
			    lens.n < A64_MAX_REFS) {
				lens.at[lens.n++] = r[rd].loaded;
				glens.at[glens.n++] = r[rn].addr;
			}
		} else if ((insn & 0x7c000000U) != 0x14000000 && (insn & 0xfe000000U) != 0x54000000 &&
			   (insn & 0x7e000000U) != 0x34000000 && (insn & 0x7e000000U) != 0x36000000) {
			/* anything else but a branch may write xD: forget it */
			r[rd] = (struct a64_reg){};
		}
	}
	/* allgptr's store comes first, of allgs' pointer: allglen's is the last that fits */
	for (i = lens.n; i-- > 0;) {
		if (a64_referred(&refs, lens.at[i] - 8) && a64_referred(&refs, lens.at[i] + 8)) {
			*allgs = lens.at[i] - 8;
			*allglen = glens.at[i];
			return 0;
		}
	}
	return -ENOENT;
}
