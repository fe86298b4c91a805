/* SPDX-License-Identifier: GPL-2.0 */
/* check.h: `ctxprof-go check`, the CI gate: can ctxprof-go profile these binaries? */
#ifndef __CHECK_H
#define __CHECK_H

/* Exit status: 0 all supported, 1 any unsupported, 2 usage or I/O error. */
int check__main(int argc, char **argv);

#endif /* __CHECK_H */
