// SPDX-License-Identifier: GPL-2.0
/* map_copy.c: a BPF hash map's entries copied into a hashmap, in batches, or a process's deleted. */
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

/*
 * The keys are gathered first: a deleted key makes the next get_next_key
 * start over.
 */
void map_forget_tgid(int fd, size_t key_size, pid_t pid)
{
	uint8_t key[32], *keys = NULL, *grown;
	size_t n = 0, cap = 0, i;
	void *prev = NULL;
	__u32 tgid;

	while (key_size <= sizeof(key) && bpf_map_get_next_key(fd, prev, key) == 0) {
		memcpy(&tgid, key, sizeof(tgid));
		if (tgid == (__u32)pid) {
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				grown = realloc(keys, cap * key_size);
				if (!grown)
					break;
				keys = grown;
			}
			memcpy(keys + n++ * key_size, key, key_size);
		}
		prev = key;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, keys + i * key_size);
	free(keys);
}
