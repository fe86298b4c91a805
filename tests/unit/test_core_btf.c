// SPDX-License-Identifier: GPL-2.0
/* test_core_btf.c: the sampler's object relocated against the cut kernel BTF comes out as against the whole. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/ctxprof.h"
#include "cmd/record/core_btf.h"
#include "ctxprof.skel.h"
#include "tap.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

static int quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

/* The object loaded with BTF_PATH for its relocations (NULL: libbpf's own, the whole). */
static struct ctxprof_bpf *load(const char *btf_path)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = btf_path);
	struct ctxprof_bpf *skel = ctxprof_bpf__open_opts(&opts);

	if (!skel)
		return NULL;
	if (ctxprof_bpf__load(skel)) {
		ctxprof_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static int programs(struct bpf_object *obj)
{
	struct bpf_program *p;
	int n = 0;

	bpf_object__for_each_program(p, obj)
		n++;
	return n;
}

/* Do two instructions agree, but for the map fd that each load has its own of? */
static bool same_insn(const struct bpf_insn *a, const struct bpf_insn *b)
{
	if (a->code == (BPF_LD | BPF_IMM | BPF_DW) && a->code == b->code &&
	    (a->src_reg == BPF_PSEUDO_MAP_FD || a->src_reg == BPF_PSEUDO_MAP_VALUE))
		return a->dst_reg == b->dst_reg && a->src_reg == b->src_reg && a->off == b->off;
	return !memcmp(a, b, sizeof(*a));
}

/* How many of A's programs differ from B's, instruction for instruction; -1 if one is missing. */
static int differing(struct bpf_object *a, struct bpf_object *b)
{
	const struct bpf_insn *ia, *ib;
	struct bpf_program *pa, *pb;
	size_t i, cnt;
	int n = 0;

	bpf_object__for_each_program(pa, a) {
		pb = bpf_object__find_program_by_name(b, bpf_program__name(pa));
		if (!pb)
			return -1;
		cnt = bpf_program__insn_cnt(pa);
		ia = bpf_program__insns(pa);
		ib = bpf_program__insns(pb);
		if (cnt != bpf_program__insn_cnt(pb) || !ia || !ib) {
			n++;
			continue;
		}
		for (i = 0; i < cnt && same_insn(&ia[i], &ib[i]); i++)
			;
		n += i < cnt;
	}
	return n;
}

/*
 * The cut BTF of CB with one member moved by a word: task_struct's
 * "thread", whose fsbase the sampler reads on every sample. Written to
 * PATH; 0 or an errno.
 */
static int plant_wrong_offset(const struct core_btf *cb, const char *path)
{
	struct btf *btf = btf__parse(core_btf__path(cb), NULL);
	const struct btf_type *t;
	struct btf_member *m;
	const void *raw;
	int id, i, moved = 0;
	__u32 size;
	FILE *f;

	if (!btf)
		return errno;
	id = btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (i = 0; t && i < btf_vlen(t); i++) {
		m = btf_members(t) + i;
		if (!strcmp(btf__name_by_offset(btf, m->name_off), "thread")) {
			m->offset += 64;
			moved = 1;
		}
	}
	raw = btf__raw_data(btf, &size);
	f = moved && raw ? fopen(path, "w") : NULL;
	if (!f) {
		btf__free(btf);
		return ENOENT;
	}
	moved = fwrite(raw, 1, size, f) == size;
	btf__free(btf);
	return fclose(f) || !moved ? EIO : 0;
}

int main(void)
{
	struct ctxprof_bpf *whole = NULL, *cut = NULL, *wrong = NULL;
	char wrong_path[] = "/tmp/test_core_btf.XXXXXX";
	struct core_btf *cb = NULL;
	const void *elf;
	size_t size;
	int fd;

	libbpf_set_print(quiet);
	elf = ctxprof_bpf__elf_bytes(&size);
	if (geteuid() != 0 || access(VMLINUX_BTF, R_OK)) {
		skip("the sampler relocated against the cut BTF",
		     geteuid() ? "not root: no BPF load" : "no " VMLINUX_BTF);
		return tap_done();
	}
	cb = core_btf__new(elf, size);
	if (!check(cb != NULL, "cut the kernel's BTF for the sampler's relocations", "a BTF",
		   strerror(errno)))
		return tap_done();
	check(core_btf__types(cb) > 0 && core_btf__types(cb) < 100 &&
		      core_btf__kernel_types(cb) > 1000,
	      desc("types written: %u of %u", core_btf__types(cb), core_btf__kernel_types(cb)),
	      "a few dozen of many thousands", "not that");

	whole = load(NULL);
	cut = load(core_btf__path(cb));
	if (check(whole && cut, "load the object with the whole BTF and with the cut", "both loaded",
		  whole ? "the cut's failed" : "the whole's failed"))
		check_int(desc("of the %d programs, those whose relocated instructions differ",
			       programs(whole->obj)),
			  0, programs(whole->obj) ? differing(whole->obj, cut->obj) : -1);

	/* the comparison sees a field a word off */
	fd = mkstemp(wrong_path);
	if (fd >= 0)
		close(fd);
	if (fd >= 0 && !plant_wrong_offset(cb, wrong_path))
		wrong = load(wrong_path);
	if (check(wrong && whole, "load the object with task_struct.thread a word off", "loaded",
		  "failed"))
		check(differing(whole->obj, wrong->obj) > 0,
		      "programs that differ with that offset wrong", "at least one", "none");
	if (fd >= 0)
		unlink(wrong_path);

	ctxprof_bpf__destroy(wrong);
	ctxprof_bpf__destroy(cut);
	ctxprof_bpf__destroy(whole);
	core_btf__free(cb);
	return tap_done();
}
