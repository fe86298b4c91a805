// SPDX-License-Identifier: GPL-2.0
/* debug_info.c: a Go binary's DWARF, decompressed only as far as a reader needs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "debug_info.h"
#include "util.h"

/* First slice of .debug_info to inflate; Go's type unit usually sits in the first tenth. */
#define FIRST_PREFIX (1U << 20)
/* Refuse sections that claim to inflate past this: no Go binary comes close. */
#define MAX_SECTION (1ULL << 32)

/* Sections besides .debug_info that libdw may need for Go's units, all small. */
static const char *const side_sections[] = { ".debug_abbrev", ".debug_str", ".debug_line_str",
					     ".debug_str_offsets" };
#define NSIDE (sizeof(side_sections) / sizeof(side_sections[0]))

struct blob {
	uint8_t *data;
	size_t len;
};

struct debug_info {
	z_stream zs;
	bool zs_live, raw_info, stream_end, done;
	struct blob info; /* inflated prefix of .debug_info */
	size_t info_cap;
	size_t info_total; /* inflated size from the compression header */
	const uint8_t *info_raw; /* uncompressed .debug_info, when it is stored that way */
	struct blob side[NSIDE];
	uint8_t *image; /* the ELF handed to libdw */
	Elf *elf;
	Dwarf *dbg;
};

/*
 * Where a compressed section's zlib stream starts and how big it inflates:
 * SHF_COMPRESSED carries an Elf64_Chdr, .zdebug_* a "ZLIB" + big-endian size.
 * Returns 1 when compressed, 0 when stored plainly, -EINVAL when unreadable.
 */
static int compression(const uint8_t *p, const GElf_Shdr *sh, bool gnu, size_t *hdr,
		       uint64_t *size)
{
	Elf64_Chdr ch;
	int i;

	if (gnu) {
		if (sh->sh_size < 12 || memcmp(p, "ZLIB", 4) != 0)
			return -EINVAL;
		for (*size = 0, i = 4; i < 12; i++)
			*size = *size << 8 | p[i];
		*hdr = 12;
		return 1;
	}
	if (!(sh->sh_flags & SHF_COMPRESSED))
		return 0;
	if (sh->sh_size < sizeof(ch))
		return -EINVAL;
	memcpy(&ch, p, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB)
		return -EINVAL;
	*size = ch.ch_size;
	*hdr = sizeof(ch);
	return 1;
}

/* Section NAME, or its .zdebug_ twin; sets *GNU for the latter. */
static const uint8_t *debug_section(const struct elf_image *img, const char *name,
				    GElf_Shdr *sh, bool *gnu)
{
	char zname[64];
	const uint8_t *p;

	*gnu = false;
	p = elf_image__section_hdr(img, name, sh);
	if (p)
		return p;
	snprintf(zname, sizeof(zname), ".z%s", name + 1);
	p = elf_image__section_hdr(img, zname, sh);
	*gnu = p != NULL;
	return p;
}

/* Inflates a whole (small) section into OUT. */
static int read_whole(const struct elf_image *img, const char *name, struct blob *out)
{
	size_t hdr = 0;
	uint64_t size;
	GElf_Shdr sh;
	uLongf dlen;
	const uint8_t *p;
	bool gnu;
	int c;

	p = debug_section(img, name, &sh, &gnu);
	if (!p)
		return -ENOENT;
	c = compression(p, &sh, gnu, &hdr, &size);
	if (c < 0)
		return c;
	if (c == 0)
		size = sh.sh_size;
	if (size > MAX_SECTION)
		return -EINVAL;
	out->data = malloc(size ? size : 1);
	if (!out->data)
		return -ENOMEM;
	if (c == 0) {
		memcpy(out->data, p, size);
	} else {
		dlen = size;
		if (uncompress(out->data, &dlen, p + hdr, sh.sh_size - hdr) != Z_OK || dlen != size)
			return -EINVAL;
	}
	out->len = size;
	return 0;
}

struct debug_info *debug_info__open(const struct elf_image *img, char *err, size_t errlen)
{
	struct debug_info *di;
	const uint8_t *p;
	uint64_t size;
	size_t hdr = 0, i;
	GElf_Shdr sh;
	bool gnu;
	int c;

	p = debug_section(img, ".debug_info", &sh, &gnu);
	if (!p) {
		set_err(err, errlen, "no .debug_info");
		return NULL;
	}
	c = compression(p, &sh, gnu, &hdr, &size);
	if (c < 0 || (c == 1 && size > MAX_SECTION)) {
		set_err(err, errlen, "DWARF: .debug_info uses a compression ctxprof-go cannot read");
		return NULL;
	}
	di = calloc(1, sizeof(*di));
	if (!di) {
		set_err(err, errlen, "out of memory");
		return NULL;
	}
	if (c == 0) {
		di->raw_info = true;
		di->info_raw = p;
		di->info_total = sh.sh_size;
	} else {
		di->info_total = size;
		di->zs.next_in = (Bytef *)(p + hdr);
		di->zs.avail_in = sh.sh_size - hdr;
		if (inflateInit(&di->zs) != Z_OK) {
			set_err(err, errlen, "zlib: %s", di->zs.msg ?: "inflateInit failed");
			free(di);
			return NULL;
		}
		di->zs_live = true;
	}
	for (i = 0; i < NSIDE; i++) {
		c = read_whole(img, side_sections[i], &di->side[i]);
		if (c == -ENOENT && i > 0)
			continue;
		if (c != 0) {
			set_err(err, errlen, "DWARF: cannot read %s: %s", side_sections[i],
				c == -ENOENT ? "missing" : "corrupt or compressed unusually");
			debug_info__close(di);
			return NULL;
		}
	}
	return di;
}

static void drop_dwarf(struct debug_info *di)
{
	if (di->dbg)
		dwarf_end(di->dbg);
	if (di->elf)
		elf_end(di->elf);
	free(di->image);
	di->dbg = NULL;
	di->elf = NULL;
	di->image = NULL;
}

void debug_info__close(struct debug_info *di)
{
	size_t i;

	if (!di)
		return;
	drop_dwarf(di);
	if (di->zs_live)
		inflateEnd(&di->zs);
	if (!di->raw_info)
		free(di->info.data);
	for (i = 0; i < NSIDE; i++)
		free(di->side[i].data);
	free(di);
}

/* Inflates until WANT bytes of .debug_info are available or the stream ends. */
static int inflate_to(struct debug_info *di, size_t want)
{
	uint8_t *n;
	int zr;

	if (want > di->info_total)
		want = di->info_total;
	if (want > di->info_cap) {
		n = realloc(di->info.data, want);
		if (!n)
			return -ENOMEM;
		di->info.data = n;
		di->info_cap = want;
	}
	while (di->info.len < want && !di->stream_end) {
		di->zs.next_out = di->info.data + di->info.len;
		di->zs.avail_out = want - di->info.len;
		zr = inflate(&di->zs, Z_NO_FLUSH);
		di->info.len = want - di->zs.avail_out;
		if (zr == Z_STREAM_END)
			di->stream_end = true;
		else if (zr != Z_OK)
			return -EINVAL;
	}
	return 0;
}

/* Length of the longest run of whole units at the start of INFO[0..LEN). */
static size_t whole_units(const uint8_t *info, size_t len)
{
	size_t off = 0, hdr;
	uint64_t ulen;
	uint32_t l32;

	while (len - off >= 4) {
		memcpy(&l32, info + off, 4);
		if (l32 == 0xffffffff) {
			if (len - off < 12)
				break;
			memcpy(&ulen, info + off + 4, 8);
			hdr = 12;
		} else if (l32 >= 0xfffffff0) {
			break;
		} else {
			ulen = l32;
			hdr = 4;
		}
		if (ulen > len - off - hdr)
			break;
		off += hdr + ulen;
	}
	return off;
}

/* An ELF64 file image with the given sections, for elf_memory(). */
static uint8_t *build_image(const char *const *names, const struct blob *blobs, size_t n,
			    size_t *size)
{
	size_t i, off, strsz = 1, namepos[8];
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	uint8_t *img;

	for (i = 0; i < n; i++)
		strsz += strlen(names[i]) + 1;
	strsz += sizeof(".shstrtab");
	off = sizeof(*eh);
	for (i = 0; i < n; i++)
		off += blobs[i].len;
	off += strsz;
	off = (off + 7) & ~(size_t)7;
	*size = off + (n + 2) * sizeof(*sh);
	img = calloc(1, *size);
	if (!img)
		return NULL;
	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC; /* not ET_REL: nothing to relocate */
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = n + 2;
	eh->e_shstrndx = n + 1;
	eh->e_shoff = off;
	sh = (Elf64_Shdr *)(img + off);

	off = sizeof(*eh);
	for (i = 0; i < n; i++) {
		sh[i + 1].sh_type = SHT_PROGBITS;
		sh[i + 1].sh_offset = off;
		sh[i + 1].sh_size = blobs[i].len;
		sh[i + 1].sh_addralign = 1;
		memcpy(img + off, blobs[i].data, blobs[i].len);
		off += blobs[i].len;
	}
	sh[n + 1].sh_type = SHT_STRTAB;
	sh[n + 1].sh_offset = off;
	sh[n + 1].sh_size = strsz;
	sh[n + 1].sh_addralign = 1;
	strsz = 1;
	for (i = 0; i <= n; i++) {
		const char *name = i < n ? names[i] : ".shstrtab";

		namepos[i] = strsz;
		memcpy(img + off + strsz, name, strlen(name) + 1);
		strsz += strlen(name) + 1;
		sh[i + 1].sh_name = namepos[i];
	}
	return img;
}

Dwarf *debug_info__grow(struct debug_info *di, bool *complete, char *err, size_t errlen)
{
	const char *names[NSIDE + 1];
	struct blob blobs[NSIDE + 1];
	size_t n = 0, i, want, size;
	const uint8_t *info;

	if (di->done) {
		set_err(err, errlen, "DWARF: nothing more to read");
		return NULL;
	}
	drop_dwarf(di);
	if (di->raw_info) {
		info = di->info_raw;
		di->info.len = di->info_total;
	} else {
		want = di->info.len ? 2 * di->info.len : FIRST_PREFIX;
		if (inflate_to(di, want) != 0) {
			set_err(err, errlen, "DWARF: .debug_info does not inflate: %s",
				di->zs.msg ?: "corrupt data");
			return NULL;
		}
		info = di->info.data;
	}
	*complete = di->raw_info || di->stream_end || di->info.len >= di->info_total;
	di->done = *complete;

	names[n] = ".debug_info";
	blobs[n].data = (uint8_t *)info;
	blobs[n++].len = *complete ? di->info.len : whole_units(info, di->info.len);
	for (i = 0; i < NSIDE; i++) {
		if (!di->side[i].data)
			continue;
		names[n] = side_sections[i];
		blobs[n++] = di->side[i];
	}
	di->image = build_image(names, blobs, n, &size);
	if (!di->image) {
		set_err(err, errlen, "out of memory");
		return NULL;
	}
	di->elf = elf_memory((char *)di->image, size);
	if (!di->elf) {
		set_err(err, errlen, "libelf: %s", elf_errmsg(-1));
		return NULL;
	}
	di->dbg = dwarf_begin_elf(di->elf, DWARF_C_READ, NULL);
	if (!di->dbg) {
		set_err(err, errlen, "DWARF: cannot read: %s", dwarf_errmsg(-1));
		return NULL;
	}
	return di->dbg;
}
