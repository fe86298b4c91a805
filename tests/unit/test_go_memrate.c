// SPDX-License-Identifier: GPL-2.0
/* test_go_memrate.c: runtime.MemProfileRate decoded from runtime.profilealloc's code, and what is refused. */
#include <errno.h>
#include <string.h>

#include "offsets/go_memrate.h"
#include "code_buf.h"
#include "tap.h"

#define ENTRY 0x40c780ULL
#define FASTEXPRAND 0x40c860ULL
#define OTHER 0x42b2a0ULL /* runtime.mProf_Malloc, called after */
#define MCACHE0 0x573630ULL
#define RATE 0x549268ULL

/*
 * Go 1.23's profilealloc, reduced: getMCache (mcache0 when there is no
 * P), nextSample's load of MemProfileRate (twice from Go 1.24, once
 * stored in the mcache), its compare, the call of fastexprand, then of
 * mProf_Malloc. TWICE adds 1.24's second load; REX 0x4c loads r9.
 */
static void profilealloc(struct code *c, bool twice, uint8_t rex)
{
	c->len = 0;
	put(c, (const uint8_t[]){ 0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0x93, 0, 0, 0 }, 10);
	put(c, (const uint8_t[]){ 0x48, 0x8b, 0x90, 0xd0, 0, 0, 0 }, 7); /* mov 0xd0(%rax),%rdx */
	rip(c, 0x48, 0x8b, 0x15, MCACHE0); /* mov mcache0(%rip),%rdx */
	put(c, (const uint8_t[]){ 0x48, 0x85, 0xd2, 0x74, 0x5b }, 5); /* test; je */
	rip(c, rex, 0x8b, 0x35, RATE); /* mov MemProfileRate(%rip),%rsi */
	if (twice) {
		put(c, (const uint8_t[]){ 0x48, 0x89, 0x72, 0x08 }, 4); /* mov %rsi,0x8(%rdx) */
		rip(c, rex, 0x8b, 0x35, RATE);
	}
	put(c, (const uint8_t[]){ 0x48, 0x83, 0xfe, 0x01, 0x75, 0x05 }, 6); /* cmp $1; jne */
	put(c, (const uint8_t[]){ 0x48, 0x89, 0xf0 }, 3); /* mov %rsi,%rax */
	call(c, FASTEXPRAND);
	put(c, (const uint8_t[]){ 0x48, 0x63, 0xc8, 0x90 }, 4); /* movslq; nop */
	call(c, OTHER);
	put(c, (const uint8_t[]){ 0xc3 }, 1);
}

/* The verdict on one decoding against WANT (an address, or 0 for -ENOENT). */
static void judge(const char *what, int rc, uint64_t rate, uint64_t want)
{
	char expected[32], got[32];

	if (want)
		snprintf(expected, sizeof(expected), "0x%llx", (unsigned long long)want);
	else
		snprintf(expected, sizeof(expected), "%d", -ENOENT);
	if (rc)
		snprintf(got, sizeof(got), "%d", rc);
	else
		snprintf(got, sizeof(got), "0x%llx", (unsigned long long)rate);
	verdict(!strcmp(expected, got), what, expected, got);
}

static void decodes(const char *what, const struct code *c, uint64_t callee, uint64_t want)
{
	uint64_t rate = 0;
	int rc = go_memrate__decode_profilealloc(c->b, c->len, c->entry, callee, &rate);

	judge(what, rc, rate, want);
}

/*
 * Go 1.27's arm64 profilealloc, reduced: adrp/ldr of mcache0 and of
 * MemProfileRate (Go 1.19: adrp, add, ldr [x27]), cmp, b.ne, bl
 * fastexprand. CLOBBER rewrites x27 between the rate's adrp and its load.
 */
static void profilealloc_arm64(struct code *c, bool go119, bool clobber)
{
	c->len = 0;
	a64(c, 0xf9400b90); /* ldr x16, [x28, #16] */
	a64(c, 0xeb3063ff); /* cmp sp, x16 */
	a64(c, 0x54000549); /* b.ls */
	a64(c, 0xf9406803); /* ldr x3, [x0, #208] */
	a64(c, 0xb4000063); /* cbz x3 */
	a64_adrp(c, 27, MCACHE0);
	a64_ldr(c, 3, 27, MCACHE0 & 0xfff);
	a64_adrp(c, 27, RATE);
	if (clobber)
		a64(c, 0xaa0003fb); /* mov x27, x0 */
	if (go119) {
		a64_add(c, 27, 27, RATE & 0xfff);
		a64_ldr(c, 4, 27, 0);
	} else {
		a64_ldr(c, 4, 27, RATE & 0xfff);
	}
	a64(c, 0xf100049f); /* cmp x4, #1 */
	a64(c, 0x54000061); /* b.ne */
	a64(c, 0xaa0403e0); /* mov x0, x4 */
	a64_bl(c, FASTEXPRAND);
	a64_bl(c, OTHER);
}

static void decodes_arm64(const char *what, const struct code *c, uint64_t callee, uint64_t want)
{
	uint64_t rate = 0;
	int rc = go_memrate__decode_profilealloc_arm64(c->b, c->len, c->entry, callee, &rate);

	judge(what, rc, rate, want);
}

int main(void)
{
	struct code c = { .entry = ENTRY };

	profilealloc(&c, false, 0x48);
	decodes("amd64: the load before fastexprand's call, after mcache0's (go1.19 to 1.23)", &c,
		FASTEXPRAND, RATE);
	profilealloc(&c, true, 0x48);
	decodes("amd64: loaded twice (go1.24 to 1.27)", &c, FASTEXPRAND, RATE);
	profilealloc(&c, false, 0x4c);
	decodes("amd64: into r9 (REX.R)", &c, FASTEXPRAND, RATE);
	profilealloc(&c, false, 0x48);
	decodes("amd64: no call of the function named: refused", &c, FASTEXPRAND + 0x40, 0);
	profilealloc(&c, false, 0x48);
	c.b[10 + 7 + 1] = 0x8d; /* lea of mcache0: no load */
	c.b[10 + 7 + 7 + 5 + 1] = 0x8d; /* lea of the rate */
	decodes("amd64: leas, no load before the call: refused", &c, FASTEXPRAND, 0);
	profilealloc(&c, false, 0x48);
	c.b[10 + 7 + 7 + 5] = 0x40; /* REX without W: a 32-bit load of the rate */
	/* mcache0, a pointer in .bss, which go_binary refuses as the rate */
	decodes("amd64: the rate's load 32 bits wide: the 64-bit one before it is the last", &c,
		FASTEXPRAND, MCACHE0);
	profilealloc(&c, false, 0x48);
	c.len = 10 + 7 + 7 + 5 + 7 + 6 + 3 + 2;
	decodes("amd64: code cut inside the call: refused", &c, FASTEXPRAND, 0);
	memset(c.b, 0x90, sizeof(c.b));
	c.len = sizeof(c.b);
	decodes("amd64: no such code at all", &c, FASTEXPRAND, 0);

	profilealloc_arm64(&c, false, false);
	decodes_arm64("arm64: adrp, ldr of the rate before bl fastexprand (go1.21 to 1.27)", &c,
		      FASTEXPRAND, RATE);
	profilealloc_arm64(&c, true, false);
	decodes_arm64("arm64: adrp, add, ldr (go1.19)", &c, FASTEXPRAND, RATE);
	profilealloc_arm64(&c, false, true);
	decodes_arm64("arm64: the base rewritten after its adrp: mcache0's load is the last known",
		      &c, FASTEXPRAND, MCACHE0);
	profilealloc_arm64(&c, false, false);
	decodes_arm64("arm64: no bl of the function named: refused", &c, FASTEXPRAND + 0x40, 0);
	profilealloc_arm64(&c, false, false);
	c.len -= 8;
	decodes_arm64("arm64: code cut before the bl: refused", &c, FASTEXPRAND, 0);
	return tap_done();
}
