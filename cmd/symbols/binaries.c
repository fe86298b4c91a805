// SPDX-License-Identifier: GPL-2.0
/* binaries.c: Go binaries opened once per file and shared by every process that runs them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "binaries.h"

/*
 * So that a hundred replicas of a service read its DWARF and function table
 * once. A list: a host runs few distinct binaries.
 */
struct shared_binary {
	struct shared_binary *next;
	dev_t dev;
	ino_t ino;
	int refs;
	struct go_binary *gb;
};

static struct shared_binary *shared;

struct go_binary *binaries__get(const char *path, char *err, size_t errlen)
{
	struct shared_binary *sb;
	struct go_binary *gb;
	struct stat st;
	int saved;

	if (stat(path, &st) != 0) {
		saved = errno;
		snprintf(err, errlen, "cannot open: %s", strerror(saved));
		errno = saved;
		return NULL;
	}
	for (sb = shared; sb; sb = sb->next) {
		if (sb->dev == st.st_dev && sb->ino == st.st_ino) {
			sb->refs++;
			return sb->gb;
		}
	}
	gb = go_binary__open(path, err, errlen);
	if (!gb)
		return NULL;
	sb = calloc(1, sizeof(*sb));
	if (!sb) {
		go_binary__close(gb);
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	sb->dev = st.st_dev;
	sb->ino = st.st_ino;
	sb->refs = 1;
	sb->gb = gb;
	sb->next = shared;
	shared = sb;
	return gb;
}

void binaries__put(struct go_binary *gb)
{
	struct shared_binary **pp, *sb;

	for (pp = &shared; gb && (sb = *pp); pp = &sb->next) {
		if (sb->gb != gb)
			continue;
		if (--sb->refs == 0) {
			*pp = sb->next;
			go_binary__close(sb->gb);
			free(sb);
		}
		return;
	}
}
