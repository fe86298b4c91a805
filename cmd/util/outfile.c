// SPDX-License-Identifier: GPL-2.0
/* outfile.c: output files created 0600. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "outfile.h"

int outfile__open(const char *path, bool append)
{
	int fd;

	/* "-" is stdout, as perf, jq and pprof read it: a descriptor of its own, closed apart */
	if (!strcmp(path, "-"))
		fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
	else
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0600);
	return fd < 0 ? -errno : fd;
}

FILE *outfile__fopen(const char *path, bool append)
{
	int fd = outfile__open(path, append), err;
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, append ? "a" : "w");
	if (!f) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}

int outfile__write(const char *path, const void *buf, size_t len)
{
	FILE *f = outfile__fopen(path, false);
	int ret = 0;

	if (!f)
		return -errno;
	errno = 0;
	if (fwrite(buf, 1, len, f) != len || fflush(f) != 0)
		ret = errno ? -errno : -EIO;
	if (fclose(f) != 0 && !ret)
		ret = errno ? -errno : -EIO;
	return ret;
}
