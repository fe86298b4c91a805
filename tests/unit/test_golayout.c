// SPDX-License-Identifier: GPL-2.0
/* test_golayout.c: the per-release layout table built from golayout/golayout.tsv. */
#include <string.h>

#include "golayout/golayout.h"
#include "tap.h"

static const char *row_str(char *buf, size_t size, const struct golayout_row *row)
{
	if (!row)
		snprintf(buf, size, "NULL");
	else
		snprintf(buf, size, "%d.%d %s", row->major, row->minor,
			 row->verified ? "verified" : "reference");
	return buf;
}

static const char *layout_name(unsigned int labels_layout)
{
	switch (labels_layout) {
	case GO_LABELS_MAP:
		return "GO_LABELS_MAP";
	case GO_LABELS_SLICE:
		return "GO_LABELS_SLICE";
	default:
		return "neither";
	}
}

/* Rows the tests rely on, read off golayout/golayout.tsv. */
static void test_lookup(void)
{
	static const struct {
		int major, minor;
		bool exists, verified;
	} cases[] = {
		{ 1, 17, true, false },
		{ 1, 21, true, true },
		{ 1, 24, true, true },
		{ 1, 16, false },
		{ 2, 0, false },
		{ 0, 0, false },
	};
	char expected[32], got[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].exists)
			snprintf(expected, sizeof(expected), "%d.%d %s", cases[i].major,
				 cases[i].minor, cases[i].verified ? "verified" : "reference");
		else
			snprintf(expected, sizeof(expected), "NULL");
		row_str(got, sizeof(got), golayout__lookup(cases[i].major, cases[i].minor));
		verdict(strcmp(expected, got) == 0,
			desc("golayout__lookup(%d, %d)", cases[i].major, cases[i].minor), expected,
			got);
	}
}

static void test_rows(void)
{
	const struct golayout_row *r;

	r = golayout__lookup(1, 21);
	if (check(r != NULL, "Go 1.21 row", "present", "missing")) {
		check_str("Go 1.21 labels layout", "GO_LABELS_MAP",
			  layout_name(r->layout.labels_layout));
		check_int("Go 1.21 g.labels offset", 344, r->layout.g_labels);
		check_str("Go 1.21 toolchain", "go1.21.13", r->toolchain);
	}
	r = golayout__lookup(1, 24);
	if (check(r != NULL, "Go 1.24 row", "present", "missing")) {
		check_str("Go 1.24 labels layout", "GO_LABELS_SLICE",
			  layout_name(r->layout.labels_layout));
		check_int("Go 1.24 label size", 32, r->layout.label_size);
	}
	r = golayout__lookup(1, 17);
	if (check(r != NULL, "Go 1.17 row", "present", "missing"))
		check_str("Go 1.17 toolchain (reference row)", "", r->toolchain);
	check_str("golayout__range()", "1.17 to 1.27", golayout__range());
}

/* Properties every row must have, whatever the release. */
/*
 * --wall on stripped binaries: a row measured here has runtime.g's
 * scheduling members and its release's names of wait reasons; a public
 * reference row has neither, and is refused rather than guessed.
 */
static void wall_row(const struct golayout_row *r)
{
	const struct golayout_wall *w = &r->wall;
	const char *reasons[64];
	size_t n = golayout__wait_reasons(r->major, r->minor, reasons, 64);

	if (!r->verified) {
		check(!w->known && !n,
		      desc("Go %d.%d (reference): no scheduling members, no wait reasons", r->major,
			   r->minor),
		      "none", "some");
		return;
	}
	check(w->known && w->g_sched && w->gobuf_pc && w->g_status && w->g_syscallsp &&
		      w->gobuf_sp != w->gobuf_pc && w->gobuf_pc != w->gobuf_bp,
	      desc("Go %d.%d: g.atomicstatus %u, g.sched %u {sp %u, pc %u, bp %u}, g.syscallsp %u",
		   r->major, r->minor, w->g_status, w->g_sched, w->gobuf_sp, w->gobuf_pc,
		   w->gobuf_bp, w->g_syscallsp),
	      "measured, distinct", "missing");
	check(n > 20 && !strcmp(reasons[0], "") && !strcmp(reasons[1], "GC assist marking"),
	      desc("Go %d.%d: %zu names of wait reasons, \"\" then \"GC assist marking\"", r->major,
		   r->minor, n),
	      "yes", "no");
}

static void test_all_rows(void)
{
	const struct golayout_row *r;
	char prefix[16], expected[32];
	size_t i, n = golayout__count();
	const struct go_layout *l;

	check(n > 0 && golayout__row(n) == NULL,
	      desc("golayout__row(%zu), one past the last", n), "NULL", "a row");
	for (i = 0; i < n; i++) {
		r = golayout__row(i);
		l = &r->layout;
		check(golayout__lookup(r->major, r->minor) == r,
		      desc("row %zu (Go %d.%d) is what golayout__lookup returns", i, r->major,
			   r->minor),
		      "the same row", "another row");
		check(l->g_m && l->m_curg && l->g_labels && l->g_goid,
		      desc("Go %d.%d: g.m %u, m.curg %u, g.labels %u, g.goid %u all set", r->major,
			   r->minor, l->g_m, l->m_curg, l->g_labels, l->g_goid),
		      "nonzero", "a zero offset");
		check(l->tls_g_offset == 0, desc("Go %d.%d: tls_g_offset", r->major, r->minor),
		      "0 (per binary)", "nonzero");
		switch (l->labels_layout) {
		case GO_LABELS_MAP:
			check(l->lmap.size > l->lmap.overflow,
			      desc("Go %d.%d map: bucket size %u > overflow offset %u", r->major,
				   r->minor, l->lmap.size, l->lmap.overflow),
			      "true", "false");
			break;
		case GO_LABELS_SLICE:
			/* the value is a Go string, 16 bytes, at the end of the label */
			check(l->label_value + 16 <= l->label_size,
			      desc("Go %d.%d slice: value offset %u + 16 <= label size %u",
				   r->major, r->minor, l->label_value, l->label_size),
			      "true", "false");
			break;
		default:
			check_str(desc("Go %d.%d labels layout", r->major, r->minor),
				  "GO_LABELS_MAP or GO_LABELS_SLICE",
				  layout_name(l->labels_layout));
		}
		/* verified rows name the toolchain they came from */
		snprintf(prefix, sizeof(prefix), "go%d.%d", r->major, r->minor);
		snprintf(expected, sizeof(expected), "a %s.N toolchain", prefix);
		if (r->verified)
			check(strncmp(r->toolchain, prefix, strlen(prefix)) == 0 &&
				      (r->toolchain[strlen(prefix)] == '.' ||
				       r->toolchain[strlen(prefix)] == '\0'),
			      desc("Go %d.%d verified with %s", r->major, r->minor, r->toolchain),
			      expected, r->toolchain);
		wall_row(r);
	}
}

int main(void)
{
	test_lookup();
	test_rows();
	test_all_rows();
	return tap_done();
}
