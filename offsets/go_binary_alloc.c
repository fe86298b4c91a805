// SPDX-License-Identifier: GPL-2.0
/* go_binary_alloc.c: where --alloc probes a Go binary's sampled allocations, and reads its rate. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "elf_image.h"
#include "go_binary_priv.h"
#include "go_memrate.h"
#include "gopclntab.h"

/* runtime.MemProfileRate's default in every release: what the file holds when the linker sets it */
#define MEMPROFILE_RATE_DEFAULT (512 * 1024)

/*
 * Which Go register argument of runtime.mProf_Malloc holds the size, by
 * release, as each one's runtime/mprof.go declares it:
 *   1.19 to 1.22  mProf_Malloc(p unsafe.Pointer, size uintptr)
 *   1.23 to 1.27  mProf_Malloc(mp *m, p unsafe.Pointer, size uintptr)
 * (1.20 and 1.25 lie inside runs whose ends have the same arguments.) Go's
 * register ABI passes them in RAX, RBX, RCX on amd64 and R0, R1, R2 on
 * arm64. Another release is not known: 0.
 */
static unsigned int size_arg(int major, int minor)
{
	if (major != 1 || minor < 19 || minor > 27)
		return 0;
	return minor < 23 ? 2 : 3;
}

/* runtime.MemProfileRate, an int, from .symtab: false when it has none. */
static bool symtab_rate(struct go_binary *gb)
{
	GElf_Sym sym;

	if (elf_image__symbol(gb->img, "runtime.MemProfileRate", &sym) != 0)
		return false;
	gb->alloc.rate_addr = sym.st_value;
	gb->alloc.rate_source = GO_ALLOC_RATE_SYMTAB;
	return true;
}

/*
 * The address the code names is taken only where the linker puts an int
 * (no pointers: .noptrdata when it initializes it, .noptrbss when the
 * runtime does, as Go 1.19's defaultMemProfileRate did), aligned, and,
 * in .noptrdata, holding the default rate: runtime.mcache0, the other
 * load before the call, is a pointer in .bss.
 */
static const char *plausible_rate(const struct go_binary *gb, uint64_t addr)
{
	const uint8_t *p;

	if (addr % 8)
		return "the address is not aligned for an int";
	if (in_section(gb, ".noptrbss", addr, 8))
		return NULL;
	if (!in_section(gb, ".noptrdata", addr, 8))
		return "the address is in neither .noptrdata nor .noptrbss, where an int is";
	p = elf_image__at(gb->img, addr, 8);
	if (!p || word(p) != MEMPROFILE_RATE_DEFAULT)
		return "the int there does not hold the default rate, 512 KiB";
	return NULL;
}

/* runtime.MemProfileRate without a symbol table: decoded from runtime.profilealloc. */
static void code_rate(struct go_binary *gb)
{
	struct gopclntab_func fn, rnd;
	const uint8_t *code;
	const char *why;
	uint64_t addr;

	if (!gb->pcln || gopclntab__find(gb->pcln, "runtime.profilealloc", &fn) != 0 ||
	    gopclntab__find(gb->pcln, "runtime.fastexprand", &rnd) != 0) {
		snprintf(gb->alloc_rate_problem, NOTE_LEN, "no symbol table, and .gopclntab has no "
			 "runtime.profilealloc or runtime.fastexprand to find it in");
		return;
	}
	code = fn.end > fn.entry ? elf_image__at(gb->img, fn.entry, fn.end - fn.entry) : NULL;
	if (!code) {
		snprintf(gb->alloc_rate_problem, NOTE_LEN,
			 "no symbol table, and runtime.profilealloc's code cannot be read");
		return;
	}
	if ((gb->arm64 ? go_memrate__decode_profilealloc_arm64 : go_memrate__decode_profilealloc)(
		    code, fn.end - fn.entry, fn.entry, rnd.entry, &addr) != 0) {
		snprintf(gb->alloc_rate_problem, NOTE_LEN,
			 "no symbol table, and runtime.profilealloc's code does not load it before "
			 "calling runtime.fastexprand as releases 1.19 to 1.27 do (never guessed)");
		return;
	}
	why = plausible_rate(gb, addr);
	if (why) {
		snprintf(gb->alloc_rate_problem, NOTE_LEN,
			 "no symbol table, and what runtime.profilealloc's code loads (0x%llx) is "
			 "not used: %s",
			 (unsigned long long)addr, why);
		return;
	}
	gb->alloc.rate_addr = addr;
	gb->alloc.rate_source = GO_ALLOC_RATE_CODE;
}

/*
 * runtime.disableMemoryProfiling, a bool the linker sets when nothing
 * reachable references runtime.MemProfile (runtime.memProfileInternal
 * from Go 1.23): the runtime then sets MemProfileRate to 0 as it starts.
 * Set, it is initialized data; unset, it lies in .noptrbss and the file
 * holds no byte of it. Without .symtab nothing names it: -1.
 */
static int memprof_disabled(const struct go_binary *gb)
{
	const uint8_t *p;
	GElf_Sym sym;

	if (elf_image__symbol(gb->img, "runtime.disableMemoryProfiling", &sym) != 0)
		return -1;
	p = elf_image__at(gb->img, sym.st_value, 1);
	if (p)
		return *p != 0;
	if (in_section(gb, ".noptrbss", sym.st_value, 1) || in_section(gb, ".bss", sym.st_value, 1))
		return 0;
	return -1;
}

/*
 * --alloc: runtime.mProf_Malloc found through .gopclntab, so that
 * stripped builds work, and probed where go_binary_probes__pc says (the
 * branch of its stack check); the size's argument by release; the
 * sampling rate from .symtab, else from the code that reads it.
 */
void go_binary_alloc__find(struct go_binary *gb)
{
	struct gopclntab_func fn;
	uint64_t pc;

	gb->alloc = (struct go_alloc_probe){ .offset = -1, .memprof_disabled = -1 };
	if (!symtab_rate(gb))
		code_rate(gb);
	gb->alloc.memprof_disabled = memprof_disabled(gb);
	if (!gb->pcln || gopclntab__find(gb->pcln, "runtime.mProf_Malloc", &fn) != 0) {
		gb->alloc_err = -ENOENT;
		snprintf(gb->alloc_problem, NOTE_LEN, "%s", gb->pcln ?
			 "no runtime.mProf_Malloc in the function table" :
			 "no function table to find runtime.mProf_Malloc in");
		return;
	}
	pc = go_binary_probes__pc(gb, &fn);
	gb->alloc.at_check = pc != fn.entry;
	gb->alloc.offset = elf_image__file_offset(gb->img, pc);
	if (gb->alloc.offset < 0) {
		gb->alloc_err = -ENOENT;
		snprintf(gb->alloc_problem, NOTE_LEN, "runtime.mProf_Malloc is not in a loaded segment");
		return;
	}
	gb->alloc.size_arg = size_arg(gb->major, gb->minor);
	if (!gb->alloc.size_arg) {
		gb->alloc_err = -EOPNOTSUPP;
		snprintf(gb->alloc_problem, NOTE_LEN,
			 "runtime.mProf_Malloc's arguments are known for Go 1.19 to 1.27, not %s",
			 gb->version);
		return;
	}
	gb->alloc_err = 0;
}
