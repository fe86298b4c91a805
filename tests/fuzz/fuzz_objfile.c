// SPDX-License-Identifier: GPL-2.0
/* fuzz_objfile.c: libFuzzer target for the symbolizer's ELF reader: build ID, segments, ELF symbols, DWARF lines, .gopclntab. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd/symbols/objfile.h"
#include "memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct frame *frames;
	struct objfile *of;
	char path[64], err[256];
	uint64_t vaddr, off;
	size_t i, n;
	int fd;

	/* objfile__get opens a path: give it one in memory */
	fd = memfile(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	of = objfile__get(path, "fuzz", err, sizeof(err));
	if (of) {
		objfile__build_id(of);
		/* addresses spread over the file, as samples in its mapping would be */
		for (i = 0; i < 64; i++) {
			off = size * i / 64;
			if (!objfile__vaddr(of, off, &vaddr))
				vaddr = off;
			n = objfile__frames(of, vaddr, &frames);
			if (n < 1 || !frames[0].func)
				abort();
			objfile__sp_delta(of, vaddr);
			objfile__in_function(of, vaddr);
		}
		objfile__put(of);
	}
	close(fd);
	return 0;
}
