// SPDX-License-Identifier: GPL-2.0
/* test_owners.c: a swept label set's entry is deleted as judged, never one the probe wrote since at the same address, nor a new one. */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "cmd/record/owners.h"
#include "cmd/util/clock.h"
#include "tap.h"

/* A goroutine's g as the sweep reads it from this process: only its goid and labels matter. */
struct fake_g {
	uint64_t pad[4];
	uint64_t goid;
	uint64_t labels;
};

static const struct go_layout layout = {
	.g_goid = offsetof(struct fake_g, goid),
	.g_labels = offsetof(struct fake_g, labels),
};

/*
 * A set at SET, made by goroutine 5 at EPOCH (CLOCK_MONOTONIC), which
 * holds another set now; the map copied, then (REUSED) a set made by
 * goroutine 7 at the same address, as after the collector freed the
 * first: "DELETED PRESENT GOID".
 */
static const char *sweep(bool reused, uint64_t epoch)
{
	static struct fake_g setter = { .goid = 5, .labels = 0x2000 }, other = { .goid = 7 };
	struct labels_key k = { .tgid = getpid(), .labels = 0x1000 };
	struct label_owner v = { .goid = 5, .g = (uintptr_t)&setter, .trace = 9, .epoch = epoch };
	struct owners *o = owners__new();
	size_t deleted;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "owners_test", sizeof(k), sizeof(v), 64, NULL);
	if (fd < 0 || !o) {
		owners__free(o);
		return desc("map_create: %s", strerror(errno));
	}
	other.labels = k.labels;
	if (bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST) || owners__read(o, fd))
		return desc("update or copy: %s", strerror(errno));
	if (reused) {
		v = (struct label_owner){ .goid = 7, .g = (uintptr_t)&other, .trace = 9, .epoch = 200 };
		if (bpf_map_update_elem(fd, &k, &v, BPF_EXIST))
			return desc("update: %s", strerror(errno));
	}
	deleted = owners__sweep(o, fd, getpid(), &layout);
	memset(&v, 0, sizeof(v));
	bpf_map_lookup_elem(fd, &k, &v);
	close(fd);
	owners__free(o);
	return desc("%zu %d %llu", deleted, v.epoch != 0, (unsigned long long)v.goid);
}

int main(void)
{
	if (geteuid() != 0) {
		skip("owners", "creating a BPF map needs root");
		return tap_done();
	}
	check_str("a set its setter left is deleted", "1 0 0", sweep(false, 100));
	check_str("a set made since at its address keeps its entry", "0 1 7", sweep(true, 100));
	/* the probe runs before the set is stored: its setter, preempted there, shows another */
	check_str("a set made less than a second ago keeps its entry", "0 1 5",
		  sweep(false, now_ns(CLOCK_MONOTONIC) - NSEC_PER_SEC / 2));
	return tap_done();
}
