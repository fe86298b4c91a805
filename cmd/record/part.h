/* SPDX-License-Identifier: GPL-2.0 */
/* part.h: a target's parts: each one thing a recording does in a process, owning its probes and what they keep in the kernel. */
#ifndef __PART_H
#define __PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/ctxprof.h"
#include "target.h"

struct go_binary;
struct target_env;

/*
 * Every part, in the order they open and attach (a part may rely on those
 * before it), each with its part_ops: a new part is one line here.
 * PART_STRINGS: Go's string constants mapped in, where the sampler can
 * read labels (part_strings.c); PART_SERVICE: the service its records
 * name (part_service.c); PART_TICKS: --pid's cpu-clock events on each of
 * its threads (part_ticks.c); PART_WALL: --wall's reader of its goroutines
 * (part_wall.c); PART_REQUESTS: the traceparent and otel-sdk sources'
 * probes (part_requests.c); PART_SPAWN: Go < 1.21, the goroutine-start
 * probe and its budget (part_spawn.c); PART_LABELS: who sets each label
 * set, for a request's lifetime (part_labels.c); PART_ALLOC: --alloc's
 * probe where the runtime samples an allocation (part_alloc.c).
 */
#define TARGET_PARTS(X)                  \
	X(PART_STRINGS, strings_part)   \
	X(PART_SERVICE, service_part)   \
	X(PART_TICKS, ticks_part)       \
	X(PART_WALL, wall_part)         \
	X(PART_REQUESTS, requests_part) \
	X(PART_SPAWN, spawn_part)       \
	X(PART_LABELS, labels_part)     \
	X(PART_ALLOC, alloc_part)

enum part_id {
#define PART_ID(id, ops) id,
	TARGET_PARTS(PART_ID)
#undef PART_ID
	PART_COUNT,
};

/* What the parts say once per file, whichever process runs it (go_binary__said) */
enum { SAID_ATTACH, SAID_ATTACH_SPAWN, SAID_ATTACH_LABELS, SAID_ASKED, SAID_ATTACH_ALLOC, SAID_ALLOC_OFF };

/* What a part sees of its target; the target fills it, the parts keep their state in it. */
struct part_ctx {
	const struct target_env *env; /* the recording's: settings, the sampler's maps, counters */
	pid_t pid;
	const char *comm;
	const char *exe; /* /proc/PID/exe's target when added; "" when unknown */
	struct go_binary *gb; /* its executable; says once per file what --all says once */
	const struct go_layout *layout; /* as the targets map has it */
	void *state[PART_COUNT]; /* each part's, NULL while it is not attached */
};

/*
 * A part. The target calls each in the order of enum part_id; its state
 * is the part's own. Only detach is required.
 */
struct part_ops {
	const char *name;
	/*
	 * Before C's process enters the targets map: what the sampler needs
	 * ready in it when it first sees it, into *STATE. -errno: the process
	 * cannot be a target.
	 */
	int (*open)(struct part_ctx *c, void **state);
	/*
	 * Starts the part in C's process, once it is in the targets map: its
	 * probes attached, its kernel state made, into *STATE (NULL when the
	 * process goes without it); a failure said unless QUIET (--all says
	 * each once per file) and counted. -errno only when the process
	 * cannot be a target as asked without it: it is then dropped.
	 */
	int (*attach)(struct part_ctx *c, bool quiet, void **state);
	/*
	 * What it reads of the process in /proc: when the target is described
	 * (at once, or right after under --all), then every --interval before
	 * records are written. -errno when that failed.
	 */
	int (*describe)(struct part_ctx *c, void *state);
	/*
	 * The process ran its own file again: a new image at a new address,
	 * and C's layout already its. NULL: detached and attached again
	 * (a part that opens has its own).
	 * -errno when what it counted, or its start again, failed.
	 */
	int (*reexec)(struct part_ctx *c, void **state);
	/* Before the process leaves the targets map: what it counted settled; -errno when that failed. */
	int (*retire)(struct part_ctx *c, void *state);
	/* With -v, once every part is attached: what it does in C's process (STATE may be NULL). */
	void (*note)(const struct part_ctx *c, const void *state);
	/* Once a second: budgets refilled, probes attached again. */
	void (*tick)(struct part_ctx *c, void *state);
	/*
	 * Why C's samples lack a trace ID, where the part knows it: into BUF,
	 * and true. BARE: requests read with no traceparent, of every target.
	 * Asked in part order, STATE NULL too, until one knows.
	 */
	bool (*why_untraced)(const struct part_ctx *c, const void *state,
			     const struct bare_requests *bare, char *buf, size_t len);
	/* At exit, and on SIGUSR1: its lines, as the statistics say them; VERBOSE: -v's too. */
	void (*say)(const struct part_ctx *c, const void *state, bool verbose);
	/* Detached, what it left in the kernel forgotten (the pid may come back), and freed. */
	void (*detach)(struct part_ctx *c, void *state);
};

#define PART_OPS(id, ops) extern const struct part_ops ops;
TARGET_PARTS(PART_OPS)
#undef PART_OPS

/* The parts, by enum part_id (parts.c). */
extern const struct part_ops *const target_parts[PART_COUNT];

#endif /* __PART_H */
