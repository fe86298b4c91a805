/* SPDX-License-Identifier: GPL-2.0 */
/* container.h: which container and pod a process runs in, from its cgroup path, and its pid inside. */
#ifndef __CONTAINER_H
#define __CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CONTAINER_ID_LEN 64
#define POD_UID_LEN 36

struct container_info {
	char id[CONTAINER_ID_LEN + 1]; /* 64 lowercase hex, "" when none */
	char pod_uid[POD_UID_LEN + 1]; /* 8-4-4-4-12 with dashes, "" when none */
	pid_t ns_pid; /* the pid in its own PID namespace, 0 when that is the host's */
};

/*
 * Fills OUT from the text of a /proc/PID/cgroup file: the container ID of
 * Docker (cgroupfs "/docker/ID" and systemd "docker-ID.scope"),
 * containerd/CRI ("cri-containerd-ID.scope", or ".../pod<UID>/ID" under
 * kubepods), CRI-O ("crio-ID.scope") and Podman ("libpod-ID.scope"), and
 * the pod UID from a kubepods path ("pod<UID>", dashes or underscores).
 * The innermost match wins. Fields it does not find are left empty.
 */
void container__parse_cgroup(const char *text, struct container_info *out);

/* Parses the NSpid line of a /proc/PID/status file: the last pid, when there are several. */
pid_t container__parse_nspid(const char *status);

/*
 * Whether the unified hierarchy's line ("0::PATH") of a /proc/PID/cgroup
 * text puts the process in directory DIR or below it. DIR is relative to
 * the cgroup2 mount, with a leading '/' ("/system.slice/x.scope"); "" or
 * "/" is the root, which holds everything.
 */
bool container__cgroup_within(const char *text, const char *dir);

/* The same for process PID, from /proc/PID/cgroup; false when it is gone. */
bool container__in_cgroup(pid_t pid, const char *dir);

/*
 * --cgroup PATH: its cgroup ID (the directory's inode number on cgroup2fs)
 * into *ID, its depth below the root of the cgroup2 mount, where the
 * sampler finds it among a task's ancestors, into *LEVEL, and its path
 * below the mount, as /proc/PID/cgroup names it, into *REL (malloc'd).
 * -errno with the reason in ERR.
 */
int container__resolve_cgroup(const char *path, uint64_t *id, uint32_t *level, char **rel,
			      char *err, size_t errlen);

/* Reads both for PID; -errno when the process is gone (OUT is then empty). */
int container__read(pid_t pid, struct container_info *out);

#endif /* __CONTAINER_H */
