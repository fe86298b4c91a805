// SPDX-License-Identifier: GPL-2.0
/* test_alloc_views.c: alloc records in the exit summary and in folded stacks: traces by bytes, stacks weighed in bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/output/folded.h"
#include "cmd/output/summary.h"
#include "tap.h"

#define T0 1764200000000000000LL
#define PERIOD 10000000LL

static const struct rec_frame small[] = {
	{ .func = "main.allocSmall", .file = "/src/main.go", .line = 20, .addr = 0x401000 },
	{ .func = "main.run", .file = "/src/main.go", .line = 40, .addr = 0x402000 },
};
static const struct rec_frame big[] = {
	{ .func = "main.alloc64K", .file = "/src/main.go", .line = 30, .addr = 0x401100 },
	{ .func = "main.run", .file = "/src/main.go", .line = 40, .addr = 0x402000 },
};
static const struct rec_frame burn[] = {
	{ .func = "main.burn", .file = "/src/main.go", .line = 10, .addr = 0x400f00 },
};

/* An alloc record of TRACE (INHERITED: one its goroutine only inherited), two stacks. */
static struct rec alloc_rec(const char *trace, const char *inherited, const struct rec_stack *st)
{
	return (struct rec){
		.trace_id = trace, .inherited_trace_id = inherited, .trace_source = "label", .pid = 42,
		.comm = (const uint8_t *)"api", .comm_len = 3, .origin = REC_ALLOC,
		.samples = st[0].samples + st[1].samples, .cpu_ns = -1,
		.alloc_objects = st[0].alloc_objects + st[1].alloc_objects,
		.alloc_bytes = st[0].alloc_bytes + st[1].alloc_bytes, .start_ns = T0,
		.end_ns = T0 + PERIOD, .stacks = st, .nstacks = 2,
	};
}

static const struct rec_stack stacks_a[2] = {
	{ .samples = 3, .nframes = 2, .frames = small, .alloc_objects = 900, .alloc_bytes = 57600 },
	{ .samples = 9, .nframes = 2, .frames = big, .alloc_objects = 12, .alloc_bytes = 786432 },
};
static const struct rec_stack stacks_b[2] = {
	{ .samples = 5, .nframes = 2, .frames = small, .alloc_objects = 2000, .alloc_bytes = 2000000 },
	{ .samples = 1, .nframes = 2, .frames = big, .alloc_objects = 1, .alloc_bytes = 65536 },
};

static void test_summary(void)
{
	struct summary *s = summary__new();
	struct rec_stack cpu_st = { .samples = 1, .nframes = 1, .frames = burn };
	struct rec cpu = {
		.trace_id = "aaaa0000000000000000000000000001", .trace_source = "label", .pid = 42,
		.comm = (const uint8_t *)"api", .comm_len = 3, .origin = REC_SAMPLING, .samples = 1,
		.cpu_ns = PERIOD, .start_ns = T0, .end_ns = T0, .stacks = &cpu_st, .nstacks = 1,
	};
	struct rec a = alloc_rec("aaaa0000000000000000000000000001", NULL, stacks_a);
	struct rec b = alloc_rec("bbbb0000000000000000000000000002", NULL, stacks_b);
	struct rec gone = alloc_rec(NULL, "cccc0000000000000000000000000003", stacks_b);
	char *text = NULL, *heading, *line1, *line2;
	size_t len = 0;
	FILE *f;

	check_int("summary__add: a CPU record", 0, summary__add(s, &cpu));
	check_int("summary__add: aaaa's allocations", 0, summary__add(s, &a));
	check_int("summary__add: bbbb's allocations", 0, summary__add(s, &b));
	check_int("summary__add: allocations of a request that had ended", 0, summary__add(s, &gone));
	f = open_memstream(&text, &len);
	summary__print(s, f, 5, 80);
	fclose(f);
	for (line1 = text; line1 && *line1; line1 = strchr(line1, '\n') + 1)
		printf("# %.*s\n", (int)strcspn(line1, "\n"), line1);
	heading = text ? strstr(text, "the costliest traces by allocated bytes, of 2, top allocator:\n") : NULL;
	check(heading != NULL, "a heading for the traces by allocated bytes", "it", "none");
	line1 = heading ? strchr(heading, '\n') + 1 : NULL;
	line2 = line1 ? strchr(line1, '\n') + 1 : NULL;
	/* bbbb allocated 2.07 MB, most of it in main.allocSmall; aaaa 0.84 MB, most in main.alloc64K */
	check(line1 && !strncmp(line1, "bbbb0000000000000000000000000002   2.07MB main.allocSmall (97%)\n",
				strlen("bbbb0000000000000000000000000002   2.07MB main.allocSmall (97%)\n")),
	      "the first: the trace that allocated most, its bytes, its top allocator and its share",
	      "bbbb ... 2.07MB main.allocSmall (97%)", line1 ? line1 : "none");
	check(line2 && !strncmp(line2, "aaaa0000000000000000000000000001   0.84MB main.alloc64K (93%)\n",
				strlen("aaaa0000000000000000000000000001   0.84MB main.alloc64K (93%)\n")),
	      "the second: aaaa, whose bytes are mostly main.alloc64K's though most samples are not",
	      "aaaa ... 0.84MB main.alloc64K (93%)", line2 ? line2 : "none");
	check(text && strstr(text, "inherited, request ended: 0.00s CPU, 0.00s goroutine time, 2.07MB allocated\n"),
	      "the inherited line says the bytes of goroutines whose request had ended", "2.07MB", text ? text : "none");
	check(text && strstr(text, "the costliest traces by CPU, of 1,") != NULL,
	      "the CPU lines count the traces with CPU only", "of 1", text ? text : "none");
	free(text);
	summary__free(s);
}

static void test_folded(void)
{
	struct folded *fo = folded__new();
	struct rec a = alloc_rec("aaaa0000000000000000000000000001", NULL, stacks_a);
	struct rec b = alloc_rec("bbbb0000000000000000000000000002", NULL, stacks_b);
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	check_int("folded__add: aaaa's allocations", 0, folded__add(fo, &a));
	check_int("folded__add: bbbb's allocations", 0, folded__add(fo, &b));
	f = open_memstream(&text, &len);
	check_int("folded__write: the alloc set", 0, folded__write(fo, f, false, FOLDED_ALLOC));
	fclose(f);
	check_str("alloc stacks, counted in bytes, summed over traces",
		  "api;main.run;main.alloc64K 851968\napi;main.run;main.allocSmall 2057600\n", text);
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	check_int("folded__write: the alloc set, the trace ID first", 0, folded__write(fo, f, true, FOLDED_ALLOC));
	fclose(f);
	check_str("each trace's bytes under its ID",
		  "aaaa0000000000000000000000000001;api;main.run;main.alloc64K 786432\n"
		  "aaaa0000000000000000000000000001;api;main.run;main.allocSmall 57600\n"
		  "bbbb0000000000000000000000000002;api;main.run;main.alloc64K 65536\n"
		  "bbbb0000000000000000000000000002;api;main.run;main.allocSmall 2000000\n",
		  text);
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	check_int("folded__write: the CPU set", 0, folded__write(fo, f, false, FOLDED_CPU));
	fclose(f);
	check_str("-f leaves allocations out: they are no CPU time", "", text);
	free(text);
	folded__free(fo);
}

int main(void)
{
	test_summary();
	test_folded();
	return tap_done();
}
