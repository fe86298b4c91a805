/* SPDX-License-Identifier: GPL-2.0 */
/* cpus.h: which of this machine's CPUs are online, for per-CPU perf events and rings. */
#ifndef __CPUS_H
#define __CPUS_H

#include <stdbool.h>

/*
 * The CPUs as per-CPU maps count them (libbpf's possible CPUs) into *N, and
 * which of them are online (/sys/devices/system/cpu/online, "0-3,5") into
 * *ONLINE, an array of *N that the caller frees. 0, or -errno: *ONLINE is
 * still filled, with every CPU online, when only the online list could not
 * be read (-ENOENT, -EIO), and NULL otherwise.
 */
int cpus__online(bool **online, int *n);

#endif /* __CPUS_H */
