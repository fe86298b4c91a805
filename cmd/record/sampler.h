/* SPDX-License-Identifier: GPL-2.0 */
/* sampler.h: the BPF side of a recording: its programs set up, loaded and attached, its rings, and stopped. */
#ifndef __SAMPLER_H
#define __SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <bpf/libbpf.h>

#include "budget_probe.h"

struct sampler;
struct session_config;
struct spawn_table;

/*
 * What of the sampler's BPF object the other modules use, by name: its
 * programs, its maps' descriptors and the globals user space reads. Only
 * sampler.c knows the skeleton; the others take these.
 */
/*
 * Each part's own programs and maps (part.h), as the sampler loaded them:
 * a part takes its handle and no other (tests/layering.sh).
 */
struct ticks_bpf {
	struct bpf_program *on_sample; /* a cpu-clock tick: the sample */
};
struct requests_bpf {
	struct bpf_program *http_request; /* the trace sources' uprobes */
	int trace_ctxs_fd, spawn_ctxs_fd, grpc_streams_fd;
	int spans_fd; /* --wall: requests' starts and ends, a ring */
};
struct spawn_bpf {
	struct bpf_program *go_start; /* the goroutine-start uprobe (the request probes' program) */
	struct budget_kernel budget;
	struct spawn_table *table; /* the contexts goroutines took as they started */
};
struct labels_bpf {
	struct bpf_program *label_set, *label_do; /* where labels are set */
	int owners_fd;
};
struct alloc_bpf {
	struct bpf_program *alloc_sample; /* --alloc: where the runtime samples an allocation */
	struct budget_kernel budget;
};
struct custom_bpf {
	struct bpf_program *uprobe_event, *custom_generic; /* --uprobe, --pin */
	struct bpf_map *custom_context_map; /* --pin */
	int probe_layouts_fd;
};

/* What the other modules take of the skeleton. */
struct sampler_bpf {
	/* every target's, kept by the target set */
	int targets_fd, frame_sizes_fd, stats_fd;
	int budget_notes_fd; /* the budgeted probes' (spawn, alloc): which one spent its budget, a ring */
	__u64 *target_bits; /* TARGET_BITS of them: a marked tgid may be a target */
	__u64 *target_execs; /* execs of targets' own files the kernel saw */
	struct ticks_bpf ticks;
	struct requests_bpf requests;
	struct spawn_bpf spawn;
	struct labels_bpf labels;
	struct alloc_bpf alloc;
	struct custom_bpf custom;
};

/*
 * The skeleton set up for what CFG asks (only that: the verifier's time
 * is start-up time) and loaded; CFG must outlive it. The obi trace
 * source works only where OBI's map can be shared (sampler__obi). NULL
 * with a message on stderr.
 */
struct sampler *sampler__new(const struct session_config *cfg, uint64_t period_ns);
/* Stops what is attached and frees it all. Accepts NULL. */
void sampler__free(struct sampler *s);

/* Its programs, maps and globals, once loaded. */
const struct sampler_bpf *sampler__bpf(const struct sampler *s);
/* One ring per CPU, each event to FN; NULL with a message. */
struct ring_buffer *sampler__rings(struct sampler *s, ring_buffer_sample_fn fn, void *ctx);
/* --pin DIR and --uprobe BINARY:SYMBOL: their messages are their own. */
int sampler__attach_custom(struct sampler *s);
/*
 * The exec tracepoint, then the cpu-clock event on every online CPU (a CPU
 * that gives ENODEV is skipped), for the cgroup's tasks only under
 * --cgroup; under --pid, on each target's threads instead, as it is added.
 * -errno with a message.
 */
int sampler__attach(struct sampler *s);
/* --pid: the per-thread events gave way: the cpu-clock event on every CPU from now on. */
int sampler__every_cpu(struct sampler *s);
/* The cpu-clock events, uprobes and pins gone: nothing new reaches the rings but exec marks. */
void sampler__stop(struct sampler *s);

/* OBI's map is shared: the obi trace source works (it was asked for, and the map is there or made). */
bool sampler__obi(const struct sampler *s);
/* --pid: the cpu-clock events follow the targets' threads. */
bool sampler__per_task(const struct sampler *s);
/*
 * An HTTP/1.1 request's end is probed, not told by its handler's frame:
 * --wall's spans need ends, and arm64 keeps no return address at SP.
 */
bool sampler__request_ends(const struct sampler *s);
/* The CPUs sampled on: what "on N CPUs" counts. */
int sampler__nevents(const struct sampler *s);
/* --cgroup's path below its cgroup2 mount, for the caller to free; NULL without. */
char *sampler__take_cgroup_dir(struct sampler *s);

#endif /* __SAMPLER_H */
