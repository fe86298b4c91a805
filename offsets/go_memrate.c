// SPDX-License-Identifier: GPL-2.0
/* go_memrate.c: where runtime.MemProfileRate is, read from runtime.profilealloc's code. */
#include <errno.h>
#include <stdbool.h>

#include "go_memrate.h"

#define CALL_LEN 5 /* 0xe8, rel32 */
#define RIP_LOAD_LEN 7 /* REX.W, 0x8b, ModRM, disp32 */

static int32_t le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* Where the first CALL of TARGET in CODE is; -1 when there is none. */
static long call_at(const uint8_t *code, size_t len, uint64_t entry, uint64_t target)
{
	size_t at;

	for (at = 0; at + CALL_LEN <= len; at++) {
		if (code[at] == 0xe8 && entry + at + CALL_LEN + (int64_t)le32(code + at + 1) == target)
			return (long)at;
	}
	return -1;
}

/*
 * mov disp32(%rip),%r64 at CODE + AT: REX with W set (R may name r8 to
 * r15), opcode 0x8b, ModRM with mod 00 and r/m 101, which is [rip +
 * disp32] in 64-bit mode whatever REX.B says. The address it reads goes
 * in *TARGET.
 */
static bool rip_load(const uint8_t *code, size_t at, uint64_t entry, uint64_t *target)
{
	const uint8_t *p = code + at;

	if ((p[0] & 0xf8) != 0x48 || p[1] != 0x8b || (p[2] & 0xc7) != 0x05)
		return false;
	*target = entry + at + RIP_LOAD_LEN + (int64_t)le32(p + 3);
	return true;
}

int go_memrate__decode_profilealloc(const uint8_t *code, size_t len, uint64_t entry,
				    uint64_t fastexprand, uint64_t *rate)
{
	long call = call_at(code, len, entry, fastexprand);
	uint64_t target, last = 0;
	bool found = false;
	size_t at;

	/*
	 * x86 instructions have no one length, and nothing here decodes them
	 * all: every byte is tried. A stray call would need its 32-bit
	 * target exact; a stray load inside another instruction reads an
	 * address that fails the caller's check, which then has no answer
	 * rather than a wrong one.
	 */
	for (at = 0; call >= RIP_LOAD_LEN && at + RIP_LOAD_LEN <= (size_t)call; at++) {
		if (rip_load(code, at, entry, &target)) {
			last = target;
			found = true;
		}
	}
	if (!found)
		return -ENOENT;
	*rate = last;
	return 0;
}

/* The page ADRP at PC puts in its register: PC's 4 KiB page plus a signed 21-bit count of pages. */
static uint64_t adrp_page(uint32_t insn, uint64_t pc)
{
	uint64_t pages = ((insn >> 5) & 0x7ffff) << 2 | ((insn >> 29) & 3);

	if (pages & (1ULL << 20))
		pages |= ~((1ULL << 21) - 1);
	return (pc & ~0xfffULL) + (pages << 12);
}

int go_memrate__decode_profilealloc_arm64(const uint8_t *code, size_t len, uint64_t entry,
					  uint64_t fastexprand, uint64_t *rate)
{
	/* the address each register holds from an adrp (and add), while straight-line code keeps it */
	uint64_t addr[32] = {};
	bool known[32] = {};
	uint64_t last = 0, imm;
	uint32_t insn, rd, rn;
	bool found = false;
	size_t at;

	for (at = 0; at + 4 <= len; at += 4) {
		insn = (uint32_t)le32(code + at);
		rd = insn & 0x1f;
		rn = (insn >> 5) & 0x1f;
		if ((insn & 0xfc000000U) == 0x94000000) {
			/* bl: imm26 instructions, sign-extended */
			int64_t rel = (int64_t)((uint64_t)(insn & 0x03ffffff) << 38) >> 36;

			if (entry + at + rel != fastexprand)
				continue;
			if (!found)
				return -ENOENT;
			*rate = last;
			return 0;
		}
		if ((insn & 0x9f000000U) == 0x90000000) {
			/* adrp xD, page */
			addr[rd] = adrp_page(insn, entry + at);
			known[rd] = true;
		} else if ((insn & 0xff800000U) == 0x91000000) {
			/* add xD, xN, #imm12 (lsl #12 with bit 22) */
			imm = (insn >> 10) & 0xfff;
			addr[rd] = addr[rn] + (insn & (1U << 22) ? imm << 12 : imm);
			known[rd] = known[rn];
		} else if ((insn & 0xffc00000U) == 0xf9400000) {
			/* ldr xT, [xN, #imm12 * 8]: a 64-bit load, from a known place or not */
			if (known[rn]) {
				last = addr[rn] + ((insn >> 10) & 0xfff) * 8;
				found = true;
			}
			known[rd] = false;
		} else if ((insn & 0x7c000000U) != 0x14000000 && (insn & 0xfe000000U) != 0x54000000 &&
			   (insn & 0x7e000000U) != 0x34000000 && (insn & 0x7e000000U) != 0x36000000) {
			/* anything but a branch may write xD: forget what it held */
			known[rd] = false;
		}
	}
	return -ENOENT;
}
