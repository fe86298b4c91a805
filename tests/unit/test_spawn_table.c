// SPDX-License-Identifier: GPL-2.0
/* test_spawn_table.c: the goroutine-start table read and emptied under its slots' sequence numbers. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd/record/spawn_table.h"
#include "tap.h"

/* As the probe writes a slot: the key, the context, the sequence even again. */
static void put(struct spawn_slot *slots, uint32_t tgid, uint64_t goid, const char *tp)
{
	struct spawn_slot *s = &slots[spawn_slot_index(tgid, goid)];

	s->key.tgid = tgid;
	s->key.goid = goid;
	memset(&s->ctx, 0, sizeof(s->ctx));
	strncpy((char *)s->ctx.traceparent, tp, TRACEPARENT_LEN);
	s->ctx.origin = goid - 1;
	s->seq += 2;
}

int main(void)
{
	size_t len = sizeof(struct spawn_slot) * SPAWN_SLOTS;
	int fd = memfd_create("spawn_slots", MFD_CLOEXEC);
	struct spawn_table *st;
	struct spawn_slot *slots;
	struct trace_ctx c;
	uint64_t g;
	int same = 0;

	if (fd < 0 || ftruncate(fd, len))
		return check(false, "a memfd of the table's size", "made", "not made"), tap_done();
	st = spawn_table__map(fd);
	slots = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (!st || slots == MAP_FAILED)
		return check(false, "the table mapped twice", "mapped", "not"), tap_done();

	/* one process's goids in order fill distinct slots, SPAWN_SLOTS of them */
	for (g = 1; g < SPAWN_SLOTS; g++)
		same += spawn_slot_index(4242, g) == spawn_slot_index(4242, 0);
	check_int("goids 1 to 32,767 of a process: slots shared with goid 0", 0, same);
	check_int("goid 32,768 takes goid 0's slot", spawn_slot_index(4242, 0),
		  spawn_slot_index(4242, SPAWN_SLOTS));

	put(slots, 4242, 7, "00-aaaa");
	check(spawn_table__get(st, 4242, 7, &c) && !strcmp((char *)c.traceparent, "00-aaaa") &&
		      c.origin == 6,
	      "a goroutine's context read whole", "00-aaaa from 6", (char *)c.traceparent);
	check(!spawn_table__get(st, 4243, 7, &c), "another process's goid 7", "none", "found");
	check(!spawn_table__get(st, 4242, 7 + SPAWN_SLOTS, &c), "the goid of its slot's next owner",
	      "none", "found");
	check(!spawn_table__get(st, 4242, 0, &c), "goid 0", "none", "found");

	/* a writer holds it: not read, and not emptied under it */
	slots[spawn_slot_index(4242, 7)].seq++;
	check(!spawn_table__get(st, 4242, 7, &c), "a slot being written", "not read", "read");
	spawn_table__forget(st, 4242);
	check_int("a slot being written is left to its writer", 7,
		  slots[spawn_slot_index(4242, 7)].key.goid);
	slots[spawn_slot_index(4242, 7)].seq++;

	/* its successor overwrites it */
	put(slots, 4242, 7 + SPAWN_SLOTS, "00-bbbb");
	check(!spawn_table__get(st, 4242, 7, &c), "a goroutine whose slot was taken", "none", "found");
	check(spawn_table__get(st, 4242, 7 + SPAWN_SLOTS, &c), "the slot's new goroutine", "found",
	      "none");

	/* a process gone: its slots emptied, another's kept */
	put(slots, 4242, 9, "00-cccc");
	put(slots, 99, 9, "00-dddd");
	spawn_table__forget(st, 4242);
	check(!spawn_table__get(st, 4242, 9, &c) && !spawn_table__get(st, 4242, 7 + SPAWN_SLOTS, &c),
	      "a forgotten process's goroutines", "none", "found");
	check(spawn_table__get(st, 99, 9, &c) && !strcmp((char *)c.traceparent, "00-dddd"),
	      "another process's goroutine after the forget", "00-dddd", (char *)c.traceparent);
	check_int("a slot emptied keeps its sequence even", 0,
		  slots[spawn_slot_index(4242, 9)].seq & 1);

	spawn_table__unmap(st);
	spawn_table__unmap(NULL);
	check(!spawn_table__get(NULL, 1, 1, &c), "no table", "none", "found");
	munmap(slots, len);
	close(fd);
	return tap_done();
}
