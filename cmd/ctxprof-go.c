// SPDX-License-Identifier: GPL-2.0
/* ctxprof-go.c: entry point; dispatches to the subcommands, and names the program on every line of stderr. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "addr2line.h"
#include "check.h"
#include "convert.h"
#include "profile.h"

#define PREFIX "ctxprof-go"

/* What stderr has been given of a line whose start does not yet tell whether it names us. */
static struct {
	bool mid_line; /* inside a line already begun */
	char head[sizeof(PREFIX)];
	size_t nhead;
} err_line;

static int write_all(const char *p, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(STDERR_FILENO, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= w;
	}
	return 0;
}

/*
 * Every line on stderr starts "ctxprof-go: ", as perf's and bpftool's
 * do, whoever wrote it (our messages, getopt's, libbpf's under -vv); a
 * line that starts with the name already keeps it as it is. Sanitizer
 * reports write to the descriptor, and stay as they are.
 */
static ssize_t prefixed_write(void *cookie, const char *buf, size_t size)
{
	const char *p = buf, *end = buf + size, *nl;
	size_t take;

	while (p < end) {
		if (!err_line.mid_line && !err_line.nhead && *p == '\n') {
			/* an empty line stays empty */
			if (write_all(p++, 1))
				return -1;
			continue;
		}
		if (!err_line.mid_line) {
			/* enough of the line to tell: "ctxprof-go" or not */
			take = sizeof(PREFIX) - 1 - err_line.nhead;
			nl = memchr(p, '\n', end - p);
			if (take > (size_t)(end - p))
				take = end - p;
			if (nl && (size_t)(nl - p) < take)
				take = nl - p;
			memcpy(err_line.head + err_line.nhead, p, take);
			err_line.nhead += take;
			p += take;
			if (err_line.nhead < sizeof(PREFIX) - 1 && p < end && *p != '\n')
				continue;
			if (err_line.nhead < sizeof(PREFIX) - 1 && p == end)
				break;
			if ((err_line.nhead < sizeof(PREFIX) - 1 || memcmp(err_line.head, PREFIX, sizeof(PREFIX) - 1)) &&
			    write_all(PREFIX ": ", sizeof(PREFIX) + 1))
				return -1;
			if (write_all(err_line.head, err_line.nhead))
				return -1;
			err_line.nhead = 0;
			err_line.mid_line = true;
		}
		nl = memchr(p, '\n', end - p);
		take = nl ? (size_t)(nl + 1 - p) : (size_t)(end - p);
		if (write_all(p, take))
			return -1;
		p += take;
		if (nl)
			err_line.mid_line = false;
	}
	return size;
}

/* A part of a line held back at exit: written as it is. */
static int prefixed_close(void *cookie)
{
	if (err_line.nhead && !err_line.mid_line &&
	    (write_all(PREFIX ": ", sizeof(PREFIX) + 1) || write_all(err_line.head, err_line.nhead)))
		return -1;
	return 0;
}

static void name_stderr(void)
{
	FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = prefixed_write,
								  .close = prefixed_close });

	/* line-buffered: a line at a time, as the terminal would show it */
	if (f && !setvbuf(f, NULL, _IOLBF, 0))
		stderr = f;
}

int main(int argc, char **argv)
{
	name_stderr();
	/* getopt names the program by argv[0]: ours, not the path it was run by */
	argv[0] = PREFIX;
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return check__main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "convert") == 0)
		return convert__main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "addr2line") == 0)
		return addr2line__main(argc - 1, argv + 1);
	return profile__main(argc, argv);
}
