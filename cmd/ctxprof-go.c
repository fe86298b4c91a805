// SPDX-License-Identifier: GPL-2.0
/* ctxprof-go.c: entry point; dispatches to the subcommands. */
#include <stdio.h>
#include <string.h>

#include "check.h"

#ifndef CTXPROF_VERSION
#define CTXPROF_VERSION "dev"
#endif

static const char usage[] =
	"Usage: ctxprof-go COMMAND [OPTIONS]\n"
	"\n"
	"Samples the CPU of running Go processes with eBPF and tags every sample\n"
	"with the OpenTelemetry trace ID its goroutine carries as a pprof label.\n"
	"\n"
	"Commands:\n"
	"  check [--json] BINARY...   can ctxprof-go profile these binaries? (CI gate)\n"
	"\n"
	"Options:\n"
	"  -h, --help      show this help\n"
	"  -V, --version   print the version\n"
	"\n"
	"Examples:\n"
	"  ctxprof-go check ./server\n"
	"  ctxprof-go check --json /usr/local/bin/* | jq 'select(.supported|not)'\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (strcmp(argv[1], "check") == 0)
		return check__main(argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("ctxprof-go %s\n", CTXPROF_VERSION);
		return 0;
	}
	fprintf(stderr, "ctxprof-go: unknown command or option '%s'\n\n%s", argv[1], usage);
	return 2;
}
