/* SPDX-License-Identifier: GPL-2.0 */
/* memfile.h: a fuzzer's input as a file, for readers that open a path. */
#ifndef __MEMFILE_H
#define __MEMFILE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* DATA in an anonymous file, named at PATH; its fd to close, or -1. */
static inline int memfile(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

#endif /* __MEMFILE_H */
