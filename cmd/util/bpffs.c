// SPDX-License-Identifier: GPL-2.0
/* bpffs.c: is a path on a BPF filesystem, where objects can be pinned? */
#include <linux/magic.h>
#include <sys/statfs.h>

#include "bpffs.h"

bool bpffs__is(const char *path)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == BPF_FS_MAGIC;
}
