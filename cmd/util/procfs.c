// SPDX-License-Identifier: GPL-2.0
/* procfs.c: small facts about a process from /proc: its name, a PIE's load bias, its memory. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "procfs.h"

int procfs__comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* PF_KTHREAD of the kernel's task flags, as /proc/PID/stat's ninth field gives them */
#define PF_KTHREAD 0x00200000UL

bool procfs__kernel_thread(pid_t pid)
{
	char path[64], buf[512], *p;
	unsigned long flags;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the name, in parentheses, may hold anything: the fields follow its last ')' */
	p = strrchr(buf, ')');
	return p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
	       (flags & PF_KTHREAD);
}

bool procfs__load_bias(pid_t pid, uint64_t entry, uint64_t *bias)
{
	uint64_t pair[2];
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fread(pair, sizeof(pair), 1, f) == 1 && pair[0]) {
		if (pair[0] == 9 /* AT_ENTRY */) {
			fclose(f);
			*bias = pair[1] - entry;
			return true;
		}
	}
	fclose(f);
	return false;
}

int procfs__read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}
