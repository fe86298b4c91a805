/* SPDX-License-Identifier: GPL-2.0 */
/* owners.h: the goroutine that set each label set holding a trace ID, as the kernel's label_owners keeps them, judged from user space. */
#ifndef __OWNERS_H
#define __OWNERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/ctxprof.h"
#include "offsets/go_binary.h"
#include "trace_ids.h"

struct vec;

/*
 * A copy of label_owners, and what was read of the setters' g structs
 * since: --wall judges the goroutines of a snapshot with one copy, and the
 * copies stale entries are swept from.
 */
struct owners;

struct owners *owners__new(void);
void owners__free(struct owners *o); /* accepts NULL */

/* Copies the kernel's map FD afresh, in batches. 0, or -errno when it could not be read. */
int owners__read(struct owners *o, int fd);
/*
 * Forgets the last copy: from now on FD's sets are looked up as judged,
 * each once, and past a few hundred copied whole. 0 or -ENOMEM.
 */
int owners__follow(struct owners *o, int fd);
/* Entries in the last copy. */
size_t owners__size(const struct owners *o);

/*
 * LABELS, which goroutine GOID of PID holds, by the last copy, as the
 * sampler's labels_judge (bpf/lifetime.bpf.h) says: SAMPLE_F_LABELS_JUDGED
 * and SAMPLE_F_LABELS_ENDED when their request ended (no owner known, or
 * its setter left the request, or the set it came from did), else
 * SAMPLE_F_LABELS_OWN when GOID set them itself, or neither. L gives
 * where a g keeps its goid and labels.
 */
uint32_t owners__judge(struct owners *o, pid_t pid, const struct go_layout *l, uint64_t labels,
		       uint64_t goid);

/*
 * Deletes from FD the entries of PID, in the last copy, whose setter no
 * longer holds them (it exited, or left without the probe seeing it:
 * pprof.Do's restore where label_do alone is attached, a nested set, a
 * set of another process that exited). Returns how many.
 */
size_t owners__sweep(struct owners *o, int fd, pid_t pid, const struct go_layout *l);

/*
 * The setters of the label sets that PID's goroutines held before the
 * probe was attached, found by owners__scan: each one in pprof.Do with the
 * set it made (its innermost Do's). NLABELS sets, SETTERS[i] for LABELS[i].
 */
struct owner_found {
	uint64_t labels;
	struct label_owner rec;
};

/*
 * The label sets with a trace ID (by KEYS) that PID's goroutines hold,
 * and of each the goroutine that made it inside pprof.Do and still runs
 * in it (a frame of its stack returns into runtime/pprof.Do): into FOUND,
 * struct owner_found each. A set that goroutines on a CPU hold, whose
 * stacks cannot be read, is found with goid 0: not known yet. A set held
 * only by goroutines outside pprof.Do (they inherited it, or it was set
 * with SetGoroutineLabels) is not found: its request counts as ended.
 * GB runs in PID at load bias BIAS. 0, -ENOENT when GB has no pprof.Do,
 * -errno when its goroutines could not be read.
 */
int owners__scan(pid_t pid, const struct go_binary *gb, uint64_t bias,
		 const struct trace_keys *keys, struct vec *found);

/* Adds what owners__scan found to FD, where the probe has not put another since. 0 or -errno. */
int owners__add(int fd, pid_t pid, const struct owner_found *found, size_t n);

/* PID's sets in the last copy whose setter is not known yet (goid 0). */
size_t owners__unknown(const struct owners *o, pid_t pid);

/*
 * PID's sets whose setter was not known, by what a later owners__scan
 * FOUND: given their setter in FD; deleted (their request counts as
 * ended) when neither a goroutine in pprof.Do nor one on a CPU holds them
 * any more; else still not known (live). 0.
 */
int owners__settle(struct owners *o, int fd, pid_t pid, const struct owner_found *found, size_t n);

#endif /* __OWNERS_H */
