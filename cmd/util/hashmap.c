// SPDX-License-Identifier: GPL-2.0
/* hashmap.c: a hash table from byte-string keys to pointers, for aggregating samples. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

struct entry {
	struct entry *next;
	uint64_t hash;
	void *value;
	size_t len;
	unsigned char key[];
};

struct hashmap {
	struct entry **buckets;
	size_t nbuckets; /* a power of two */
	size_t size;
};

/* FNV-1a: keys are short or hashed once per sample, so simplicity wins */
uint64_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

struct hashmap *hashmap__new(void)
{
	struct hashmap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	/* most maps are a record's stacks, one or a few: a large one grows */
	m->nbuckets = 8;
	m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
	if (!m->buckets) {
		free(m);
		return NULL;
	}
	return m;
}

void hashmap__free(struct hashmap *m, void (*free_value)(void *))
{
	struct entry *e, *next;
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->nbuckets; i++) {
		for (e = m->buckets[i]; e; e = next) {
			next = e->next;
			if (free_value)
				free_value(e->value);
			free(e);
		}
	}
	free(m->buckets);
	free(m);
}

void *hashmap__get(const struct hashmap *m, const void *key, size_t len)
{
	uint64_t h = hash_bytes(key, len);
	struct entry *e;

	for (e = m->buckets[h & (m->nbuckets - 1)]; e; e = e->next) {
		if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0)
			return e->value;
	}
	return NULL;
}

static int grow(struct hashmap *m)
{
	size_t n = m->nbuckets * 2, i;
	struct entry **b, *e, *next;

	b = calloc(n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (i = 0; i < m->nbuckets; i++) {
		for (e = m->buckets[i]; e; e = next) {
			next = e->next;
			e->next = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = n;
	return 0;
}

int hashmap__add(struct hashmap *m, const void *key, size_t len, void *value)
{
	struct entry *e;
	size_t i;

	if (m->size >= m->nbuckets && grow(m) != 0)
		return -ENOMEM;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return -ENOMEM;
	e->hash = hash_bytes(key, len);
	e->value = value;
	e->len = len;
	memcpy(e->key, key, len);
	i = e->hash & (m->nbuckets - 1);
	e->next = m->buckets[i];
	m->buckets[i] = e;
	m->size++;
	return 0;
}

void *hashmap__del(struct hashmap *m, const void *key, size_t len)
{
	uint64_t h = hash_bytes(key, len);
	struct entry **pp, *e;
	void *value;

	for (pp = &m->buckets[h & (m->nbuckets - 1)]; (e = *pp); pp = &e->next) {
		if (e->hash == h && e->len == len && memcmp(e->key, key, len) == 0) {
			*pp = e->next;
			value = e->value;
			free(e);
			m->size--;
			return value;
		}
	}
	return NULL;
}

size_t hashmap__size(const struct hashmap *m)
{
	return m->size;
}

void hashmap__foreach(const struct hashmap *m,
		      void (*fn)(const void *key, size_t len, void *value, void *ctx), void *ctx)
{
	struct entry *e;
	size_t i;

	for (i = 0; i < m->nbuckets; i++) {
		for (e = m->buckets[i]; e; e = e->next)
			fn(e->key, e->len, e->value, ctx);
	}
}
