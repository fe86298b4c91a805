// SPDX-License-Identifier: GPL-2.0
/* sampler.c: the BPF side of a recording: its programs set up, loaded and attached, its rings, and stopped. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "cmd/symbols/objfile.h"
#include "cmd/util/cpus.h"
#include "cmd/util/user_va.h"
#include "offsets/go_binary.h"
#include "ctxprof.skel.h"
#include "container.h"
#include "core_btf.h"
#include "cpu_clock.h"
#include "custom.h"
#include "obi_map.h"
#include "part_strings.h"
#include "sampler.h"
#include "session_config.h"
#include "spawn_table.h"
#include "target.h"

struct sampler {
	const struct session_config *cfg;
	bool obi; /* OBI's map is shared: the obi trace source works */
	uint64_t period_ns;
	struct ctxprof_bpf *skel;
	struct sampler_bpf bpf; /* what the other modules take of SKEL */
	int ncpus; /* possible CPUs: per-CPU maps are this long */
	bool *online; /* ncpus of them */
	int *ring_fds;
	struct ring_buffer *rb;
	struct bpf_link **perf_links; /* per CPU, NULL where none */
	int nevents;
	bool per_task; /* --pid: the cpu-clock events follow the targets' threads */
	struct bpf_link *uprobe_links[MAX_UPROBES];
	struct bpf_link *exec_link;
	struct pins *pins;
	char *cgroup_dir; /* --cgroup PATH below its cgroup2 mount, until taken */
};

/*
 * The obi source: OBI's traces_ctx_v1, shared by fd. Where it cannot be
 * (no bpffs, a map of another kind there), the source is off: an error
 * when --trace-sources names it, said with -v when it came with the
 * default. Without it, the sampler's copy is a map of one entry.
 */
static int share_obi_map(struct sampler *s)
{
	const struct session_config *c = s->cfg;
	char why[PATH_MAX + 160];
	bool created;
	int fd, err;

	if (c->sampling && (c->trace_sources & (1U << TRACE_SOURCE_OBI))) {
		fd = obi_map__open(c->bpffs, &created, why, sizeof(why));
		if (fd < 0 && c->obi_asked) {
			fprintf(stderr, "ctxprof-go: the obi trace source: %s\n", why);
			return fd;
		}
		if (fd >= 0) {
			err = bpf_map__reuse_fd(s->skel->maps.traces_ctx_v1, fd);
			close(fd);
			if (err) {
				fprintf(stderr, "failed to share OBI's map: %s\n", strerror(-err));
				return err;
			}
			s->skel->rodata->want_obi = true;
			s->obi = true;
			if (c->verbose)
				fprintf(stderr, "ctxprof-go: OBI's traces from %s/otel/%s%s\n", c->bpffs,
					OBI_MAP_NAME,
					created ? ": absent (OBI has not run), made and pinned there for OBI" :
						  "");
			return 0;
		}
		if (c->verbose)
			fprintf(stderr, "ctxprof-go: no obi trace source: %s\n", why);
	}
	bpf_map__set_max_entries(s->skel->maps.traces_ctx_v1, 1);
	return 0;
}

/* Sets up what the options ask for, before the programs are loaded. */
static int configure(struct sampler *s)
{
	const struct session_config *c = s->cfg;
	__u32 max_targets = c->max_targets > 1024 ? c->max_targets : 1024;
	char why[256];
	uint64_t cgroup_id;
	uint32_t level;
	int i, err;

	/*
	 * --pid: the cpu-clock event follows each target's threads, not every
	 * CPU, so that no other process's tick runs the sampler
	 */
	s->per_task = c->sampling && !c->all && !c->cgroup;
	s->skel->rodata->per_task = s->per_task;
	if (c->cgroup) {
		err = container__resolve_cgroup(c->cgroup, &cgroup_id, &level, &s->cgroup_dir, why,
						 sizeof(why));
		if (err) {
			fprintf(stderr, "--cgroup %s: %s\n", c->cgroup, why);
			return err;
		}
		s->skel->rodata->cgroup_id = cgroup_id;
		s->skel->rodata->cgroup_level = level;
	}
	for (i = 0; i < c->ntrace_keys; i++) {
		s->skel->rodata->trace_keys[i].len = strlen(c->trace_keys[i]);
		memcpy(s->skel->rodata->trace_keys[i].name, c->trace_keys[i],
		       strlen(c->trace_keys[i]));
	}
	s->skel->rodata->ntrace_keys = c->ntrace_keys;
	s->skel->rodata->traced_only = c->traced_only;
	s->skel->rodata->leaf_repair = c->leaf_repair;
#if defined(__aarch64__)
	s->skel->rodata->user_va_mask = user_va__mask();
	s->skel->rodata->sigreturn_off = objfile__vdso_symbol("__kernel_rt_sigreturn");
#endif
	s->skel->rodata->want_spans = c->sampling && c->wall;
#if defined(__x86_64__)
	s->skel->rodata->request_ends = c->wall;
#endif
	s->skel->rodata->want_contexts =
		c->trace_sources & (1U << TRACE_SOURCE_TRACEPARENT | 1U << TRACE_SOURCE_OTEL_SDK);
	err = share_obi_map(s);
	if (err)
		return err;
	bpf_map__set_max_entries(s->skel->maps.events, s->ncpus);
	if (!s->skel->rodata->want_spans)
		bpf_map__set_max_entries(s->skel->maps.spans, getpagesize());
	/* one entry per target in each */
	bpf_map__set_max_entries(s->skel->maps.targets, max_targets);
	bpf_map__set_max_entries(s->skel->maps.frame_sizes, max_targets);
	bpf_map__set_max_entries(s->skel->maps.spawn_budgets, max_targets);
	bpf_map__set_max_entries(s->skel->maps.alloc_budgets, max_targets);
	/* the goroutine-start probe's slots take 4 MiB of the kernel's memory: only for it */
	if (!s->skel->rodata->want_contexts || !session_config__starts_probed(c))
		bpf_map__set_max_entries(s->skel->maps.spawn_slots, 1);
	/* only what this run uses is loaded: the verifier's time is start-up time */
	bpf_program__set_autoload(s->skel->progs.on_sample, c->sampling);
	bpf_program__set_autoload(s->skel->progs.on_exec, c->sampling);
	bpf_program__set_autoload(s->skel->progs.http_request,
				  c->sampling && (c->trace_sources & (1U << TRACE_SOURCE_TRACEPARENT |
								     1U << TRACE_SOURCE_OTEL_SDK)));
	bpf_program__set_autoload(s->skel->progs.label_set,
				  c->sampling && (c->trace_sources & (1U << TRACE_SOURCE_LABEL)));
	bpf_program__set_autoload(s->skel->progs.label_do, c->sampling && !c->wall &&
				  (c->trace_sources & (1U << TRACE_SOURCE_LABEL)));
	bpf_program__set_autoload(s->skel->progs.alloc_sample, c->sampling && c->alloc);
	bpf_program__set_autoload(s->skel->progs.uprobe_event, c->nuprobes > 0);
	bpf_program__set_autoload(s->skel->progs.custom__generic, c->pin_dir != NULL);
	return 0;
}

/* One ring buffer per CPU, in the events array of maps, all read by one ring_buffer. */
static int create_rings(struct sampler *s, ring_buffer_sample_fn fn, void *ctx)
{
	int i, err;

	s->ring_fds = calloc(s->ncpus, sizeof(*s->ring_fds));
	if (!s->ring_fds)
		return -ENOMEM;
	for (i = 0; i < s->ncpus; i++)
		s->ring_fds[i] = -1;
	for (i = 0; i < s->ncpus; i++) {
		s->ring_fds[i] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ctxprof_ring", 0, 0,
						s->cfg->ring_kib * 1024, NULL);
		if (s->ring_fds[i] < 0) {
			err = -errno;
			fprintf(stderr, "failed to create ring buffer for CPU %d: %s\n", i,
				strerror(-err));
			return err;
		}
		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.events), &i, &s->ring_fds[i], 0)) {
			err = -errno;
			fprintf(stderr, "failed to install ring buffer for CPU %d: %s\n", i,
				strerror(-err));
			return err;
		}
		err = s->rb ? ring_buffer__add(s->rb, s->ring_fds[i], fn, ctx) : 0;
		if (!s->rb)
			s->rb = ring_buffer__new(s->ring_fds[i], fn, ctx, NULL);
		if (!s->rb || err) {
			err = err ?: -errno;
			fprintf(stderr, "failed to read ring buffer of CPU %d: %s\n", i,
				strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The sampler's cpu-clock event on every online CPU, for CGROUP_FD's tasks when >= 0. */
static int open_cpu_ticks(struct sampler *s, int cgroup_fd)
{
	int i, fd, err = 0;

	for (i = 0; i < s->ncpus && !err; i++) {
		if (!s->online[i])
			continue;
		fd = cpu_clock__attach(s->skel->progs.on_sample, cgroup_fd, i, s->period_ns,
				       cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP : 0, &s->perf_links[i]);
		if (fd == -ENODEV)
			continue;
		if (fd < 0) {
			err = fd;
			fprintf(stderr, "failed to sample on CPU %d: %s\n", i, strerror(-err));
			break;
		}
		s->nevents++;
	}
	return err;
}

/*
 * The exec tracepoint, then the cpu-clock event on every online CPU (a CPU
 * that gives ENODEV is skipped), for the cgroup's tasks only under
 * --cgroup; under --pid, on each target's threads instead, as it is added
 * (target.c). Either way, other processes' ticks do not run the sampler.
 */
int sampler__attach(struct sampler *s)
{
	struct rlimit nofile;
	int i, err = 0, cgroup_fd = -1;

	/* before any target is added: an exec from then on is marked in the kernel */
	s->exec_link = bpf_program__attach(s->skel->progs.on_exec);
	if (!s->exec_link) {
		err = -errno;
		fprintf(stderr, "failed to attach to the sched_process_exec tracepoint: %s\n",
			strerror(-err));
		return err;
	}
	s->perf_links = calloc(s->ncpus, sizeof(*s->perf_links));
	if (!s->perf_links)
		return -ENOMEM;
	/*
	 * --pid: each target's threads get theirs as it is added, an open
	 * file each: as many as the hard limit allows
	 */
	if (s->per_task && !getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	if (s->cfg->cgroup && (cgroup_fd = open(s->cfg->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		err = -errno;
		fprintf(stderr, "failed to open --cgroup %s: %s\n", s->cfg->cgroup, strerror(-err));
		return err;
	}
	if (s->per_task) {
		/* what the "on N CPUs" line counts */
		for (i = 0; i < s->ncpus; i++)
			s->nevents += s->online[i];
		return 0;
	}
	err = open_cpu_ticks(s, cgroup_fd);
	if (cgroup_fd >= 0)
		close(cgroup_fd);
	return err;
}


/* The handles the other modules take, from the loaded skeleton. */
static void take_handles(struct sampler *s)
{
	struct ctxprof_bpf *k = s->skel;

	s->bpf = (struct sampler_bpf){
		.targets_fd = bpf_map__fd(k->maps.targets),
		.frame_sizes_fd = bpf_map__fd(k->maps.frame_sizes),
		.stats_fd = bpf_map__fd(k->maps.stats),
		.budget_notes_fd = bpf_map__fd(k->maps.budget_notes),
		.target_bits = k->data_target_bits->target_bits,
		.target_execs = &k->data_target_execs->target_execs,
		.ticks = { .on_sample = k->progs.on_sample },
		.requests = {
			.http_request = k->progs.http_request,
			.trace_ctxs_fd = bpf_map__fd(k->maps.trace_ctxs),
			.spawn_ctxs_fd = bpf_map__fd(k->maps.spawn_ctxs),
			.grpc_streams_fd = bpf_map__fd(k->maps.grpc_streams),
			.spans_fd = bpf_map__fd(k->maps.spans),
		},
		.spawn = {
			.go_start = k->progs.http_request,
			.budget = { bpf_map__fd(k->maps.spawn_budgets), bpf_program__fd(k->progs.budget_refill),
				    BUDGET_SPAWN },
		},
		.labels = {
			.label_set = k->progs.label_set,
			.label_do = k->progs.label_do,
			.owners_fd = bpf_map__fd(k->maps.label_owners),
		},
		.alloc = {
			.alloc_sample = k->progs.alloc_sample,
			.budget = { bpf_map__fd(k->maps.alloc_budgets), bpf_program__fd(k->progs.budget_refill),
				    BUDGET_ALLOC },
		},
		.custom = {
			.uprobe_event = k->progs.uprobe_event,
			.custom_generic = k->progs.custom__generic,
			.custom_context_map = k->maps.custom_context_map,
			.probe_layouts_fd = bpf_map__fd(k->maps.probe_layouts),
		},
	};
}
/* The skeleton, set up for what the options ask, through the verifier. */
static int load_bpf(struct sampler *s)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct core_btf *cb;
	const void *elf;
	size_t size;
	int err;

	/* without the cut (an older kernel's BTF this cannot read, say), libbpf reads all of it */
	elf = ctxprof_bpf__elf_bytes(&size);
	cb = core_btf__new(elf, size);
	if (cb) {
		opts.btf_custom_path = core_btf__path(cb);
		if (s->cfg->verbose)
			fprintf(stderr, "CO-RE: %u of the kernel's %u BTF types\n",
				core_btf__types(cb), core_btf__kernel_types(cb));
	} else if (s->cfg->verbose) {
		fprintf(stderr, "CO-RE: all of the kernel's BTF (%s)\n", strerror(errno));
	}
	s->skel = ctxprof_bpf__open_opts(&opts);
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "failed to open BPF skeleton: %s\n", strerror(-err));
		goto out;
	}
	err = configure(s);
	if (err)
		goto out;
	err = ctxprof_bpf__load(s->skel);
	if (err) {
		fprintf(stderr, "failed to load BPF programs: %s\n", strerror(-err));
		goto out;
	}
	take_handles(s);
	/* a table only where configure() sized one for the goroutine-start probe */
	if (bpf_map__max_entries(s->skel->maps.spawn_slots) == SPAWN_SLOTS) {
		s->bpf.spawn.table = spawn_table__map(bpf_map__fd(s->skel->maps.spawn_slots));
		if (!s->bpf.spawn.table) {
			err = -errno;
			fprintf(stderr, "failed to map the goroutine-start table: %s\n",
				strerror(-err));
		}
	}
out:
	core_btf__free(cb);
	return err;
}

/* --uprobe BINARY:SYMBOL: BINARY's string pages in the processes that run it. */
static void map_uprobe_strings(struct sampler *s, const char *spec)
{
	const char *colon = strrchr(spec, ':');
	char path[PATH_MAX];

	if (!colon || (size_t)(colon - spec) >= sizeof(path))
		return;
	memcpy(path, spec, colon - spec);
	path[colon - spec] = '\0';
	strings_part__map_file(path);
}

/* --pin DIR and --uprobe BINARY:SYMBOL: their messages are their own. */
int sampler__attach_custom(struct sampler *s)
{
	const struct session_config *cfg = s->cfg;
	int i;

	if (cfg->pin_dir) {
		s->pins = pins__create(&s->bpf.custom, cfg->pin_dir);
		if (!s->pins)
			return -EINVAL;
		fprintf(stderr, "ctxprof-go: pinned %s/%s and %s/%s for tail calls\n", cfg->pin_dir,
			PIN_PROG, cfg->pin_dir, PIN_MAP);
	}
	for (i = 0; i < cfg->nuprobes; i++) {
		s->uprobe_links[i] = uprobe__attach(&s->bpf.custom, cfg->uprobes[i], cfg->uprobe_abi, i);
		if (!s->uprobe_links[i])
			return -EINVAL;
		map_uprobe_strings(s, cfg->uprobes[i]);
	}
	return 0;
}

/* Stops sampling and probing: nothing new reaches the rings after this. */
void sampler__stop(struct sampler *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; s->perf_links && i < s->ncpus; i++) {
		bpf_link__destroy(s->perf_links[i]);
		s->perf_links[i] = NULL;
	}
	for (i = 0; i < MAX_UPROBES; i++) {
		bpf_link__destroy(s->uprobe_links[i]);
		s->uprobe_links[i] = NULL;
	}
	pins__remove(s->pins);
	s->pins = NULL;
}


struct sampler *sampler__new(const struct session_config *cfg, uint64_t period_ns)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int err;

	if (!s) {
		fprintf(stderr, "out of memory\n");
		return NULL;
	}
	s->cfg = cfg;
	s->period_ns = period_ns;
	/* a CPU list that cannot be read counts every possible CPU as online */
	err = cpus__online(&s->online, &s->ncpus);
	if (!s->online) {
		fprintf(stderr, "failed to list CPUs: %s\n", strerror(-err));
		goto fail;
	}
	if (load_bpf(s))
		goto fail;
	return s;
fail:
	sampler__free(s);
	return NULL;
}

void sampler__free(struct sampler *s)
{
	int i;

	if (!s)
		return;
	sampler__stop(s);
	bpf_link__destroy(s->exec_link);
	free(s->perf_links);
	ring_buffer__free(s->rb);
	for (i = 0; s->ring_fds && i < s->ncpus; i++) {
		if (s->ring_fds[i] >= 0)
			close(s->ring_fds[i]);
	}
	free(s->ring_fds);
	free(s->cgroup_dir);
	free(s->online);
	spawn_table__unmap(s->bpf.spawn.table);
	ctxprof_bpf__destroy(s->skel);
	free(s);
}

const struct sampler_bpf *sampler__bpf(const struct sampler *s)
{
	return &s->bpf;
}

bool sampler__per_task(const struct sampler *s)
{
	return s->per_task;
}

bool sampler__obi(const struct sampler *s)
{
	return s->obi;
}

bool sampler__request_ends(const struct sampler *s)
{
	return s->skel->rodata->request_ends;
}

int sampler__nevents(const struct sampler *s)
{
	return s->nevents;
}

char *sampler__take_cgroup_dir(struct sampler *s)
{
	char *dir = s->cgroup_dir;

	s->cgroup_dir = NULL;
	return dir;
}

struct ring_buffer *sampler__rings(struct sampler *s, ring_buffer_sample_fn fn, void *ctx)
{
	return create_rings(s, fn, ctx) ? NULL : s->rb;
}

int sampler__every_cpu(struct sampler *s)
{
	s->per_task = false;
	s->nevents = 0;
	return open_cpu_ticks(s, -1);
}
