/* SPDX-License-Identifier: GPL-2.0 */
/* processes.h: the address spaces of the host's processes, followed from exec to exit through perf's mmap records. */
#ifndef __PROCESSES_H
#define __PROCESSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cmd/symbols/symbolizer.h"
#include "container.h"

struct processes;

/*
 * An empty table. With FOLLOW, one perf software event per online CPU
 * reports every executable mmap, exec, fork and exit on the host as it
 * happens, so that a process that exits microseconds after its last event
 * is still named: its mappings were recorded from its exec on, and are kept
 * until processes__release() says its events have been written. Without
 * FOLLOW, or where that fails, mappings are read from /proc/PID/maps when a
 * process is first needed. NULL with a message in ERR on failure.
 */
struct processes *processes__new(bool follow, char *err, size_t errlen);
void processes__free(struct processes *p);

/* Applies what the kernel reported since the last call; -errno on failure. */
int processes__read(struct processes *p);

/*
 * The address space of PID as of TIME_NS (CLOCK_MONOTONIC): first reads
 * what the kernel reported up to now if TIME_NS is later than the last
 * read, then, for a process never seen to exec, its /proc/PID/maps. NULL
 * only when out of memory; a process gone before anything was known gives
 * an empty address space, whose frames are addresses.
 */
struct symbolizer *processes__get(struct processes *p, pid_t pid, uint64_t time_ns);

/*
 * PID's container, pod and pid in its own namespace, read from /proc the
 * first time it is asked for: empty when it is in none, or was gone by
 * then. NULL only when out of memory.
 */
const struct container_info *processes__container(struct processes *p, pid_t pid);

/* PID's name as its last exec set it, or /proc says the first time it is asked; "" when gone. */
const char *processes__comm(struct processes *p, pid_t pid);

/*
 * PID's service, as the recording names it (its process context's
 * service.name, its OTEL_SERVICE_NAME, its executable's name), so that
 * its last records still say it once it is gone: kept until it execs or
 * is released. NULL when not named. Setting it: -ENOMEM.
 */
int processes__set_service(struct processes *p, pid_t pid, const char *name);
const char *processes__service(struct processes *p, pid_t pid);

/*
 * --alloc: PID's runtime.MemProfileRate as last read, which unbiases its
 * sampled allocations; kept past its exit as its service is. 0: not read.
 */
int processes__set_memprofile_rate(struct processes *p, pid_t pid, int64_t rate);
int64_t processes__memprofile_rate(struct processes *p, pid_t pid);

/*
 * Frees the address spaces of processes that exited before BEFORE_NS:
 * call it once every event up to BEFORE_NS has been read and written.
 */
void processes__release(struct processes *p, uint64_t before_ns);

/* Whether the kernel reports mmaps, execs and exits (else only /proc is read). */
bool processes__following(const struct processes *p);

/*
 * Calls FN for every exec that is read, in order, with the pid of the
 * process that now runs another program (only while following).
 */
typedef void (*processes_exec_fn)(void *ctx, pid_t pid);
void processes__on_exec(struct processes *p, processes_exec_fn fn, void *ctx);

struct processes_stats {
	uint64_t records; /* mmap, exec, fork and exit records read */
	uint64_t lost; /* records the kernel could not write (a ring was full) */
	uint64_t live; /* address spaces held now */
};
void processes__stats(const struct processes *p, struct processes_stats *out);

#endif /* __PROCESSES_H */
