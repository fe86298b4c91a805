// SPDX-License-Identifier: GPL-2.0
/* test_go_allgs.c: runtime.allgs and allglen decoded from runtime.allgadd's code, and what is refused. */
#include <errno.h>
#include <string.h>

#include "go_allgs.h"
#include "tap.h"

#define ENTRY 0x435c00ULL
#define ALLGS 0x567110ULL
#define ALLGLEN 0x596038ULL

struct code {
	uint8_t b[128];
	size_t len;
};

static void put(struct code *c, const uint8_t *bytes, size_t n)
{
	memcpy(c->b + c->len, bytes, n);
	c->len += n;
}

/* REX, OP, MODRM, then the disp32 that makes it refer to TARGET */
static void rip(struct code *c, uint8_t rex, uint8_t op, uint8_t modrm, uint64_t target)
{
	int32_t disp = (int32_t)(target - (ENTRY + c->len + 7));
	uint8_t b[7] = { rex, op, modrm };

	memcpy(b + 3, &disp, 4);
	put(c, b, sizeof(b));
}

static void nops(struct code *c, size_t n)
{
	while (n--)
		put(c, (const uint8_t[]){ 0x90 }, 1);
}

/* What go1.19 to go1.27 emit: loads of allgs's three words, then the store of allglen. */
static void allgadd(struct code *c, bool lea_first, bool with_cap, uint8_t xchg_modrm)
{
	c->len = 0;
	nops(c, 5);
	rip(c, 0x48, 0x8b, 0x35, ALLGS + 8); /* mov allgs+8(%rip),%rsi */
	rip(c, 0x48, 0x8b, 0x1d, ALLGS); /* mov allgs(%rip),%rbx */
	if (with_cap)
		rip(c, 0x48, 0x8b, 0x3d, ALLGS + 16); /* mov allgs+16(%rip),%rdi */
	nops(c, 9);
	if (lea_first) {
		rip(c, 0x48, 0x8d, 0x15, ALLGLEN); /* lea allglen(%rip),%rdx */
		rip(c, 0x48, 0x8b, 0x0d, ALLGS + 8); /* mov allgs+8(%rip),%rcx */
	} else {
		rip(c, 0x48, 0x8b, 0x0d, ALLGS + 8);
		rip(c, 0x48, 0x8d, 0x15, ALLGLEN);
	}
	put(c, (const uint8_t[]){ 0x48, 0x87, xchg_modrm }, 3); /* xchg %rcx,(%rdx) is 0a */
	nops(c, 4);
}

static void decodes(const char *what, const struct code *c, size_t len, int want_rc)
{
	uint64_t allgs = 0, allglen = 0;
	char expected[64], got[64];
	int rc;

	rc = go_allgs__decode_allgadd(c->b, len, ENTRY, &allgs, &allglen);
	if (want_rc)
		snprintf(expected, sizeof(expected), "%d", want_rc);
	else
		snprintf(expected, sizeof(expected), "allgs 0x%llx allglen 0x%llx",
			 (unsigned long long)ALLGS, (unsigned long long)ALLGLEN);
	if (rc)
		snprintf(got, sizeof(got), "%d", rc);
	else
		snprintf(got, sizeof(got), "allgs 0x%llx allglen 0x%llx",
			 (unsigned long long)allgs, (unsigned long long)allglen);
	verdict(!strcmp(expected, got), what, expected, got);
}

int main(void)
{
	struct code c;

	allgadd(&c, false, true, 0x0a);
	decodes("mov, lea, xchg as Go emits them", &c, c.len, 0);
	allgadd(&c, true, true, 0x0a);
	decodes("lea before mov", &c, c.len, 0);
	allgadd(&c, false, true, 0x1a);
	decodes("xchg of another register than the one loaded: refused", &c, c.len, -ENOENT);
	allgadd(&c, false, true, 0x0b);
	decodes("xchg through another base than the lea's: refused", &c, c.len, -ENOENT);
	allgadd(&c, false, false, 0x0a);
	decodes("the slice's cap never referenced: not allgs, refused", &c, c.len, -ENOENT);
	allgadd(&c, false, true, 0x0a);
	decodes("code cut before the xchg: refused", &c, c.len - 6, -ENOENT);

	/* r9 loaded, r10 the base: REX.R and REX.B */
	c.len = 0;
	rip(&c, 0x48, 0x8b, 0x1d, ALLGS);
	rip(&c, 0x48, 0x8b, 0x3d, ALLGS + 16);
	rip(&c, 0x4c, 0x8b, 0x0d, ALLGS + 8); /* mov allgs+8(%rip),%r9 */
	rip(&c, 0x4c, 0x8d, 0x15, ALLGLEN); /* lea allglen(%rip),%r10 */
	put(&c, (const uint8_t[]){ 0x4d, 0x87, 0x0a }, 3); /* xchg %r9,(%r10) */
	decodes("r9 and r10 (REX.R, REX.B)", &c, c.len, 0);
	c.b[c.len - 3] = 0x4c; /* xchg %r9,(%rdx): not the lea's register */
	decodes("REX.B dropped from the xchg: refused", &c, c.len, -ENOENT);

	memset(c.b, 0x90, sizeof(c.b));
	decodes("no such store at all", &c, sizeof(c.b), -ENOENT);
	return tap_done();
}
