/* SPDX-License-Identifier: GPL-2.0 */
/* target.h: one process a recording samples: its binary and layout, installed for the sampler, and its parts. */
#ifndef __TARGET_H
#define __TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/ctxprof.h"
#include "offsets/go_binary.h"
#include "trace_ids.h"

struct aggregate;
struct sampler_bpf;
struct go_binary;
struct hashmap;
struct otlp_process;
struct processes;
struct budget_account;
struct target;
struct wall_reader;

/* Probes whose attaches fail are counted by kind: each trace source's, then these. */
enum {
	ATTACH_SPAWN = TRACE_SOURCE_COUNT, /* Go < 1.21: the goroutine-start probe */
	ATTACH_ALLOC, /* --alloc's */
	ATTACH_KINDS,
};

/* What a target needs of its recording, which outlives it. */
struct target_env {
	const struct session_config *cfg; /* what the user asked; each part reads its own */
	const struct sampler_bpf *bpf; /* the sampler's programs and maps */
	struct aggregate *agg;
	struct processes *procs;
	/* arm64, Go before 1.21: each binary's frame sizes, shared by its processes; free()d values */
	struct hashmap *frame_tables;
	uint64_t period_ns;
	struct trace_keys keys; /* the labels that hold trace and span IDs */
	/* an HTTP/1.1 request's end is probed, not told by its handler's frame */
	bool request_ends;
	bool per_task; /* --pid: the cpu-clock events follow each target's threads */
	uint64_t *attach_failures; /* ATTACH_KINDS of them: attaches that failed */
	struct budget_account *budget_accounts; /* BUDGET_KINDS of them: the budgeted probes' */
};

/*
 * PID checked as `check` does: its executable read (or shared with other
 * targets of the file), its layout into INFO, --wall's reader made. Its
 * name, container and mappings are still to be read (target__describe).
 * 0 with *OUT, or -errno with a message on stderr unless QUIET.
 */
int target__open(const struct target_env *env, pid_t pid, bool quiet, struct target_info *info,
		 struct target **out);
/* Probes detached, per-thread events stopped, the binary put. Accepts NULL. */
void target__free(struct target *t);

pid_t target__pid(const struct target *t);
const char *target__comm(const struct target *t);
const struct go_binary *target__binary(const struct target *t);
/* --wall's reader of its goroutines; NULL when its binary cannot give them. */
struct wall_reader *target__wall(const struct target *t);

/* Its name, container, mappings and service, read while the process lives; -ENOMEM. */
int target__describe(struct target *t);
/* Not described yet. */
bool target__pending(const struct target *t);
/* What its parts read of it in /proc read again (its process context, its service); -ENOMEM. */
int target__refresh_context(struct target *t);
/* --otlp: what it is, for its resource. */
void target__describe_process(struct target *t, struct otlp_process *out);

/* Its binary's frame-size table (frame_table.h) for the kernel, or -1 when it needs none. */
int target__frame_fd(const struct target *t);
/* Does /proc/PID/exe still name the file target__open read? */
bool target__same_exe(const struct target *t);

/*
 * Its parts (part.h) attached, in order, once it is in the targets map,
 * each said unless QUIET where it fails; with -v, what each does in it.
 * -errno when it cannot be a target as asked (its threads' events, or
 * --wall's reader, under -p): said, and it is to be dropped. The caller
 * marks its label sets followed in the targets map when
 * target__follows_labels says so.
 */
int target__attach_parts(struct target *t, bool quiet);
/* Its parts detached, the last first, and what they left in the kernel forgotten: its pid may come back. */
void target__detach_parts(struct target *t);
/* Once a second: each part's tick (budgets refilled, probes attached again). */
void target__tick(struct target *t);
/* Its parts' view of it, for a part's own calls (spawn_part__spent, labels_part__sweep). */
struct part_ctx *target__parts(struct target *t);
/* Are its request probes attached? Are its label sets followed? */
bool target__probed(const struct target *t);
bool target__follows_labels(const struct target *t);
/* Its layout, as the targets map has it. */
const struct go_layout *target__go_layout(const struct target *t);
/*
 * Requests whose headers were read and held no traceparent, of every
 * target: none at all (BARE), or none among the fields read, with more
 * left (CUT)
 */
struct bare_requests {
	uint64_t bare, cut;
};

/*
 * Why its samples lack a trace ID, where a part knows the cause: into BUF,
 * or false. BARE: requests read with no traceparent, of every target.
 */
bool target__untraced_cause(const struct target *t, const struct bare_requests *bare, char *buf,
			    size_t len);
/* Its parts' lines at exit and on SIGUSR1; VERBOSE: -v's too. */
void target__say(const struct target *t, bool verbose);

/* Its per-thread events stopped: no sample of it is taken after this. */
void target__stop_ticks(struct target *t);
/*
 * Its threads used CPU the per-thread events should have counted, and they
 * counted none: the kernel does not run them. *CPU_NS: the CPU they missed.
 */
bool target__ticks_stalled(struct target *t, uint64_t *cpu_ns);
/* Warns when it used CPU and had no sample taken. */
void target__warn_unsampled(struct target *t);

/* Has the process exited? While it has not, its CPU time is noted. */
bool target__exited(struct target *t);
/* The pidfd that is readable once the process has exited. */
int target__pidfd(const struct target *t);
/* Execs of its own file seen so far (target_info.reexecs). */
__u32 target__reexecs(const struct target *t);
/*
 * It exec'd its own file again (INFO, from the kernel): a new image, its
 * string pages mapped, its layout into INFO at the new load address, each
 * part started again at it (--wall's reader reads at the new address).
 * -errno when a part lost what it counted, or could not start again.
 */
int target__reexec(struct target *t, struct target_info *info);
/* Before it leaves the targets map: what its parts counted settled (--wall's looks); -errno. */
int target__retire(struct target *t);

#endif /* __TARGET_H */
