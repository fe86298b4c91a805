/* SPDX-License-Identifier: GPL-2.0 */
/* convert.h: `ctxprof-go convert`: JSON lines as a pprof profile or folded stacks, as the live options write them. */
#ifndef __CONVERT_H
#define __CONVERT_H

/* `ctxprof-go convert`. */
int convert__main(int argc, char **argv);

#endif /* __CONVERT_H */
