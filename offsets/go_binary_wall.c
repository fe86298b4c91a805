// SPDX-License-Identifier: GPL-2.0
/* go_binary_wall.c: where --wall finds a Go binary's goroutines, their states and wait reasons. */
#include <stdio.h>
#include <string.h>

#include "elf_image.h"
#include "go_allgs.h"
#include "go_binary_priv.h"
#include "go_dwarf.h"
#include "gopclntab.h"
#include "../golayout/golayout.h"

/* A pointer-sized word the file holds at VADDR, as the loader leaves it (a PIE's relocated). */
static bool linked_word(const struct elf_image *img, uint64_t vaddr, uint64_t *out)
{
	const uint8_t *p = elf_image__at(img, vaddr, 8);

	if (!p)
		return false;
	if (elf_image__relative_addend(img, vaddr, out) != 0)
		*out = word(p);
	return true;
}

/* Entry I of a []string-shaped array at BASE, when it is a plausible wait reason's name. */
static bool reason_at(const struct go_binary *gb, uint64_t base, size_t i, char *out, size_t outlen)
{
	const uint8_t *str;
	uint64_t ptr, len;
	size_t k;

	if (!linked_word(gb->img, base + 16 * i, &ptr) ||
	    !linked_word(gb->img, base + 16 * i + 8, &len) || len >= outlen)
		return false;
	str = len ? elf_image__at(gb->img, ptr, len) : NULL;
	if (len && !str)
		return false;
	for (k = 0; k < len; k++) {
		if (str[k] < ' ' || str[k] > '~')
			return false;
	}
	memcpy(out, str ?: (const uint8_t *)"", len);
	out[len] = '\0';
	return true;
}

/*
 * Go's own names of the reasons a goroutine waits, runtime.waitReasonStrings:
 * an array of strings, as the binary spells them, so each release's set and
 * numbering is its own. From the symbol table; false when it has none.
 */
static bool symtab_wait_reasons(struct go_binary *gb, struct go_wall_layout *w)
{
	GElf_Sym sym;
	size_t i;

	if (elf_image__symbol(gb->img, "runtime.waitReasonStrings", &sym) != 0 || sym.st_size % 16)
		return false;
	w->nreasons = sym.st_size / 16 < MAX_WAIT_REASONS ? sym.st_size / 16 : MAX_WAIT_REASONS;
	for (i = 0; i < w->nreasons; i++) {
		if (!reason_at(gb, sym.st_value, i, w->reasons[i], sizeof(w->reasons[i])))
			return false;
	}
	return true;
}

/*
 * The same array in a stripped binary, from its data: every release since
 * 1.19 names reason 1 "GC assist marking" and reason 0 "". Its string is
 * found in .rodata, then the string header that points to it in .data;
 * entries are read until one is no name, and when the table knows the
 * release and agrees on its entries, its count is taken (what follows the
 * array is never indexed, but check should count right).
 */
static bool data_wait_reasons(struct go_binary *gb, struct go_wall_layout *w)
{
	static const char first[] = "GC assist marking";
	const char *table[MAX_WAIT_REASONS];
	const uint8_t *ro, *data, *hit;
	uint64_t ro_addr, data_addr, want, ptr, base = 0;
	size_t ro_len, data_len, off, ntable, i;

	ro = elf_image__section(gb->img, ".rodata", &ro_len, &ro_addr);
	data = elf_image__section(gb->img, ".data", &data_len, &data_addr);
	if (!ro || !data)
		return false;
	for (off = 0; !base && off + sizeof(first) - 1 <= ro_len; off = hit - ro + 1) {
		hit = memmem(ro + off, ro_len - off, first, sizeof(first) - 1);
		if (!hit)
			break;
		want = ro_addr + (hit - ro);
		for (i = 16; !base && i + 16 <= data_len; i += 8) {
			if (word(data + i + 8) != sizeof(first) - 1 ||
			    !linked_word(gb->img, data_addr + i, &ptr) || ptr != want ||
			    word(data + i - 8) != 0)
				continue;
			base = data_addr + i - 16;
		}
	}
	if (!base)
		return false;
	for (w->nreasons = 0; w->nreasons < MAX_WAIT_REASONS; w->nreasons++) {
		if (!reason_at(gb, base, w->nreasons, w->reasons[w->nreasons],
			       sizeof(w->reasons[0])))
			break;
	}
	if (w->nreasons < 2 || strcmp(w->reasons[0], "") || strcmp(w->reasons[1], first))
		return false;
	ntable = golayout__wait_reasons(gb->major, gb->minor, table, MAX_WAIT_REASONS);
	for (i = 0; i < ntable && i < w->nreasons && !strcmp(table[i], w->reasons[i]); i++)
		;
	if (ntable && i == ntable)
		w->nreasons = ntable;
	return true;
}

/* The release's names from the golayout table: false when it has none. */
static bool table_wait_reasons(struct go_binary *gb, struct go_wall_layout *w)
{
	const char *table[MAX_WAIT_REASONS];
	size_t i;

	w->nreasons = golayout__wait_reasons(gb->major, gb->minor, table, MAX_WAIT_REASONS);
	for (i = 0; i < w->nreasons; i++)
		snprintf(w->reasons[i], sizeof(w->reasons[i]), "%s", table[i]);
	return w->nreasons > 0;
}

/*
 * runtime.allgs and runtime.allglen without a symbol table: decoded from
 * runtime.allgadd, which .gopclntab still names. The decoding is checked
 * against where the linker must have put them: allgs, a slice of
 * pointers, in .bss; allglen, a uintptr, in .noptrbss.
 */
static const char *code_allgs(struct go_binary *gb, uint64_t *allgs, uint64_t *allglen)
{
	struct gopclntab_func fn;
	const uint8_t *code;

	if (!gb->pcln || gopclntab__find(gb->pcln, "runtime.allgadd", &fn) != 0)
		return "no symbol table, and .gopclntab has no runtime.allgadd to find runtime.allgs in";
	code = fn.end > fn.entry ? elf_image__at(gb->img, fn.entry, fn.end - fn.entry) : NULL;
	if (!code)
		return "no symbol table, and runtime.allgadd's code cannot be read";
	if ((gb->arm64 ? go_allgs__decode_allgadd_arm64 : go_allgs__decode_allgadd)(
		    code, fn.end - fn.entry, fn.entry, allgs, allglen) != 0)
		return "no symbol table, and runtime.allgadd's code does not store allglen as "
		       "releases 1.19 to 1.27 do: runtime.allgs not found (never guessed)";
	if (!in_section(gb, ".bss", *allgs, 24) || !in_section(gb, ".noptrbss", *allglen, 8))
		return "no symbol table, and what runtime.allgadd's code names as runtime.allgs "
		       "and allglen is not in .bss and .noptrbss: not used";
	return NULL;
}

/* The bytes of a g that --wall reads: every member it reads, g.stack (at 0) too, lies in [0, g_read). */
static void wall_window(struct go_wall_layout *w, const struct go_layout *l)
{
	const struct go_wall_offsets *o = &w->off;
	const uint32_t at[][2] = {
		{ o->g_sched + o->gobuf_sp, 8 }, { o->g_sched + o->gobuf_pc, 8 },
		{ o->g_sched + o->gobuf_bp, 8 }, { o->g_syscallsp, 8 }, { o->g_syscallpc, 8 },
		{ o->g_sched + o->gobuf_lr, 8 },
		{ o->g_status, 4 }, { o->g_waitreason, 1 }, { l->g_goid, 8 }, { l->g_labels, 8 },
		{ l->g_parent_goid ?: l->g_goid, 8 },
	};
	size_t i;

	w->g_read = 16;
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		if (at[i][0] + at[i][1] > w->g_read)
			w->g_read = at[i][0] + at[i][1];
	}
}

/*
 * --wall reads every goroutine through runtime.allgs, and each g's
 * scheduling members: those from DWARF, else the golayout row of the
 * release; allgs from the symbol table, else runtime.allgadd's code; the
 * names of wait reasons from the symbol table, the binary's data or the
 * table. Each says where it came from; what cannot be found is refused.
 */
void go_binary_wall__find(struct go_binary *gb, const struct go_dwarf_result *dw)
{
	const struct golayout_row *row = golayout__lookup(gb->major, gb->minor);
	struct go_wall_layout *w = &gb->wall;
	GElf_Sym allgs, allglen;
	const char *why;

	if (dw && dw->wall.ok) {
		w->off = dw->wall;
		w->offsets_from = "dwarf";
	} else if (gb->source == GO_SOURCE_TABLE && row && row->wall.known) {
		w->off = (struct go_wall_offsets){
			.ok = true,
			.g_status = row->wall.g_status,
			.g_waitreason = row->wall.g_waitreason,
			.g_sched = row->wall.g_sched,
			.gobuf_sp = row->wall.gobuf_sp,
			.gobuf_pc = row->wall.gobuf_pc,
			.gobuf_bp = row->wall.gobuf_bp,
			.g_syscallsp = row->wall.g_syscallsp,
			.g_syscallpc = row->wall.g_syscallpc,
			.gobuf_lr = row->wall.gobuf_lr,
		};
		w->offsets_from = "table";
	} else {
		snprintf(gb->wall_problem, NOTE_LEN, "%s",
			 dw ? "DWARF: runtime.g lacks atomicstatus, waitreason, sched {sp, pc, bp, lr} "
			      "or syscallsp/syscallpc" :
			 row && !row->verified ?
			      "no DWARF, and the golayout row of this Go release is a public "
			      "reference without runtime.g's scheduling members (atomicstatus, "
			      "waitreason, sched): rebuild without -w or strip" :
			 row ? "no DWARF, and the golayout row of this Go release has no "
			       "runtime.g scheduling members: regenerate it with 'make golayout'" :
			      "no DWARF, and no golayout row with runtime.g's scheduling members "
			      "(atomicstatus, waitreason, sched) for this Go release");
		return;
	}
	if (elf_image__symbol(gb->img, "runtime.allgs", &allgs) == 0 &&
	    elf_image__symbol(gb->img, "runtime.allglen", &allglen) == 0) {
		w->allgs = allgs.st_value;
		w->allglen = allglen.st_value;
		w->goroutines_from = "symtab";
	} else if ((why = code_allgs(gb, &w->allgs, &w->allglen)) != NULL) {
		snprintf(gb->wall_problem, NOTE_LEN, "%s", why);
		return;
	} else {
		w->goroutines_from = "code";
	}
	if (symtab_wait_reasons(gb, w))
		w->reasons_from = "symtab";
	else if (data_wait_reasons(gb, w))
		w->reasons_from = "data";
	else if (table_wait_reasons(gb, w))
		w->reasons_from = "table";
	else {
		snprintf(gb->wall_problem, NOTE_LEN,
			 "runtime.waitReasonStrings, Go's names of wait reasons, is neither in the "
			 "symbol table nor found in the binary's data, and the golayout table has "
			 "none for this Go release");
		return;
	}
	wall_window(w, &gb->layout);
}
