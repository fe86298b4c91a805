// SPDX-License-Identifier: GPL-2.0
/* test_summary.c: the exit summary's leaf names: a generic's type arguments dropped, code no symbol names kept whole. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/output/summary.h"
#include "tap.h"

/* The summary's CPU line of one trace whose only stack's leaf is LEAF. */
static const char *leaf_line(const char *leaf)
{
	static char line[256];
	struct rec_frame fr[] = { { .func = leaf, .addr = 0x401000 } };
	struct rec_stack st = { .samples = 3, .nframes = 1, .frames = fr };
	struct rec r = {
		.trace_id = "aaaa0000000000000000000000000001", .trace_source = "label", .pid = 42,
		.comm = (const uint8_t *)"api", .comm_len = 3, .origin = REC_SAMPLING, .samples = 3,
		.cpu_ns = 30000000, .stacks = &st, .nstacks = 1,
	};
	struct summary *s = summary__new();
	char *text = NULL, *p;
	size_t len = 0;
	FILE *f;

	line[0] = '\0';
	if (!s || summary__add(s, &r) || !(f = open_memstream(&text, &len))) {
		summary__free(s);
		return "failed to add";
	}
	summary__print(s, f, 5, 100);
	fclose(f);
	if (text && (p = strstr(text, "aaaa0000000000000000000000000001")))
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
	free(text);
	summary__free(s);
	return line;
}

int main(void)
{
	check_str("a generic's type arguments are left out",
		  "aaaa0000000000000000000000000001   0.03s slices.pdqsortCmpFunc (100%)",
		  leaf_line("slices.pdqsortCmpFunc[go.shape.int]"));
	check_str("code in the vDSO no symbol names keeps its file's name",
		  "aaaa0000000000000000000000000001   0.03s [vdso]+0x780 (100%)", leaf_line("[vdso]+0x780"));
	return tap_done();
}
