// SPDX-License-Identifier: GPL-2.0
/* targets.c: a recording's target set: processes added, installed in the kernel, described, reaped; --all's discovery. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/symbols/binaries.h"
#include "cmd/util/clock.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/procfs.h"
#include "offsets/go_binary.h"
#include "aggregate.h"
#include "container.h"
#include "owners.h"
#include "sampler.h"
#include "budget_probe.h"
#include "part_labels.h"
#include "part_alloc.h"
#include "part_spawn.h"
#include "session_config.h"
#include "target.h"
#include "targets.h"

struct targets {
	struct targets_config cfg; /* its env is every target's */
	struct hashmap *set; /* pid -> struct target */
	int nadded; /* targets ever added, for the statistics */
	uint64_t nunsupported; /* processes of Go builds it cannot read, passed over */
	int npending; /* targets added and not yet described */
	/* --all: what each executable file is, so that each is checked once */
	struct hashmap *verdicts; /* struct file_key -> enum verdict */
	pid_t *execs; /* exec'd since the loop last looked */
	size_t nexecs, capexecs;
	bool full; /* the kernel's targets map is full: said once */
	/* probes that failed to attach, per trace source; the goroutine-start probe's at COUNT */
	uint64_t attach_failures[ATTACH_KINDS];
	struct budget_account budget_accounts[BUDGET_KINDS];
	/* targets per bit of the sampler's target_bits (TARGET_BITS of them) */
	uint16_t *bit_refs;
	/* label_owners as last read for a sweep, and when the next one is due */
	struct owners *owners;
	uint64_t next_sweep;
	/*
	 * The targets' pidfds, which say at once which exited; -1 when none
	 * could be made (each is polled every round then). The rest of the
	 * reaping (execs, the CPU time each used) is done once a second.
	 */
	int epfd;
	uint64_t next_check, execs_seen; /* and the kernel's count of targets' execs then */
	/* -v: a long add says how far it is, once a second */
	struct {
		int total, from; /* TOTAL targets to add (0: not known), nadded at its start */
		uint64_t start, next;
	} adding;
};

/* An executable file, as this process sees it: the key of what it was found to be. */
struct file_key {
	dev_t dev;
	ino_t ino;
	off_t size;
	time_t mtime; /* a binary rewritten in place is checked again */
	long mtime_ns;
};

enum verdict {
	VERDICT_GO = 1,
	VERDICT_NOT_GO,
	VERDICT_UNSUPPORTED,
};

static void fail(struct targets *ts, int err, const char *what)
{
	if (err)
		ts->cfg.fail(ts->cfg.ctx, err, what);
}

static void free_target(void *p)
{
	target__free(p);
}

struct targets *targets__new(const struct targets_config *cfg)
{
	struct targets *ts = calloc(1, sizeof(*ts));

	if (!ts) {
		free(cfg->cgroup_dir);
		return NULL;
	}
	ts->cfg = *cfg;
	ts->cfg.env.attach_failures = ts->attach_failures;
	ts->cfg.env.budget_accounts = ts->budget_accounts;
	ts->epfd = epoll_create1(EPOLL_CLOEXEC);
	ts->set = hashmap__new();
	ts->verdicts = hashmap__new();
	ts->cfg.env.frame_tables = hashmap__new();
	ts->bit_refs = calloc(TARGET_BITS, sizeof(*ts->bit_refs));
	if (!ts->set || !ts->verdicts || !ts->cfg.env.frame_tables || !ts->bit_refs) {
		targets__free(ts);
		errno = ENOMEM;
		return NULL;
	}
	return ts;
}

void targets__free(struct targets *ts)
{
	if (!ts)
		return;
	if (ts->set)
		hashmap__free(ts->set, free_target);
	/* emptied by the targets' going */
	hashmap__free(ts->cfg.env.frame_tables, free);
	if (ts->verdicts)
		hashmap__free(ts->verdicts, NULL);
	free(ts->execs);
	free(ts->bit_refs);
	owners__free(ts->owners);
	free(ts->cfg.cgroup_dir);
	if (ts->epfd >= 0)
		close(ts->epfd);
	free(ts);
}

struct target *targets__find(const struct targets *ts, pid_t pid)
{
	return hashmap__get(ts->set, &pid, sizeof(pid));
}

struct each {
	void (*fn)(struct target *t, void *ctx);
	void *ctx;
};

static void each_one(const void *key, size_t len, void *value, void *ctx)
{
	struct each *e = ctx;

	e->fn(value, e->ctx);
}

void targets__foreach(struct targets *ts, void (*fn)(struct target *t, void *ctx), void *ctx)
{
	hashmap__foreach(ts->set, each_one, &(struct each){ fn, ctx });
}

int targets__count(const struct targets *ts)
{
	return hashmap__size(ts->set);
}

struct budget_sum {
	int kind;
	uint64_t watched;
	double missed;
};

static void add_budget(struct target *t, void *ctx)
{
	struct budget_sum *sum = ctx;
	struct budget_probe_stats st;

	if (sum->kind == BUDGET_SPAWN ? spawn_part__stats(target__parts(t), &st) :
					alloc_part__stats(target__parts(t), &st)) {
		sum->watched += st.watched;
		sum->missed += st.missed;
	}
}

void targets__budget_totals(struct targets *ts, int kind, struct budget_account *gone,
			    uint64_t *watched, double *missed)
{
	struct budget_sum sum = { .kind = kind };

	targets__foreach(ts, add_budget, &sum);
	*gone = ts->budget_accounts[kind];
	*watched = sum.watched + gone->watched;
	*missed = sum.missed + gone->missed;
}

const uint64_t *targets__attach_failures(const struct targets *ts)
{
	return ts->attach_failures;
}

int targets__added(const struct targets *ts)
{
	return ts->nadded;
}

uint64_t targets__unsupported(const struct targets *ts)
{
	return ts->nunsupported;
}

int targets__pending(const struct targets *ts)
{
	return ts->npending;
}

/*
 * PID's bit in the sampler's first filter, counted up (DELTA 1) or down
 * (-1): it stays set while any target's tgid has it. The word changes in
 * place, in the sampler's mapping of the array (every kernel with
 * bpf_loop maps global data).
 */
static void mark_target(struct targets *ts, pid_t pid, int delta)
{
	__u64 *words = ts->cfg.env.bpf->target_bits;
	__u32 bit = (__u32)pid % TARGET_BITS;

	ts->bit_refs[bit] += delta;
	if (ts->bit_refs[bit])
		__atomic_or_fetch(&words[bit / 64], 1ULL << (bit % 64), __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&words[bit / 64], ~(1ULL << (bit % 64)), __ATOMIC_RELAXED);
}

/* what install_target put in the kernel for PID, taken out */
static void uninstall_target(struct targets *ts, pid_t pid)
{
	const struct sampler_bpf *bpf = ts->cfg.env.bpf;

	if (!bpf_map_delete_elem(bpf->targets_fd, &(__u32){ pid }))
		mark_target(ts, pid, -1);
	bpf_map_delete_elem(bpf->frame_sizes_fd, &(__u32){ pid });
}

/* T's layout into the kernel's targets map: from now on its samples are taken. */
static int install_target(struct targets *ts, const struct target *t,
			  const struct target_info *info, bool quiet)
{
	const struct sampler_bpf *bpf = ts->cfg.env.bpf;
	int frames = target__frame_fd(t), ret;
	pid_t pid = target__pid(t);

	if (frames >= 0 &&
	    bpf_map_update_elem(bpf->frame_sizes_fd, &(__u32){ pid }, &frames,
				BPF_ANY)) {
		ret = -errno;
		fprintf(stderr, "pid %d: failed to add its frame sizes: %s\n", (int)pid,
			strerror(-ret));
		return ret;
	}
	if (!bpf_map_update_elem(bpf->targets_fd, &(__u32){ pid }, info, BPF_ANY)) {
		mark_target(ts, pid, 1);
		return 0;
	}
	ret = -errno;
	uninstall_target(ts, pid);
	if (!quiet || !ts->full)
		fprintf(stderr, "pid %d: failed to add to the targets map: %s%s\n", (int)pid,
			strerror(-ret),
			ret == -E2BIG ? " (it is full: more Go processes than it holds)" : "");
	ts->full = ret == -E2BIG;
	return ret;
}

/*
 * An exec from now on is marked by the exec tracepoint; one that came
 * between reading the executable and installing the layout shows here:
 * -ESRCH, and the layout is taken out again.
 */
static int confirm_exe(struct targets *ts, const struct target *t, bool quiet)
{
	if (target__same_exe(t))
		return 0;
	uninstall_target(ts, target__pid(t));
	if (!quiet)
		fprintf(stderr, "pid %d (%s): exited or ran another program while being added\n",
			(int)target__pid(t), target__comm(t));
	return -ESRCH;
}

/*
 * T's label sets are followed: from now on its samples say whether their
 * labels are those of a request that ended.
 */
static void follow_labels(struct targets *ts, struct target *t)
{
	int fd = ts->cfg.env.bpf->targets_fd;
	pid_t pid = target__pid(t);
	struct target_info info;

	if (!target__follows_labels(t) || bpf_map_lookup_elem(fd, &(__u32){ pid }, &info))
		return;
	info.label_owners = 1;
	if (bpf_map_update_elem(fd, &(__u32){ pid }, &info, BPF_EXIST) && ts->cfg.env.cfg->verbose)
		fprintf(stderr, "pid %d (%s): failed to mark its label sets followed: %s\n",
			(int)pid, target__comm(t), strerror(errno));
}

static void sweep_one(struct target *t, void *ctx)
{
	labels_part__sweep(target__parts(t), ctx);
}

void targets__sweep_owners(struct targets *ts)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (now < ts->next_sweep || !ts->cfg.env.cfg->sampling ||
	    !(ts->cfg.env.cfg->trace_sources & (1U << TRACE_SOURCE_LABEL)))
		return;
	ts->next_sweep = now + NSEC_PER_SEC;
	if ((!ts->owners && !(ts->owners = owners__new())) ||
	    owners__read(ts->owners, ts->cfg.env.bpf->labels.owners_fd) ||
	    !owners__size(ts->owners))
		return;
	targets__foreach(ts, sweep_one, ts->owners);
}

/*
 * PID becomes a target: checked, its layout installed, its probes
 * attached. QUIET (--all) says nothing of processes it passes over.
 */
static int add_target(struct targets *ts, pid_t pid, bool quiet)
{
	struct target_info info = {};
	struct target *t;
	int ret;

	if (targets__find(ts, pid))
		return 0;
	ret = target__open(&ts->cfg.env, pid, quiet, &info, &t);
	if (ret)
		return ret;
	/*
	 * --all defers the rest (its name, container and mappings, read from
	 * /proc while it lives) to the loop, right after: on a busy host with
	 * hundreds of Go processes, sampling them all starts sooner.
	 */
	if (!quiet)
		fail(ts, target__describe(t), "name a service");
	ret = install_target(ts, t, &info, quiet);
	if (!ret)
		ret = confirm_exe(ts, t, quiet);
	if (!ret)
		ret = target__attach_parts(t, quiet);
	if (!ret)
		ret = hashmap__add(ts->set, &pid, sizeof(pid), t);
	if (ret) {
		uninstall_target(ts, pid);
		target__free(t);
		return ret;
	}
	ts->nadded++;
	ts->npending += target__pending(t);
	/* closing the pidfd, when the target goes, takes it out of the set */
	if (ts->epfd >= 0 &&
	    epoll_ctl(ts->epfd, EPOLL_CTL_ADD, target__pidfd(t),
		      &(struct epoll_event){ .events = EPOLLIN, .data.u32 = (uint32_t)pid })) {
		close(ts->epfd);
		ts->epfd = -1;
	}
	follow_labels(ts, t);
	if (quiet && ts->cfg.env.cfg->verbose)
		fprintf(stderr, "ctxprof-go: pid %d (%s, %s) added\n", (int)pid, target__comm(t),
			go_binary__version(target__binary(t)));
	/*
	 * It is sampled from now on, while the next hundred targets may take
	 * seconds to add on a busy host: its samples are read meanwhile.
	 */
	aggregate__progress(ts->cfg.env.agg);
	return 0;
}

/* -v: an add of many targets begins; TOTAL of them, or 0 when not known (--all) */
static void adding_begin(struct targets *ts, int total)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	ts->adding.total = total;
	ts->adding.from = ts->nadded;
	ts->adding.start = now;
	ts->adding.next = now + NSEC_PER_SEC;
}

/* ...and goes on: how many are ready, once a second */
static void adding_progress(struct targets *ts)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	if (!ts->cfg.env.cfg->verbose || !ts->adding.start || now < ts->adding.next)
		return;
	ts->adding.next = now + NSEC_PER_SEC;
	if (ts->adding.total)
		fprintf(stderr, "ctxprof-go: adding %d targets: %d ready\n", ts->adding.total,
			ts->nadded - ts->adding.from);
	else
		fprintf(stderr, "ctxprof-go: adding Go processes: %d ready\n",
			ts->nadded - ts->adding.from);
}

/* ...and ends: said when it took a second or more */
static void adding_end(struct targets *ts)
{
	uint64_t took = now_ns(CLOCK_MONOTONIC) - ts->adding.start;

	if (ts->cfg.env.cfg->verbose && took >= NSEC_PER_SEC)
		fprintf(stderr, "ctxprof-go: %d targets added in %.1f s\n",
			ts->nadded - ts->adding.from, took / 1e9);
	ts->adding.start = 0;
}

int targets__add_all(struct targets *ts, const pid_t *pids, int n)
{
	int i, ret = 0;

	adding_begin(ts, n);
	for (i = 0; i < n && !ret; i++) {
		ret = add_target(ts, pids[i], false);
		adding_progress(ts);
	}
	adding_end(ts);
	return ret;
}

void targets__remove(struct targets *ts, pid_t pid, const char *why)
{
	struct target *t = hashmap__del(ts->set, &pid, sizeof(pid));

	if (!t)
		return;
	/* its samples are counted by now: the ring was read before it goes */
	target__warn_unsampled(t);
	/* what its snapshots counted stays counted */
	fail(ts, target__retire(t), "count goroutines");
	uninstall_target(ts, pid);
	ts->npending -= target__pending(t);
	target__detach_parts(t);
	/* with --all processes come and go all the time: said with -v only */
	if (!ts->cfg.env.cfg->all || ts->cfg.env.cfg->verbose)
		fprintf(stderr, "ctxprof-go: pid %d (%s) %s\n", (int)pid, target__comm(t), why);
	target__free(t);
}

struct describe_round {
	struct targets *ts;
	uint64_t until_ns;
};

static void describe_one(struct target *t, void *ctx)
{
	struct describe_round *r = ctx;

	if (!target__pending(t) || now_ns(CLOCK_MONOTONIC) >= r->until_ns)
		return;
	fail(r->ts, target__describe(t), "name a service");
	r->ts->npending--;
}

/*
 * Targets added since the loop last looked: described until UNTIL_NS, the
 * rest in the next rounds, so that the rings are read in between: hundreds
 * of new targets on a busy host take longer than a ring holds samples.
 */
void targets__describe_pending(struct targets *ts, uint64_t until_ns)
{
	struct describe_round r = { .ts = ts, .until_ns = until_ns };

	if (ts->npending)
		targets__foreach(ts, describe_one, &r);
}

static void refresh_one(struct target *t, void *ctx)
{
	if (!target__pending(t))
		fail(ctx, target__refresh_context(t), "name a service");
}

void targets__refresh_contexts(struct targets *ts)
{
	targets__foreach(ts, refresh_one, ts);
}

static void stop_ticks_one(struct target *t, void *ctx)
{
	target__stop_ticks(t);
}

void targets__stop_ticks(struct targets *ts)
{
	targets__foreach(ts, stop_ticks_one, NULL);
	ts->cfg.env.per_task = false;
}

struct stalled {
	struct target *found;
	uint64_t cpu_ns;
};

static void stalled_one(struct target *t, void *ctx)
{
	struct stalled *st = ctx;

	if (!st->found && target__ticks_stalled(t, &st->cpu_ns))
		st->found = t;
}

struct target *targets__stalled_ticks(struct targets *ts, uint64_t *cpu_ns)
{
	struct stalled st = {};

	targets__foreach(ts, stalled_one, &st);
	*cpu_ns = st.cpu_ns;
	return st.found;
}

static void warn_unsampled_one(struct target *t, void *ctx)
{
	target__warn_unsampled(t);
}

void targets__warn_unsampled(struct targets *ts)
{
	targets__foreach(ts, warn_unsampled_one, NULL);
}

bool targets__describe_process(void *ctx, uint32_t pid, struct otlp_process *out)
{
	struct target *t = targets__find(ctx, pid);

	if (t)
		target__describe_process(t, out);
	return t;
}

/*
 * --all --cgroup: only processes of the cgroup become targets. The sampler
 * filters by cgroup anyway; this keeps the rest of the host out of the
 * target set (mappings, symbols, statistics). A process joins its
 * container's cgroup before it execs the container's program, so an exec
 * finds it there.
 */
static bool in_cgroup(const struct targets *ts, pid_t pid)
{
	return !ts->cfg.cgroup_dir || container__in_cgroup(pid, ts->cfg.cgroup_dir);
}

/*
 * A file's verdict, said once, of the first process found running it, in
 * the words -p uses: an unsupported Go build gets a note; with -v, a Go
 * build's warnings too. A host runs many Go programs that never set
 * labels (the go command, its compiler): sampled all the same.
 */
static void say_verdict(const struct targets *ts, pid_t pid, const char *exe,
			const struct go_binary *gb, enum verdict v)
{
	char path[PATH_MAX], comm[32] = "";
	bool verbose = ts->cfg.env.cfg->verbose;
	ssize_t n;
	size_t i;

	if (v == VERDICT_NOT_GO || (v == VERDICT_GO && (!verbose || !go_binary__nwarnings(gb))))
		return;
	n = readlink(exe, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	procfs__comm(pid, comm, sizeof(comm));
	for (i = 0; v == VERDICT_GO && i < go_binary__nwarnings(gb); i++)
		fprintf(stderr, "pid %d (%s, %s): warning: %s\n", (int)pid, comm, path,
			go_binary__warning(gb, i));
	if (v == VERDICT_UNSUPPORTED) {
		fprintf(stderr, "pid %d (%s, %s): unsupported Go build: ", (int)pid, comm, path);
		for (i = 0; i < go_binary__nproblems(gb); i++)
			fprintf(stderr, "%s%s", i ? "; " : "", go_binary__problem(gb, i));
		fprintf(stderr, "; not sampled, nor other processes of the file\n");
	}
}

/*
 * What the executable EXE (as ST) is, from what this file was found to be,
 * or read now: then *HELD keeps it parsed for the caller to put. 0 when it
 * cannot be read.
 */
static enum verdict file_verdict(struct targets *ts, pid_t pid, const char *exe,
				 const struct stat *st, struct go_binary **held)
{
	struct file_key key = { st->st_dev, st->st_ino, st->st_size, st->st_mtim.tv_sec,
				st->st_mtim.tv_nsec };
	char err[256];
	struct go_binary *gb;
	enum verdict v;

	v = (uintptr_t)hashmap__get(ts->verdicts, &key, sizeof(key));
	if (v)
		return v;
	gb = binaries__get(exe, err, sizeof(err));
	if (!gb)
		return 0;
	v = !go_binary__version(gb) ? VERDICT_NOT_GO :
	    go_binary__supported(gb) ? VERDICT_GO : VERDICT_UNSUPPORTED;
	say_verdict(ts, pid, exe, gb, v);
	hashmap__add(ts->verdicts, &key, sizeof(key), (void *)(uintptr_t)v);
	*held = gb;
	return v;
}

/*
 * --all: PID is sampled when it runs a supported Go build. Each file is
 * checked once: a non-Go file is skipped silently from then on (-v lists
 * each process), an unsupported Go build gets one note.
 */
static void consider(struct targets *ts, pid_t pid)
{
	struct go_binary *held = NULL;
	char exe[64], comm[32] = "";
	enum verdict v;
	struct stat st;

	if (pid == getpid() || !in_cgroup(ts, pid))
		return;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	/* kernel threads have no executable; a process may be gone already */
	if (stat(exe, &st) != 0)
		return;
	v = file_verdict(ts, pid, exe, &st, &held);
	if (v == VERDICT_GO)
		add_target(ts, pid, true);
	ts->nunsupported += v == VERDICT_UNSUPPORTED;
	/* held until the target took its own reference: the file is parsed once */
	binaries__put(held);
	if (!v || v == VERDICT_GO || !ts->cfg.env.cfg->verbose)
		return;
	procfs__comm(pid, comm, sizeof(comm));
	fprintf(stderr, "ctxprof-go: pid %d (%s): %s, skipped\n", (int)pid, comm,
		v == VERDICT_NOT_GO ? "not a Go program" : "an unsupported Go build");
}

void targets__discover(struct targets *ts)
{
	struct dirent *de;
	DIR *proc;
	char *end;
	long pid;

	proc = opendir("/proc");
	if (!proc) {
		fprintf(stderr, "ctxprof-go: cannot list /proc: %s\n", strerror(errno));
		return;
	}
	adding_begin(ts, 0);
	while ((de = readdir(proc))) {
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		consider(ts, pid);
		adding_progress(ts);
	}
	closedir(proc);
	adding_end(ts);
}

void targets__on_exec(void *ctx, pid_t pid)
{
	struct targets *ts = ctx;
	size_t cap;
	pid_t *p;

	if (ts->nexecs == ts->capexecs) {
		cap = ts->capexecs ? 2 * ts->capexecs : 64;
		p = realloc(ts->execs, cap * sizeof(*p));
		if (!p)
			return;
		ts->execs = p;
		ts->capexecs = cap;
	}
	ts->execs[ts->nexecs++] = pid;
}

void targets__handle_execs(struct targets *ts)
{
	size_t i;

	for (i = 0; i < ts->nexecs; i++) {
		/* a target that execs runs another program: it is checked again */
		targets__remove(ts, ts->execs[i], "ran another program (exec)");
		consider(ts, ts->execs[i]);
	}
	ts->nexecs = 0;
}

struct reap {
	struct targets *ts;
	pid_t *exited, *execed, *reexeced;
	size_t nexited, nexeced, nreexeced;
};

static void check_one(struct target *t, void *ctx)
{
	struct reap *r = ctx;
	struct target_info info;
	pid_t pid = target__pid(t);

	if (target__exited(t)) {
		r->exited[r->nexited++] = pid;
		return;
	}
	if (bpf_map_lookup_elem(r->ts->cfg.env.bpf->targets_fd, &(__u32){ pid },
				&info) != 0)
		return;
	/* the kernel side already drops its samples; this says so, once */
	if (info.execed)
		r->execed[r->nexeced++] = pid;
	else if (info.reexecs != target__reexecs(t))
		r->reexeced[r->nreexeced++] = pid;
}

/*
 * A target that exec'd its own file again: a new Go runtime, at a new
 * load address when a PIE. Its goroutines are read afresh at the new
 * bias, and so is the GC cycle count the sampler keys label sets by.
 */
static void reexeced(struct targets *ts, pid_t pid)
{
	struct target *t = targets__find(ts, pid);
	struct target_info info;
	int fd = ts->cfg.env.bpf->targets_fd, err;

	if (!t || bpf_map_lookup_elem(fd, &(__u32){ pid }, &info))
		return;
	err = target__reexec(t, &info);
	if (bpf_map_update_elem(fd, &(__u32){ pid }, &info, BPF_EXIST))
		fprintf(stderr, "pid %d (%s): failed to update its layout after it ran its "
				"program again: %s\n",
			(int)pid, target__comm(t), strerror(errno));
	fail(ts, err, "read goroutines");
}

/*
 * The targets whose pidfds say they exited, into R (room for every
 * target), 64 a round: a pidfd stays readable until its target goes, so
 * asking again in the same round would only name the same ones.
 */
static void exited_now(struct targets *ts, struct reap *r)
{
	struct epoll_event ev[64];
	int n, i;

	n = epoll_wait(ts->epfd, ev, 64, 0);
	for (i = 0; i < n && r->nexited < (size_t)hashmap__size(ts->set); i++)
		r->exited[r->nexited++] = (pid_t)ev[i].data.u32;
}

void targets__reap(struct targets *ts)
{
	size_t n = hashmap__size(ts->set), i;
	uint64_t now = now_ns(CLOCK_MONOTONIC), execs;
	struct reap r = { .ts = ts };

	if (!n)
		return;
	r.exited = calloc(n, sizeof(pid_t));
	r.execed = calloc(n, sizeof(pid_t));
	r.reexeced = calloc(n, sizeof(pid_t));
	/*
	 * Every round, the exits, from the pidfds at once; every target
	 * (three system calls each) once a second, for the CPU time it used,
	 * and at once when the kernel counted an exec of one
	 */
	execs = __atomic_load_n(ts->cfg.env.bpf->target_execs, __ATOMIC_RELAXED);
	if (!r.exited || !r.execed || !r.reexeced)
		;
	else if (ts->epfd < 0 || now >= ts->next_check || execs != ts->execs_seen) {
		ts->next_check = now + NSEC_PER_SEC;
		ts->execs_seen = execs;
		targets__foreach(ts, check_one, &r);
	} else {
		exited_now(ts, &r);
	}
	if (r.nexited || r.nexeced)
		ts->cfg.read_rings(ts->cfg.ctx);
	for (i = 0; i < r.nexited; i++)
		targets__remove(ts, r.exited[i], "exited");
	for (i = 0; i < r.nexeced; i++)
		targets__remove(ts, r.execed[i], "now runs another program (exec); no longer sampled");
	for (i = 0; i < r.nreexeced; i++)
		reexeced(ts, r.reexeced[i]);
	free(r.exited);
	free(r.execed);
	free(r.reexeced);
}
