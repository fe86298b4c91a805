/* SPDX-License-Identifier: GPL-2.0 */
/* binaries.h: Go binaries opened once per file and shared by every process that runs them. */
#ifndef __BINARIES_H
#define __BINARIES_H

#include <stddef.h>

#include "offsets/go_binary.h"

/*
 * go_binary__open(PATH), or the binary already open for the same file
 * (device and inode: /proc/PID/exe and the path on disk are the same file),
 * with one more reference. Fails as go_binary__open does.
 */
struct go_binary *binaries__get(const char *path, char *err, size_t errlen);
/* Drops a reference from binaries__get; the last one closes it. Accepts NULL. */
void binaries__put(struct go_binary *gb);

#endif /* __BINARIES_H */
