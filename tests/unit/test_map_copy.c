// SPDX-License-Identifier: GPL-2.0
/* test_map_copy.c: a BPF hash map copied whole, across batches, and an empty one, both without error. */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "cmd/util/hashmap.h"
#include "cmd/util/map_copy.h"
#include "tap.h"

struct key {
	uint32_t a, b;
};

/* N entries {i, ~i} -> i * 3 in a new hash map of MAX, copied: "RET SIZE RIGHT" */
static const char *copy_of(int n, int max)
{
	struct hashmap *m = hashmap__new();
	int fd, i, ret, right = 0;
	uint64_t v, *got;
	struct key k;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "map_copy_test", sizeof(k), sizeof(v), max, NULL);
	if (fd < 0 || !m) {
		hashmap__free(m, free);
		return desc("map_create: %s", strerror(errno));
	}
	for (i = 0; i < n; i++) {
		k = (struct key){ i, ~(uint32_t)i };
		v = (uint64_t)i * 3;
		if (bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST))
			return desc("update: %s", strerror(errno));
	}
	ret = map_copy(fd, m, sizeof(k), sizeof(v));
	for (i = 0; i < n; i++) {
		k = (struct key){ i, ~(uint32_t)i };
		got = hashmap__get(m, &k, sizeof(k));
		right += got && *got == (uint64_t)i * 3;
	}
	close(fd);
	i = (int)hashmap__size(m);
	hashmap__free(m, free);
	return desc("%d %d %d", ret, i, right);
}

int main(void)
{
	if (geteuid() != 0) {
		skip("map_copy", "creating a BPF map needs root");
		return tap_done();
	}
	check_str("an empty map: no error, nothing", "0 0 0", copy_of(0, 64));
	check_str("one entry", "0 1 1", copy_of(1, 64));
	check_str("600 entries, three batches and more: every one", "0 600 600", copy_of(600, 1024));
	check_str("a full map", "0 4096 4096", copy_of(4096, 4096));
	return tap_done();
}
