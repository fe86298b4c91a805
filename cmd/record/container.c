// SPDX-License-Identifier: GPL-2.0
/* container.c: which container and pod a process runs in, from its cgroup path, and its pid inside. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "container.h"

/* What runtimes put before the container ID in a cgroup directory's name. */
static const char *const id_prefixes[] = { "docker-", "cri-containerd-", "crio-", "libpod-", "" };

static bool all_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

/* The ID in one path component NAME (LEN bytes), into ID; false when it holds none. */
static bool component_id(const char *name, size_t len, char *id)
{
	size_t i, p;

	if (len > 6 && !strncmp(name + len - 6, ".scope", 6))
		len -= 6;
	for (i = 0; i < sizeof(id_prefixes) / sizeof(id_prefixes[0]); i++) {
		p = strlen(id_prefixes[i]);
		if (len != p + CONTAINER_ID_LEN || strncmp(name, id_prefixes[i], p) ||
		    !all_hex(name + p, CONTAINER_ID_LEN))
			continue;
		for (p = 0; p < CONTAINER_ID_LEN; p++)
			id[p] = tolower((unsigned char)name[len - CONTAINER_ID_LEN + p]);
		id[CONTAINER_ID_LEN] = '\0';
		return true;
	}
	return false;
}

/* "pod" and a UID, with dashes (cgroupfs) or underscores (systemd), at the start or after '-'. */
static bool component_pod(const char *name, size_t len, char *uid)
{
	static const int groups[] = { 8, 4, 4, 4, 12 };
	const char *p;
	size_t i, g, at;

	for (p = name; p + 3 + POD_UID_LEN <= name + len; p++) {
		if (strncmp(p, "pod", 3) || (p != name && p[-1] != '-'))
			continue;
		at = 0;
		for (g = 0; g < 5; g++) {
			if (!all_hex(p + 3 + at, groups[g]))
				break;
			for (i = 0; i < (size_t)groups[g]; i++)
				uid[at + i] = tolower((unsigned char)p[3 + at + i]);
			at += groups[g];
			if (g == 4)
				break;
			if (p[3 + at] != '-' && p[3 + at] != '_')
				break;
			uid[at++] = '-';
		}
		if (g == 4 && at == POD_UID_LEN) {
			uid[POD_UID_LEN] = '\0';
			return true;
		}
	}
	return false;
}

/* Scans one cgroup path, innermost component first. */
static void parse_path(const char *path, size_t len, struct container_info *out)
{
	const char *end = path + len, *start;

	while (end > path) {
		start = end;
		while (start > path && start[-1] != '/')
			start--;
		if (!out->id[0])
			component_id(start, end - start, out->id);
		if (!out->pod_uid[0])
			component_pod(start, end - start, out->pod_uid);
		end = start > path ? start - 1 : path;
	}
}

void container__parse_cgroup(const char *text, struct container_info *out)
{
	const char *line, *nl, *path;
	int pass;

	/* the unified hierarchy ("0::") first; cgroup v1 lines of a hybrid host after */
	for (pass = 0; pass < 2; pass++) {
		for (line = text; line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			if ((pass == 0) != !strncmp(line, "0::", 3))
				continue;
			path = strchr(line, ':');
			path = path ? strchr(path + 1, ':') : NULL;
			if (!path || (nl && path > nl))
				continue;
			path++;
			parse_path(path, (nl ? nl : path + strlen(path)) - path, out);
		}
	}
}

bool container__cgroup_within(const char *text, const char *dir)
{
	const char *line, *nl;
	size_t n = strlen(dir), len;

	while (n && dir[n - 1] == '/')
		n--;
	for (line = text; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (strncmp(line, "0::", 3))
			continue;
		line += 3;
		len = nl ? (size_t)(nl - line) : strlen(line);
		/* the directory itself, or one below it: "/a/b" holds "/a/b/c", not "/a/bc" */
		return len >= n && !strncmp(line, dir, n) && (len == n || line[n] == '/');
	}
	return false;
}

pid_t container__parse_nspid(const char *status)
{
	const char *p = strstr(status, "\nNSpid:");
	long v, last = 0;
	int n = 0;
	char *end;

	if (!p)
		return 0;
	p += 7;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		v = strtol(p, &end, 10);
		if (end == p)
			break;
		last = v;
		n++;
		p = end;
	}
	return n > 1 ? (pid_t)last : 0;
}

/* The whole of a small /proc file, NUL-terminated; -errno. */
static int slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

bool container__in_cgroup(pid_t pid, const char *dir)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	return slurp(path, buf, sizeof(buf)) == 0 && container__cgroup_within(buf, dir);
}

int container__read(pid_t pid, struct container_info *out)
{
	char path[64], buf[8192];
	int ret;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	ret = slurp(path, buf + 1, sizeof(buf) - 1);
	if (ret)
		return ret;
	container__parse_cgroup(buf + 1, out);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	/* a leading newline, so that the first line matches "\nNSpid:" like the rest */
	buf[0] = '\n';
	ret = slurp(path, buf + 1, sizeof(buf) - 1);
	if (ret) {
		memset(out, 0, sizeof(*out));
		return ret;
	}
	out->ns_pid = container__parse_nspid(buf);
	return 0;
}

int container__resolve_cgroup(const char *path, uint64_t *id, uint32_t *level, char **rel,
			      char *err, size_t errlen)
{
	char buf[PATH_MAX], parent[PATH_MAX], *slash;
	size_t below; /* where buf's path below the cgroup2 mount starts */
	struct statfs sf;
	struct stat st;
	int ret;

	if (statfs(path, &sf) != 0 || stat(path, &st) != 0) {
		ret = -errno;
		snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	if (sf.f_type != CGROUP2_SUPER_MAGIC || !S_ISDIR(st.st_mode) || !realpath(path, buf)) {
		snprintf(err, errlen, "not a directory of a cgroup v2 file system (see "
				      "/proc/PID/cgroup's 0:: line and mount -t cgroup2)");
		return -EINVAL;
	}
	*id = st.st_ino;
	*level = 0;
	below = strlen(buf);
	strcpy(parent, buf);
	while ((slash = strrchr(parent, '/')) && slash != parent) {
		*slash = '\0';
		if (statfs(parent, &sf) != 0 || sf.f_type != CGROUP2_SUPER_MAGIC)
			break;
		++*level;
		below = slash - parent;
	}
	/* the path below the mount, as /proc/PID/cgroup's 0:: line names it */
	*rel = strdup(*level ? buf + below : "/");
	if (!*rel) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}
