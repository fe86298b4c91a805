/* SPDX-License-Identifier: GPL-2.0 */
/* part_strings.h: Go's string constants mapped into a target's page tables, where the sampler can read them. */
#ifndef __PART_STRINGS_H
#define __PART_STRINGS_H

/*
 * --uprobe on a Go function of PATH: the string constants of every process
 * that runs it now are mapped in, as a target's are, so that the probe can
 * read their label keys (Go copies string headers, never their bytes).
 */
void strings_part__map_file(const char *path);

#endif /* __PART_STRINGS_H */
