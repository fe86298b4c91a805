/* SPDX-License-Identifier: GPL-2.0 */
/* custom.h: custom traces: the pinned tail-call entry point, and uprobes that ctxprof-go attaches itself. */
#ifndef __CUSTOM_H
#define __CUSTOM_H

#include <stdbool.h>
#include <stddef.h>

struct custom_bpf;
struct bpf_link;

/* Pin names under --pin DIR: a contract with other people's loaders (README, custom traces). */
#define PIN_PROG "custom__generic"
#define PIN_MAP "custom_context_map"

/* Which register holds the context of a --uprobe: the first integer argument. */
enum uprobe_abi {
	UPROBE_ABI_AUTO, /* Go if the symbol is a Go function of the binary, else C */
	UPROBE_ABI_GO, /* RAX, Go's register ABI */
	UPROBE_ABI_C, /* RDI, the System V ABI */
};

struct pins;

/*
 * Pins custom__generic and custom_context_map of SKEL under DIR, root-only.
 * Mounts bpffs on /sys/fs/bpf when DIR lies under it and nothing is mounted
 * there, and creates DIR when missing. Refuses a DIR that is not on bpffs,
 * and pins that a live ctxprof-go holds; replaces stale ones. Returns NULL
 * with a message on stderr.
 */
struct pins *pins__create(const struct custom_bpf *bpf, const char *dir);
/* Removes the pins, if they are still the ones this run made. Accepts NULL. */
void pins__remove(struct pins *p);

/*
 * Attaches the uprobe for SPEC, "BINARY:SYMBOL", to every process that runs
 * BINARY, as probe INDEX (below MAX_UPROBES). For a Go function, the
 * binary's layout goes to probe_layouts[INDEX] and the attach cookie names
 * it, so that labels are read in any process that hits the probe. Returns
 * NULL with a message on stderr.
 */
struct bpf_link *uprobe__attach(const struct custom_bpf *bpf, const char *spec, enum uprobe_abi abi,
				int index);

#endif /* __CUSTOM_H */
