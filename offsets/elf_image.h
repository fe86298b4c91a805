/* SPDX-License-Identifier: GPL-2.0 */
/* elf_image.h: one ELF file, mapped read-only, with bounds-checked access by section and address. */
#ifndef __ELF_IMAGE_H
#define __ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

struct elf_image;

/*
 * Opens and maps PATH. On failure returns NULL with errno set and a message
 * in ERR; errno is EINVAL or ENOEXEC when the file is readable but not a
 * usable ELF file, anything else is an I/O error.
 */
struct elf_image *elf_image__open(const char *path, char *err, size_t errlen);
void elf_image__close(struct elf_image *img);

Elf *elf_image__elf(const struct elf_image *img);
const GElf_Ehdr *elf_image__ehdr(const struct elf_image *img);
size_t elf_image__size(const struct elf_image *img);

/* Contents of section NAME, NULL if absent, NOBITS or past end of file. */
const uint8_t *elf_image__section(const struct elf_image *img, const char *name,
				  size_t *size, uint64_t *addr);
bool elf_image__has_section(const struct elf_image *img, const char *name);
/* Like elf_image__section, with the whole section header (flags, compression). */
const uint8_t *elf_image__section_hdr(const struct elf_image *img, const char *name,
				      GElf_Shdr *shdr);

/* Where section NAME is linked, NOBITS ones (.bss) too: 0, or -ENOENT. */
int elf_image__section_range(const struct elf_image *img, const char *name, uint64_t *addr,
			     uint64_t *size);

/*
 * LEN file-backed bytes at virtual address VADDR (as linked, no load bias),
 * or NULL when they are not all inside one PT_LOAD segment's file image.
 */
const uint8_t *elf_image__at(const struct elf_image *img, uint64_t vaddr, size_t len);

/* The file offset of link-time address VADDR, for a uprobe; -1 when no PT_LOAD segment's file image holds it. */
long elf_image__file_offset(const struct elf_image *img, uint64_t vaddr);

/* The first program header of TYPE; -ENOENT if none. */
int elf_image__phdr(const struct elf_image *img, uint32_t type, GElf_Phdr *out);

/* Looks NAME up in .symtab; -ENOENT if absent or there is no .symtab. */
int elf_image__symbol(const struct elf_image *img, const char *name, GElf_Sym *sym);
/* Looks NAME up in .dynsym (all a shared object such as the vdso keeps); -ENOENT if absent. */
int elf_image__dynamic_symbol(const struct elf_image *img, const char *name, GElf_Sym *sym);

/* Number of DT_NEEDED entries: shared libraries the executable loads. */
int elf_image__needed(const struct elf_image *img);

/*
 * For a word that a R_X86_64_RELATIVE relocation fills at load time (PIE),
 * the link-time value; returns -ENOENT when no such relocation exists.
 */
int elf_image__relative_addend(const struct elf_image *img, uint64_t vaddr, uint64_t *value);
/*
 * The places a RELATIVE relocation fills with ADDEND: up to MAX of them into
 * AT; returns how many there are.
 */
size_t elf_image__relative_places(const struct elf_image *img, uint64_t addend, uint64_t *at,
				  size_t max);

#endif /* __ELF_IMAGE_H */
