// SPDX-License-Identifier: GPL-2.0
/* processes.c: the address spaces of the host's processes, followed from exec to exit through perf's mmap records. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "cmd/util/clock.h"
#include "cmd/util/cpus.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/procfs.h"
#include "container.h"
#include "processes.h"

/* Data pages of each CPU's ring: a burst of execs writes a few dozen records each. */
#define RING_PAGES 64

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size; /* bytes of data, a power of two */
};

/* sample_id_all with PERF_SAMPLE_TID | PERF_SAMPLE_TIME: the tail of every record */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

/* One record copied out of a ring, to be applied in time order with the other CPUs'. */
struct record {
	uint64_t time;
	uint32_t seq; /* order of reading: ties keep a CPU's own order */
	uint32_t type;
	uint16_t misc;
	uint32_t pid, ppid, tid;
	uint64_t addr, len, pgoff;
	char *name;
};

struct proc {
	struct symbolizer *sym;
	bool exited;
	uint64_t exit_ns;
	struct container_info container;
	bool container_read;
	char comm[16]; /* as the kernel named it at its exec, or /proc said */
	char *service; /* as the recording named it; NULL: not named */
	int64_t memprofile_rate; /* --alloc: its runtime.MemProfileRate as last read; 0: not read */
};

struct processes {
	struct ring *rings;
	int nrings;
	struct hashmap *procs; /* pid -> struct proc */
	uint64_t read_until_ns; /* every record up to this time has been applied */
	struct record *batch;
	size_t nbatch, cap;
	uint8_t *wrap; /* a record that wraps around a ring's end, made whole */
	struct processes_stats stats;
	processes_exec_fn on_exec;
	void *on_exec_ctx;
};

static void proc__free(void *v)
{
	struct proc *pr = v;

	if (!pr)
		return;
	symbolizer__free(pr->sym);
	free(pr->service);
	free(pr);
}

static int open_ring(struct ring *r, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		/* the clock of bpf_ktime_get_ns(), so that records and samples compare */
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* read on the poll timer: never wake us */
		.watermark = 1,
		.wakeup_watermark = RING_PAGES * 4096,
	};
	long page = sysconf(_SC_PAGESIZE);

	r->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	r->size = (uint64_t)RING_PAGES * page;
	r->meta = mmap(NULL, r->size + page, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->meta == MAP_FAILED) {
		r->meta = NULL;
		return -errno;
	}
	r->data = (uint8_t *)r->meta + page;
	return 0;
}

static void close_ring(struct ring *r)
{
	if (r->meta)
		munmap(r->meta, r->size + sysconf(_SC_PAGESIZE));
	if (r->fd >= 0)
		close(r->fd);
}

struct processes *processes__new(bool follow, char *err, size_t errlen)
{
	struct processes *p = calloc(1, sizeof(*p));
	bool *online = NULL;
	int cpu, ret, ncpus;

	if (!p || !(p->procs = hashmap__new())) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (!follow)
		return p;
	ret = cpus__online(&online, &ncpus);
	if (ret) {
		snprintf(err, errlen, "cannot read the online CPUs: %s", strerror(-ret));
		goto fail;
	}
	p->rings = calloc(ncpus, sizeof(*p->rings));
	p->wrap = malloc(65536);
	if (!p->rings || !p->wrap) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (cpu = 0; cpu < ncpus; cpu++) {
		struct ring *r = &p->rings[p->nrings];

		if (!online[cpu])
			continue;
		r->fd = -1;
		ret = open_ring(r, cpu);
		if (ret == -ENODEV) {
			close_ring(r);
			continue;
		}
		p->nrings++;
		if (ret) {
			snprintf(err, errlen, "cannot follow mmaps on CPU %d (perf_event_open): %s", cpu,
				 strerror(-ret));
			goto fail;
		}
	}
	free(online);
	p->read_until_ns = now_ns(CLOCK_MONOTONIC);
	return p;
fail:
	free(online);
	processes__free(p);
	return NULL;
}

void processes__free(struct processes *p)
{
	size_t i;
	int r;

	if (!p)
		return;
	for (r = 0; r < p->nrings; r++)
		close_ring(&p->rings[r]);
	free(p->rings);
	free(p->wrap);
	for (i = 0; i < p->nbatch; i++)
		free(p->batch[i].name);
	free(p->batch);
	hashmap__free(p->procs, proc__free);
	free(p);
}

static struct proc *lookup(struct processes *p, pid_t pid)
{
	return hashmap__get(p->procs, &pid, sizeof(pid));
}

/*
 * PID's entry, new and empty if there was none or when NEW (a fork: a pid
 * comes back only through a fork, so whatever was there is another
 * process's).
 */
static struct proc *fresh(struct processes *p, pid_t pid, bool new)
{
	struct proc *pr = lookup(p, pid);

	if (pr && !new)
		return pr;
	if (pr)
		proc__free(hashmap__del(p->procs, &pid, sizeof(pid)));
	pr = calloc(1, sizeof(*pr));
	if (!pr || !(pr->sym = symbolizer__new(pid)) || hashmap__add(p->procs, &pid, sizeof(pid), pr)) {
		proc__free(pr);
		return NULL;
	}
	p->stats.live = hashmap__size(p->procs);
	return pr;
}

static struct record *push(struct processes *p)
{
	struct record *b;

	if (p->nbatch == p->cap) {
		b = realloc(p->batch, (p->cap ? p->cap * 2 : 256) * sizeof(*b));
		if (!b)
			return NULL;
		p->batch = b;
		p->cap = p->cap ? p->cap * 2 : 256;
	}
	b = &p->batch[p->nbatch++];
	memset(b, 0, sizeof(*b));
	b->seq = p->nbatch;
	return b;
}

/* Copies the record at H (SIZE bytes, whole) into the batch. */
static int take(struct processes *p, const struct perf_event_header *h)
{
	const struct sample_id *id;
	const uint8_t *body = (const uint8_t *)(h + 1);
	struct record *r;
	size_t namelen;

	if (h->size < sizeof(*h) + sizeof(*id))
		return 0;
	id = (const struct sample_id *)((const uint8_t *)h + h->size - sizeof(*id));
	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		/* pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags, filename */
		const size_t fixed = 8 + 3 * 8 + 8 + 2 * 8 + 8;

		if (h->size < sizeof(*h) + fixed + sizeof(*id))
			return 0;
		r = push(p);
		if (!r)
			return -ENOMEM;
		memcpy(&r->pid, body, 4);
		memcpy(&r->addr, body + 8, 8);
		memcpy(&r->len, body + 16, 8);
		memcpy(&r->pgoff, body + 24, 8);
		namelen = strnlen((const char *)body + fixed, h->size - sizeof(*h) - fixed - sizeof(*id));
		r->name = strndup((const char *)body + fixed, namelen);
		if (!r->name)
			return -ENOMEM;
		break;
	}
	case PERF_RECORD_COMM:
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
			return 0;
		r = push(p);
		if (!r)
			return -ENOMEM;
		memcpy(&r->pid, body, 4);
		r->name = strndup((const char *)body + 8, h->size - sizeof(*h) - 8 - sizeof(*id));
		if (!r->name)
			return -ENOMEM;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		r = push(p);
		if (!r)
			return -ENOMEM;
		memcpy(&r->pid, body, 4);
		memcpy(&r->ppid, body + 4, 4);
		memcpy(&r->tid, body + 8, 4);
		break;
	case PERF_RECORD_LOST: {
		uint64_t lost;

		memcpy(&lost, body + 8, 8);
		p->stats.lost += lost;
		return 0;
	}
	default:
		return 0;
	}
	r->type = h->type;
	r->misc = h->misc;
	r->time = id->time;
	p->stats.records++;
	return 0;
}

/* Copies every record of ring R into the batch and frees its space. */
static int drain(struct processes *p, struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	struct perf_event_header h;
	uint64_t off, first;
	int ret = 0;

	while (tail < head) {
		off = tail & (r->size - 1);
		/* the header may itself wrap */
		first = r->size - off;
		if (first >= sizeof(h)) {
			memcpy(&h, r->data + off, sizeof(h));
		} else {
			memcpy(&h, r->data + off, first);
			memcpy((uint8_t *)&h + first, r->data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		if (off + h.size <= r->size) {
			ret = take(p, (const struct perf_event_header *)(r->data + off));
		} else {
			memcpy(p->wrap, r->data + off, first);
			memcpy(p->wrap + first, r->data, h.size - first);
			ret = take(p, (const struct perf_event_header *)p->wrap);
		}
		if (ret)
			break;
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return ret;
}

static int by_time(const void *a, const void *b)
{
	const struct record *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void apply(struct processes *p, const struct record *r)
{
	struct proc *pr, *parent;

	switch (r->type) {
	case PERF_RECORD_COMM:
		pr = fresh(p, r->pid, false);
		if (!pr)
			break;
		/*
		 * A thread other than the leader that execs takes over the
		 * leader's pid, and the leader's exit comes first: the process
		 * lives on.
		 */
		pr->exited = false;
		pr->container_read = false;
		snprintf(pr->comm, sizeof(pr->comm), "%s", r->name);
		free(pr->service);
		pr->service = NULL;
		symbolizer__exec(pr->sym, r->time);
		if (p->on_exec)
			p->on_exec(p->on_exec_ctx, r->pid);
		break;
	case PERF_RECORD_MMAP2:
		pr = lookup(p, r->pid);
		/* a process we never saw start: /proc/PID/maps fills it in when needed */
		if (!pr && !(pr = fresh(p, r->pid, false)))
			break;
		if (r->name[0] == '/' || !strcmp(r->name, "[vdso]"))
			symbolizer__map(pr->sym, r->addr, r->len, r->pgoff, r->name);
		break;
	case PERF_RECORD_FORK:
		/* a new thread is no new process */
		if (r->pid == r->ppid)
			break;
		parent = lookup(p, r->ppid);
		pr = fresh(p, r->pid, true);
		if (pr && parent)
			symbolizer__fork(pr->sym, parent->sym);
		break;
	case PERF_RECORD_EXIT:
		/* the process ends with its last thread; the leader's exit is that in practice */
		pr = lookup(p, r->pid);
		if (pr && r->pid == r->tid) {
			pr->exited = true;
			pr->exit_ns = r->time;
		}
		break;
	}
}

int processes__read(struct processes *p)
{
	uint64_t start = now_ns(CLOCK_MONOTONIC);
	size_t i;
	int r, ret = 0;

	if (!p->nrings)
		return 0;
	for (r = 0; r < p->nrings && !ret; r++)
		ret = drain(p, &p->rings[r]);
	/* CPUs' records interleave: an exec on one CPU, its mmaps on another */
	if (p->nbatch)
		qsort(p->batch, p->nbatch, sizeof(*p->batch), by_time);
	for (i = 0; i < p->nbatch; i++) {
		apply(p, &p->batch[i]);
		free(p->batch[i].name);
	}
	p->nbatch = 0;
	p->read_until_ns = start;
	p->stats.live = hashmap__size(p->procs);
	return ret;
}

struct symbolizer *processes__get(struct processes *p, pid_t pid, uint64_t time_ns)
{
	struct proc *pr;
	char err[256];

	/* an event can be newer than the last read, and so can the mmaps of its code */
	if (p->nrings && time_ns >= p->read_until_ns)
		processes__read(p);
	pr = lookup(p, pid);
	if (pr && symbolizer__known(pr->sym))
		return pr->sym;
	if (!pr && !(pr = fresh(p, pid, false)))
		return NULL;
	/* never seen to exec or fork: what /proc shows, while it lives */
	if (!pr->exited || !kill(pid, 0))
		symbolizer__load(pr->sym, err, sizeof(err));
	return pr->sym;
}

const struct container_info *processes__container(struct processes *p, pid_t pid)
{
	struct proc *pr = lookup(p, pid);

	if (!pr && !(pr = fresh(p, pid, false)))
		return NULL;
	/* read once, while it lives; a process gone by then is in no known container */
	if (!pr->container_read) {
		pr->container_read = true;
		container__read(pid, &pr->container);
	}
	return &pr->container;
}

const char *processes__comm(struct processes *p, pid_t pid)
{
	struct proc *pr = lookup(p, pid);

	if (!pr && !(pr = fresh(p, pid, false)))
		return "";
	if (!pr->comm[0])
		procfs__comm(pid, pr->comm, sizeof(pr->comm));
	return pr->comm;
}

int processes__set_service(struct processes *p, pid_t pid, const char *name)
{
	struct proc *pr = lookup(p, pid);
	char *copy;

	if (!pr && !(pr = fresh(p, pid, false)))
		return -ENOMEM;
	if (pr->service && name && !strcmp(pr->service, name))
		return 0;
	copy = name ? strdup(name) : NULL;
	if (name && !copy)
		return -ENOMEM;
	free(pr->service);
	pr->service = copy;
	return 0;
}

const char *processes__service(struct processes *p, pid_t pid)
{
	struct proc *pr = lookup(p, pid);

	return pr ? pr->service : NULL;
}

int processes__set_memprofile_rate(struct processes *p, pid_t pid, int64_t rate)
{
	struct proc *pr = lookup(p, pid);

	if (!pr && !(pr = fresh(p, pid, false)))
		return -ENOMEM;
	pr->memprofile_rate = rate;
	return 0;
}

int64_t processes__memprofile_rate(struct processes *p, pid_t pid)
{
	struct proc *pr = lookup(p, pid);

	return pr ? pr->memprofile_rate : 0;
}

struct release {
	uint64_t before_ns;
	pid_t *pids;
	size_t n;
};

static void note_exited(const void *key, size_t len, void *value, void *ctx)
{
	struct proc *pr = value;
	struct release *rel = ctx;

	if (pr->exited && pr->exit_ns < rel->before_ns)
		memcpy(&rel->pids[rel->n++], key, sizeof(pid_t));
}

void processes__release(struct processes *p, uint64_t before_ns)
{
	struct release rel = { .before_ns = before_ns };
	size_t i;

	rel.pids = calloc(hashmap__size(p->procs) + 1, sizeof(pid_t));
	if (!rel.pids)
		return;
	hashmap__foreach(p->procs, note_exited, &rel);
	for (i = 0; i < rel.n; i++)
		proc__free(hashmap__del(p->procs, &rel.pids[i], sizeof(pid_t)));
	free(rel.pids);
	p->stats.live = hashmap__size(p->procs);
}

bool processes__following(const struct processes *p)
{
	return p->nrings > 0;
}

void processes__on_exec(struct processes *p, processes_exec_fn fn, void *ctx)
{
	p->on_exec = fn;
	p->on_exec_ctx = ctx;
}

void processes__stats(const struct processes *p, struct processes_stats *out)
{
	*out = p->stats;
}
