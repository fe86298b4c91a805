/* SPDX-License-Identifier: GPL-2.0 */
/* uprobe_link.h: a uprobe limited to one process, by the kernel's uprobe PMU or, where that is refused, a tracefs event. */
#ifndef __UPROBE_LINK_H
#define __UPROBE_LINK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct uprobe_link;

/*
 * PROG on the instruction at file OFFSET of PATH, in process PID only,
 * with COOKIE. The uprobe PMU wants CAP_SYS_ADMIN on current kernels;
 * without it, the probe is made a uprobe event in tracefs (which the
 * file's owner may write: root) and opened as a tracepoint, which
 * CAP_PERFMON allows. NULL with errno (EACCES: neither way was allowed).
 */
struct uprobe_link *uprobe_link__attach(const struct bpf_program *prog, pid_t pid,
					const char *path, uint64_t offset, uint64_t cookie);
/*
 * What a failure's message adds after -ERR: for a refusal (EACCES, EPERM),
 * the two ways and what each needs; else "".
 */
const char *uprobe_link__hint(int err);

/* The probe gone, and its tracefs event. Accepts NULL. */
void uprobe_link__destroy(struct uprobe_link *l);
/* Whether L is a tracefs event (for -v). */
bool uprobe_link__tracefs(const struct uprobe_link *l);

#endif /* __UPROBE_LINK_H */
