/* SPDX-License-Identifier: GPL-2.0 */
/* proc_ctx.h: OTEP 4719 process contexts, the resource a process's OpenTelemetry SDK publishes in its memory. */
#ifndef __PROC_CTX_H
#define __PROC_CTX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cmd/output/otlp.h"

/* Resource attributes kept of one context, in its order: the rest are left out. */
#define PROC_CTX_MAX_ATTRS 16
/* A payload larger than this is no context (OTEP 4719's readers take 64 KiB). */
#define PROC_CTX_MAX_PAYLOAD 65536

struct proc_ctx;

/* What PID publishes, nothing read yet. NULL when out of memory. */
struct proc_ctx *proc_ctx__new(pid_t pid);
void proc_ctx__free(struct proc_ctx *c); /* accepts NULL */

/*
 * Looks again, as OTEP 4719's readers do: finds the mapping named
 * OTEL_CTX in /proc/PID/maps when none is known (each time for the first
 * 10 s, then at gaps that double from 2 s to 64 s), reads its header, and
 * when its publication time changed, the payload and the header once
 * more. 1 when the attributes changed (a first publication, an update, a
 * context gone); 0 when nothing did; -EINVAL (or another -errno) when
 * the context is skipped, with the cause in WHY: the attributes read
 * before are kept only while the same publication stands.
 */
int proc_ctx__refresh(struct proc_ctx *c, char *why, size_t len);

/* The published service.name; NULL when none is. */
const char *proc_ctx__service_name(const struct proc_ctx *c);

/* The published resource attributes (strings, integers, booleans, doubles); *N of them. */
const struct otlp_attr *proc_ctx__attrs(const struct proc_ctx *c, size_t *n);

#endif /* __PROC_CTX_H */
