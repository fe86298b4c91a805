/* SPDX-License-Identifier: GPL-2.0 */
/* profile_args.h: the recording's command line, parsed into its one configuration, and checked. */
#ifndef __PROFILE_ARGS_H
#define __PROFILE_ARGS_H

#include "cmd/record/session_config.h"

/*
 * ARGV into CFG, zeroed by the caller: every option, the combinations
 * checked, --otlp's settings with the environment's, -p's threads taken
 * as their processes. -1 to run; else the exit status: 0 after --help or
 * --version, 2 after a usage error, said on stderr.
 */
int profile_args__parse(int argc, char **argv, struct session_config *cfg);
/* What parsing allocated. */
void profile_args__free(struct session_config *cfg);

#endif /* __PROFILE_ARGS_H */
