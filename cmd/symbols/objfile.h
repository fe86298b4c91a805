/* SPDX-License-Identifier: GPL-2.0 */
/* objfile.h: names the code of one mapped file (executable, library, vdso) by its link-time addresses. */
#ifndef __OBJFILE_H
#define __OBJFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct objfile;

struct frame {
	const char *func; /* "main.burn", or "0x7f3a..." when nothing names it */
	const char *file; /* NULL when unknown */
	int line; /* 0 when unknown */
	bool inlined; /* its code was inlined into the next frame's function */
};

/*
 * The file at OPEN_PATH, opened once per file (device and inode) and shared
 * by every process that maps it, with one more reference. NAME is how the
 * processes name it (their /proc/PID/maps path), for output; OPEN_PATH may
 * differ (/proc/PID/root/NAME for a process in another mount namespace).
 * NULL with a message in ERR when it cannot be opened or is not ELF.
 */
struct objfile *objfile__get(const char *open_path, const char *name, char *err, size_t errlen);
/* The kernel's vdso, from this process's own copy: every process maps the same image. */
struct objfile *objfile__vdso(void);
/* Where the vdso's symbol NAME is, from the image's start; 0 when it has none. */
uint64_t objfile__vdso_symbol(const char *name);
/* Drops a reference; the last one closes the file. Accepts NULL. */
void objfile__put(struct objfile *of);

const char *objfile__name(const struct objfile *of);
const char *objfile__build_id(struct objfile *of); /* hex, "" when the file has none */

/* The link-time address of file offset OFF, through the PT_LOAD that holds it; false if none. */
bool objfile__vaddr(const struct objfile *of, uint64_t off, uint64_t *vaddr);

/*
 * Names link-time address VADDR: sets *FRAMES to its frames, innermost
 * first (Go functions inlined there, then the function that holds it), and
 * returns how many, at least one. Go code is named from .gopclntab, other
 * code from ELF symbols and DWARF lines. Frames live until the next call
 * for OF (answers are cached, and the cache is bounded).
 */
size_t objfile__frames(struct objfile *of, uint64_t vaddr, const struct frame **frames);

/*
 * The SP delta at VADDR: from pcsp in Go code; 0 at the first instruction
 * of any other function with an ELF symbol (nothing is pushed yet); -1 when
 * unknown.
 */
int32_t objfile__sp_delta(struct objfile *of, uint64_t vaddr);

/* Does VADDR lie in a named function: Go code, or an ELF symbol? */
bool objfile__in_function(struct objfile *of, uint64_t vaddr);
/* arm64's calls leave the return address in LR: a frame saves it at its SP */
bool objfile__link_register(const struct objfile *of);

#endif /* __OBJFILE_H */
