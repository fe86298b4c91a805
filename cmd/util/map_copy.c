// SPDX-License-Identifier: GPL-2.0
/* map_copy.c: a BPF hash map's entries copied into a hashmap, in batches. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "hashmap.h"
#include "map_copy.h"

/* Entries a batch: one system call each */
#define BATCH 256

int map_copy(int fd, struct hashmap *m, size_t key_size, size_t value_size)
{
	uint8_t *keys = malloc(BATCH * key_size), *vals = malloc(BATCH * value_size), *v;
	uint64_t out; /* a hash map's batch token is a bucket index */
	void *in = NULL;
	__u32 n, i;
	int ret = 0;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	do {
		n = BATCH;
		ret = bpf_map_lookup_batch(fd, in, &out, keys, vals, &n, NULL);
		if (ret && errno != ENOENT) {
			ret = -errno;
			break;
		}
		/* ENOENT: this batch, possibly empty, is the last */
		ret = ret ? 1 : 0;
		for (i = 0; i < n; i++) {
			const uint8_t *k = keys + i * key_size;

			if (hashmap__get(m, k, key_size) || !(v = malloc(value_size)))
				continue;
			memcpy(v, vals + i * value_size, value_size);
			if (hashmap__add(m, k, key_size, v))
				free(v);
		}
		in = &out;
	} while (!ret);
	free(keys);
	free(vals);
	return ret < 0 ? ret : 0;
}
