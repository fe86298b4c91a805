// SPDX-License-Identifier: GPL-2.0
/* addr2line.c: `ctxprof-go addr2line BINARY`: Go function and file:line per address, from .gopclntab. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offsets/go_binary.h"
#include "offsets/gopclntab.h"
#include "addr2line.h"

static const char usage[] =
	"Usage: ctxprof-go addr2line [-a] [-i] BINARY < ADDRESSES\n"
	"\n"
	"Reads hexadecimal addresses (link-time, as `go tool nm` prints them), one\n"
	"per line, and prints for each the Go function and its file:line on two\n"
	"lines, or \"?\" and \"?:0\", exactly as `go tool addr2line` does. It reads\n"
	"only .gopclntab, so stripped binaries work.\n"
	"\n"
	"  -a, --addresses  print each address (0x, 16 digits) before its answer\n"
	"  -i, --inlines    expand inlined calls, innermost first, as binutils'\n"
	"                   `addr2line -f -i` does: one function and file:line pair\n"
	"                   per frame, the inlined ones marked \" (inlined)\"\n"
	"  -h, --help       show this help\n"
	"\n"
	"Examples:\n"
	"  echo 0x4a1b2c | ctxprof-go addr2line ./server\n"
	"  go tool nm -n ./server | awk '$2 == \"T\" { print $1 }' | ctxprof-go addr2line -i ./server\n";

/* "NAME[SUFFIX]\nFILE:LINE\n", without printf: at 100,000 addresses, formatting is a third of the time. */
static void put_answer(const char *name, const char *suffix, const char *file, int line)
{
	char num[16], *p = num + sizeof(num);
	unsigned int v = line < 0 ? -(unsigned int)line : (unsigned int)line;

	*--p = '\0';
	do
		*--p = '0' + v % 10;
	while (v /= 10);
	if (line < 0)
		*--p = '-';
	fputs_unlocked(name, stdout);
	fputs_unlocked(suffix, stdout);
	putc_unlocked('\n', stdout);
	fputs_unlocked(file, stdout);
	putc_unlocked(':', stdout);
	fputs_unlocked(p, stdout);
	putc_unlocked('\n', stdout);
}

/* Every frame at PC, innermost first; the last is the function that holds PC. */
static void print_frames(const struct gopclntab *tab, const struct gopclntab_func *fn, uint64_t pc)
{
	struct gopclntab_frame frames[GOPCLNTAB_MAX_INLINE];
	int i, n;

	n = gopclntab__frames(tab, fn, pc, frames, GOPCLNTAB_MAX_INLINE);
	for (i = 0; i < n; i++)
		put_answer(frames[i].func, frames[i].inlined ? " (inlined)" : "", frames[i].file,
			   frames[i].line);
}

int addr2line__main(int argc, char **argv)
{
	const struct gopclntab *tab;
	struct gopclntab_func fn;
	struct go_binary *gb;
	char line[256], err[256], *end;
	const char *file, *path;
	bool inlines = false, addresses = false;
	uint64_t pc;
	int lineno;

	for (; argc > 2; argc--, argv++) {
		if (!strcmp(argv[1], "-i") || !strcmp(argv[1], "--inlines"))
			inlines = true;
		else if (!strcmp(argv[1], "-a") || !strcmp(argv[1], "--addresses"))
			addresses = true;
		else
			break;
	}
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		if (argc < 2 || !strcmp(argv[1], "-i") || !strcmp(argv[1], "--inlines") ||
		    !strcmp(argv[1], "-a") || !strcmp(argv[1], "--addresses"))
			fprintf(stderr, "addr2line: no BINARY given\n");
		else if (argv[1][0] == '-')
			fprintf(stderr, "addr2line: unknown option '%s'\n", argv[1]);
		else
			fprintf(stderr, "addr2line: one BINARY: '%s' is a second\n", argv[2]);
		fprintf(stderr, "Try 'ctxprof-go addr2line --help'.\n");
		return 2;
	}
	path = argv[1];
	gb = go_binary__open_symbols(path, err, sizeof(err));
	if (!gb) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 2;
	}
	tab = go_binary__pclntab(gb);
	if (!tab) {
		size_t i;

		fprintf(stderr, "%s: no Go function table it can read\n", path);
		/* why: a table that failed a check answers nothing */
		for (i = 0; i < go_binary__nwarnings(gb); i++)
			fprintf(stderr, "%s: %s\n", path, go_binary__warning(gb, i));
		go_binary__close(gb);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin)) {
		errno = 0;
		pc = strtoull(line, &end, 16);
		if (addresses)
			printf("0x%016" PRIx64 "\n", pc);
		if (errno || end == line || gopclntab__lookup(tab, pc, &fn) != 0) {
			printf("?\n?:0\n");
		} else if (inlines) {
			print_frames(tab, &fn, pc);
		} else {
			/* an unknown file prints as "", an unknown line as -1, as addr2line does */
			gopclntab__line(tab, &fn, pc, &file, &lineno);
			put_answer(fn.name, "", file, lineno);
		}
	}
	go_binary__close(gb);
	return 0;
}
