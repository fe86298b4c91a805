// SPDX-License-Identifier: GPL-2.0
/* frame_table.c: each function's frame size by slot of code, for the sampler's walk of arm64 Go before 1.21. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "bpf/ctxprof.h"
#include "offsets/gopclntab.h"
#include "frame_table.h"

/* a frame the table cannot say (more 8-byte words than 16 bits hold) ends the walk, as 0 does */
#define MAX_FRAME_WORDS 0xffff

bool frame_table__needed(const struct go_binary *gb)
{
	return go_binary__before(gb, "arm64", 1, 21);
}

/* Puts FN's size in words into every slot of its code in E, which covers NSLOTS from TEXT. */
static void fill(uint64_t *e, uint64_t nslots, uint64_t text, const struct gopclntab_func *fn,
		 uint32_t size)
{
	uint64_t words = size / 8 <= MAX_FRAME_WORDS ? size / 8 : 0, slot;

	if (!words || fn->entry < text || fn->end <= fn->entry)
		return;
	for (slot = (fn->entry - text) >> FRAME_SLOT_SHIFT;
	     slot < nslots && slot <= (fn->end - 1 - text) >> FRAME_SLOT_SHIFT; slot++) {
		unsigned int shift = 16 * (slot % FRAME_SLOTS_PER_ENTRY);

		e[slot / FRAME_SLOTS_PER_ENTRY] &= ~(0xffffULL << shift);
		e[slot / FRAME_SLOTS_PER_ENTRY] |= words << shift;
	}
}

struct frame_table *frame_table__new(const struct go_binary *gb)
{
	const struct gopclntab *tab = go_binary__pclntab(gb);
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP);
	struct gopclntab_func first, last, fn;
	struct frame_table *ft = NULL;
	uint64_t *entries = NULL;
	uint32_t *keys = NULL, size, count;
	size_t n, i;
	int err;

	if (!tab || !(n = gopclntab__nfunc(tab)) || gopclntab__func(tab, 0, &first) ||
	    gopclntab__func(tab, n - 1, &last) || last.end <= first.entry) {
		errno = ENOENT;
		return NULL;
	}
	ft = calloc(1, sizeof(*ft));
	if (!ft)
		return NULL;
	ft->fd = -1;
	ft->text = first.entry & ~(uint64_t)(FRAME_SLOT_BYTES - 1);
	ft->slots = ((last.end - ft->text) + FRAME_SLOT_BYTES - 1) >> FRAME_SLOT_SHIFT;
	count = (ft->slots + FRAME_SLOTS_PER_ENTRY - 1) / FRAME_SLOTS_PER_ENTRY;
	entries = calloc(count, sizeof(*entries));
	keys = calloc(count, sizeof(*keys));
	if (!entries || !keys)
		goto fail;
	for (i = 0; i < n; i++) {
		if (!gopclntab__func(tab, i, &fn) && !gopclntab__frame_size(tab, &fn, &size))
			fill(entries, ft->slots, ft->text, &fn, size);
	}
	for (i = 0; i < count; i++)
		keys[i] = i;
	ft->fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "frame_table", sizeof(*keys), sizeof(*entries),
				count, &opts);
	if (ft->fd < 0)
		goto fail;
	if (bpf_map_update_batch(ft->fd, keys, entries, &count, NULL))
		goto fail;
	free(entries);
	free(keys);
	return ft;
fail:
	err = errno;
	free(entries);
	free(keys);
	frame_table__free(ft);
	errno = err;
	return NULL;
}

void frame_table__free(struct frame_table *ft)
{
	if (!ft)
		return;
	if (ft->fd >= 0)
		close(ft->fd);
	free(ft);
}
