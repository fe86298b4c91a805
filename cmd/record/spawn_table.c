// SPDX-License-Identifier: GPL-2.0
/* spawn_table.c: the goroutine-start probe's table of contexts, mapped, read under its sequence numbers. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "spawn_table.h"

struct spawn_table {
	struct spawn_slot *slots; /* SPAWN_SLOTS of them, shared with the kernel */
	size_t len;
};

struct spawn_table *spawn_table__map(int fd)
{
	struct spawn_table *st = calloc(1, sizeof(*st));
	long page = sysconf(_SC_PAGESIZE);
	int err;

	if (!st)
		return NULL;
	st->len = (sizeof(struct spawn_slot) * SPAWN_SLOTS + page - 1) / page * page;
	st->slots = mmap(NULL, st->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (st->slots == MAP_FAILED) {
		err = errno;
		free(st);
		errno = err;
		return NULL;
	}
	return st;
}

void spawn_table__unmap(struct spawn_table *st)
{
	if (!st)
		return;
	munmap(st->slots, st->len);
	free(st);
}

bool spawn_table__get(const struct spawn_table *st, uint32_t tgid, uint64_t goid,
		      struct trace_ctx *out)
{
	const struct spawn_slot *s;
	__u64 seq;

	if (!st || !goid)
		return false;
	s = &st->slots[spawn_slot_index(tgid, goid)];
	seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	if ((seq & 1) || __atomic_load_n(&s->key.tgid, __ATOMIC_RELAXED) != tgid ||
	    __atomic_load_n(&s->key.goid, __ATOMIC_RELAXED) != goid)
		return false;
	memcpy(out, &s->ctx, sizeof(*out));
	/* the copy counts only if no writer came between the two reads of SEQ */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq;
}

void spawn_table__forget(struct spawn_table *st, uint32_t tgid)
{
	struct spawn_slot *s;
	__u64 seq;
	size_t i;

	for (i = 0; st && i < SPAWN_SLOTS; i++) {
		s = &st->slots[i];
		if (__atomic_load_n(&s->key.tgid, __ATOMIC_RELAXED) != tgid)
			continue;
		seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		/* one a probe is writing just now is left to it */
		if ((seq & 1) || !__atomic_compare_exchange_n(&s->seq, &seq, seq + 1, false,
							      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		s->key.tgid = 0;
		s->key.goid = 0;
		__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
	}
}
