// SPDX-License-Identifier: GPL-2.0
/* symbolizer.c: one process's address space over time, from exec on, and the names of its addresses. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/util/hashmap.h"
#include "symbolizer.h"

/* Older address spaces of a process that keeps exec'ing are dropped past this. */
#define MAX_IMAGES 8

/* One executable mapping; its file is opened when first needed. */
struct map_entry {
	uint64_t start, end, pgoff;
	uint64_t vm_start, vm_end; /* as mapped, before later mappings cut into it */
	char *name;
	struct objfile *of;
	bool opened; /* tried to open OF */
};

/* What was mapped from one moment on: the start, or an exec. */
struct image {
	uint64_t since_ns;
	struct map_entry *maps; /* sorted by start, not overlapping */
	size_t n, cap;
	bool complete; /* from a snapshot, an exec or a fork: not just a few late mappings */
};

struct symbolizer {
	pid_t pid;
	struct image images[MAX_IMAGES]; /* oldest first */
	int nimages;
	struct hashmap *unknown; /* address -> struct frame named by the address itself */
};

struct symbolizer *symbolizer__new(pid_t pid)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pid = pid;
	s->unknown = hashmap__new();
	if (!s->unknown) {
		free(s);
		return NULL;
	}
	return s;
}

static void entry__clear(struct map_entry *m)
{
	objfile__put(m->of);
	free(m->name);
}

static void image__clear(struct image *im)
{
	size_t i;

	for (i = 0; i < im->n; i++)
		entry__clear(&im->maps[i]);
	free(im->maps);
	memset(im, 0, sizeof(*im));
}

static void unknown__free(void *p)
{
	struct frame *f = p;

	free((char *)f->func);
	free(f);
}

void symbolizer__free(struct symbolizer *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->nimages; i++)
		image__clear(&s->images[i]);
	hashmap__free(s->unknown, unknown__free);
	free(s);
}

/* A new, empty image from SINCE_NS on; the oldest one gives way when all are taken. */
static struct image *push_image(struct symbolizer *s, uint64_t since_ns)
{
	if (s->nimages == MAX_IMAGES) {
		image__clear(&s->images[0]);
		memmove(&s->images[0], &s->images[1], (MAX_IMAGES - 1) * sizeof(s->images[0]));
		memset(&s->images[MAX_IMAGES - 1], 0, sizeof(s->images[0]));
		s->nimages--;
	}
	s->images[s->nimages].since_ns = since_ns;
	return &s->images[s->nimages++];
}

static struct image *current(struct symbolizer *s)
{
	return s->nimages ? &s->images[s->nimages - 1] : push_image(s, 0);
}

/* The image in force at TIME_NS: the last one that began by then. */
static struct image *image_at(struct symbolizer *s, uint64_t time_ns)
{
	int i;

	for (i = s->nimages - 1; i > 0; i--) {
		if (s->images[i].since_ns <= time_ns)
			return &s->images[i];
	}
	return s->nimages ? &s->images[0] : NULL;
}

/* Index of the first mapping that ends after ADDR. */
static size_t first_after(const struct image *im, uint64_t addr)
{
	size_t lo = 0, hi = im->n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (im->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int reserve(struct image *im, size_t more)
{
	struct map_entry *m;
	size_t cap;

	if (im->n + more <= im->cap)
		return 0;
	cap = im->cap ? im->cap * 2 : 16;
	while (cap < im->n + more)
		cap *= 2;
	m = realloc(im->maps, cap * sizeof(*m));
	if (!m)
		return -ENOMEM;
	im->maps = m;
	im->cap = cap;
	return 0;
}

/*
 * Maps [START, END) in IM, as mmap does: what was there before is cut
 * away (the kernel reports no munmap, but a new mapping replaces any).
 */
static int image__map(struct image *im, uint64_t start, uint64_t end, uint64_t pgoff,
		      const char *name)
{
	struct map_entry e = { start, end, pgoff, start, end }, tail;
	size_t i;

	if (start >= end || reserve(im, 2))
		return start >= end ? -EINVAL : -ENOMEM;
	e.name = strdup(name);
	if (!e.name)
		return -ENOMEM;
	i = first_after(im, start);
	/* a mapping that straddles START keeps its head, and its tail if it goes past END */
	if (i < im->n && im->maps[i].start < start) {
		struct map_entry *m = &im->maps[i];

		if (m->end > end) {
			tail = *m;
			tail.pgoff += end - m->start;
			tail.start = end;
			tail.name = strdup(m->name);
			tail.of = NULL;
			tail.opened = false;
			if (!tail.name) {
				free(e.name);
				return -ENOMEM;
			}
			memmove(&im->maps[i + 2], &im->maps[i + 1], (im->n - i - 1) * sizeof(*m));
			im->maps[i + 1] = tail;
			im->n++;
		}
		m->end = start;
		i++;
	}
	/* those inside go, one that starts inside loses its head */
	while (i < im->n && im->maps[i].start < end) {
		struct map_entry *m = &im->maps[i];

		if (m->end <= end) {
			entry__clear(m);
			memmove(m, m + 1, (im->n - i - 1) * sizeof(*m));
			im->n--;
			continue;
		}
		m->pgoff += end - m->start;
		m->start = end;
		break;
	}
	memmove(&im->maps[i + 1], &im->maps[i], (im->n - i) * sizeof(im->maps[0]));
	im->maps[i] = e;
	im->n++;
	return 0;
}

int symbolizer__map(struct symbolizer *s, uint64_t start, uint64_t len, uint64_t pgoff,
		    const char *name)
{
	struct image *im = current(s);

	return im ? image__map(im, start, start + len, pgoff, name) : -ENOMEM;
}

int symbolizer__exec(struct symbolizer *s, uint64_t time_ns)
{
	struct image *im = push_image(s, time_ns);

	im->complete = true;
	return 0;
}

int symbolizer__fork(struct symbolizer *child, const struct symbolizer *parent)
{
	const struct image *from;
	struct image *im;
	size_t i;
	int err;

	if (!parent->nimages)
		return 0;
	from = &parent->images[parent->nimages - 1];
	im = current(child);
	for (i = 0; i < from->n; i++) {
		err = image__map(im, from->maps[i].start, from->maps[i].end, from->maps[i].pgoff,
				 from->maps[i].name);
		if (err)
			return err;
	}
	im->complete = from->complete;
	return 0;
}

bool symbolizer__known(const struct symbolizer *s)
{
	return s->nimages && s->images[s->nimages - 1].complete;
}

int symbolizer__load(struct symbolizer *s, char *err, size_t errlen)
{
	char path[64], line[PATH_MAX + 128], perms[8], name[PATH_MAX];
	unsigned long long start, end, off;
	struct image fresh = { 0 };
	int n, ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "cannot read the mappings of pid %d: %s", (int)s->pid,
			 strerror(-ret));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		name[0] = '\0';
		n = sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms, &off,
			   name);
		if (n < 4 || !strchr(perms, 'x') || (name[0] != '/' && strcmp(name, "[vdso]")))
			continue;
		ret = image__map(&fresh, start, end, off, name);
		if (ret)
			break;
	}
	fclose(f);
	if (ret) {
		image__clear(&fresh);
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	/* what /proc shows now stands for every moment before the first exec we saw */
	fresh.complete = true;
	if (!s->nimages || s->images[0].since_ns) {
		if (s->nimages == MAX_IMAGES)
			image__clear(&s->images[--s->nimages]);
		memmove(&s->images[1], &s->images[0], s->nimages * sizeof(s->images[0]));
		s->nimages++;
	} else {
		image__clear(&s->images[0]);
	}
	s->images[0] = fresh;
	return 0;
}

/*
 * The file of mapping M. While the process lives, /proc/PID/map_files
 * opens the very file it mapped, whatever its mount namespace or root (a
 * container's path may name nothing here, or another file); a path read
 * from /proc/PID/maps is relative to our root, one from a perf record to
 * the process's. After it exits, only the path is left.
 */
static struct objfile *entry_file(struct symbolizer *s, struct map_entry *m)
{
	char path[PATH_MAX + 32], name[PATH_MAX], err[256];
	size_t len;

	if (m->opened)
		return m->of;
	m->opened = true;
	if (!strcmp(m->name, "[vdso]")) {
		m->of = objfile__vdso();
		return m->of;
	}
	snprintf(name, sizeof(name), "%s", m->name);
	/* a file replaced since it was mapped (an upgrade) keeps its old name */
	len = strlen(name);
	if (len > 10 && !strcmp(name + len - 10, " (deleted)"))
		name[len - 10] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)s->pid,
		 m->vm_start, m->vm_end);
	m->of = objfile__get(path, name, err, sizeof(err));
	if (!m->of) {
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)s->pid, name);
		m->of = objfile__get(path, name, err, sizeof(err));
	}
	if (!m->of)
		m->of = objfile__get(name, name, err, sizeof(err));
	return m->of;
}

/* The mapping that holds ADDR at TIME_NS, or NULL. */
static struct map_entry *find(struct symbolizer *s, uint64_t time_ns, uint64_t addr)
{
	struct image *im = image_at(s, time_ns);
	size_t i;

	if (!im)
		return NULL;
	i = first_after(im, addr);
	return i < im->n && im->maps[i].start <= addr ? &im->maps[i] : NULL;
}

/* The file and link-time address of ADDR at TIME_NS; NULL when no file names it. */
static struct objfile *resolve(struct symbolizer *s, uint64_t time_ns, uint64_t addr,
			       uint64_t *vaddr)
{
	struct map_entry *m = find(s, time_ns, addr);
	struct objfile *of = m ? entry_file(s, m) : NULL;

	if (!of || !objfile__vaddr(of, addr - m->start + m->pgoff, vaddr))
		return NULL;
	return of;
}

size_t symbolizer__frames(struct symbolizer *s, uint64_t time_ns, uint64_t addr, bool leaf,
			  const struct frame **frames)
{
	static const struct frame unknown = { .func = "?" };
	uint64_t pc = leaf || !addr ? addr : addr - 1, vaddr;
	struct objfile *of = resolve(s, time_ns, pc, &vaddr);
	struct frame *f;
	char buf[32];

	if (of)
		return objfile__frames(of, vaddr, frames);
	/* nothing maps it (JIT code, or a process gone before we looked): the address itself */
	f = hashmap__get(s->unknown, &pc, sizeof(pc));
	if (!f) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, pc);
		f = calloc(1, sizeof(*f));
		if (!f || !(f->func = strdup(buf)) ||
		    hashmap__add(s->unknown, &pc, sizeof(pc), f) != 0) {
			if (f)
				free((char *)f->func);
			free(f);
			*frames = &unknown;
			return 1;
		}
	}
	*frames = f;
	return 1;
}

uint64_t symbolizer__leaf_caller(struct symbolizer *s, uint64_t time_ns, uint64_t leaf,
				 uint64_t sp, uint64_t bp, const uint64_t top[2], bool far)
{
	struct objfile *of;
	uint64_t ret, vaddr;
	int32_t d;

	of = resolve(s, time_ns, leaf, &vaddr);
	if (!of)
		return 0;
	d = objfile__sp_delta(of, vaddr);
	if (objfile__link_register(of)) {
		/*
		 * arm64 sends [SP] and LR. Before a function stores LR (delta 0,
		 * a frameless leaf too) LR is the return address; once stored,
		 * it is at SP, the bottom of Go's frame, and the frame is set up
		 * when FP points just below it. Go calls duffzero and duffcopy
		 * with FP at a record 24 bytes below SP that holds LR already
		 * (ustack.bpf.h, duff_record).
		 */
		if (d < 0 || (d > 0 && bp == sp - 8) || (d == 0 && bp == sp - 24))
			return 0;
		ret = d == 0 ? top[1] : top[0];
	} else if (far) {
		/*
		 * Go before 1.21 between SP's move and BP's: the word the
		 * instruction's delta points at, when .gopclntab agrees
		 */
		if (d <= 8 || (uint64_t)d != top[0] || bp == sp + d - 8)
			return 0;
		ret = top[1];
	} else {
		/*
		 * SP + 0 and SP + 8: a frameless function, a prologue before
		 * or just after PUSHQ BP (or Go 1.19's SUBQ), an epilogue after
		 * POPQ BP (or Go 1.19's ADDQ)
		 */
		if (d != 0 && d != 8)
			return 0;
		/* a frame that is set up has BP just below the return address */
		if (bp == sp + d - 8)
			return 0;
		ret = top[d / 8];
	}
	/* never invent a frame: it must return into a named function of this process */
	if (!ret)
		return 0;
	of = resolve(s, time_ns, ret - 1, &vaddr);
	return of && objfile__in_function(of, vaddr) ? ret : 0;
}

int32_t symbolizer__sp_delta(struct symbolizer *s, uint64_t time_ns, uint64_t pc)
{
	uint64_t vaddr;
	struct objfile *of = resolve(s, time_ns, pc, &vaddr);

	return of ? objfile__sp_delta(of, vaddr) : -1;
}

bool symbolizer__mapping(struct symbolizer *s, uint64_t time_ns, uint64_t addr,
			 struct mapping *out)
{
	struct map_entry *m = find(s, time_ns, addr);
	struct objfile *of = m ? entry_file(s, m) : NULL;

	if (!m)
		return false;
	out->start = m->start;
	out->limit = m->end;
	out->offset = m->pgoff;
	out->file = m->name;
	out->build_id = of ? objfile__build_id(of) : "";
	return true;
}
