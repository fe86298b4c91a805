/* SPDX-License-Identifier: GPL-2.0 */
/* bpffs.h: is a path on a BPF filesystem, where objects can be pinned? */
#ifndef __BPFFS_H
#define __BPFFS_H

#include <stdbool.h>

/* PATH exists and lies on a bpffs mount. */
bool bpffs__is(const char *path);

#endif /* __BPFFS_H */
