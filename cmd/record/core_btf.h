/* SPDX-License-Identifier: GPL-2.0 */
/* core_btf.h: the few kernel types a BPF object's CO-RE relocations name, cut from the running kernel's BTF. */
#ifndef __CORE_BTF_H
#define __CORE_BTF_H

#include <stddef.h>

/*
 * libbpf parses all of /sys/kernel/btf/vmlinux (5 MB, 100,000+ types)
 * to relocate a handful of fields, which is most of a start-up. This
 * reads it in place (mmap where the kernel allows) and writes only the
 * types that the object's relocations can reach, each struct with only
 * the members they name, at the kernel's offsets and sizes: what libbpf
 * would find in the whole, for libbpf's btf_custom_path.
 */
struct core_btf;

/*
 * The types for the BPF object ELF (an image in memory, as a skeleton
 * holds it). NULL with errno: EOPNOTSUPP when a relocation is of a kind
 * this does not cut for (the caller then lets libbpf read the whole).
 */
struct core_btf *core_btf__new(const void *elf, size_t elf_size);
/* A path for btf_custom_path, valid until core_btf__free(). */
const char *core_btf__path(const struct core_btf *cb);
/* How many types were written, and how many the kernel has. */
unsigned int core_btf__types(const struct core_btf *cb);
unsigned int core_btf__kernel_types(const struct core_btf *cb);
/* Accepts NULL. */
void core_btf__free(struct core_btf *cb);

#endif /* __CORE_BTF_H */
