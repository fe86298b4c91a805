/* SPDX-License-Identifier: GPL-2.0 */
/* session.h: one recording: its BPF programs, a target set that grows and shrinks, the run loop and its end. */
#ifndef __SESSION_H
#define __SESSION_H

#include <stdbool.h>
#include <sys/types.h>

#include "session_config.h"

struct session;

/*
 * Opens the output, loads and attaches what CFG needs (only that: the
 * verifier's time is start-up time), and starts following the host's
 * mappings. Targets come after. NULL with a message on stderr.
 */
struct session *session__new(const struct session_config *cfg);
/* Stops everything still running and frees the session. Accepts NULL. */
void session__free(struct session *s);

/*
 * Checks each of the N PIDS as `check` does and starts sampling it: its
 * layout into the kernel's targets map, its mappings read now. -errno
 * with a message on stderr naming the first process that failed and the
 * reason. With -v, a long add says how far it is once a second.
 */
int session__add_targets(struct session *s, const pid_t *pids, int n);
/* Stops sampling PID; WHY ("exited", ...) goes into a note on stderr. */
void session__remove_target(struct session *s, pid_t pid, const char *why);
/* Targets being sampled now. */
int session__ntargets(const struct session *s);

/*
 * --all: every Go process running now (from /proc), each binary checked
 * once. Later ones are added as they exec, by session__run.
 */
void session__discover(struct session *s);

/*
 * Says it is ready ("...; Ctrl-C to stop") and records until the duration
 * ends, SIGINT or SIGTERM, a failure that loses data, or, when END_WITH_TARGETS,
 * the last target is gone. Then stops the probes, reads what is in flight,
 * writes the last records and the statistics. 0, or -errno: the exit
 * status must say that data was lost.
 */
int session__run(struct session *s, bool end_with_targets);

#endif /* __SESSION_H */
