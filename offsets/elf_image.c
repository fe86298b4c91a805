// SPDX-License-Identifier: GPL-2.0
/* elf_image.c: one ELF file, mapped read-only, with bounds-checked access by section and address. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_image.h"
#include "util.h"

/* One RELATIVE relocation: the loader writes the load bias plus ADDEND at AT. */
struct relative {
	uint64_t at, addend;
};

struct elf_image {
	int fd;
	Elf *elf;
	GElf_Ehdr ehdr;
	const uint8_t *map;
	size_t size;
	size_t shstrndx;
	size_t phnum;
	/* the RELATIVE relocations by place, read at first use */
	struct relative *rel;
	size_t nrel;
	bool rel_read;
};

/* Does [OFF, OFF + LEN) lie inside the file? Header values are anything: no wrapping. */
static bool inside(const struct elf_image *img, uint64_t off, uint64_t len)
{
	return off <= img->size && len <= img->size - off;
}

/*
 * Every header must describe bytes the file holds. A file cut short (a
 * partial copy or download) still parses, with headers describing bytes
 * that are not there: say so rather than report later that some section
 * is missing. A header that is not what ELF says (an entry size, a name
 * outside the name table) makes the file one no reader agrees on.
 */
static int check_headers(const struct elf_image *img, char *err, size_t errlen)
{
	size_t shnum, i, phsize = gelf_fsize(img->elf, ELF_T_PHDR, 1, EV_CURRENT);
	size_t shsize = gelf_fsize(img->elf, ELF_T_SHDR, 1, EV_CURRENT);
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Phdr ph;

	if (elf_getshdrnum(img->elf, &shnum) != 0) {
		set_err(err, errlen, "bad ELF section header table: %s", elf_errmsg(-1));
		return -1;
	}
	if (img->ehdr.e_phnum == PN_XNUM && img->phnum < PN_XNUM) {
		set_err(err, errlen, "bad ELF header: 65535 (PN_XNUM) program headers, and section 0 "
				     "does not hold their count");
		return -1;
	}
	if ((img->ehdr.e_shoff && img->ehdr.e_shentsize != shsize) ||
	    (img->ehdr.e_phnum && img->ehdr.e_phentsize != phsize)) {
		set_err(err, errlen, "bad ELF header: header entries of %u and %u bytes, not %zu and %zu",
			img->ehdr.e_shentsize, img->ehdr.e_phentsize, shsize, phsize);
		return -1;
	}
	/*
	 * From the ELF header itself: libelf counts no sections or segments
	 * when their table lies past the end (extended numbering keeps the
	 * count in section 0, which needs the table too).
	 */
	if ((img->ehdr.e_shoff &&
	     !inside(img, img->ehdr.e_shoff, (uint64_t)(img->ehdr.e_shnum ?: 1) * shsize)) ||
	    (img->ehdr.e_phnum && img->ehdr.e_phnum != PN_XNUM &&
	     !inside(img, img->ehdr.e_phoff, (uint64_t)img->ehdr.e_phnum * phsize)) ||
	    (shnum && !inside(img, img->ehdr.e_shoff, (uint64_t)shnum * shsize)) ||
	    (img->phnum && !inside(img, img->ehdr.e_phoff, (uint64_t)img->phnum * phsize))) {
		set_err(err, errlen, "truncated ELF file: %zu bytes, its header tables lie past them",
			img->size);
		return -1;
	}
	for (i = 0; i < img->phnum; i++) {
		if (!gelf_getphdr(img->elf, i, &ph)) {
			set_err(err, errlen, "bad ELF program header %zu: %s", i, elf_errmsg(-1));
			return -1;
		}
		if (ph.p_type == PT_LOAD && !inside(img, ph.p_offset, ph.p_filesz)) {
			set_err(err, errlen, "truncated ELF file: %zu bytes, segment %zu needs %llu at %llu",
				img->size, i, (unsigned long long)ph.p_filesz,
				(unsigned long long)ph.p_offset);
			return -1;
		}
	}
	if (shnum && (img->shstrndx >= shnum || !(scn = elf_getscn(img->elf, img->shstrndx)) ||
		      !gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_STRTAB)) {
		set_err(err, errlen, "bad ELF header: section %zu holds no section names", img->shstrndx);
		return -1;
	}
	for (scn = NULL; (scn = elf_nextscn(img->elf, scn)) != NULL;) {
		i = elf_ndxscn(scn);
		if (!gelf_getshdr(scn, &shdr)) {
			set_err(err, errlen, "bad ELF section header %zu: %s", i, elf_errmsg(-1));
			return -1;
		}
		if (shdr.sh_type != SHT_NOBITS && !inside(img, shdr.sh_offset, shdr.sh_size)) {
			set_err(err, errlen, "truncated ELF file: %zu bytes, section %zu needs %llu at %llu",
				img->size, i, (unsigned long long)shdr.sh_size,
				(unsigned long long)shdr.sh_offset);
			return -1;
		}
		if (!elf_strptr(img->elf, img->shstrndx, shdr.sh_name)) {
			set_err(err, errlen, "bad ELF section header %zu: its name lies outside the name table",
				i);
			return -1;
		}
	}
	return 0;
}

struct elf_image *elf_image__open(const char *path, char *err, size_t errlen)
{
	struct elf_image *img;
	struct stat st;
	int saved;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		set_err(err, errlen, "libelf: %s", elf_errmsg(-1));
		errno = ENOSYS;
		return NULL;
	}
	img = calloc(1, sizeof(*img));
	if (!img) {
		set_err(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	img->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (img->fd < 0) {
		saved = errno;
		set_err(err, errlen, "cannot open: %s", strerror(saved));
		goto fail;
	}
	if (fstat(img->fd, &st) < 0) {
		saved = errno;
		set_err(err, errlen, "cannot stat: %s", strerror(saved));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		saved = EISDIR;
		set_err(err, errlen, "is a directory, not an executable");
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		saved = EINVAL;
		set_err(err, errlen, "not a regular file");
		goto fail;
	}
	if ((uint64_t)st.st_size < EI_NIDENT) {
		saved = ENOEXEC;
		set_err(err, errlen, "not an ELF file (only %lld bytes)", (long long)st.st_size);
		goto fail;
	}
	img->size = st.st_size;
	/* private and writable: libelf may fix up headers in place; the file never changes */
	img->map = mmap(NULL, img->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, img->fd, 0);
	if (img->map == MAP_FAILED) {
		img->map = NULL;
		saved = errno;
		set_err(err, errlen, "cannot map: %s", strerror(saved));
		goto fail;
	}
	if (memcmp(img->map, ELFMAG, SELFMAG) != 0) {
		saved = ENOEXEC;
		set_err(err, errlen, "not an ELF file");
		goto fail;
	}
	img->elf = elf_memory((char *)img->map, img->size);
	if (!img->elf || elf_kind(img->elf) != ELF_K_ELF) {
		saved = ENOEXEC;
		set_err(err, errlen, "not a valid ELF file: %s", elf_errmsg(-1));
		goto fail;
	}
	if (!gelf_getehdr(img->elf, &img->ehdr)) {
		saved = ENOEXEC;
		set_err(err, errlen, "bad ELF header: %s", elf_errmsg(-1));
		goto fail;
	}
	if (elf_getshdrstrndx(img->elf, &img->shstrndx) != 0) {
		saved = ENOEXEC;
		set_err(err, errlen, "bad ELF section header table: %s", elf_errmsg(-1));
		goto fail;
	}
	if (elf_getphdrnum(img->elf, &img->phnum) != 0) {
		saved = ENOEXEC;
		set_err(err, errlen, "bad ELF program header table: %s", elf_errmsg(-1));
		goto fail;
	}
	if (check_headers(img, err, errlen) != 0) {
		saved = ENOEXEC;
		goto fail;
	}
	return img;
fail:
	elf_image__close(img);
	errno = saved;
	return NULL;
}

void elf_image__close(struct elf_image *img)
{
	if (!img)
		return;
	if (img->elf)
		elf_end(img->elf);
	if (img->map)
		munmap((void *)img->map, img->size);
	if (img->fd >= 0)
		close(img->fd);
	free(img->rel);
	free(img);
}

Elf *elf_image__elf(const struct elf_image *img)
{
	return img->elf;
}

const GElf_Ehdr *elf_image__ehdr(const struct elf_image *img)
{
	return &img->ehdr;
}

size_t elf_image__size(const struct elf_image *img)
{
	return img->size;
}

static Elf_Scn *find_section(const struct elf_image *img, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	const char *sname;

	while ((scn = elf_nextscn(img->elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, shdr))
			continue;
		sname = elf_strptr(img->elf, img->shstrndx, shdr->sh_name);
		if (sname && strcmp(sname, name) == 0)
			return scn;
	}
	return NULL;
}

bool elf_image__has_section(const struct elf_image *img, const char *name)
{
	GElf_Shdr shdr;

	return find_section(img, name, &shdr) != NULL;
}

const uint8_t *elf_image__section_hdr(const struct elf_image *img, const char *name,
				      GElf_Shdr *shdr)
{
	if (!find_section(img, name, shdr) || shdr->sh_type == SHT_NOBITS)
		return NULL;
	if (!in_bounds(shdr->sh_offset, shdr->sh_size, img->size))
		return NULL;
	return img->map + shdr->sh_offset;
}

int elf_image__section_range(const struct elf_image *img, const char *name, uint64_t *addr,
			     uint64_t *size)
{
	GElf_Shdr shdr;

	if (!find_section(img, name, &shdr))
		return -ENOENT;
	*addr = shdr.sh_addr;
	*size = shdr.sh_size;
	return 0;
}

const uint8_t *elf_image__section(const struct elf_image *img, const char *name,
				  size_t *size, uint64_t *addr)
{
	const uint8_t *p;
	GElf_Shdr shdr;

	p = elf_image__section_hdr(img, name, &shdr);
	if (p && size)
		*size = shdr.sh_size;
	if (p && addr)
		*addr = shdr.sh_addr;
	return p;
}

const uint8_t *elf_image__at(const struct elf_image *img, uint64_t vaddr, size_t len)
{
	GElf_Phdr ph;
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		if (!gelf_getphdr(img->elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || !in_bounds(vaddr - ph.p_vaddr, len, ph.p_filesz))
			continue;
		if (!in_bounds(ph.p_offset + (vaddr - ph.p_vaddr), len, img->size))
			return NULL;
		return img->map + ph.p_offset + (vaddr - ph.p_vaddr);
	}
	return NULL;
}

long elf_image__file_offset(const struct elf_image *img, uint64_t vaddr)
{
	const uint8_t *p = elf_image__at(img, vaddr, 1);

	return p ? (long)(p - img->map) : -1;
}

int elf_image__phdr(const struct elf_image *img, uint32_t type, GElf_Phdr *out)
{
	size_t i;

	for (i = 0; i < img->phnum; i++) {
		if (gelf_getphdr(img->elf, i, out) && out->p_type == type)
			return 0;
	}
	return -ENOENT;
}

/* Looks NAME up in the first symbol table of TYPE (SHT_SYMTAB, SHT_DYNSYM). */
static int find_symbol(const struct elf_image *img, uint32_t type, const char *name, GElf_Sym *sym)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf_Data *data;
	const char *sname;
	size_t i, n;

	while ((scn = elf_nextscn(img->elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type)
			continue;
		if (!shdr.sh_entsize || !in_bounds(shdr.sh_offset, shdr.sh_size, img->size))
			return -ENOENT;
		data = elf_getdata(scn, NULL);
		if (!data)
			return -ENOENT;
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			if (!gelf_getsym(data, i, sym))
				break;
			sname = elf_strptr(img->elf, shdr.sh_link, sym->st_name);
			if (sname && strcmp(sname, name) == 0)
				return 0;
		}
		return -ENOENT;
	}
	return -ENOENT;
}

int elf_image__symbol(const struct elf_image *img, const char *name, GElf_Sym *sym)
{
	return find_symbol(img, SHT_SYMTAB, name, sym);
}

int elf_image__dynamic_symbol(const struct elf_image *img, const char *name, GElf_Sym *sym)
{
	return find_symbol(img, SHT_DYNSYM, name, sym);
}

/* Entries of the first section of TYPE, when the section lies inside the file. */
static Elf_Data *dynamic_data(const struct elf_image *img, uint32_t type, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(img->elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, shdr) || shdr->sh_type != type || !shdr->sh_entsize)
			continue;
		if (!in_bounds(shdr->sh_offset, shdr->sh_size, img->size))
			return NULL;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

int elf_image__needed(const struct elf_image *img)
{
	GElf_Shdr shdr;
	GElf_Dyn dyn;
	Elf_Data *data;
	size_t i;
	int n = 0;

	data = dynamic_data(img, SHT_DYNAMIC, &shdr);
	if (!data)
		return 0;
	for (i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
		if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag == DT_NEEDED)
			n++;
	}
	return n;
}

static int cmp_relative(const void *a, const void *b)
{
	const struct relative *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/*
 * The RELATIVE relocations, sorted by place. A PIE has one for every
 * pointer in its data (hundreds of thousands in a large Go program), and
 * readers ask about a few hundred places: one pass, then binary searches.
 * Read at first use into the image, whose callers hold it const: a cache,
 * not a change of what it describes.
 */
static const struct relative *relatives(const struct elf_image *cimg, size_t *n)
{
	struct elf_image *img = (struct elf_image *)cimg;
	unsigned int type = img->ehdr.e_machine == EM_AARCH64 ? R_AARCH64_RELATIVE : R_X86_64_RELATIVE;
	GElf_Shdr shdr;
	GElf_Rela rela;
	Elf_Data *data;
	size_t i, count;

	if (!img->rel_read) {
		img->rel_read = true;
		data = dynamic_data(img, SHT_RELA, &shdr);
		count = data ? shdr.sh_size / shdr.sh_entsize : 0;
		img->rel = count ? calloc(count, sizeof(*img->rel)) : NULL;
		for (i = 0; img->rel && i < count && gelf_getrela(data, i, &rela); i++) {
			if (GELF_R_TYPE(rela.r_info) == type)
				img->rel[img->nrel++] = (struct relative){ rela.r_offset,
									   (uint64_t)rela.r_addend };
		}
		if (img->nrel)
			qsort(img->rel, img->nrel, sizeof(*img->rel), cmp_relative);
	}
	*n = img->nrel;
	return img->rel;
}

int elf_image__relative_addend(const struct elf_image *img, uint64_t vaddr, uint64_t *value)
{
	const struct relative key = { .at = vaddr }, *r, *rel;
	size_t n;

	rel = relatives(img, &n);
	r = n ? bsearch(&key, rel, n, sizeof(*rel), cmp_relative) : NULL;
	if (!r)
		return -ENOENT;
	*value = r->addend;
	return 0;
}

size_t elf_image__relative_places(const struct elf_image *img, uint64_t addend, uint64_t *at,
				  size_t max)
{
	const struct relative *rel;
	size_t i, n, found = 0;

	rel = relatives(img, &n);
	for (i = 0; i < n; i++) {
		if (rel[i].addend != addend)
			continue;
		if (found < max)
			at[found] = rel[i].at;
		found++;
	}
	return found;
}
