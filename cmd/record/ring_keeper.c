// SPDX-License-Identifier: GPL-2.0
/* ring_keeper.c: the rings read on a clock by a thread of their own while the loop is busy elsewhere, their events kept for it. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>

#include "cmd/util/clock.h"
#include "ring_keeper.h"

/* A kept event: its header, then its bytes, padded to 8. */
struct kept {
	uint32_t kind, size;
};

struct ring_keeper {
	struct ring_buffer *rb;
	uint64_t period_ns;
	size_t max_bytes;
	bool realtime; /* asked to run SCHED_FIFO */
	pthread_t thread;
	bool started;
	/* held by whoever reads RB: the loop (ring_keeper__enter) or the thread */
	pthread_mutex_t mu;
	pthread_cond_t wake; /* the thread's sleep, cut short by ring_keeper__free */
	bool stop;
	int depth; /* the loop's nested enters */
	_Atomic uint64_t last_read_ns;
	uint8_t *buf; /* kept events, in order */
	size_t len, cap;
	struct ring_keeper_stats st;
};

static _Thread_local bool on_keeper;

bool ring_keeper__keeping(void)
{
	return on_keeper;
}

int ring_keeper__keep(struct ring_keeper *k, uint32_t kind, const void *data, size_t size)
{
	size_t need = sizeof(struct kept) + ((size + 7) & ~(size_t)7), cap;
	struct kept h = { .kind = kind, .size = (uint32_t)size };
	uint8_t *grown;

	if (k->len + need > k->max_bytes) {
		k->st.lost++;
		return -ENOMEM;
	}
	if (k->len + need > k->cap) {
		cap = k->cap ? k->cap : 1 << 16;
		while (cap < k->len + need)
			cap *= 2;
		grown = realloc(k->buf, cap);
		if (!grown) {
			k->st.lost++;
			return -ENOMEM;
		}
		k->buf = grown;
		k->cap = cap;
	}
	memcpy(k->buf + k->len, &h, sizeof(h));
	memcpy(k->buf + k->len + sizeof(h), data, size);
	k->len += need;
	if (k->len > k->st.max_bytes)
		k->st.max_bytes = k->len;
	k->st.kept++;
	return 0;
}

/*
 * Sleeps a period at a time; reads RB when nothing read it for a period
 * and the loop is not reading it now. A thread that slept has the
 * scheduler's favour when it wakes, which the loop, busy adding targets
 * on a loaded host, does not. That favour is the share of its cgroup:
 * where heavier cgroups take every CPU (a DaemonSet's agent asks for
 * 50m), the scheduler lets it wait seconds, and the rings overflow. So
 * with --realtime it runs SCHED_FIFO at the lowest priority where it may
 * (CAP_SYS_NICE, and on cgroup v1 with real-time group scheduling, its
 * cgroup's cpu.rt_runtime_us), as perf record --realtime does; its work
 * is a copy of what the rings hold. The lock then inherits its priority,
 * so that the loop, when it holds the lock to read, is not left waiting.
 */
static void *keeper_main(void *arg)
{
	struct sched_param sp = { .sched_priority = sched_get_priority_min(SCHED_FIFO) };
	struct ring_keeper *k = arg;
	struct timespec until;
	uint64_t now;
	int err;

	on_keeper = true;
	err = k->realtime ? pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) : 0;
	pthread_mutex_lock(&k->mu);
	k->st.realtime = k->realtime && !err;
	k->st.realtime_err = err;
	while (!k->stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += (long)(k->period_ns % NSEC_PER_SEC);
		until.tv_sec += (time_t)(k->period_ns / NSEC_PER_SEC) + until.tv_nsec / NSEC_PER_SEC;
		until.tv_nsec %= NSEC_PER_SEC;
		pthread_cond_timedwait(&k->wake, &k->mu, &until);
		/* the loop held the lock to read, or read a moment ago: nothing to do */
		now = now_ns(CLOCK_MONOTONIC);
		if (k->stop || now - atomic_load(&k->last_read_ns) < k->period_ns)
			continue;
		ring_buffer__consume(k->rb);
		k->st.reads++;
		atomic_store(&k->last_read_ns, now_ns(CLOCK_MONOTONIC));
	}
	pthread_mutex_unlock(&k->mu);
	return NULL;
}

struct ring_keeper *ring_keeper__new(struct ring_buffer *rb, uint64_t period_ns, size_t max_bytes,
				     bool realtime)
{
	struct ring_keeper *k = calloc(1, sizeof(*k));
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!k)
		return NULL;
	k->rb = rb;
	k->period_ns = period_ns;
	k->max_bytes = max_bytes;
	atomic_store(&k->last_read_ns, now_ns(CLOCK_MONOTONIC));
	k->realtime = realtime;
	pthread_mutexattr_init(&ma);
	if (realtime)
		pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&k->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->wake, &ca);
	pthread_condattr_destroy(&ca);
	/* signals are the loop's: they cut its wait short */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&k->thread, NULL, keeper_main, k);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		ring_keeper__free(k);
		errno = err;
		return NULL;
	}
	k->started = true;
	return k;
}

void ring_keeper__stop(struct ring_keeper *k)
{
	if (!k || !k->started)
		return;
	pthread_mutex_lock(&k->mu);
	k->stop = true;
	pthread_cond_signal(&k->wake);
	pthread_mutex_unlock(&k->mu);
	pthread_join(k->thread, NULL);
	k->started = false;
}

void ring_keeper__free(struct ring_keeper *k)
{
	if (!k)
		return;
	ring_keeper__stop(k);
	pthread_cond_destroy(&k->wake);
	pthread_mutex_destroy(&k->mu);
	free(k->buf);
	free(k);
}

int ring_keeper__enter(struct ring_keeper *k, ring_keeper_fn fn, void *ctx)
{
	uint8_t *buf;
	size_t len, at;
	int ret = 0, err;

	if (!k || k->depth++)
		return 0;
	pthread_mutex_lock(&k->mu);
	if (!k->len)
		return 0;
	/* taken out first: replaying may read the rings again, into a new one */
	buf = k->buf;
	len = k->len;
	k->buf = NULL;
	k->len = k->cap = 0;
	for (at = 0; at < len;) {
		struct kept h;

		memcpy(&h, buf + at, sizeof(h));
		err = fn(ctx, h.kind, buf + at + sizeof(h), h.size);
		if (err && !ret)
			ret = err;
		at += sizeof(h) + ((h.size + 7) & ~(size_t)7);
	}
	free(buf);
	return ret;
}

void ring_keeper__leave(struct ring_keeper *k)
{
	if (!k || --k->depth)
		return;
	atomic_store(&k->last_read_ns, now_ns(CLOCK_MONOTONIC));
	pthread_mutex_unlock(&k->mu);
}

void ring_keeper__stats(struct ring_keeper *k, struct ring_keeper_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!k)
		return;
	/* the loop's thread: inside a read it holds the lock already */
	if (k->depth) {
		*out = k->st;
		return;
	}
	pthread_mutex_lock(&k->mu);
	*out = k->st;
	pthread_mutex_unlock(&k->mu);
}
