/* SPDX-License-Identifier: GPL-2.0 */
/* map_copy.h: a BPF hash map's entries copied into a hashmap, in batches, or a process's deleted. */
#ifndef __MAP_COPY_H
#define __MAP_COPY_H

#include <stddef.h>
#include <sys/types.h>

struct hashmap;

/*
 * Adds the entries of the BPF hash map FD (keys of KEY_SIZE, values of
 * VALUE_SIZE bytes) to M, each value malloc'd: a key M has already keeps
 * its value, and an entry that finds no memory is left out. 0, or -errno
 * when the map could not be read (M then holds what came before).
 */
int map_copy(int fd, struct hashmap *m, size_t key_size, size_t value_size);

/*
 * Deletes the entries of the BPF hash map FD (keys of KEY_SIZE bytes that
 * start with a tgid) that belong to PID.
 */
void map_forget_tgid(int fd, size_t key_size, pid_t pid);

#endif /* __MAP_COPY_H */
