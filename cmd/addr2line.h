/* SPDX-License-Identifier: GPL-2.0 */
/* addr2line.h: `ctxprof-go addr2line BINARY`: Go function and file:line per address, from .gopclntab. */
#ifndef __ADDR2LINE_H
#define __ADDR2LINE_H

/* Exit status: 0, 1 when BINARY has no usable .gopclntab, 2 on usage or I/O errors. */
int addr2line__main(int argc, char **argv);

#endif /* __ADDR2LINE_H */
