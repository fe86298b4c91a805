/* SPDX-License-Identifier: GPL-2.0 */
/* version.h: the build's version, in one object, so that a new commit relinks rather than half-rebuilds. */
#ifndef __CTXPROF_VERSION_H
#define __CTXPROF_VERSION_H

/* git describe of the tree built ("dev" outside a checkout) */
extern const char ctxprof_version[];
/* "ctxprof-go VERSION": what the written files name as their maker */
extern const char ctxprof_generator[];

#endif /* __CTXPROF_VERSION_H */
