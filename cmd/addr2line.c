// SPDX-License-Identifier: GPL-2.0
/* addr2line.c: `ctxprof-go addr2line BINARY`: Go function and file:line per address, from .gopclntab. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr2line.h"
#include "../offsets/go_binary.h"
#include "../offsets/gopclntab.h"

static const char usage[] =
	"Usage: ctxprof-go addr2line BINARY < ADDRESSES\n"
	"\n"
	"Reads hexadecimal addresses (link-time, as `go tool nm` prints them), one\n"
	"per line, and prints for each the Go function and its file:line on two\n"
	"lines, or \"?\" and \"?:0\", exactly as `go tool addr2line` does. It reads\n"
	"only .gopclntab, so stripped binaries work.\n"
	"\n"
	"Example:\n"
	"  echo 0x4a1b2c | ctxprof-go addr2line ./server\n";

int addr2line__main(int argc, char **argv)
{
	const struct gopclntab *tab;
	struct gopclntab_func fn;
	struct go_binary *gb;
	char line[256], err[256], *end;
	const char *file;
	uint64_t pc;
	int lineno;

	if (argc != 2 || argv[1][0] == '-') {
		fputs(usage, argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr);
		return argc == 2 && !strcmp(argv[1], "--help") ? 0 : 2;
	}
	gb = go_binary__open(argv[1], err, sizeof(err));
	if (!gb) {
		fprintf(stderr, "%s: %s\n", argv[1], err);
		return 2;
	}
	tab = go_binary__pclntab(gb);
	if (!tab) {
		fprintf(stderr, "%s: no Go function table it can read\n", argv[1]);
		go_binary__close(gb);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		errno = 0;
		pc = strtoull(line, &end, 16);
		if (errno || end == line) {
			printf("?\n?:0\n");
			continue;
		}
		if (gopclntab__lookup(tab, pc, &fn) != 0) {
			printf("?\n?:0\n");
			continue;
		}
		/* past the end of the function's line table: addr2line's empty file, line -1 */
		if (gopclntab__line(tab, &fn, pc, &file, &lineno) != 0) {
			file = "";
			lineno = -1;
		}
		printf("%s\n%s:%d\n", fn.name, file, lineno);
	}
	go_binary__close(gb);
	return 0;
}
