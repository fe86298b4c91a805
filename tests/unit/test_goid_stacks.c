// SPDX-License-Identifier: GPL-2.0
/* test_goid_stacks.c: a running goroutine's wall sample takes the stack of its CPU sample nearest in time, within the gap. */
#include "cmd/record/goid_stacks.h"
#include "tap.h"

#define MS 1000000ULL

int main(void)
{
	struct goid_stacks *gs = goid_stacks__new(10 * MS);
	const uint64_t early[] = { 0x1000, 0x2000 }, late[] = { 0x3000, 0x4000, 0x5000 };
	const uint64_t other[] = { 0x9000 };
	const uint64_t *frames = NULL;
	size_t n;

	if (!gs)
		return 1;
	check_int("note a first sample", 0, goid_stacks__note(gs, 7, 42, 100 * MS, early, 2));
	check_int("note a later sample", 0, goid_stacks__note(gs, 7, 42, 120 * MS, late, 3));
	check_int("another process, same goid", 0, goid_stacks__note(gs, 8, 42, 119 * MS, other, 1));

	n = goid_stacks__find(gs, 7, 42, 103 * MS, &frames);
	check_int("nearer the first: its frames", 2, n);
	check_hex("nearer the first: its leaf", 0x1000, n ? frames[0] : 0);
	n = goid_stacks__find(gs, 7, 42, 125 * MS, &frames);
	check_int("after the later one: its frames", 3, n);
	check_hex("after the later one: its leaf", 0x3000, n ? frames[0] : 0);
	check_int("beyond the gap: none", 0, goid_stacks__find(gs, 7, 42, 131 * MS, &frames));
	check_int("before the gap: none", 0, goid_stacks__find(gs, 7, 42, 89 * MS, &frames));
	check_int("a goroutine never sampled: none", 0, goid_stacks__find(gs, 7, 43, 120 * MS, &frames));
	n = goid_stacks__find(gs, 8, 42, 119 * MS, &frames);
	check_hex("the other process's own", 0x9000, n ? frames[0] : 0);

	/* a second later, the goroutines not sampled since are let go */
	check_int("a sample 1.2 s on", 0, goid_stacks__note(gs, 7, 50, 1320 * MS, other, 1));
	check_int("swept: the old goroutine's samples are gone", 0,
		  goid_stacks__find(gs, 7, 42, 125 * MS, &frames));
	check_int("the new one's is kept", 1, goid_stacks__find(gs, 7, 50, 1321 * MS, &frames));
	goid_stacks__free(gs);
	goid_stacks__free(NULL);
	return tap_done();
}
