/* SPDX-License-Identifier: GPL-2.0 */
/* debug_info.h: a Go binary's DWARF, decompressed only as far as a reader needs. */
#ifndef __DEBUG_INFO_H
#define __DEBUG_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <elfutils/libdw.h>

#include "elf_image.h"

struct debug_info;

/*
 * Go compresses its DWARF, and libdw inflates every debug section on open:
 * line tables, location lists and all, most of which ctxprof-go never reads.
 * This keeps them compressed and hands libdw a small in-memory ELF holding
 * .debug_abbrev and a growing prefix of .debug_info, cut at a unit boundary.
 *
 * Returns NULL with a message in ERR when the binary has no .debug_info or
 * its compression is not one we read (zlib in SHF_COMPRESSED or .zdebug).
 */
struct debug_info *debug_info__open(const struct elf_image *img, char *err, size_t errlen);
void debug_info__close(struct debug_info *di);

/*
 * Inflates at least twice as much of .debug_info as the previous call and
 * returns a Dwarf over all complete units so far, valid until the next call
 * or close. *COMPLETE says whether that is the whole section. Returns NULL,
 * with a message in ERR, on corrupt data or when nothing is left to add.
 */
Dwarf *debug_info__grow(struct debug_info *di, bool *complete, char *err, size_t errlen);

#endif /* __DEBUG_INFO_H */
