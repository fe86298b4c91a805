// SPDX-License-Identifier: GPL-2.0
/* obi_map.c: OBI's traces_ctx_v1 in bpffs: taken where OBI pinned it, else made and pinned as OBI makes it. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/util/bpffs.h"
#include "obi_map.h"

/* FD, pinned at PATH, if it is a map of OBI's kind: its fd, else -EINVAL and closed. */
static int check_map(int fd, const char *path, char *why, size_t len)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &info_len)) {
		snprintf(why, len, "cannot read what %s is: %s", path, strerror(errno));
	} else if (info.type != BPF_MAP_TYPE_LRU_HASH || info.key_size != sizeof(__u64) ||
		   info.value_size != sizeof(struct obi_ctx_info)) {
		snprintf(why, len,
			 "%s is no map of OBI's (map type %u, %u-byte keys, %u-byte values, where an "
			 "LRU hash of 8 and 24 is)",
			 path, info.type, info.key_size, info.value_size);
	} else {
		return fd;
	}
	close(fd);
	return -EINVAL;
}

int obi_map__open(const char *bpffs, bool *created, char *why, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX];
	int fd, err, tries;

	*created = false;
	if (snprintf(dir, sizeof(dir), "%s/otel", bpffs) >= (int)sizeof(dir) ||
	    snprintf(path, sizeof(path), "%s/%s", dir, OBI_MAP_NAME) >= (int)sizeof(path)) {
		snprintf(why, len, "%s: too long a path", bpffs);
		return -ENAMETOOLONG;
	}
	if (!bpffs__is(bpffs)) {
		snprintf(why, len, "%s is no bpffs (mount one there: mount -t bpf bpf %s; in a "
			 "container, the host's, as deploy/kubernetes/ctxprof-go.yaml does; or name one "
			 "with --bpffs)", bpffs, bpffs);
		return -ENOENT;
	}
	/* twice: OBI may pin its own between our look and our pin */
	for (tries = 0; tries < 2; tries++) {
		fd = bpf_obj_get(path);
		if (fd >= 0)
			return check_map(fd, path, why, len);
		err = -errno;
		if (err != -ENOENT) {
			snprintf(why, len, "cannot open %s: %s", path, strerror(-err));
			return err;
		}
		/* as OBI makes it: its owner's alone, sticky */
		if (mkdir(dir, 01700) && errno != EEXIST) {
			err = -errno;
			snprintf(why, len, "cannot make %s: %s", dir, strerror(-err));
			return err;
		}
		fd = bpf_map_create(BPF_MAP_TYPE_LRU_HASH, OBI_MAP_NAME, sizeof(__u64),
				    sizeof(struct obi_ctx_info), OBI_MAP_ENTRIES, NULL);
		if (fd < 0) {
			err = -errno;
			snprintf(why, len, "cannot make OBI's map: %s", strerror(-err));
			return err;
		}
		if (!bpf_obj_pin(fd, path)) {
			*created = true;
			return fd;
		}
		err = -errno;
		close(fd);
		if (err != -EEXIST) {
			snprintf(why, len, "cannot pin OBI's map at %s: %s", path, strerror(-err));
			return err;
		}
	}
	snprintf(why, len, "%s comes and goes", path);
	return -EAGAIN;
}
