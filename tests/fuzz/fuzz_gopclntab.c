// SPDX-License-Identifier: GPL-2.0
/* fuzz_gopclntab.c: libFuzzer target for the .gopclntab reader: any bytes in, an error or sane answers out. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "offsets/gopclntab.h"

/* Lookups per input: enough to reach the pc-value decoding of many functions. */
#define PROBES 64
/* go:func.* for the inlining trees: the input itself, "mapped" here */
#define GOFUNC 0x500000ULL

struct input {
	const uint8_t *data;
	size_t size;
};

static const uint8_t *read_input(void *ctx, uint64_t vaddr, size_t len)
{
	const struct input *in = ctx;

	if (vaddr < GOFUNC || vaddr - GOFUNC > in->size || len > in->size - (vaddr - GOFUNC))
		return NULL;
	return in->data + (vaddr - GOFUNC);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab_frame frames[GOPCLNTAB_MAX_INLINE];
	struct gopclntab_func fn, hit;
	struct gopclntab *tab;
	struct input in;
	int nf, j;
	const char *file;
	uint8_t *copy;
	uint64_t pc;
	size_t i, n;
	int line;

	/* an exact-size copy, so that ASan sees any read past the end */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	in = (struct input){ copy, size };
	/* both with the header's text start and with one given by the caller (PIE, Go 1.26+) */
	for (int pass = 0; pass < 2; pass++) {
		tab = gopclntab__open(copy, size, pass ? 0x401000 : 0, NULL, 0);
		if (!tab)
			continue;
		gopclntab__set_funcdata(tab, gopclntab__magic(tab) == GOPCLNTAB_MAGIC_116 ? 0 : GOFUNC,
					read_input, &in);
		n = gopclntab__nfunc(tab);
		for (i = 0; i < n && i < PROBES; i++) {
			if (gopclntab__func(tab, i * (n / PROBES + 1) % n, &fn) != 0)
				continue;
			if (strlen(fn.name) > size)
				abort();
			pc = fn.entry + (fn.end > fn.entry ? (fn.end - fn.entry) / 2 : 0);
			if (gopclntab__lookup(tab, pc, &hit) == 0 && (pc < hit.entry || pc >= hit.end))
				abort();
			if (gopclntab__line(tab, &fn, pc, &file, &line) == 0 && strlen(file) > size)
				abort();
			nf = gopclntab__frames(tab, &fn, pc, frames, GOPCLNTAB_MAX_INLINE);
			if (nf > GOPCLNTAB_MAX_INLINE || (nf > 0 && frames[nf - 1].inlined))
				abort();
			for (j = 0; j < nf; j++)
				if (strlen(frames[j].func) + strlen(frames[j].file) > 2 * size)
					abort();
		}
		/* a linear scan: once per input, and only for small tables */
		if (n && n < 4096 && gopclntab__func(tab, 0, &fn) == 0)
			gopclntab__find(tab, fn.name, &hit);
		gopclntab__close(tab);
	}
	free(copy);
	return 0;
}
