/* SPDX-License-Identifier: GPL-2.0 */
/* ticks.h: --pid's cpu-clock events on every thread of one process, and the CPU time they counted. */
#ifndef __TICKS_H
#define __TICKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct ticks;

/* None yet: PROG runs every PERIOD_NS of a thread's CPU time. NULL with errno. */
struct ticks *ticks__new(struct bpf_program *prog, uint64_t period_ns);
/* Its events closed. NULL is fine. */
void ticks__free(struct ticks *tk);

/*
 * An event on every thread of PID, whose threads inherit it from then on;
 * COMM names it in the errors it prints. 0, or a negative errno.
 */
int ticks__follow(struct ticks *tk, pid_t pid, const char *comm);
/* Its events closed, what they counted kept. */
void ticks__stop(struct ticks *tk);
/* The CPU time its events counted, those stopped too, and on how many threads. */
uint64_t ticks__ns(const struct ticks *tk);
size_t ticks__threads(const struct ticks *tk);
/*
 * Have its events, open and never counting while their process used
 * DUE_NS of CPU time since they were opened, stalled? CPU_SEEN_NS: that
 * process's CPU time lately; *CPU_NS: what it used since.
 */
bool ticks__stalled(struct ticks *tk, uint64_t cpu_seen_ns, uint64_t due_ns, uint64_t *cpu_ns);

#endif /* __TICKS_H */
