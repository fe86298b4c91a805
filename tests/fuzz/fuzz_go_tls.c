// SPDX-License-Identifier: GPL-2.0
/* fuzz_go_tls.c: libFuzzer target for the TLS slot decoders: stackcheck's code, and tlsg arithmetic. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offsets/go_tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t w[3] = {};
	int64_t offset;
	uint8_t *copy;

	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	/* a slot below fsbase, 8-aligned, within the 32-bit displacement: or nothing */
	if (go_tls__decode_stackcheck(copy, size, &offset) == 0 &&
	    (offset >= 0 || offset < INT32_MIN || offset % 8))
		abort();
	free(copy);
	memcpy(w, data, size < sizeof(w) ? size : sizeof(w));
	if (go_tls__from_tlsg(w[0], w[1], w[2], &offset) == 0 && offset >= 0)
		abort();
	return 0;
}
