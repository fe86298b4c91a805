// SPDX-License-Identifier: GPL-2.0
/* test_symbolizer.c: address spaces over time: mmap over mmap, exec, fork, and names through the mapped file. */
#include <fcntl.h>
#include <time.h>
#include <sys/auxv.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/symbols/objfile.h"
#include "cmd/symbols/symbolizer.h"
#include "offsets/go_binary.h"
#include "offsets/gopclntab.h"
#include "tap.h"

/* "START-LIMIT@OFFSET FILE" of the mapping at ADDR and TIME, or "none" */
static const char *where(struct symbolizer *s, uint64_t time, uint64_t addr)
{
	static char buf[256];
	struct mapping m;

	if (!symbolizer__mapping(s, time, addr, &m))
		return "none";
	snprintf(buf, sizeof(buf), "%llx-%llx@%llx %s", (unsigned long long)m.start,
		 (unsigned long long)m.limit, (unsigned long long)m.offset, m.file);
	return buf;
}

static void test_mmap_over_mmap(void)
{
	struct symbolizer *s = symbolizer__new(1);

	check_int("map /a", 0, symbolizer__map(s, 0x1000, 0x4000, 0, "/a"));
	check_str("one mapping", "1000-5000@0 /a", where(s, 0, 0x4fff));
	check_str("past its end", "none", where(s, 0, 0x5000));
	/* /b in the middle of /a: /a keeps a head and a tail, whose offset moves on */
	check_int("map /b inside /a", 0, symbolizer__map(s, 0x3000, 0x1000, 0x10000, "/b"));
	check_str("head of /a", "1000-3000@0 /a", where(s, 0, 0x2fff));
	check_str("/b", "3000-4000@10000 /b", where(s, 0, 0x3000));
	check_str("tail of /a", "4000-5000@3000 /a", where(s, 0, 0x4000));
	/* /c over the end of /b and the start of the tail */
	check_int("map /c across two", 0, symbolizer__map(s, 0x3800, 0x1000, 0, "/c"));
	check_str("/b cut short", "3000-3800@10000 /b", where(s, 0, 0x37ff));
	check_str("/c", "3800-4800@0 /c", where(s, 0, 0x4000));
	check_str("tail of /a loses its head", "4800-5000@3800 /a", where(s, 0, 0x4800));
	/* /d over everything */
	check_int("map /d over all", 0, symbolizer__map(s, 0x0, 0x10000, 0x5000, "/d"));
	check_str("only /d", "0-10000@5000 /d", where(s, 0, 0x4800));
	/* mappings seen without an exec are a part: /proc/PID/maps must fill in the rest */
	check(!symbolizer__known(s), "late mappings alone do not make a process known", "unknown",
	      "known");
	symbolizer__free(s);
}

static void test_exec_and_fork(void)
{
	struct symbolizer *parent = symbolizer__new(1), *child = symbolizer__new(2);

	symbolizer__map(parent, 0x400000, 0x1000, 0x1000, "/bin/old");
	symbolizer__exec(parent, 1000);
	check_str("before the exec: the old program", "400000-401000@1000 /bin/old",
		  where(parent, 999, 0x400800));
	check_str("after the exec: nothing yet", "none", where(parent, 1000, 0x400800));
	symbolizer__map(parent, 0x400000, 0x2000, 0, "/bin/new");
	check(symbolizer__known(parent), "seen from its exec on, a process is known", "known",
	      "unknown");
	check_str("after the exec: the new program", "400000-402000@0 /bin/new",
		  where(parent, 5000, 0x400800));
	check_str("an event from before the exec still sees the old one", "400000-401000@1000 /bin/old",
		  where(parent, 10, 0x400800));
	check_int("fork", 0, symbolizer__fork(child, parent));
	check_str("a child maps what its parent maps", "400000-402000@0 /bin/new",
		  where(child, 6000, 0x401800));
	symbolizer__free(parent);
	symbolizer__free(child);
}

/* Maps BIN's PT_LOAD segments as the kernel would for a non-PIE executable. */
static int map_binary(struct symbolizer *s, const char *bin)
{
	GElf_Phdr ph;
	size_t i, n;
	Elf *elf;
	int fd, mapped = 0;

	fd = open(bin, O_RDONLY);
	elf_version(EV_CURRENT);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (!elf || elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		/* pages: the kernel maps from the page that holds p_offset */
		symbolizer__map(s, ph.p_vaddr & ~0xfffULL,
				ph.p_filesz + (ph.p_vaddr & 0xfff), ph.p_offset & ~0xfffULL, bin);
		mapped++;
	}
	elf_end(elf);
	close(fd);
	return mapped ? 0 : -1;
}

static void test_names(void)
{
	const char *bin = getenv("GO_TEST_BINARY");
	struct symbolizer *s;
	struct gopclntab_func fn;
	const struct frame *f;
	struct go_binary *gb;
	char err[256];
	size_t n;

	if (!bin) {
		skip("names through the mapped file", "GO_TEST_BINARY not set (tests/run.sh sets it)");
		return;
	}
	gb = go_binary__open_symbols(bin, err, sizeof(err));
	if (!gb || !go_binary__pclntab(gb) ||
	    gopclntab__find(go_binary__pclntab(gb), "main.main", &fn) != 0) {
		check(false, "main.main in GO_TEST_BINARY", "found", err);
		go_binary__close(gb);
		return;
	}
	s = symbolizer__new(1);
	check_int("map the binary's code", 0, map_binary(s, bin));
	n = symbolizer__frames(s, 100, fn.entry, true, &f);
	check_str(desc("main.main's entry 0x%llx is named", (unsigned long long)fn.entry), "main.main",
		  n ? f[n - 1].func : NULL);
	symbolizer__exec(s, 200);
	n = symbolizer__frames(s, 300, fn.entry, true, &f);
	check(n == 1 && f[0].func[0] == '0', "after an exec, the old address names nothing",
	      "an address", n ? f[0].func : "no frame");
	n = symbolizer__frames(s, 150, fn.entry, true, &f);
	check_str("an event before the exec is still named", "main.main", n ? f[n - 1].func : NULL);
	symbolizer__free(s);
	go_binary__close(gb);
}

/*
 * objfile__vdso_symbol: the vdso's clock_gettime, by the name each
 * architecture gives it, called at the vdso's start plus the offset found,
 * tells the time as libc's does; a name the vdso lacks gives 0.
 */
static void test_vdso_symbol(void)
{
#if defined(__aarch64__)
	const char *name = "__kernel_clock_gettime";
#else
	const char *name = "__vdso_clock_gettime";
#endif
	uint64_t base = getauxval(AT_SYSINFO_EHDR), off = objfile__vdso_symbol(name);
	int (*gettime)(clockid_t, struct timespec *);
	struct timespec ours = {}, libc;
	char got[64];

	check_int("vdso: a symbol it does not have", 0, objfile__vdso_symbol("no_such_symbol"));
	if (!verdict(base && off, desc("vdso: %s found", name), "an offset", off ? "one" : "0"))
		return;
	gettime = (int (*)(clockid_t, struct timespec *))(uintptr_t)(base + off);
	clock_gettime(CLOCK_MONOTONIC, &libc);
	check_int(desc("vdso: %s called at the offset found", name), 0, gettime(CLOCK_MONOTONIC, &ours));
	snprintf(got, sizeof(got), "%lld s later", (long long)(ours.tv_sec - libc.tv_sec));
	verdict(ours.tv_sec >= libc.tv_sec && ours.tv_sec - libc.tv_sec < 5,
		desc("vdso: %s tells the time as libc does", name), "0 to 4 s later", got);
}

int main(void)
{
	test_mmap_over_mmap();
	test_exec_and_fork();
	test_names();
	test_vdso_symbol();
	return tap_done();
}
