// SPDX-License-Identifier: GPL-2.0
/* fuzz_buildinfo.c: libFuzzer target for the .go.buildinfo reader: both formats, the magic search, version parsing. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offsets/buildinfo.h"

struct input {
	const uint8_t *data;
	size_t size;
};

/* the pointer format's strings: "virtual addresses" are offsets into the input */
static const uint8_t *read_input(void *ctx, uint64_t vaddr, size_t len)
{
	const struct input *in = ctx;

	if (vaddr > in->size || len > in->size - vaddr)
		return NULL;
	return in->data + vaddr;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char version[BUILDINFO_HEADER_LEN * 4], err[128];
	const uint8_t *found;
	struct input in;
	uint8_t *copy;
	int major, minor;

	/* an exact-size copy, so that ASan sees any read past the end */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	in = (struct input){ copy, size };
	if (buildinfo__version(copy, size, read_input, &in, version, sizeof(version), err,
			       sizeof(err)) == 0) {
		if (strnlen(version, sizeof(version)) == sizeof(version))
			abort();
		buildinfo__parse_version(version, &major, &minor);
	}
	/* the module a package belongs to, from the module info after the version */
	{
		char mod[64], ver[32];

		if (buildinfo__package_module(copy, size, "golang.org/x/net/http2", mod, sizeof(mod),
					      ver, sizeof(ver)) == 0 &&
		    (strnlen(mod, sizeof(mod)) == sizeof(mod) || strnlen(ver, sizeof(ver)) == sizeof(ver) ||
		     !ver[0]))
			abort();
	}
	found = buildinfo__find(copy, size);
	if (found && (found < copy || found + BUILDINFO_MAGIC_LEN > copy + size))
		abort();
	free(copy);

	/* the version parser on its own, with the input as a string */
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	if (buildinfo__parse_version((char *)copy, &major, &minor) == 0 && (major < 0 || minor < 0))
		abort();
	free(copy);
	return 0;
}
