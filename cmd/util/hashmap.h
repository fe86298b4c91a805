/* SPDX-License-Identifier: GPL-2.0 */
/* hashmap.h: a hash table from byte-string keys to pointers, for aggregating samples. */
#ifndef __HASHMAP_H
#define __HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct hashmap;

struct hashmap *hashmap__new(void);
/* Frees the table and its keys; FREE_VALUE (may be NULL) is called on each value. */
void hashmap__free(struct hashmap *m, void (*free_value)(void *));

void *hashmap__get(const struct hashmap *m, const void *key, size_t len);
/* Adds KEY (copied) -> VALUE; KEY must not be present. Returns 0 or -ENOMEM. */
int hashmap__add(struct hashmap *m, const void *key, size_t len, void *value);
/* Removes KEY and returns its value, or NULL when it was not there. */
void *hashmap__del(struct hashmap *m, const void *key, size_t len);
size_t hashmap__size(const struct hashmap *m);

/* Calls FN on every entry, in no particular order. */
void hashmap__foreach(const struct hashmap *m,
		      void (*fn)(const void *key, size_t len, void *value, void *ctx), void *ctx);

uint64_t hash_bytes(const void *data, size_t len);

#endif /* __HASHMAP_H */
