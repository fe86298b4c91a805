/* SPDX-License-Identifier: GPL-2.0 */
/* procfs.h: small facts about a process from /proc: its name, a PIE's load bias, its memory. */
#ifndef __PROCFS_H
#define __PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* PID's comm into BUF ("" when it cannot be read); -errno when /proc has no such process. */
int procfs__comm(pid_t pid, char *buf, size_t len);

/* Is PID a kernel thread (kthreadd and its children), which runs no program? */
bool procfs__kernel_thread(pid_t pid);

/* A PIE's load bias in PID: where the kernel says its entry is, less the linked ENTRY. */
bool procfs__load_bias(pid_t pid, uint64_t entry, uint64_t *bias);

/* LEN bytes at ADDR in PID's memory, with one process_vm_readv: 0, -EFAULT when fewer, or -errno. */
int procfs__read_mem(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif /* __PROCFS_H */
