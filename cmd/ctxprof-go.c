// SPDX-License-Identifier: GPL-2.0
/* ctxprof-go.c: entry point; dispatches to the subcommands. */
#include <stdio.h>
#include <string.h>

#include "addr2line.h"
#include "check.h"
#include "convert.h"
#include "profile.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "check") == 0)
		return check__main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "convert") == 0)
		return convert__main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "addr2line") == 0)
		return addr2line__main(argc - 1, argv + 1);
	return profile__main(argc, argv);
}
