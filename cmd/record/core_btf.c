// SPDX-License-Identifier: GPL-2.0
/* core_btf.c: the few kernel types a BPF object's CO-RE relocations name, cut from the running kernel's BTF. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <bpf/btf.h>

#include "core_btf.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"
/* typedef and modifier chains, and anonymous members inside anonymous members */
#define MAX_DEPTH 32

/* the running kernel's BTF, where it lies */
struct kbtf {
	void *raw;
	size_t size;
	bool mapped;
	const char *strs;
	__u32 strs_len;
	const struct btf_type **types; /* by id; [0], void, is NULL */
	__u32 nr;
};

/* a kernel type to write; of a struct or union, the members to keep */
struct kept {
	__u32 kid;
	__u32 *members; /* the kernel's member indices, ascending */
	__u32 nr_members;
};

/* a relocation's root type in the object, and the kernel's types of its name and kind */
struct root {
	__u32 lid;
	__u16 kind;
	const char *name;
	size_t len;
	__u32 *cands;
	__u32 nr_cands;
};

/* .BTF.ext's header, as LLVM writes it; section offsets count from its end */
struct ext_header {
	__u16 magic;
	__u8 version;
	__u8 flags;
	__u32 hdr_len;
	__u32 func_info_off, func_info_len;
	__u32 line_info_off, line_info_len;
	__u32 core_relo_off, core_relo_len;
};

/* the work of one core_btf__new() */
struct cut {
	struct kbtf k;
	struct btf *local;
	const char *relos;
	__u32 relos_len;
	struct root *roots;
	__u32 nr_roots;
	struct kept *kept;
	__u32 nr_kept;
};

struct core_btf {
	int fd;
	char path[40];
	unsigned int types;
	unsigned int kernel_types;
};

/* T and the records that follow it, in bytes; 0 for a kind this does not know */
static size_t type_bytes(const struct btf_type *t)
{
	size_t n = sizeof(*t), vlen = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return n + sizeof(__u32);
	case BTF_KIND_ARRAY:
		return n + sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return n + vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return n + vlen * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:
		return n + vlen * sizeof(struct btf_enum64);
	case BTF_KIND_FUNC_PROTO:
		return n + vlen * sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return n + vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return n;
	default:
		return 0;
	}
}

static const struct btf_type *ktype(const struct kbtf *k, __u32 id)
{
	return id < k->nr ? k->types[id] : NULL;
}

static const char *kname(const struct kbtf *k, __u32 off)
{
	return off < k->strs_len ? k->strs + off : NULL;
}

/* past typedefs and modifiers, as libbpf's matching looks */
static __u32 kskip(const struct kbtf *k, __u32 id)
{
	const struct btf_type *t;
	int depth = 0;

	while ((t = ktype(k, id)) && (btf_is_mod(t) || btf_is_typedef(t)) && depth++ < MAX_DEPTH)
		id = t->type;
	return id;
}

static __u32 lskip(const struct btf *b, __u32 id)
{
	const struct btf_type *t;
	int depth = 0;

	while ((t = btf__type_by_id(b, id)) && (btf_is_mod(t) || btf_is_typedef(t)) &&
	       depth++ < MAX_DEPTH)
		id = t->type;
	return id;
}

/* a name up to its "___flavor", which libbpf leaves out when it compares */
static size_t essential_len(const char *name)
{
	const char *flavor = strstr(name, "___");

	return flavor ? (size_t)(flavor - name) : strlen(name);
}

/* Linux 6.16 on maps the file; before, it is read, a page a read */
static int kbtf_read(struct kbtf *k)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd, err = 0;

	fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if ((size_t)st.st_size < sizeof(struct btf_header)) {
		err = -EPROTO;
		goto out;
	}
	k->size = st.st_size;
	k->raw = mmap(NULL, k->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (k->raw != MAP_FAILED) {
		k->mapped = true;
		goto out;
	}
	k->raw = malloc(k->size);
	if (!k->raw) {
		err = -ENOMEM;
		goto out;
	}
	while (got < k->size) {
		n = read(fd, (char *)k->raw + got, k->size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EPROTO;
			goto out;
		}
		got += n;
	}
out:
	close(fd);
	return err;
}

/* Is kernel type ID, T, a candidate for a root: the same kind, the same essential name? */
static int match_roots(struct cut *c, __u32 id, const struct btf_type *t)
{
	const char *name;
	struct root *r;
	__u32 i, *grown;

	if (!t->name_off)
		return 0;
	name = kname(&c->k, t->name_off);
	if (!name)
		return -EPROTO;
	for (i = 0; i < c->nr_roots; i++) {
		r = &c->roots[i];
		if (btf_kind(t) != r->kind || name[0] != r->name[0] ||
		    strncmp(name, r->name, r->len) || essential_len(name) != r->len)
			continue;
		grown = realloc(r->cands, (r->nr_cands + 1) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		r->cands = grown;
		r->cands[r->nr_cands++] = id;
	}
	return 0;
}

/* Every type's place, by id, and each root's candidates, in one pass. */
static int kbtf_index(struct cut *c)
{
	struct kbtf *k = &c->k;
	const struct btf_header *h = k->raw;
	const char *p, *end;
	size_t cap = 1 << 16, len;
	void *grown;
	int err;

	if (h->magic != BTF_MAGIC || h->version != BTF_VERSION || h->hdr_len < sizeof(*h) ||
	    (size_t)h->hdr_len + h->type_off + h->type_len > k->size ||
	    (size_t)h->hdr_len + h->str_off + h->str_len > k->size || !h->str_len)
		return -EPROTO;
	k->strs = (const char *)k->raw + h->hdr_len + h->str_off;
	k->strs_len = h->str_len;
	if (k->strs[k->strs_len - 1])
		return -EPROTO;
	k->types = malloc(cap * sizeof(*k->types));
	if (!k->types)
		return -ENOMEM;
	k->types[0] = NULL;
	k->nr = 1;
	p = (const char *)k->raw + h->hdr_len + h->type_off;
	end = p + h->type_len;
	while (p < end) {
		if ((size_t)(end - p) < sizeof(struct btf_type))
			return -EPROTO;
		len = type_bytes((const struct btf_type *)p);
		if (!len || len > (size_t)(end - p))
			return -EPROTO;
		if (k->nr == cap) {
			grown = realloc(k->types, 2 * cap * sizeof(*k->types));
			if (!grown)
				return -ENOMEM;
			k->types = grown;
			cap *= 2;
		}
		k->types[k->nr] = (const struct btf_type *)p;
		err = match_roots(c, k->nr, k->types[k->nr]);
		if (err)
			return err;
		k->nr++;
		p += len;
	}
	return 0;
}

/* KID's place among the kept, added if new; < 0 on ENOMEM */
static int keep(struct cut *c, __u32 kid)
{
	struct kept *grown;
	__u32 i;

	for (i = 0; i < c->nr_kept; i++) {
		if (c->kept[i].kid == kid)
			return i;
	}
	grown = realloc(c->kept, (c->nr_kept + 1) * sizeof(*c->kept));
	if (!grown)
		return -ENOMEM;
	c->kept = grown;
	c->kept[c->nr_kept] = (struct kept){ .kid = kid };
	return c->nr_kept++;
}

static int keep_member(struct cut *c, __u32 kid, __u32 idx)
{
	struct kept *kp;
	__u32 *grown, i;
	int at = keep(c, kid);

	if (at < 0)
		return at;
	kp = &c->kept[at];
	for (i = 0; i < kp->nr_members && kp->members[i] < idx; i++)
		;
	if (i < kp->nr_members && kp->members[i] == idx)
		return 0;
	grown = realloc(kp->members, (kp->nr_members + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	kp->members = grown;
	memmove(&grown[i + 1], &grown[i], (kp->nr_members - i) * sizeof(*grown));
	grown[i] = idx;
	kp->nr_members++;
	return 0;
}

/*
 * KID (past typedefs and modifiers) and what writing it takes: a struct
 * or union goes with the members kept of it, a pointer as a pointer to
 * void (no relocation reads through one; each dereference is a
 * relocation of its own), an array with its index and element types.
 */
static int keep_type(struct cut *c, __u32 kid, int depth)
{
	const struct btf_type *t = ktype(&c->k, kid);
	const struct btf_array *a;
	int err;

	if (!kid)
		return 0;
	if (!t || depth > MAX_DEPTH)
		return -EPROTO;
	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		/* libbpf rejects such old-style bitfield ints; leave that to it */
		if (btf_int_offset(t) || btf_int_bits(t) != t->size * 8)
			return -EOPNOTSUPP;
		break;
	case BTF_KIND_PTR:
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		break;
	case BTF_KIND_ARRAY:
		a = btf_array(t);
		/* whether a flexible array matches depends on its place among all the members */
		if (!a->nelems)
			return -EOPNOTSUPP;
		err = keep_type(c, kskip(&c->k, a->index_type), depth + 1);
		if (!err)
			err = keep_type(c, kskip(&c->k, a->type), depth + 1);
		if (err)
			return err;
		break;
	default:
		return -EOPNOTSUPP;
	}
	err = keep(c, kid);
	return err < 0 ? err : 0;
}

/*
 * NAME among composite KID's members, inside anonymous ones too, first
 * found first, as libbpf looks: the members on the way are kept. Its type
 * in *TYPE. 0 found, 1 not there, < 0 an error.
 */
static int find_member(struct cut *c, __u32 kid, const char *name, __u32 *type, int depth)
{
	const struct btf_type *t = ktype(&c->k, kid), *u;
	const struct btf_member *m = btf_members(t);
	const char *mname;
	__u32 i, mt;
	int err;

	for (i = 0; i < btf_vlen(t); i++, m++) {
		mname = kname(&c->k, m->name_off);
		if (!mname)
			return -EPROTO;
		mt = kskip(&c->k, m->type);
		if (!*mname) {
			u = ktype(&c->k, mt);
			if (!u || !btf_is_composite(u) || depth >= MAX_DEPTH)
				continue;
			err = find_member(c, mt, name, type, depth + 1);
			if (err > 0)
				continue;
			return err ?: keep_member(c, kid, i);
		}
		if (strcmp(mname, name))
			continue;
		*type = mt;
		return keep_member(c, kid, i);
	}
	return 1;
}

/*
 * The kernel's members that the field relocation REL names, from the
 * candidate root CAND on. Only named members are matched (the object's
 * anonymous ones are steps inside its own types); a candidate where a
 * name is missing keeps what it has, as its failing match needs nothing.
 */
static int walk_field(struct cut *c, const struct bpf_core_relo *rel, __u32 cand)
{
	const char *acc = btf__str_by_offset(c->local, rel->access_str_off);
	const struct btf_type *lt, *kt;
	const struct btf_member *lm;
	__u32 lid, kid, idx;
	const char *lname;
	char *endp;
	int err;

	if (!acc || !*acc)
		return -EPROTO;
	err = keep(c, cand);
	if (err < 0)
		return err;
	kid = kskip(&c->k, cand);
	lid = lskip(c->local, rel->type_id);
	err = keep_type(c, kid, 0);
	if (err)
		return err;
	/* the first index is into an array of the root itself; its size is kept */
	strtoul(acc, &endp, 10);
	while (*endp == ':') {
		idx = strtoul(endp + 1, &endp, 10);
		lt = btf__type_by_id(c->local, lid);
		kt = ktype(&c->k, kid);
		if (!lt)
			return -EPROTO;
		if (btf_is_composite(lt)) {
			if (idx >= btf_vlen(lt))
				return -EPROTO;
			lm = btf_members(lt) + idx;
			lname = btf__name_by_offset(c->local, lm->name_off);
			lid = lskip(c->local, lm->type);
			if (!lname || !*lname)
				continue;
			if (!kt || !btf_is_composite(kt))
				return 0;
			err = find_member(c, kid, lname, &kid, 0);
			if (err)
				return err > 0 ? 0 : err;
		} else if (btf_is_array(lt)) {
			if (!kt || !btf_is_array(kt))
				return 0;
			lid = lskip(c->local, btf_array(lt)->type);
			kid = kskip(&c->k, btf_array(kt)->type);
		} else {
			return 0;
		}
		err = keep_type(c, kid, 0);
		if (err)
			return err;
	}
	return *endp ? -EPROTO : 0;
}

/* The object's .BTF (as libbpf parses it) and its CO-RE relocation records. */
static int read_object(struct cut *c, const void *image, size_t size)
{
	struct ext_header eh = {};
	Elf_Data *btf = NULL, *ext = NULL, *d;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;
	Elf *elf;
	int err = 0;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)image, size);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto bad;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			goto bad;
		if (strcmp(name, ".BTF") && strcmp(name, ".BTF.ext"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			goto bad;
		if (!strcmp(name, ".BTF"))
			btf = d;
		else
			ext = d;
	}
	if (!btf)
		goto bad;
	c->local = btf__new(btf->d_buf, btf->d_size);
	if (!c->local) {
		err = -errno;
		goto out;
	}
	/* no relocations: an empty BTF does */
	if (!ext)
		goto out;
	/* the section may lie at any byte of the image */
	memcpy(&eh, ext->d_buf, ext->d_size < sizeof(eh) ? ext->d_size : sizeof(eh));
	if (ext->d_size < offsetof(struct ext_header, func_info_off) || eh.magic != BTF_MAGIC ||
	    eh.hdr_len > ext->d_size)
		goto bad;
	if (eh.hdr_len < sizeof(eh) || !eh.core_relo_len)
		goto out;
	if ((size_t)eh.hdr_len + eh.core_relo_off + eh.core_relo_len > ext->d_size)
		goto bad;
	c->relos = (const char *)ext->d_buf + eh.hdr_len + eh.core_relo_off;
	c->relos_len = eh.core_relo_len;
	goto out;
bad:
	err = -EPROTO;
out:
	elf_end(elf);
	return err;
}

/*
 * Each relocation in turn, to FN with its record; a kind other than a
 * field's, or a local type id (which needs no kernel type), is refused.
 */
static int for_each_relo(struct cut *c, int (*fn)(struct cut *, const struct bpf_core_relo *))
{
	const char *p = c->relos, *end = c->relos + c->relos_len;
	struct bpf_core_relo rel;
	__u32 rec_size, nr;
	int err;

	if (!c->relos)
		return 0;
	if (c->relos_len < sizeof(rec_size))
		return -EPROTO;
	memcpy(&rec_size, p, sizeof(rec_size));
	p += sizeof(rec_size);
	if (rec_size < sizeof(rel))
		return -EPROTO;
	while (p < end) {
		/* a section: its name's offset, the count of its records */
		if ((size_t)(end - p) < 2 * sizeof(__u32))
			return -EPROTO;
		memcpy(&nr, p + sizeof(__u32), sizeof(nr));
		p += 2 * sizeof(__u32);
		if (nr > (size_t)(end - p) / rec_size)
			return -EPROTO;
		for (; nr; nr--, p += rec_size) {
			memcpy(&rel, p, sizeof(rel));
			if (rel.kind == BPF_CORE_TYPE_ID_LOCAL)
				continue;
			if (rel.kind > BPF_CORE_FIELD_RSHIFT_U64)
				return -EOPNOTSUPP;
			err = fn(c, &rel);
			if (err)
				return err;
		}
	}
	return 0;
}

static struct root *find_root(struct cut *c, __u32 lid)
{
	__u32 i;

	for (i = 0; i < c->nr_roots; i++) {
		if (c->roots[i].lid == lid)
			return &c->roots[i];
	}
	return NULL;
}

static int add_root(struct cut *c, const struct bpf_core_relo *rel)
{
	const struct btf_type *t = btf__type_by_id(c->local, rel->type_id);
	struct root *grown;
	const char *name;

	if (!t)
		return -EPROTO;
	if (find_root(c, rel->type_id))
		return 0;
	name = btf__name_by_offset(c->local, t->name_off);
	/* libbpf relocates named roots only */
	if (!name || !*name)
		return -EPROTO;
	grown = realloc(c->roots, (c->nr_roots + 1) * sizeof(*c->roots));
	if (!grown)
		return -ENOMEM;
	c->roots = grown;
	c->roots[c->nr_roots++] = (struct root){
		.lid = rel->type_id,
		.kind = btf_kind(t),
		.name = name,
		.len = essential_len(name),
	};
	return 0;
}

static int walk_relo(struct cut *c, const struct bpf_core_relo *rel)
{
	struct root *r = find_root(c, rel->type_id);
	__u32 i;
	int err;

	for (i = 0; i < r->nr_cands; i++) {
		err = walk_field(c, rel, r->cands[i]);
		if (err)
			return err;
	}
	return 0;
}

/* the written id of kernel type KID, which is kept (kept[i] is written as i + 1) */
static int new_id(const struct cut *c, __u32 kid)
{
	__u32 i;

	if (!kid)
		return 0;
	for (i = 0; i < c->nr_kept; i++) {
		if (c->kept[i].kid == kid)
			return i + 1;
	}
	return -EPROTO;
}

static int write_type(const struct cut *c, const struct kept *kp, struct btf *out)
{
	const struct btf_type *t = ktype(&c->k, kp->kid);
	const char *name = kname(&c->k, t->name_off);
	const struct btf_array *a;
	const struct btf_member *m;
	int id, field, index, elem;
	__u32 i;

	switch (btf_kind(t)) {
	case BTF_KIND_INT:
		return btf__add_int(out, name, t->size, btf_int_encoding(t));
	case BTF_KIND_PTR:
		return btf__add_ptr(out, 0);
	case BTF_KIND_TYPEDEF:
		id = new_id(c, kskip(&c->k, t->type));
		return id < 0 ? id : btf__add_typedef(out, name, id);
	case BTF_KIND_ARRAY:
		a = btf_array(t);
		index = new_id(c, kskip(&c->k, a->index_type));
		elem = new_id(c, kskip(&c->k, a->type));
		if (index < 0 || elem < 0)
			return -EPROTO;
		return btf__add_array(out, index, elem, a->nelems);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		id = btf_is_struct(t) ? btf__add_struct(out, name, t->size) :
					btf__add_union(out, name, t->size);
		for (i = 0; id > 0 && i < kp->nr_members; i++) {
			m = btf_members(t) + kp->members[i];
			field = new_id(c, kskip(&c->k, m->type));
			if (field < 0)
				return field;
			field = btf__add_field(out, kname(&c->k, m->name_off), field,
					       btf_member_bit_offset(t, kp->members[i]),
					       btf_member_bitfield_size(t, kp->members[i]));
			if (field < 0)
				return field;
		}
		return id;
	default:
		return -EOPNOTSUPP;
	}
}

/* The kept types in a memory file, for libbpf to parse by its path. */
static int write_btf(const struct cut *c, struct core_btf *cb)
{
	struct btf *out = btf__new_empty();
	const void *raw;
	__u32 size, i, done;
	ssize_t n;
	int err = 0, id;

	if (!out)
		return -errno;
	for (i = 0; i < c->nr_kept; i++) {
		id = write_type(c, &c->kept[i], out);
		if (id != (int)i + 1) {
			err = id < 0 ? id : -EPROTO;
			goto out;
		}
	}
	raw = btf__raw_data(out, &size);
	if (!raw) {
		err = -errno;
		goto out;
	}
	cb->fd = memfd_create("ctxprof-core-btf", MFD_CLOEXEC);
	if (cb->fd < 0) {
		err = -errno;
		goto out;
	}
	for (done = 0; done < size; done += n) {
		n = write(cb->fd, (const char *)raw + done, size - done);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
	}
	snprintf(cb->path, sizeof(cb->path), "/proc/self/fd/%d", cb->fd);
	cb->types = c->nr_kept;
	cb->kernel_types = c->k.nr - 1;
out:
	btf__free(out);
	return err;
}

static void cut__release(struct cut *c)
{
	__u32 i;

	for (i = 0; i < c->nr_kept; i++)
		free(c->kept[i].members);
	free(c->kept);
	for (i = 0; i < c->nr_roots; i++)
		free(c->roots[i].cands);
	free(c->roots);
	btf__free(c->local);
	free(c->k.types);
	if (c->k.mapped)
		munmap(c->k.raw, c->k.size);
	else
		free(c->k.raw);
}

struct core_btf *core_btf__new(const void *elf, size_t elf_size)
{
	struct cut c = {};
	struct core_btf *cb;
	int err;

	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return NULL;
	cb->fd = -1;
	err = read_object(&c, elf, elf_size);
	if (!err)
		err = for_each_relo(&c, add_root);
	if (!err)
		err = kbtf_read(&c.k);
	if (!err)
		err = kbtf_index(&c);
	if (!err)
		err = for_each_relo(&c, walk_relo);
	if (!err)
		err = write_btf(&c, cb);
	cut__release(&c);
	if (err) {
		core_btf__free(cb);
		errno = -err;
		return NULL;
	}
	return cb;
}

const char *core_btf__path(const struct core_btf *cb)
{
	return cb->path;
}

unsigned int core_btf__types(const struct core_btf *cb)
{
	return cb->types;
}

unsigned int core_btf__kernel_types(const struct core_btf *cb)
{
	return cb->kernel_types;
}

void core_btf__free(struct core_btf *cb)
{
	if (!cb)
		return;
	if (cb->fd >= 0)
		close(cb->fd);
	free(cb);
}
