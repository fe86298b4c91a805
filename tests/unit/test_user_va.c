// SPDX-License-Identifier: GPL-2.0
/* test_user_va.c: the width of user addresses from a process's mappings, and arm64's signed return addresses stripped to it. */
#include <string.h>

#include "cmd/util/user_va.h"
#include "tap.h"

/* The mask that MAPS (a /proc/PID/maps text) gives. */
static uint64_t mask_of(const char *maps)
{
	FILE *f = fmemopen((void *)maps, strlen(maps), "r");
	uint64_t mask;

	if (!f)
		return 0;
	mask = user_va__mask_from_maps(f);
	fclose(f);
	return mask;
}

/* an arm64 Go program and Debian's vDSO under a 48-bit kernel, as seen in the emulated machine */
static const char arm64_maps[] =
	"00010000-000a0000 r-xp 00000000 00:16 1234 /t/clocky\n"
	"000a0000-00140000 r--p 00090000 00:16 1234 /t/clocky\n"
	"4000000000-4004000000 rw-p 00000000 00:00 0 \n"
	"ffff8a7c0000-ffff8a7c2000 r--p 00000000 00:00 0 [vvar]\n"
	"ffff8a7c2000-ffff8a7c3000 r-xp 00000000 00:00 0 [vdso]\n"
	"ffffd1a4e000-ffffd1a6f000 rw-p 00000000 00:00 0 [stack]\n";

/* x86-64: [vsyscall] is a kernel address, and not the top of user space */
static const char x86_maps[] =
	"00400000-004ba000 r-xp 00000000 08:01 99 /t/clocky\n"
	"7ffc1e0d1000-7ffc1e0f2000 rw-p 00000000 00:00 0 [stack]\n"
	"7ffc1e1f6000-7ffc1e1f8000 r-xp 00000000 00:00 0 [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";

/* a PIE program: its stack still marks the top of user space */
static const char pie_maps[] = "aaaab1c20000-aaaab1cb0000 r-xp 00000000 00:16 7 /t/pie\n"
			       "fffff7ff0000-fffff8000000 rw-p 00000000 00:00 0 [stack]\n";

struct signed_case {
	const char *what;
	uint64_t signed_addr, addr;
};

int main(void)
{
	const uint64_t va48 = 0xffffffffffffULL;
	/*
	 * Return addresses as PACIASP leaves them in LR and the frame record:
	 * the code in bits 48 to 54, and in the top byte too, as user space
	 * has top-byte-ignore for data only. The first is the frame the
	 * emulated machine showed where runtime.nanotime1 belongs.
	 */
	const struct signed_case cases[] = {
		{ "runtime.nanotime1 under the vDSO", 0x5000000009576bULL, 0x9576bULL },
		{ "the vDSO's own frame, code in bits 48-54", 0x0063ffff8a7c2a14ULL, 0xffff8a7c2a14ULL },
		{ "a PIE program, code in the top byte too", 0x9a2daaaab1c23f08ULL, 0xaaaab1c23f08ULL },
		{ "an address never signed", 0xffff8a7c27bcULL, 0xffff8a7c27bcULL },
		{ "a return into Go code, never signed", 0x9576bULL, 0x9576bULL },
	};
	size_t i;

	check_hex("arm64, 48-bit user space", va48, mask_of(arm64_maps));
	check_hex("x86-64: [vsyscall] does not count", 0x7fffffffffffULL, mask_of(x86_maps));
	check_hex("a PIE program and its stack", va48, mask_of(pie_maps));
	check_hex("no mapping: nothing stripped", ~0ULL, mask_of(""));
	check_hex("lines that are not mappings are skipped", va48,
		  mask_of("garbage\n\nffff00000000-ffff00001000 r-xp 0 0 0 [vdso]\n"));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_hex(desc("stripped: %s", cases[i].what), cases[i].addr,
			  user_va__strip(cases[i].signed_addr, mask_of(arm64_maps)));
	/* this process's own: at least 39 bits (arm64's smallest), at most 57 */
	check_int("this process: a mask of 39 to 57 bits",
		  1, user_va__mask() >= (1ULL << 39) - 1 && user_va__mask() <= (1ULL << 57) - 1);
	return tap_done();
}
