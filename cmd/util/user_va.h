/* SPDX-License-Identifier: GPL-2.0 */
/* user_va.h: which bits of a user address are the address, so that arm64's signed return addresses can be read. */
#ifndef __USER_VA_H
#define __USER_VA_H

#include <stdint.h>
#include <stdio.h>

/*
 * The mask of a user address's bits, from a /proc/PID/maps text: every
 * bit up to the highest end of a mapping (the stack sits at the top of the
 * user address space: 48 bits on arm64 and x86-64 with 4-level tables,
 * 52-bit arm64 kernels too, as they map nothing higher unless asked).
 * x86-64's [vsyscall] page, a kernel address, does not count. ~0 when
 * MAPS holds no mapping.
 */
uint64_t user_va__mask_from_maps(FILE *maps);

/* The same for this process: the address space its targets share. */
uint64_t user_va__mask(void);

/*
 * ADDR without a pointer-authentication code: arm64 code built with
 * -mbranch-protection (Debian's vDSO, C libraries) signs the return
 * address it saves, in the bits above the address (and the top byte).
 */
static inline uint64_t user_va__strip(uint64_t addr, uint64_t mask)
{
	return addr & mask;
}

#endif /* __USER_VA_H */
