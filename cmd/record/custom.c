// SPDX-License-Identifier: GPL-2.0
/* custom.c: custom traces: the pinned tail-call entry point, and uprobes that ctxprof-go attaches itself. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cmd/symbols/binaries.h"
#include "cmd/util/bpffs.h"
#include "offsets/go_binary.h"
#include "offsets/gopclntab.h"
#include "sampler.h"
#include "custom.h"

#define BPFFS_ROOT "/sys/fs/bpf"

struct pins {
	char prog[PATH_MAX];
	char map[PATH_MAX];
	char dir[PATH_MAX];
	bool made_dir;
	__u32 prog_id, map_id;
};

/* Whether PATH lies at or under DIR, by its text. */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static __u32 obj_id(int fd, bool prog)
{
	struct bpf_prog_info pi = {};
	struct bpf_map_info mi = {};
	__u32 len = prog ? sizeof(pi) : sizeof(mi);

	if (prog)
		return bpf_obj_get_info_by_fd(fd, &pi, &len) ? 0 : pi.id;
	return bpf_obj_get_info_by_fd(fd, &mi, &len) ? 0 : mi.id;
}

/* The id of the program or map pinned at PATH; 0 when none. */
static __u32 pinned_id(const char *path, bool prog)
{
	int fd = bpf_obj_get(path);
	__u32 id;

	if (fd < 0)
		return 0;
	id = obj_id(fd, prog);
	close(fd);
	return id;
}

/*
 * A live ctxprof-go, other than this one, that holds program ID: its pid,
 * or 0. Loaders that tail-call into the program hold it too, but they do
 * not own the pins.
 */
static pid_t live_owner(__u32 id)
{
	char path[PATH_MAX], link[64], line[128], comm[32];
	struct dirent *pe, *fe;
	DIR *proc, *fds;
	pid_t pid, found = 0;
	FILE *f;

	proc = opendir("/proc");
	if (!proc)
		return 0;
	while (!found && (pe = readdir(proc))) {
		pid = atoi(pe->d_name);
		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		if (strcmp(comm, "ctxprof-go\n") != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!found && (fe = readdir(fds))) {
			snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, fe->d_name);
			if (readlink(path, link, sizeof(link) - 1) <= 0 ||
			    strncmp(link, "anon_inode:bpf-prog", 19) != 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fe->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			while (fgets(line, sizeof(line), f)) {
				if (strncmp(line, "prog_id:", 8) == 0 &&
				    strtoul(line + 8, NULL, 10) == id) {
					found = pid;
					break;
				}
			}
			fclose(f);
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

/* bpffs at DIR: mounts /sys/fs/bpf when DIR is under it and nothing is there; creates DIR. */
static int prepare_dir(const char *dir, bool *made)
{
	char parent[PATH_MAX];

	if (under(dir, BPFFS_ROOT) && !bpffs__is(BPFFS_ROOT)) {
		if (mount("bpf", BPFFS_ROOT, "bpf", 0, "mode=0700") != 0) {
			fprintf(stderr, "failed to mount bpffs on %s: %s\n", BPFFS_ROOT,
				strerror(errno));
			return -errno;
		}
		fprintf(stderr, "ctxprof-go: mounted bpffs on %s\n", BPFFS_ROOT);
	}
	snprintf(parent, sizeof(parent), "%s", dir);
	if (access(dir, F_OK) != 0 && bpffs__is(dirname(parent))) {
		if (mkdir(dir, 0700) != 0) {
			fprintf(stderr, "failed to create %s: %s\n", dir, strerror(errno));
			return -errno;
		}
		*made = true;
	}
	if (!bpffs__is(dir)) {
		fprintf(stderr,
			"--pin %s: not a directory on a BPF filesystem (bpffs); use a directory under "
			"%s, or mount one: mount -t bpf bpf DIR\n",
			dir, BPFFS_ROOT);
		return -EINVAL;
	}
	return 0;
}

/* Clears the way for pinning at PATH: -EBUSY when a live ctxprof-go owns what is there. */
static int clear_pin(const char *path, bool prog)
{
	__u32 id;
	pid_t owner;

	if (access(path, F_OK) != 0)
		return 0;
	id = pinned_id(path, prog);
	if (prog && id && (owner = live_owner(id))) {
		fprintf(stderr,
			"%s is pinned by a running ctxprof-go (pid %d); stop it, or give another "
			"--pin directory\n",
			path, (int)owner);
		return -EBUSY;
	}
	if (unlink(path) != 0) {
		fprintf(stderr, "failed to remove the stale pin %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fprintf(stderr, "ctxprof-go: replaced the stale pin %s\n", path);
	return 0;
}

struct pins *pins__create(const struct custom_bpf *bpf, const char *dir)
{
	struct pins *p = calloc(1, sizeof(*p));
	int err;

	if (!p) {
		fprintf(stderr, "out of memory\n");
		return NULL;
	}
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	snprintf(p->prog, sizeof(p->prog), "%s/%s", dir, PIN_PROG);
	snprintf(p->map, sizeof(p->map), "%s/%s", dir, PIN_MAP);
	if (prepare_dir(dir, &p->made_dir) || clear_pin(p->prog, true))
		goto fail;
	/* the map only after the program: a live owner's map is never touched */
	if (clear_pin(p->map, false))
		goto fail;
	err = bpf_program__pin(bpf->custom_generic, p->prog);
	if (err) {
		fprintf(stderr, "failed to pin %s: %s\n", p->prog, strerror(-err));
		goto fail;
	}
	p->prog_id = obj_id(bpf_program__fd(bpf->custom_generic), true);
	err = bpf_map__pin(bpf->custom_context_map, p->map);
	if (err) {
		fprintf(stderr, "failed to pin %s: %s\n", p->map, strerror(-err));
		goto fail;
	}
	p->map_id = obj_id(bpf_map__fd(bpf->custom_context_map), false);
	/* root only: whoever can use the pins can emit records into this run */
	if (chmod(p->prog, 0600) != 0 || chmod(p->map, 0600) != 0) {
		fprintf(stderr, "failed to make the pins in %s root-only: %s\n", dir,
			strerror(errno));
		goto fail;
	}
	return p;
fail:
	pins__remove(p);
	return NULL;
}

void pins__remove(struct pins *p)
{
	if (!p)
		return;
	/* only what this run pinned: another instance may have replaced them */
	if (p->prog_id && pinned_id(p->prog, true) == p->prog_id)
		unlink(p->prog);
	if (p->map_id && pinned_id(p->map, false) == p->map_id)
		unlink(p->map);
	if (p->made_dir)
		rmdir(p->dir);
	free(p);
}

/* File offset of link-time address VADDR in PATH's PT_LOAD segments; -1 if none. */
static long file_offset(const char *path, uint64_t vaddr)
{
	GElf_Phdr ph;
	long off = -1;
	size_t i, n;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_getphdrnum(elf, &n) == 0) {
		for (i = 0; i < n && off < 0; i++) {
			if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD &&
			    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
				off = vaddr - ph.p_vaddr + ph.p_offset;
		}
	}
	elf_end(elf);
	close(fd);
	return off;
}

/* Why PATH cannot hold a uprobe's target, or NULL: a regular file that starts as an ELF file does. */
static const char *not_elf(const char *path)
{
	unsigned char magic[4];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return "is not a regular file";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return "cannot be opened";
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n == sizeof(magic) && !memcmp(magic, ELFMAG, SELFMAG) ? NULL : "is not an ELF file";
}

/*
 * Lets the BPF side read labels in every process that hits probe INDEX:
 * its binary's layout at INDEX of probe_layouts. Returns the cookie bits
 * that name it, or 0 when labels cannot be read.
 */
static __u64 probe_layout(const struct custom_bpf *bpf, const char *path, struct go_binary *gb,
			  int index)
{
	struct go_layout l;
	size_t i;

	if (!go_binary__supported(gb)) {
		fprintf(stderr, "--uprobe %s: labels will not be read:", path);
		for (i = 0; i < go_binary__nproblems(gb); i++)
			fprintf(stderr, "%s %s", i ? ";" : "", go_binary__problem(gb, i));
		fputc('\n', stderr);
		return 0;
	}
	if (go_binary__layout(gb, &l) != 0)
		return 0;
	/*
	 * a PIE's addresses differ in every process: its label sets are then
	 * read every time, and stacks through morestack lack two frames
	 */
	if (go_binary__pie(gb))
		l.gc_cycles = l.morestack = l.morestack_end = 0;
	if (bpf_map_update_elem(bpf->probe_layouts_fd, &(__u32){ index }, &l,
				BPF_ANY)) {
		fprintf(stderr, "--uprobe %s: labels will not be read: %s\n", path, strerror(errno));
		return 0;
	}
	return (__u64)(index + 1) << 1;
}

struct bpf_link *uprobe__attach(const struct custom_bpf *bpf, const char *spec, enum uprobe_abi abi,
			       int index)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts);
	const struct gopclntab *tab = NULL;
	struct gopclntab_func fn;
	struct go_binary *gb = NULL;
	struct bpf_link *link = NULL;
	char path[PATH_MAX], err[256];
	const char *colon = strrchr(spec, ':'), *sym, *why;
	long off = 0;
	bool go_fn;
	int ret;

	if (!colon || colon == spec || !colon[1] || (size_t)(colon - spec) >= sizeof(path)) {
		fprintf(stderr, "--uprobe %s: expected BINARY:SYMBOL\n", spec);
		return NULL;
	}
	memcpy(path, spec, colon - spec);
	path[colon - spec] = '\0';
	sym = colon + 1;
	if (access(path, R_OK) != 0) {
		fprintf(stderr, "--uprobe %s: cannot read %s: %s\n", spec, path, strerror(errno));
		return NULL;
	}
	if ((why = not_elf(path))) {
		fprintf(stderr, "--uprobe %s: %s %s\n", spec, path, why);
		return NULL;
	}
	/* Go functions are found through .gopclntab, which stripping keeps */
	gb = binaries__get(path, err, sizeof(err));
	if (gb && !go_binary__is_elf(gb)) {
		/* libbpf would read its symbols from headers that point past its end */
		fprintf(stderr, "--uprobe %s: %s: %s\n", spec, path, go_binary__problem(gb, 0));
		goto out;
	}
	if (gb)
		tab = go_binary__pclntab(gb);
	go_fn = tab && gopclntab__find(tab, sym, &fn) == 0;
	if (abi == UPROBE_ABI_AUTO)
		abi = go_fn ? UPROBE_ABI_GO : UPROBE_ABI_C;
	opts.bpf_cookie = abi == UPROBE_ABI_C ? UPROBE_COOKIE_C : 0;
	if (go_fn) {
		off = file_offset(path, fn.entry);
		if (off < 0) {
			fprintf(stderr, "--uprobe %s: %s is not in a loaded segment of %s\n", spec,
				sym, path);
			goto out;
		}
		opts.bpf_cookie |= probe_layout(bpf, path, gb, index);
	} else {
		opts.func_name = sym;
	}
	link = bpf_program__attach_uprobe_opts(bpf->uprobe_event, -1, path, off, &opts);
	if (!link && (ret = -errno) == -ENOENT && !go_fn) {
		fprintf(stderr, "--uprobe %s: symbol %s not found in %s: neither a Go function "
				"(.gopclntab) nor an ELF symbol\n",
			spec, sym, path);
	} else if (!link) {
		/* libbpf's own codes (a bad ELF file, 4001 and up) are no errno */
		libbpf_strerror(ret, err, sizeof(err));
		fprintf(stderr, "failed to attach --uprobe %s: %s\n", spec, err);
	} else
		fprintf(stderr, "ctxprof-go: uprobe on %s in %s, context from %s\n", sym, path,
			abi == UPROBE_ABI_GO ? "RAX (Go's first integer argument)" :
					       "RDI (C's first integer argument)");
out:
	binaries__put(gb);
	return link;
}
