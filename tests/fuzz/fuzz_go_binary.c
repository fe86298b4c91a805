// SPDX-License-Identifier: GPL-2.0
/* fuzz_go_binary.c: libFuzzer target for the whole binary reader: ELF, build info, DWARF offsets, TLS, pclntab. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "offsets/go_binary.h"
#include "offsets/gopclntab.h"
#include "memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab_frame frames[GOPCLNTAB_MAX_INLINE];
	const struct gopclntab *tab;
	struct gopclntab_func fn;
	struct go_binary *gb;
	struct go_layout l;
	char path[64], err[256];
	size_t i, n;
	int fd;

	/* go_binary__open maps a file: give it one in memory */
	fd = memfile(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	gb = go_binary__open(path, err, sizeof(err));
	if (gb) {
		if (go_binary__supported(gb) && go_binary__layout(gb, &l) != 0)
			abort();
		for (i = 0; i < go_binary__nproblems(gb); i++)
			if (!go_binary__problem(gb, i))
				abort();
		tab = go_binary__pclntab(gb);
		n = tab ? gopclntab__nfunc(tab) : 0;
		for (i = 0; i < n && i < 32; i++) {
			if (gopclntab__func(tab, i * (n / 32 + 1) % n, &fn) == 0)
				gopclntab__frames(tab, &fn, fn.entry, frames, GOPCLNTAB_MAX_INLINE);
		}
		go_binary__close(gb);
	}
	close(fd);
	return 0;
}
