// SPDX-License-Identifier: GPL-2.0
/* test_go_allgs.c: runtime.allgs and allglen decoded from runtime.allgadd's code, and what is refused. */
#include <errno.h>
#include <string.h>

#include "offsets/go_allgs.h"
#include "code_buf.h"
#include "tap.h"

#define ENTRY 0x435c00ULL
#define ALLGS 0x567110ULL
#define ALLGLEN 0x596038ULL

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

/* The verdict on one decoding: RC and what it found against WANT_RC (0: ALLGS, ALLGLEN). */
static void judge(const char *what, int rc, uint64_t allgs, uint64_t allglen, int want_rc)
{
	char expected[64], got[64];

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

static void decodes(const char *what, const struct code *c, size_t len, int want_rc)
{
	uint64_t allgs = 0, allglen = 0;
	int rc = go_allgs__decode_allgadd(c->b, len, c->entry, &allgs, &allglen);

	judge(what, rc, allgs, allglen, want_rc);
}

/* ldr xT, ADDR as Go emits it: adrp x27, then a load at the page offset */
static void a64_load(struct code *c, unsigned int rt, uint64_t addr)
{
	a64_adrp(c, 27, addr);
	a64_ldr(c, rt, 27, addr & 0xfff);
}

/* stlr xT, [xB] after adrp/add of ADDR into xB */
static void a64_store(struct code *c, unsigned int rt, unsigned int rb, uint64_t addr)
{
	a64_adrp(c, rb, addr);
	a64_add(c, rb, rb, addr & 0xfff);
	a64(c, 0xc89ffc00 | rb << 5 | rt);
}

static void decodes_arm64(const char *what, const struct code *c, int want_rc)
{
	uint64_t allgs = 0, allglen = 0;
	int rc = go_allgs__decode_allgadd_arm64(c->b, c->len, c->entry, &allgs, &allglen);

	judge(what, rc, allgs, allglen, want_rc);
}

/*
 * Go 1.27's arm64 allgadd, reduced: allgs' pointer and cap loaded, allgptr
 * stored from allgs (the store the decoder must not take), then allglen
 * from allgs+8. CLOBBER puts a write to x1 between the load and the store.
 */
static void allgadd_arm64(struct code *c, bool with_cap, bool clobber)
{
	c->len = 0;
	a64_load(c, 1, ALLGS);
	if (with_cap)
		a64_load(c, 2, ALLGS + 16);
	a64(c, 0xeb02003f); /* cmp x1, x2 */
	a64(c, 0x540001a0); /* b.eq */
	a64_store(c, 1, 2, ALLGLEN - 0x400); /* allgptr = allgs */
	a64_load(c, 1, ALLGS + 8);
	if (clobber)
		a64(c, 0x91000421); /* add x1, x1, #1 */
	a64_store(c, 1, 2, ALLGLEN);
	a64(c, 0xd503201f); /* nop */
}

int main(void)
{
	struct code c = { .entry = ENTRY };

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

	allgadd_arm64(&c, true, false);
	decodes_arm64("arm64: allglen's stlr of allgs+8, after allgptr's", &c, 0);
	allgadd_arm64(&c, false, false);
	decodes_arm64("arm64: the slice's cap never referenced: refused", &c, -ENOENT);
	allgadd_arm64(&c, true, true);
	decodes_arm64("arm64: the stored register rewritten after its load: refused", &c, -ENOENT);
	allgadd_arm64(&c, true, false);
	c.len -= 8;
	decodes_arm64("arm64: code cut before the stlr: refused", &c, -ENOENT);
	return tap_done();
}
