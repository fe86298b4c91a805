// SPDX-License-Identifier: GPL-2.0
/* budget_probe.c: a uprobe in one process held to a share of its CPU: the goroutine-start probe, --alloc's. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/util/clock.h"
#include "budget_probe.h"
#include "uprobe_link.h"

/*
 * A uprobe hit costs the process a trap at every goroutine start (or
 * sampled allocation), whoever makes it, and only detaching the probe
 * spares it that. So each period the kernel counts down a budget of hits:
 * the share of the process's CPU time in the period before, at the price
 * of a hit (the trap, measured once, and the program's own time, which the
 * kernel adds up). The hit that spends it says so (budget_notes) and the
 * probe comes off until the period is over. What comes while it rests is
 * not seen, and the statistics say about how much that was. A period is short, so
 * that a server busy all at once is followed within it; a second under
 * --max-goroutine-starts, which counts starts a second.
 */
struct budget_probe {
	struct bpf_program *prog;
	struct uprobe_link *link; /* NULL while it rests */
	int budgets_fd, refill_fd;
	uint32_t kind;
	__u32 pid;
	char path[64];
	uint64_t offset, cookie;
	struct budget_policy policy;
	uint64_t period_ns;
	uint64_t allowed; /* this period's budget */
	double credit; /* hits earned and not spent; below 0: overspent */
	bool capped; /* by --max-goroutine-starts, not the share */
	/*
	 * what the hits of the periods over cost: each period's traps, and
	 * its program's time, with the other probes' hits it paid for
	 */
	uint64_t spent_ns, paid;
	uint64_t price_ns; /* a hit's, the last measured */
	uint64_t cpu_first_ns, cpu_last_ns; /* its process's CPU time: at the start, at the last tick */
	uint64_t period_start_ns; /* when this period began: while on, it was on since then */
	uint64_t since_ns; /* when it last came on or went off */
	uint64_t on_since_ns; /* when it last came on */
	uint64_t born_ns; /* when it was first attached */
	uint64_t watched, on_ns, paused_ns;
	/* the rate of starts when it last spent its budget, per ns, and what it missed so far at that rate */
	double rate, missed;
	bool failed;
};

/* The program's time in a hit, before any was measured: what it costs on a slow machine. */
#define BUDGET_FIRST_BPF_NS 2000
#define BUDGET_PERIOD_NS (NSEC_PER_SEC / 10)
/*
 * A probe that rested comes on again no sooner than this after it last
 * came on. Each time it comes on and goes off the kernel installs and
 * removes the breakpoint in the process while its threads run into it,
 * and that costs the process's CPU time that no count of hits sees: ten
 * cycles a second cost a busy server about as much as the hits themselves
 * (tests/bench/README.md, section 7b). Its savings, a second's earnings
 * at most, are then spent in one go. Not in its first second, whose
 * budgets start from a guess before its process's CPU time is seen:
 * waiting there lost most of a second of a busy server's starts.
 */
#define BUDGET_RESUME_NS NSEC_PER_SEC
/* Calls of the measure of a trap, each after the caches are cooled: the median stands */
#define TRAP_CALLS 201
/* What is written between two calls to cool the caches, when the L2's size is unknown */
#define TRAP_COOL_BYTES (1 << 20)
#define TRAP_COOL_MAX (8 << 20)

/*
 * The function the trap is measured on: a call, with the probe on it, as
 * the goroutine-start probe is on newproc's call of runqput, so that the
 * kernel handles its trap alike (it emulates a call).
 */
#if defined(__x86_64__)
__asm__(".text\n"
	".hidden ctxprof_trap_target\n"
	".hidden ctxprof_trap_call\n"
	"ctxprof_trap_target:\n"
	"ctxprof_trap_call:\n"
	"	call 1f\n"
	"	ret\n"
	"1:	leal 1(%rdi), %eax\n"
	"	ret\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".hidden ctxprof_trap_target\n"
	".hidden ctxprof_trap_call\n"
	"ctxprof_trap_target:\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"ctxprof_trap_call:\n"
	"	bl 1f\n"
	"	ldp x29, x30, [sp], #16\n"
	"	ret\n"
	"1:	add w0, w0, #1\n"
	"	ret\n");
#else
#error "the trap's measure knows amd64 and arm64"
#endif

int ctxprof_trap_target(long x);
extern const char ctxprof_trap_call[];

/* Where ADDR of ctxprof-go's own code is in its executable's file; 0 when not found. */
static uint64_t own_file_offset(uint64_t addr)
{
	unsigned long start, end, off;
	char perms[8], line[512];
	uint64_t found = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms, &off) == 4 &&
		    addr >= start && addr < end && perms[2] == 'x')
			found = addr - start + off;
	fclose(f);
	return found;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The median time of a call of the trap's function, each made after
 * writing over COOL so that the kernel's trap path runs from cold caches,
 * as in a busy server between two goroutine starts. Measured hot, in a
 * loop, a trap costs about half as much, and a budget at that price spent
 * more than its share. A wall clock, so that one call is timed; the median
 * leaves out the calls an interrupt or a preemption lengthened.
 */
static uint64_t median_cold_call(volatile char *cool, size_t len)
{
	uint64_t t[TRAP_CALLS], t0;
	int i, sum = 0;
	size_t j;

	for (i = 0; i < TRAP_CALLS; i++) {
		for (j = 0; j < len; j += 64)
			cool[j]++;
		t0 = now_ns(CLOCK_MONOTONIC);
		sum += ctxprof_trap_target(i);
		t[i] = now_ns(CLOCK_MONOTONIC) - t0;
	}
	qsort(t, TRAP_CALLS, sizeof(t[0]), cmp_u64);
	return t[TRAP_CALLS / 2] + (sum == 42); /* the calls are used */
}

uint64_t budget_probe__trap_ns(const struct bpf_program *prog, uint64_t cookie)
{
	uint64_t off = own_file_offset((uint64_t)(uintptr_t)ctxprof_trap_call), bare, probed;
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	size_t len = l2 > 0 && l2 <= TRAP_COOL_MAX ? (size_t)l2 : TRAP_COOL_BYTES;
	struct uprobe_link *link;
	char *cool;

	if (!off)
		return 0;
	cool = calloc(1, len);
	if (!cool)
		return 0;
	bare = median_cold_call(cool, len);
	link = uprobe_link__attach(prog, getpid(), "/proc/self/exe", off, cookie);
	if (!link) {
		free(cool);
		return 0;
	}
	probed = median_cold_call(cool, len);
	uprobe_link__destroy(link);
	free(cool);
	return probed > bare ? probed - bare : 0;
}

/* Its budget's hits so far in this period, past the budget too (a note is read late). */
static uint64_t period_hits(const struct budget_probe *sp, const struct probe_budget *b)
{
	return b->left < (__s64)sp->allowed ? (uint64_t)((__s64)sp->allowed - b->left) : 0;
}

/* This period's budget from the credit: at least a hit, and no more than --max-goroutine-starts. */
static void allow(struct budget_probe *sp)
{
	/* a cap is a number a second, and its period a second */
	sp->capped = sp->credit > sp->policy.max_per_sec;
	sp->allowed = sp->capped ? sp->policy.max_per_sec : sp->credit >= 1 ? (uint64_t)sp->credit : 1;
}

/*
 * The next period's budget. The probe earns the share of the CPU time its
 * process used in this period, less PAID_NS that the other hits it pays
 * for cost, at the price of a hit, or its policy's least hits a second,
 * whichever is more, and spends it in hits. What it saved, at most a
 * second's earnings, lets it follow a burst of hits (goroutine starts
 * come before the CPU time they cause); what it overspent (a note read
 * late) is paid back. No more than its cap (--max-goroutine-starts).
 */
static void next_budget(struct budget_probe *sp, uint64_t hits, uint64_t bpf_ns,
			uint64_t paid_ns)
{
	double earned, least = (double)sp->policy.min_per_sec * sp->period_ns / NSEC_PER_SEC;
	uint64_t cpu = 0, used = 0;

	if (hits)
		sp->price_ns = sp->policy.trap_ns + bpf_ns / hits;
	if (!process_cpu_ns(sp->pid, &cpu) && cpu > sp->cpu_last_ns) {
		used = cpu - sp->cpu_last_ns;
		sp->cpu_last_ns = cpu;
	}
	earned = (sp->policy.share * used - paid_ns) / (sp->price_ns ?: 1);
	if (earned < least)
		earned = least;
	sp->credit += earned - hits;
	if (sp->credit > earned * NSEC_PER_SEC / sp->period_ns)
		sp->credit = earned * NSEC_PER_SEC / sp->period_ns;
	allow(sp);
}

/* What PAID hits of other probes cost, their program's time PAID_BPF_NS with their traps. */
static uint64_t paid_cost(const struct budget_probe *sp, uint64_t paid, uint64_t paid_bpf_ns)
{
	return paid * sp->policy.trap_ns + paid_bpf_ns;
}

/*
 * The budget for a period anew; what the last one spent is counted. The
 * next budget follows from a read of the kernel's count; the count itself
 * is swapped for it in the kernel (budget_refill), where no hit comes
 * between, and the credit is set right by what the swap found.
 */
static void refill(struct budget_probe *sp)
{
	struct budget_refill r = { .tgid = sp->pid, .kind = sp->kind };
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = &r, .ctx_size_in = sizeof(r));
	uint64_t allowed = sp->allowed, hits = 0, bpf_ns = 0, swapped, paid, paid_ns;
	struct probe_budget b = {};

	if (!bpf_map_lookup_elem(sp->budgets_fd, &sp->pid, &b)) {
		hits = period_hits(sp, &b);
		bpf_ns = b.bpf_ns;
	}
	paid = b.paid;
	paid_ns = paid_cost(sp, paid, b.paid_ns);
	next_budget(sp, hits, bpf_ns, paid_ns);
	r.allowed = sp->allowed;
	if (!bpf_prog_test_run_opts(sp->refill_fd, &run) && r.found) {
		swapped = r.left < (__s64)allowed ? (uint64_t)((__s64)allowed - r.left) : 0;
		sp->credit -= (double)swapped - (double)hits;
		hits = swapped;
		bpf_ns = r.bpf_ns;
		/* the hits paid for since the read, at a hit's price */
		paid = r.paid;
		sp->credit -= ((double)paid_cost(sp, paid, r.paid_ns) - (double)paid_ns) /
			      (sp->price_ns ?: 1);
		paid_ns = paid_cost(sp, paid, r.paid_ns);
	} else {
		/* a hit between the read and this write goes uncounted */
		b.left = sp->allowed;
		b.bpf_ns = b.paid = b.paid_ns = 0;
		bpf_map_update_elem(sp->budgets_fd, &sp->pid, &b, BPF_ANY);
	}
	sp->watched += hits;
	sp->paid += paid;
	sp->spent_ns += hits * sp->policy.trap_ns + bpf_ns + paid_ns;
}

static int attach(struct budget_probe *sp)
{
	sp->link = uprobe_link__attach(sp->prog, sp->pid, sp->path, sp->offset, sp->cookie);
	return sp->link ? 0 : -errno;
}

int budget_probe__attach(struct bpf_program *prog, const struct budget_kernel *k, pid_t pid,
			 const char *path, uint64_t offset, uint64_t cookie,
			 const struct budget_policy *policy, struct budget_probe **out)
{
	struct probe_budget b = {};
	struct budget_probe *sp;
	int err;

	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->prog = prog;
	sp->budgets_fd = k->budgets_fd;
	sp->refill_fd = k->refill_fd;
	sp->kind = k->kind;
	sp->pid = pid;
	snprintf(sp->path, sizeof(sp->path), "%s", path);
	sp->offset = offset;
	sp->cookie = cookie;
	sp->policy = *policy;
	sp->period_ns = policy->max_per_sec == UINT_MAX ? BUDGET_PERIOD_NS : NSEC_PER_SEC;
	process_cpu_ns(pid, &sp->cpu_first_ns);
	sp->cpu_last_ns = sp->cpu_first_ns;
	/* before any of its CPU time was seen: a second's least earnings */
	sp->price_ns = policy->trap_ns + BUDGET_FIRST_BPF_NS;
	sp->credit = policy->min_per_sec;
	allow(sp);
	b.left = sp->allowed;
	if (bpf_map_update_elem(sp->budgets_fd, &sp->pid, &b, BPF_ANY)) {
		err = -errno;
		free(sp);
		return err;
	}
	err = attach(sp);
	if (err) {
		bpf_map_delete_elem(sp->budgets_fd, &sp->pid);
		free(sp);
		return err;
	}
	sp->period_start_ns = sp->since_ns = sp->on_since_ns = sp->born_ns = now_ns(CLOCK_MONOTONIC);
	*out = sp;
	return 0;
}

void budget_probe__spent(struct budget_probe *sp)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct probe_budget b;

	if (!sp->link)
		return;
	if (now > sp->period_start_ns && !bpf_map_lookup_elem(sp->budgets_fd, &sp->pid, &b))
		sp->rate = (double)period_hits(sp, &b) / (now - sp->period_start_ns);
	uprobe_link__destroy(sp->link);
	sp->link = NULL;
	sp->on_ns += now - sp->since_ns;
	sp->since_ns = now;
}

void budget_probe__tick(struct budget_probe *sp)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	int err;

	/* a note lost to a full ring leaves the probe on to the end of its period */
	if (sp->failed || now - sp->period_start_ns < sp->period_ns)
		return;
	refill(sp);
	sp->period_start_ns = now;
	/*
	 * overspent: it rests on until it has earned a hit, and past its
	 * first second until BUDGET_RESUME_NS after it last came on
	 */
	if (sp->link || sp->credit < 1 ||
	    (now - sp->on_since_ns < BUDGET_RESUME_NS && now - sp->born_ns >= BUDGET_RESUME_NS))
		return;
	err = attach(sp);
	if (err) {
		fprintf(stderr, "pid %u: warning: failed to attach the %s again: %s; %s\n", sp->pid,
			sp->policy.name, strerror(-err), sp->policy.loss);
		sp->failed = true;
		return;
	}
	sp->paused_ns += now - sp->since_ns;
	sp->missed += sp->rate * (now - sp->since_ns);
	sp->since_ns = sp->on_since_ns = now;
}

void budget_probe__stats(const struct budget_probe *sp, struct budget_probe_stats *st)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct probe_budget b;

	st->watched = sp->watched;
	st->paid = sp->paid;
	st->counted = sp->watched + sp->paid;
	st->spent_ns = sp->spent_ns;
	if (!bpf_map_lookup_elem(sp->budgets_fd, &sp->pid, &b)) {
		st->watched += period_hits(sp, &b);
		st->paid += b.paid;
	}
	st->on_ns = sp->on_ns + (sp->link ? now - sp->since_ns : 0);
	st->paused_ns = sp->paused_ns + (sp->link ? 0 : now - sp->since_ns);
	st->missed = sp->missed + (sp->link ? 0 : sp->rate * (now - sp->since_ns));
	st->price_ns = sp->price_ns;
	/* as of its last period's end: no clock read of its process for a look at the statistics */
	st->cpu_ns = sp->cpu_last_ns - sp->cpu_first_ns;
	st->allowed = sp->allowed * NSEC_PER_SEC / sp->period_ns;
	st->capped = sp->capped;
	st->failed = sp->failed;
}

void budget_probe__say_cost(const struct budget_probe *sp, pid_t pid, const char *comm)
{
	struct budget_probe_stats st;
	char paid[96] = "";

	budget_probe__stats(sp, &st);
	if (st.paid)
		snprintf(paid, sizeof(paid), " and paid for %llu %s", (unsigned long long)st.paid,
			 sp->policy.paid ?: "other hits");
	fprintf(stderr,
		"ctxprof-go: pid %d (%s): its %s saw %llu %s%s, at %.1f us a hit %.1f ms: "
		"%.2f%% of the %.2f s of CPU its process used meanwhile (its share: %g%%)\n",
		(int)pid, comm, sp->policy.name, (unsigned long long)st.watched, sp->policy.hits,
		paid,
		st.counted ? st.spent_ns / 1e3 / st.counted : st.price_ns / 1e3, st.spent_ns / 1e6,
		st.cpu_ns ? 100.0 * st.spent_ns / st.cpu_ns : 0.0, st.cpu_ns / 1e9,
		sp->policy.share * 100);
}

void budget_probe__free(struct budget_probe *sp)
{
	if (!sp)
		return;
	uprobe_link__destroy(sp->link);
	bpf_map_delete_elem(sp->budgets_fd, &sp->pid);
	free(sp);
}

uint64_t budget_account__trap_ns(struct budget_account *acc, const struct bpf_program *prog,
				 uint64_t cookie, bool verbose)
{
	if (!acc)
		return 0;
	if (!acc->trap_measured) {
		acc->trap_ns = budget_probe__trap_ns(prog, cookie);
		acc->trap_measured = true;
		if (verbose)
			fprintf(stderr, "ctxprof-go: a uprobe hit's trap costs %.1f us here%s\n",
				acc->trap_ns / 1e3, acc->trap_ns ? "" : " (it could not be measured)");
	}
	return acc->trap_ns;
}

void budget_account__add(struct budget_account *acc, const struct budget_probe *sp)
{
	struct budget_probe_stats st;

	if (!acc || !sp)
		return;
	budget_probe__stats(sp, &st);
	acc->probes++;
	acc->watched += st.watched;
	acc->missed += st.missed;
}
