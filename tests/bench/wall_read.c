// SPDX-License-Identifier: GPL-2.0
/* wall_read.c: make bench only: every g of a target read three ways, and the CPU each takes per goroutine. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "wall_iter.skel.h"

#define RANGE_GAP 1024 /* as cmd/record/wall.c merges neighbours */
#define BATCH_BYTES (128 * 1024)
#define IOV_BATCH 1024

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int by_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int mem_read(pid_t pid, void *dst, size_t len, uint64_t addr)
{
	struct iovec l = { dst, len }, r = { (void *)addr, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* cmd/record/wall.c's way: ranges of neighbours, a cache-sized batch a call */
static size_t read_ranges(pid_t pid, const uint64_t *gs, size_t n, uint32_t lo, uint32_t len,
			  uint8_t *buf)
{
	struct iovec local[IOV_BATCH], remote[IOV_BATCH];
	size_t i = 0, j, nio = 0, off = 0, got = 0;
	uint64_t start, end;
	ssize_t r;

	while (i < n) {
		start = gs[i] + lo;
		end = start + len;
		for (j = i + 1; j < n && gs[j] + lo <= end + RANGE_GAP &&
				gs[j] + lo + len - start <= BATCH_BYTES - off;
		     j++)
			end = gs[j] + lo + len;
		local[nio] = (struct iovec){ buf + off, end - start };
		remote[nio++] = (struct iovec){ (void *)start, end - start };
		off += end - start;
		i = j;
		if (nio < IOV_BATCH && i < n && off + len <= BATCH_BYTES)
			continue;
		r = process_vm_readv(pid, local, nio, remote, nio, 0);
		got += r > 0 ? r : 0;
		nio = 0;
		off = 0;
	}
	return got;
}

/* one iovec a g: what a reader that takes goroutines one at a time pays */
static size_t read_each(pid_t pid, const uint64_t *gs, size_t n, uint32_t lo, uint32_t len,
			uint8_t *buf)
{
	struct iovec local[IOV_BATCH], remote[IOV_BATCH];
	size_t i, k, got = 0;
	ssize_t r;

	for (i = 0; i < n; i += k) {
		for (k = 0; k < IOV_BATCH && i + k < n; k++) {
			local[k] = (struct iovec){ buf + k * len, len };
			remote[k] = (struct iovec){ (void *)(gs[i + k] + lo), len };
		}
		r = process_vm_readv(pid, local, k, remote, k, 0);
		got += r > 0 ? r : 0;
	}
	return got;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo = {};
	struct wall_iter_bpf *skel = NULL;
	struct bpf_link *link = NULL;
	uint64_t allgs, allglen, hdr[3], len, t0, ns[3] = {};
	uint32_t lo, win, rounds, r, i;
	uint64_t *gs = NULL;
	uint8_t *buf = NULL;
	char junk[64];
	pid_t pid;
	int fd, err = 1;

	if (argc != 7) {
		fprintf(stderr, "usage: wall-read PID ALLGS ALLGLEN WIN_LO WIN_LEN ROUNDS (addresses in hex)\n");
		return 2;
	}
	pid = atoi(argv[1]);
	allgs = strtoull(argv[2], NULL, 16);
	allglen = strtoull(argv[3], NULL, 16);
	lo = atoi(argv[4]);
	win = atoi(argv[5]);
	rounds = atoi(argv[6]);
	if (mem_read(pid, &len, 8, allglen) || mem_read(pid, hdr, sizeof(hdr), allgs) || !len ||
	    len > hdr[1] || len > (1 << 17) || win > 512) {
		fprintf(stderr, "wall-read: cannot read the goroutine list of pid %d\n", pid);
		return 1;
	}
	gs = calloc(len, 8);
	buf = malloc(BATCH_BYTES + IOV_BATCH * 512);
	if (!gs || !buf || mem_read(pid, gs, len * 8, hdr[0]))
		goto out;
	qsort(gs, len, 8, by_addr);

	skel = wall_iter_bpf__open();
	if (!skel) {
		fprintf(stderr, "failed to open the iterator: %s\n", strerror(errno));
		goto out;
	}
	skel->rodata->target_tgid = pid;
	skel->rodata->win_len = win;
	if ((err = wall_iter_bpf__load(skel))) {
		fprintf(stderr, "failed to load the iterator: %s\n", strerror(-err));
		err = 1;
		goto out;
	}
	for (i = 0; i < len; i++)
		bpf_map_update_elem(bpf_map__fd(skel->maps.gaddrs), &i, &gs[i], BPF_ANY);
	skel->bss->ngs = len;
	/* the process's tasks only, not every task on the host */
	linfo.task.pid = pid;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	link = bpf_program__attach_iter(skel->progs.read_gs, &opts);
	if (!link) {
		fprintf(stderr, "failed to attach the iterator: %s\n", strerror(errno));
		goto out;
	}
	/* taking turns, so that the three meet the same machine */
	for (r = 0; r < rounds; r++) {
		t0 = cpu_ns();
		read_ranges(pid, gs, len, lo, win, buf);
		ns[0] += cpu_ns() - t0;
		t0 = cpu_ns();
		read_each(pid, gs, len, lo, win, buf);
		ns[1] += cpu_ns() - t0;
		t0 = cpu_ns();
		fd = bpf_iter_create(bpf_link__fd(link));
		while (fd >= 0 && read(fd, junk, sizeof(junk)) > 0)
			;
		if (fd >= 0)
			close(fd);
		ns[2] += cpu_ns() - t0;
	}
	printf("%lu goroutines, %u bytes each, %u rounds: ranges %.0f ns, one iovec each %.0f ns, "
	       "task iterator %.0f ns per goroutine (%llu reads, %llu failed)\n",
	       (unsigned long)len, win, rounds, (double)ns[0] / rounds / len,
	       (double)ns[1] / rounds / len, (double)ns[2] / rounds / len,
	       (unsigned long long)skel->bss->reads, (unsigned long long)skel->bss->failed);
	err = 0;
out:
	bpf_link__destroy(link);
	wall_iter_bpf__destroy(skel);
	free(gs);
	free(buf);
	return err;
}
