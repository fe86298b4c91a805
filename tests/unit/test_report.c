// SPDX-License-Identifier: GPL-2.0
/* test_report.c: the report page and speedscope writers: strings safe in <script>, what a page holds, the profiles' time and bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "cmd/output/jsonw.h"
#include "cmd/output/recset.h"
#include "cmd/output/report.h"
#include "cmd/output/speedscope.h"
#include "tap.h"

#define T0 1764200000000000000LL
#define PERIOD 10000000LL

/* What no string in the page may hold, whatever its labels: the end of the element, a comment's start. */
static void test_script_safe(void)
{
	static const char hostile[] = "</script><!--\"\\\x01\xe2\x80\xa8\xe2\x80\xa9&>";
	struct strbuf b = {};
	json_error_t jerr;
	json_t *v;

	jsonw__str(&b, hostile, sizeof(hostile) - 1);
	strbuf__put(&b, "", 1);
	check(!strstr(b.p, "<") && !strstr(b.p, ">") && !strstr(b.p, "&") && !strstr(b.p, "\xe2\x80\xa8"),
	      "no <, >, & or U+2028 left in the string", "none", b.p);
	v = json_loads(b.p, JSON_DECODE_ANY, &jerr);
	check_str("... and it reads back as it was", hostile, v ? json_string_value(v) : jerr.text);
	json_decref(v);
	b.n = 0;
	jsonw__text(&b, "{\"k</script>\":\"a\xe2\x80\xa9<b>\"}", strlen("{\"k</script>\":\"a\xe2\x80\xa9<b>\"}"));
	strbuf__put(&b, "", 1);
	v = json_loads(b.p, 0, &jerr);
	check(v && !strchr(b.p, '<') && !strcmp(json_string_value(json_object_get(v, "k</script>")), "a\xe2\x80\xa9<b>"),
	      "a label set's JSON keeps its keys and values, escaped", "same", b.p);
	json_decref(v);
	strbuf__free(&b);
}

static const struct rec_frame frames_a[] = {
	{ .func = "main.burn", .file = "/src/main.go", .line = 12, .addr = 0x401000 },
	{ .func = "main.handle", .file = "/src/main.go", .line = 30, .addr = 0x402000 },
};
static const struct rec_frame frames_b[] = {
	{ .func = "main.burn", .file = "/src/main.go", .line = 13, .addr = 0x401010 },
	{ .func = "main.handle", .file = "/src/main.go", .line = 30, .addr = 0x402000 },
};

/* A CPU record of TRACE: N samples in two stacks, every one timed (goroutine 7) when TIMED. */
static void add_cpu(struct recset *rs, const char *trace, uint64_t n, int64_t start, bool timed)
{
	struct rec_time *t = calloc(n, sizeof(*t));
	struct rec_label l = { (const uint8_t *)"otel.traceid", (const uint8_t *)trace, 12, trace ? 32 : 0 };
	struct rec_stack st[2] = { { n - 1, 2, frames_a, timed ? n - 1 : 0, t }, { 1, 2, frames_b, timed, t + n - 1 } };
	struct rec r = {
		.trace_id = trace, .trace_source = "label", .labels = &l, .nlabels = trace ? 1 : 0,
		.pid = 42, .comm = (const uint8_t *)"api", .comm_len = 3, .origin = REC_SAMPLING,
		.samples = n, .cpu_ns = n * PERIOD, .start_ns = start, .end_ns = start + n * PERIOD,
		.stacks = st, .nstacks = 2,
	};
	uint64_t i;

	for (i = 0; i < n; i++)
		t[i] = (struct rec_time){ start + (int64_t)(i + 1) * PERIOD, 7, 1 };
	check_int(desc("recset__add: %s, %llu samples", trace ?: "no trace", (unsigned long long)n), 0,
		  recset__add(rs, &r));
	free(t);
}

static void add_wall(struct recset *rs, const char *trace, uint64_t n, int64_t start)
{
	struct rec_time t = { start, 8, n };
	struct rec_stack st = { n, 2, frames_a, 1, &t };
	struct rec r = {
		.trace_id = trace, .trace_source = "label", .pid = 42, .comm = (const uint8_t *)"api",
		.comm_len = 3, .origin = REC_WALL, .samples = n, .cpu_ns = -1, .wall_ns = n * 2 * PERIOD,
		.state = "waiting", .wait_reason = "chan receive", .start_ns = start, .end_ns = start,
		.stacks = &st, .nstacks = 1,
	};

	check_int("recset__add: a wall record", 0, recset__add(rs, &r));
}

/*
 * An alloc record of TRACE: N sampled allocations in one stack, timed,
 * BYTES and OBJECTS unbiased (BYTES need not divide by N).
 */
static void add_alloc(struct recset *rs, const char *trace, uint64_t n, int64_t bytes,
		      int64_t objects, int64_t start)
{
	struct rec_time *t = calloc(n, sizeof(*t));
	struct rec_stack st = { n, 2, frames_a, n, t, objects, bytes };
	struct rec r = {
		.trace_id = trace, .trace_source = "label", .pid = 42, .comm = (const uint8_t *)"api",
		.comm_len = 3, .origin = REC_ALLOC, .samples = n, .cpu_ns = -1, .alloc_objects = objects,
		.alloc_bytes = bytes, .start_ns = start, .end_ns = start + (int64_t)n * PERIOD,
		.stacks = &st, .nstacks = 1,
	};
	uint64_t i;

	for (i = 0; i < n; i++)
		t[i] = (struct rec_time){ start + (int64_t)(i + 1) * PERIOD, 9, 1 };
	check_int(desc("recset__add: an alloc record of %s, %lld bytes", trace ?: "no trace", (long long)bytes),
		  0, recset__add(rs, &r));
	free(t);
}

static void test_recset(void)
{
	struct recset *rs = recset__new();
	const struct recset_trace *tr;
	const struct recset_frame *fr;
	uint32_t order[4];
	size_t n, full;

	add_cpu(rs, "aaaa0000000000000000000000000001", 10, T0, true);
	add_cpu(rs, "bbbb0000000000000000000000000002", 30, T0, true);
	add_cpu(rs, NULL, 5, T0, false);
	add_wall(rs, "aaaa0000000000000000000000000001", 40, T0 + 5 * PERIOD);
	fr = recset__frames(rs, &n);
	check_int("frames kept once each: two lines of main.burn, one of main.handle", 3, n);
	(void)fr;
	tr = recset__traces(rs, &n);
	check_int("three traces, the one without a trace ID among them", 3, n);
	check_int("trace aaaa: its CPU", 10 * PERIOD, tr[0].cpu_ns);
	check_int("trace aaaa: its wall clock", 80 * PERIOD, tr[0].wall_ns);
	check_int("trace aaaa: frames of its stacks", 6, tr[0].frames);
	check_int("trace aaaa: its times (10 CPU samples, 1 look)", 11, tr[0].times);
	full = recset__choose(rs, 10, 1000, 1000, order);
	check_int("all fit: all in full", 3, full);
	check_str("costliest first: aaaa (CPU and wall), bbbb, none", "0 1 2",
		  desc("%u %u %u", order[0], order[1], order[2]));
	full = recset__choose(rs, 1, 1000, 1000, order);
	check(full == 1 && tr[0].full && !tr[1].full, "one trace at most: the costliest", "1", desc("%zu", full));
	/* aaaa holds 6 frames: a bound of 5 stops at it, and nothing after it is taken */
	full = recset__choose(rs, 10, 5, 1000, order);
	check_int("the first that does not fit ends the list", 0, full);
	full = recset__choose(rs, 10, 1000, 41, order);
	check_int("times: aaaa's 11 and bbbb's 30 fit in 41, the third's none too", 3, full);
	recset__free(rs);

	/* allocations: kept, not events; a trace that only allocated ranks by its bytes among equals */
	rs = recset__new();
	add_cpu(rs, "aaaa0000000000000000000000000001", 10, T0, true);
	add_alloc(rs, "aaaa0000000000000000000000000001", 3, 1000, 7, T0);
	add_alloc(rs, "cccc0000000000000000000000000003", 2, 500, 2, T0 - PERIOD);
	add_alloc(rs, "dddd0000000000000000000000000004", 2, 900, 3, T0);
	tr = recset__traces(rs, &n);
	check_int("allocations are records, not events", 0, recset__events(rs));
	check_int("trace aaaa: its allocated bytes", 1000, tr[0].alloc_bytes);
	check_int("trace aaaa: its allocated objects", 7, tr[0].alloc_objects);
	check_int("trace aaaa: its times (10 CPU samples, 3 allocations)", 13, tr[0].times);
	check_int("trace cccc: its first time is its allocation's", T0 - PERIOD, tr[1].first_ns);
	recset__choose(rs, 10, 1000, 1000, order);
	check_str("costliest first: aaaa (CPU), then dddd (900 bytes) before cccc (500, earlier)", "0 2 1",
		  desc("%u %u %u", order[0], order[1], order[2]));
	recset__free(rs);
}

/* FILE's whole text, NUL-terminated; NULL when it cannot be read. */
static char *slurp(const char *file, size_t *len)
{
	FILE *f = fopen(file, "r");
	char *p = NULL;
	size_t cap = 0, n;

	*len = 0;
	if (!f)
		return NULL;
	do {
		if (*len + 65536 + 1 > cap && !(p = realloc(p, cap = 2 * cap + 65536 + 1)))
			break;
		n = fread(p + *len, 1, 65536, f);
		*len += n;
	} while (n > 0);
	fclose(f);
	if (p)
		p[*len] = '\0';
	return p;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

/* The index of NAME in the page's list FIELD ("record_fields"), -1 when not there. */
static int field(json_t *d, const char *list, const char *name)
{
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(d, list), i, v)
		if (!strcmp(json_string_value(v), name))
			return (int)i;
	return -1;
}

/* The page's alloc record (the third): its origin by name, its bytes and objects, and its stack's. */
static void check_alloc_row(json_t *d)
{
	json_t *row = json_array_get(json_object_get(d, "records"), 2);
	json_t *origin = json_array_get(json_object_get(d, "origins"),
					json_integer_value(json_array_get(row, field(d, "record_fields", "origin"))));
	json_t *st = json_array_get(json_array_get(row, field(d, "record_fields", "stacks")), 0);

	check_str("the alloc record's origin, by the page's list of them", "alloc", json_string_value(origin));
	check_int("... its alloc_bytes", 1000,
		  json_integer_value(json_array_get(row, field(d, "record_fields", "alloc_bytes"))));
	check_int("... its alloc_objects", 7,
		  json_integer_value(json_array_get(row, field(d, "record_fields", "alloc_objects"))));
	check_int("... its stack's alloc_bytes", 1000,
		  json_integer_value(json_array_get(st, field(d, "stack_fields", "alloc_bytes"))));
	check_int("... its stack's alloc_objects", 7,
		  json_integer_value(json_array_get(st, field(d, "stack_fields", "alloc_objects"))));
	check_int("... its stack's times", 3,
		  json_array_size(json_array_get(st, field(d, "stack_fields", "times_us"))));
	row = json_array_get(json_object_get(d, "records"), 0);
	check_int("a CPU record has no alloc_bytes (-1)", -1,
		  json_integer_value(json_array_get(row, field(d, "record_fields", "alloc_bytes"))));
}

static void test_page(void)
{
	char path[] = "/tmp/test_report.XXXXXX", *page, *data, *end;
	struct recset *rs = recset__new();
	struct rec_label l[2] = {
		{ (const uint8_t *)"otel.traceid", (const uint8_t *)"cccc0000000000000000000000000003", 12, 32 },
		{ (const uint8_t *)"x</script>", (const uint8_t *)"<img src=x onerror=alert(1)>", 10, 28 },
	};
	struct rec_stack st = { 1, 2, frames_a };
	struct rec r = {
		.trace_id = "cccc0000000000000000000000000003", .trace_source = "label", .labels = l,
		.nlabels = 2, .pid = 42, .comm = (const uint8_t *)"</script>", .comm_len = 9,
		.origin = REC_SAMPLING, .samples = 1, .cpu_ns = PERIOD, .start_ns = T0, .end_ns = T0,
		.stacks = &st, .nstacks = 1,
	};
	json_error_t jerr;
	struct stat sb;
	size_t len;
	json_t *d;
	int fd;

	fd = mkstemp(path);
	close(fd);
	unlink(path);
	add_cpu(rs, "aaaa0000000000000000000000000001", 10, T0, true);
	recset__add(rs, &r);
	add_alloc(rs, "aaaa0000000000000000000000000001", 3, 1000, 7, T0);
	check_int("report__write", 0, report__write(rs, path, "hostile.jsonl"));
	check_int("the page is private", 0600, stat(path, &sb) ? -1 : (long long)(sb.st_mode & 0777));
	page = slurp(path, &len);
	check_int("two script elements end in the page: the records' and the script", 2,
		  page ? count(page, "</script") : 0);
	check_int("no placeholder left", 0, page ? count(page, "@@") : 1);
	check(page && strstr(page, "script-src 'sha256-") && strstr(page, "default-src 'none'"),
	      "a Content-Security-Policy lets the script run by its hash, and nothing load", "both",
	      "missing");
	data = page ? strstr(page, "id=\"ctxprof-data\">") : NULL;
	end = data ? strstr(data, "</script>") : NULL;
	d = end ? json_loadb(data + 18, end - data - 18, 0, &jerr) : NULL;
	check(d != NULL, "the records' JSON parses", "JSON", d ? "JSON" : jerr.text);
	check_int("its records", 3, json_array_size(json_object_get(d, "records")));
	check_int("its traces in full", 2, json_integer_value(json_object_get(d, "traces_full")));
	check_int("no event: allocations are drawn", 0, json_integer_value(json_object_get(d, "events")));
	check_alloc_row(d);
	check_str("the hostile label comes back as its text", "<img src=x onerror=alert(1)>",
		  json_string_value(json_object_get(
			  json_array_get(json_object_get(d, "labelsets"), 1), "x</script>")));
	json_decref(d);
	free(page);
	unlink(path);
	check(report__write(rs, "/nonexistent/dir/page.html", "x") == -ENOENT,
	      "a path that cannot be written is an error", "-ENOENT", "another");
	recset__free(rs);
}

/* The nanoseconds under an evented profile's root, and whether every close matches its open. */
static long long evented_total(json_t *p, bool *nested)
{
	json_t *ev, *e;
	long long total = 0, start = 0, depth = 0, last = -1;
	size_t i;

	*nested = true;
	ev = json_object_get(p, "events");
	json_array_foreach(ev, i, e) {
		long long at = json_integer_value(json_object_get(e, "at"));

		if (at < last)
			*nested = false;
		last = at;
		if (!strcmp(json_string_value(json_object_get(e, "type")), "O")) {
			if (!depth++)
				start = at;
		} else if (!--depth) {
			total += at - start;
		} else if (depth < 0) {
			*nested = false;
		}
	}
	if (depth)
		*nested = false;
	return total;
}

static long long sampled_total(json_t *p)
{
	json_t *w;
	long long total = 0;
	size_t i;

	json_array_foreach(json_object_get(p, "weights"), i, w)
		total += json_integer_value(w);
	return total;
}

static void test_speedscope(void)
{
	char path[] = "/tmp/test_speedscope.XXXXXX";
	struct recset *rs = recset__new();
	json_error_t jerr;
	json_t *d, *p;
	bool nested = false;
	size_t i;
	int fd;

	fd = mkstemp(path);
	close(fd);
	add_cpu(rs, "aaaa0000000000000000000000000001", 10, T0, true);
	/* two goroutines of bbbb at once: its samples overlap and are laid end to end */
	add_cpu(rs, "bbbb0000000000000000000000000002", 4, T0, true);
	add_cpu(rs, "bbbb0000000000000000000000000002", 4, T0 + PERIOD / 2, true);
	add_cpu(rs, NULL, 5, T0, false);
	add_wall(rs, "aaaa0000000000000000000000000001", 40, T0 + 5 * PERIOD);
	/* 1000 bytes in 3 samples: the shares add up to them to the byte */
	add_alloc(rs, "aaaa0000000000000000000000000001", 3, 1000, 7, T0);
	add_alloc(rs, NULL, 2, 501, 2, T0);
	check_int("speedscope__write", 0, speedscope__write(rs, path, "run.jsonl"));
	d = json_load_file(path, 0, &jerr);
	check(d != NULL, "the file parses", "JSON", d ? "JSON" : jerr.text);
	check_str("its schema", "https://www.speedscope.app/file-format-schema.json",
		  json_string_value(json_object_get(d, "$schema")));
	json_array_foreach(json_object_get(d, "profiles"), i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		const char *type = json_string_value(json_object_get(p, "type"));
		long long want = !strcmp(name, "whole run · CPU") ? 23 * PERIOD :
				 !strcmp(name, "whole run · goroutine time") ? 80 * PERIOD :
				 !strcmp(name, "aaaa0000000000000000000000000001 · CPU") ? 10 * PERIOD :
				 !strcmp(name, "aaaa0000000000000000000000000001 · goroutine time") ? 80 * PERIOD :
				 !strcmp(name, "bbbb0000000000000000000000000002 · CPU") ? 8 * PERIOD :
				 !strcmp(name, "no trace ID · CPU") ? 5 * PERIOD :
				 !strcmp(name, "whole run · allocated bytes") ? 1501 :
				 !strcmp(name, "aaaa0000000000000000000000000001 · allocated bytes") ? 1000 :
				 !strcmp(name, "no trace ID · allocated bytes") ? 501 : -1;
		long long got = !strcmp(type, "evented") ? evented_total(p, &nested) : sampled_total(p);

		check_int(desc("%s (%s): its time or bytes", name, type), want, got);
		check_str(desc("%s: its unit", name), strstr(name, "bytes") ? "bytes" : "nanoseconds",
			  json_string_value(json_object_get(p, "unit")));
		if (!strcmp(name, "aaaa0000000000000000000000000001 · allocated bytes"))
			check_int("an allocation profile: a sample an allocation", 3,
				  json_array_size(json_object_get(p, "weights")));
		if (!strcmp(type, "evented"))
			check(nested, desc("%s: events nest and keep time order", name), "nested", "not");
		if (!strcmp(name, "no trace ID · CPU"))
			check_str("samples without their time: a sampled profile", "sampled", type);
		if (!strcmp(name, "bbbb0000000000000000000000000002 · CPU"))
			check_int("overlapping samples laid end to end: the profile ends after 8 periods",
				  8 * PERIOD, json_integer_value(json_object_get(p, "endValue")));
	}
	check_int("profiles: the whole run and aaaa three times each, no trace ID twice, bbbb once", 9,
		  json_array_size(json_object_get(d, "profiles")));
	json_decref(d);
	unlink(path);
	recset__free(rs);
}

int main(void)
{
	test_script_safe();
	test_recset();
	test_page();
	test_speedscope();
	return tap_done();
}
