// SPDX-License-Identifier: GPL-2.0
/* test_go_tls.c: the g slot's fsbase offset, from PT_TLS and from runtime.stackcheck's code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "offsets/go_tls.h"
#include "tap.h"

#define CODE_MAX 16

/* The expected value as text: an offset, or an error. */
static const char *result(char *buf, size_t size, int rc, int64_t offset)
{
	if (rc == -EINVAL)
		snprintf(buf, size, "-EINVAL");
	else if (rc == -ENOENT)
		snprintf(buf, size, "-ENOENT");
	else if (rc)
		snprintf(buf, size, "error %d", rc);
	else
		snprintf(buf, size, "%lld", (long long)offset);
	return buf;
}

/* A g symbol's value in a PT_TLS block of MEMSZ and ALIGN, and what it gives. */
struct block_case {
	uint64_t sym, memsz, align;
	int rc;
	int64_t offset;
};

/* Each of N CASES through FN (go_tls__from_tlsg or its arm64 twin), named NAME. */
static void block_cases(const char *name, int (*fn)(uint64_t, uint64_t, uint64_t, int64_t *),
			const struct block_case *cases, size_t n)
{
	char expected[32], got[32];
	int64_t offset;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		offset = 0x7777;
		rc = fn(cases[i].sym, cases[i].memsz, cases[i].align, &offset);
		result(expected, sizeof(expected), cases[i].rc, cases[i].offset);
		result(got, sizeof(got), rc, offset);
		verdict(strcmp(expected, got) == 0,
			desc("%s(0x%llx, memsz 0x%llx, align %llu)", name,
			     (unsigned long long)cases[i].sym, (unsigned long long)cases[i].memsz,
			     (unsigned long long)cases[i].align),
			expected, got);
	}
}

static void test_from_tlsg(void)
{
	static const struct block_case cases[] = {
		/* block = memsz rounded up to align; offset = tlsg - block */
		{ 0, 0xf8, 16, 0, -256 },
		{ 0, 8, 8, 0, -8 },
		{ 0x10, 0x40, 0x20, 0, -0x30 },
		{ 0, 8, 0, 0, -8 }, /* p_align 0 means no alignment */
		{ 0, 0xf8, 24, -EINVAL },
		{ 0, 0xf8, 3, -EINVAL },
		{ 0x100, 0xf8, 16, -EINVAL }, /* g at the thread pointer itself */
		{ 0x200, 0xf8, 16, -EINVAL },
		{ 0xfc, 0x100, 16, -EINVAL }, /* only 4 bytes left for an 8-byte g */
	};

	block_cases("go_tls__from_tlsg", go_tls__from_tlsg, cases, sizeof(cases) / sizeof(cases[0]));
}

/* "64 48 8b" -> bytes; returns how many. */
static size_t parse_hex(const char *s, uint8_t *code)
{
	size_t n = 0;
	char *end;

	while (n < CODE_MAX) {
		code[n] = strtoul(s, &end, 16);
		if (end == s)
			break;
		n++;
		s = end;
	}
	return n;
}

/* Decodes CODE[0..LEN) from an exact-size heap copy, so that ASan sees any overread. */
static int decode(const uint8_t *code, size_t len, int64_t *offset)
{
	uint8_t *copy = malloc(len ? len : 1);
	int rc;

	if (!copy) {
		perror("malloc");
		exit(2);
	}
	if (len)
		memcpy(copy, code, len);
	rc = go_tls__decode_stackcheck(copy, len, offset);
	free(copy);
	return rc;
}

static void test_decode(void)
{
	static const struct {
		const char *code;
		int rc;
		int64_t offset;
	} cases[] = {
		/* mov %fs:disp32,%rax */
		{ "64 48 8b 04 25 f8 ff ff ff", 0, -8 },
		{ "64 48 8b 04 25 00 ff ff ff", 0, -256 },
		/* ... followed by the rest of stackcheck */
		{ "64 48 8b 04 25 f0 ff ff ff 48 39 60 10", 0, -16 },
		/* mov $imm32,%rcx; mov %fs:(%rcx),%rax */
		{ "48 c7 c1 f8 ff ff ff 64 48 8b 01", 0, -8 },
		{ "48 c7 c1 80 ff ff ff 64 48 8b 01", 0, -128 },
		/* a slot at or above fsbase, or not pointer-aligned */
		{ "64 48 8b 04 25 08 00 00 00", -ENOENT },
		{ "64 48 8b 04 25 00 00 00 00", -ENOENT },
		{ "64 48 8b 04 25 fc ff ff ff", -ENOENT },
		{ "48 c7 c1 10 00 00 00 64 48 8b 01", -ENOENT },
		{ "48 c7 c1 f4 ff ff ff 64 48 8b 01", -ENOENT },
		/* other code: a frame setup, the %rcx form without %fs, another addressing mode */
		{ "55 48 89 e5 48 83 ec 10 90", -ENOENT },
		{ "48 c7 c1 f8 ff ff ff 48 8b 01 90", -ENOENT },
		{ "64 48 8b 04 24 f8 ff ff ff", -ENOENT },
		{ "", -ENOENT },
	};
	char expected[32], got[32];
	uint8_t code[CODE_MAX];
	int64_t offset;
	size_t i, len;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = parse_hex(cases[i].code, code);
		offset = 0x7777;
		rc = decode(code, len, &offset);
		result(expected, sizeof(expected), cases[i].rc, cases[i].offset);
		result(got, sizeof(got), rc, offset);
		verdict(strcmp(expected, got) == 0, desc("decode [%s]", cases[i].code), expected,
			got);
	}
}

/* Every proper prefix of a valid sequence is too short to decode. */
static void test_decode_short(void)
{
	static const struct {
		const char *what, *code;
	} forms[] = {
		{ "mov %fs:-8,%rax", "64 48 8b 04 25 f8 ff ff ff" },
		{ "mov $-8,%rcx; mov %fs:(%rcx),%rax", "48 c7 c1 f8 ff ff ff 64 48 8b 01" },
	};
	size_t i, len, full, decoded;
	uint8_t code[CODE_MAX];
	int64_t offset;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		full = parse_hex(forms[i].code, code);
		decoded = 0;
		for (len = 0; len < full; len++) {
			if (decode(code, len, &offset) != -ENOENT)
				decoded++;
		}
		check_int(desc("%s cut to 0..%zu bytes: prefixes decoded", forms[i].what,
			       full - 1),
			  0, decoded);
	}
}

static void test_from_tls_g_arm64(void)
{
	static const struct block_case cases[] = {
		/* Go's cgo builds: runtime.tls_g first in a 248-byte block after the 16-byte TCB */
		{ 0, 0xf8, 8, 0, 16 },
		{ 0x10, 0xf8, 8, 0, 32 },
		/* a block aligned to 64 starts at 64 */
		{ 0, 0x100, 64, 0, 64 },
		{ 0, 8, 0, 0, 16 },
		/* outside the block, unaligned, or a bad alignment */
		{ 0xf8, 0xf8, 8, -EINVAL },
		{ 0xf4, 0xf8, 8, -EINVAL },
		{ 4, 0xf8, 8, -EINVAL },
		{ 0, 0xf8, 24, -EINVAL },
	};

	block_cases("go_tls__from_tls_g_arm64", go_tls__from_tls_g_arm64, cases,
		    sizeof(cases) / sizeof(cases[0]));
}

static void test_load_g_arm64(void)
{
	/* runtime.load_g of go1.27's cgo build, instruction words */
	static const uint32_t load_g[] = { 0x900009db, 0x39a81360, 0xb4000080, 0xd53bd040,
					   0xd280021b, 0xf87b681c, 0xd65f03c0 };
	static const struct {
		const char *what;
		int at; /* the word to change, -1 none */
		uint32_t insn;
		int rc;
		int64_t offset;
	} cases[] = {
		{ "go1.27 cgo build", -1, 0, 0, 16 },
		{ "movz #0x40", 4, 0xd280081b, 0, 64 },
		{ "movz #1, lsl #16", 4, 0xd2a0003b, 0, 65536 },
		{ "movz #1, lsl #32: beyond any TLS block", 4, 0xd2c0003b, -ENOENT },
		{ "offset below the TCB (movz #8)", 4, 0xd280011b, -ENOENT },
		{ "mrs of another register (tpidrro_el0)", 3, 0xd53bd060, -ENOENT },
		{ "load into x27, not g's R28", 5, 0xf87b681b, -ENOENT },
		{ "load through another base than mrs's", 5, 0xf87b683c, -ENOENT },
		{ "nop for the load", 5, 0xd503201f, -ENOENT },
	};
	char expected[32], got[32];
	uint8_t code[sizeof(load_g)], *copy;
	int64_t offset;
	size_t i, k, len;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (k = 0; k < sizeof(load_g) / 4; k++) {
			uint32_t w = (int)k == cases[i].at ? cases[i].insn : load_g[k];

			code[4 * k] = w;
			code[4 * k + 1] = w >> 8;
			code[4 * k + 2] = w >> 16;
			code[4 * k + 3] = w >> 24;
		}
		offset = 0x7777;
		rc = go_tls__decode_load_g_arm64(code, sizeof(code), &offset);
		result(expected, sizeof(expected), cases[i].rc, cases[i].offset);
		result(got, sizeof(got), rc, offset);
		verdict(strcmp(expected, got) == 0, desc("load_g: %s", cases[i].what), expected, got);
	}
	/* every cut short of the load: an exact-size copy, so that ASan sees an overread */
	for (len = 0, k = 0; len < 6 * 4; len += 4) {
		copy = malloc(len ? len : 1);
		if (!copy)
			exit(2);
		memcpy(copy, code, len);
		k += go_tls__decode_load_g_arm64(copy, len, &offset) != -ENOENT;
		free(copy);
	}
	check_int("load_g cut before its ldr: prefixes decoded", 0, k);
}

int main(void)
{
	test_from_tls_g_arm64();
	test_load_g_arm64();
	test_from_tlsg();
	test_decode();
	test_decode_short();
	return tap_done();
}
