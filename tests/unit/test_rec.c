// SPDX-License-Identifier: GPL-2.0
/* test_rec.c: records read back as convert reads them: bounded lines and strings, a string the writer cuts, a stack of no frames. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#include "cmd/output/folded.h"
#include "cmd/output/jsonl.h"
#include "cmd/output/pprof.h"
#include "cmd/output/rec.h"
#include "cmd/util/strbuf.h"
#include "tap.h"

/*
 * A --wall record of a running goroutine: the recorder writes its stack
 * with no frames; its looks' times, goroutine and weights come back as
 * they were.
 */
static const char wall_running[] =
	"{\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"trace_source\":\"label\","
	"\"span_id\":null,\"inherited_trace_id\":null,\"request_goroutine\":null,"
	"\"labels\":{\"otel.traceid\":\"4bf92f3577b34da6a3ce929d0e0e4736\"},"
	"\"truncated\":[],\"more_labels\":false,\"pid\":4242,\"comm\":\"api\",\"service_name\":\"checkout\","
	"\"container_id\":null,"
	"\"pod_uid\":null,\"ns_pid\":null,\"origin\":\"wall\",\"samples\":3,\"cpu_ns\":null,"
	"\"wall_ns\":157894734,\"observed\":3,\"state\":\"running\",\"wait_reason\":null,"
	"\"start\":\"2026-11-26T12:00:00.000000Z\",\"end\":\"2026-11-26T12:00:00.100000Z\","
	"\"stacks\":[{\"samples\":3,\"frames\":[],\"times_us\":[0,52631,100000],\"goids\":[17,17,17],"
	"\"weights\":[1,1,1]}],\"mappings\":[]}\n";

/* INPUT through a jsonl reader: the results of each call, "L<len>" or "E<errno>", then "EOF". */
static const char *read_all(const void *input, size_t size, char *out, size_t outlen, char *err,
			    size_t errlen)
{
	FILE *in = fmemopen((void *)input, size, "r");
	struct jsonl *j = jsonl__new(in);
	const char *line;
	size_t len, o = 0;
	int n;

	*err = '\0';
	while ((n = jsonl__next(j, &line, &len, err, errlen)) > 0)
		o += snprintf(out + o, outlen - o, "L%zu ", len);
	if (n < 0)
		o += snprintf(out + o, outlen - o, "E%d@%zu ", -n, jsonl__lineno(j));
	snprintf(out + o, outlen - o, "EOF");
	jsonl__free(j);
	fclose(in);
	return out;
}

static void test_jsonl_lines(void)
{
	char got[256], err[256];

	check_str("three lines, the last without its newline",
		  "L3 L1 L4 L4 EOF", read_all("{}\n\n[1]\n{\"a\"", 12, got, sizeof(got), err, sizeof(err)));
	check_str("empty input", "EOF", read_all("", 0, got, sizeof(got), err, sizeof(err)));
	check_str("a NUL outside a string stops reading on its line",
		  "L3 E22@2 EOF", read_all("{}\n\0{}\n{}\n", 9, got, sizeof(got), err, sizeof(err)));
	check_str("... and says where", "byte 0x00 at column 1 is not JSON (a binary file?)", err);
	check_str("bytes no JSON holds outside strings are allowed inside them",
		  "L9 EOF", read_all("[\"\x01\xff\\\"\"]\n", 9, got, sizeof(got), err, sizeof(err)));
}

/* One line holding a string of N bytes: the longest string a reader takes is JSONL_MAX_STRING - 1. */
static void test_jsonl_string_limit(void)
{
	size_t n = JSONL_MAX_STRING + 100;
	char *s = malloc(n + 8), got[256], err[256], want[64];

	s[0] = '[';
	s[1] = '"';
	memset(s + 2, 'a', n);
	/* an escaped quote at the end of the string counts with it */
	strcpy(s + 2 + JSONL_MAX_STRING - 3, "\\\"\"]\n");
	snprintf(want, sizeof(want), "L%zu EOF", (size_t)JSONL_MAX_STRING + 4);
	check_str("a string of JSONL_MAX_STRING - 1 bytes", want,
		  read_all(s, JSONL_MAX_STRING + 4, got, sizeof(got), err, sizeof(err)));
	memset(s + 2, 'a', n);
	strcpy(s + 2 + JSONL_MAX_STRING, "\"]\n");
	check_str("a string of JSONL_MAX_STRING bytes is refused", "E7@1 EOF",
		  read_all(s, JSONL_MAX_STRING + 5, got, sizeof(got), err, sizeof(err)));
	check_str("... with the limit and where the string starts",
		  "a string longer than 1 MiB, the limit of one (from column 2)", err);
	free(s);
}

/* A function name past the limit: the writer cuts it, and the line reads back. */
static void test_writer_cuts(void)
{
	struct rec_frame f = { .func = NULL, .file = "/src/x.go", .line = 7, .addr = 0x401000 };
	struct rec_stack st = { .samples = 1, .nframes = 1, .frames = &f };
	struct rec r = {
		.trace_source = "none", .pid = 4242, .comm = (const uint8_t *)"api", .comm_len = 3,
		.origin = REC_SAMPLING, .samples = 1, .cpu_ns = 10, .start_ns = 1, .end_ns = 2,
		.stacks = &st, .nstacks = 1,
	};
	size_t n = 3 * JSONL_MAX_STRING, len;
	char *name = malloc(n + 1), got[256], err[256], want[64];
	struct strbuf b = {};
	json_t *o, *fn;

	/* quotes, each written as two bytes, so the cut lands inside escapes */
	memset(name, '"', n);
	name[n] = '\0';
	f.func = name;
	check_int("rec__json of a 3 MiB function name", 0, rec__json(&r, &b));
	snprintf(want, sizeof(want), "L%zu EOF", b.n);
	check_str("reads back as one line", want, read_all(b.p, b.n, got, sizeof(got), err, sizeof(err)));
	o = json_loadb(b.p, b.n, 0, NULL);
	fn = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(o, "stacks"), 0),
							     "frames"), 0),
			     "func");
	len = fn ? json_string_length(fn) : 0;
	check(fn && len > JSONL_MAX_STRING / 2 - 8 && 2 * len < JSONL_MAX_STRING,
	      "the name is cut below the limit, at a whole escape", "about half a MiB of quotes",
	      desc("%zu bytes", len));
	json_decref(o);
	strbuf__free(&b);
	free(name);
}

/* The UBSan report: strbuf__put(b, NULL, 0) from the pprof writer on a stack of no frames. */
static void test_no_frames(void)
{
	char path[] = "/tmp/test_rec.XXXXXX", err[256];
	struct rec_mem mem = {};
	struct strbuf b = {};
	struct pprof *pp = pprof__new();
	struct folded *fo = folded__new();
	struct rec r;
	json_t *o = json_loads(wall_running, 0, NULL);
	int fd = mkstemp(path);

	strbuf__put(&b, NULL, 0);
	check(b.n == 0 && !b.oom, "strbuf__put of nothing from NULL", "nothing", "something");
	check_int("a wall record with \"frames\": [] is a record", 0,
		  rec__from_json(o, &r, &mem, err, sizeof(err)));
	check_int("pprof__add takes it", 0, pprof__add(pp, &r));
	check_int("folded__add takes it", 0, folded__add(fo, &r));
	check_int("pprof__write writes it", 0, fd >= 0 ? pprof__write(pp, path) : -errno);
	check_int("rec__json writes it back", 0, rec__json(&r, &b));
	check_str("... as it was", wall_running, b.oom ? NULL : (strbuf__put(&b, "", 1), b.p));
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	strbuf__free(&b);
	rec_mem__free(&mem);
	json_decref(o);
	pprof__free(pp);
	folded__free(fo);
}

/* A NUL in a label key: U+FFFD, as JSON readers such as jansson refuse it there; a value keeps it. */
static void test_nul_key(void)
{
	struct rec_label l[2] = {
		{ .key = (const uint8_t *)"a\0b", .key_len = 3, .value = (const uint8_t *)"v\0w", .value_len = 3,
		  .cut = true },
		{ .key = (const uint8_t *)"a\xff" "b", .key_len = 3, .value = (const uint8_t *)"last", .value_len = 4 },
	};
	struct rec_stack st = { .samples = 1 };
	struct rec r = {
		.trace_source = "none", .pid = 4242, .comm = (const uint8_t *)"api", .comm_len = 3,
		.origin = REC_SAMPLING, .samples = 1, .cpu_ns = 10, .start_ns = 1, .end_ns = 2,
		.stacks = &st, .nstacks = 1, .labels = l, .nlabels = 2,
	};
	struct strbuf b = {};
	char got[128] = "";
	const char *p, *q;

	rec__json(&r, &b);
	strbuf__put(&b, "", 1);
	p = b.p ? strstr(b.p, "\"labels\"") : NULL;
	q = p ? strstr(p, ",\"more_labels") : NULL;
	if (q && q - p < (long)sizeof(got))
		memcpy(got, p, q - p);
	check_str("a NUL in a key is U+FFFD, and the key one with an invalid byte's",
		  "\"labels\":{\"a\xef\xbf\xbd" "b\":\"last\"},\"truncated\":[\"a\xef\xbf\xbd" "b\"]",
		  got);
	strbuf__free(&b);
}

/*
 * A record of a goroutine that only inherited a trace: read and written
 * back as it was; one that names a trace as both its own and inherited is
 * refused; a record of a release before the field reads as not inherited.
 */
static void test_inherited(void)
{
	static const char trace[] = "4bf92f3577b34da6a3ce929d0e0e4736";
	json_t *o = json_loads(wall_running, 0, NULL), *back;
	struct rec_mem mem = {};
	struct strbuf b = {};
	char err[256];
	struct rec r;

	/* the trace the record names, as one inherited */
	json_object_set_new(o, "trace_id", json_null());
	json_object_set_new(o, "inherited_trace_id", json_string(trace));
	check_int("a record with inherited_trace_id is a record", 0,
		  rec__from_json(o, &r, &mem, err, sizeof(err)));
	check_str("... its trace ID", "null", r.trace_id ?: "null");
	check_str("... the one it inherited", trace, r.inherited_trace_id ?: "null");
	rec__json(&r, &b);
	strbuf__put(&b, "", 1);
	back = json_loads(b.p ?: "", 0, NULL);
	check(json_equal(o, back), "... written back as it was", "the same object", b.p);
	json_decref(back);
	rec_mem__free(&mem);

	json_object_set_new(o, "trace_id", json_string(trace));
	check_int("a trace both its own and inherited is refused", -EINVAL,
		  rec__from_json(o, &r, &mem, err, sizeof(err)));
	check(strstr(err, "both"), "... saying why", "both set", err);
	rec_mem__free(&mem);

	json_object_del(o, "inherited_trace_id");
	check_int("a record without the field (an older release's) is a record", 0,
		  rec__from_json(o, &r, &mem, err, sizeof(err)));
	check_str("... its own trace", trace, r.trace_id ?: "null");
	rec_mem__free(&mem);
	strbuf__free(&b);
	json_decref(o);
}

/* A request record: read, checked and written back as it was; one that breaks its rules refused. */
static void test_request(void)
{
	static const char line[] =
		"{\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\",\"trace_source\":\"label\","
		"\"span_id\":null,\"inherited_trace_id\":null,\"request_goroutine\":true,\"labels\":{},"
		"\"truncated\":[],\"more_labels\":false,\"pid\":4242,\"comm\":\"api\","
		"\"service_name\":\"checkout\",\"container_id\":null,\"pod_uid\":null,\"ns_pid\":null,"
		"\"origin\":\"request\",\"samples\":2,\"cpu_ns\":null,\"elapsed_ns\":35000000,"
		"\"start\":\"2026-11-26T12:00:00.000000Z\",\"end\":\"2026-11-26T12:00:00.040000Z\","
		"\"stacks\":[{\"samples\":2,\"frames\":[],\"times_us\":[0,29000],\"goids\":[17,17],"
		"\"durations_us\":[25000,10000]}],\"mappings\":[]}\n";
	json_t *o = json_loads(line, 0, NULL), *bad;
	struct rec_mem mem = {};
	struct strbuf b = {};
	char err[256];
	struct rec r;

	check_int("a request record is a record", 0, rec__from_json(o, &r, &mem, err, sizeof(err)));
	check_int("... its elapsed time", 35000000, r.elapsed_ns);
	check_int("... its second request's duration, in ns", 10000000,
		  r.nstacks && r.stacks[0].ntimes == 2 ? (long long)r.stacks[0].times[1].weight : -1);
	rec__json(&r, &b);
	strbuf__put(&b, "", 1);
	check_str("... written back as it was", line, b.p);
	rec_mem__free(&mem);
	bad = json_deep_copy(o);
	json_object_del(bad, "elapsed_ns");
	check_int("one without elapsed_ns is refused", -EINVAL,
		  rec__from_json(bad, &r, &mem, err, sizeof(err)));
	rec_mem__free(&mem);
	json_decref(bad);
	bad = json_deep_copy(o);
	json_object_set_new(json_array_get(json_object_get(bad, "stacks"), 0), "durations_us",
			    json_pack("[i]", 1));
	check_int("one with fewer durations than times is refused", -EINVAL,
		  rec__from_json(bad, &r, &mem, err, sizeof(err)));
	rec_mem__free(&mem);
	json_decref(bad);
	bad = json_loads(wall_running, 0, NULL);
	json_object_set_new(bad, "elapsed_ns", json_integer(1));
	check_int("a wall record with elapsed_ns is refused", -EINVAL,
		  rec__from_json(bad, &r, &mem, err, sizeof(err)));
	rec_mem__free(&mem);
	json_decref(bad);
	strbuf__free(&b);
	json_decref(o);
}

int main(void)
{
	test_jsonl_lines();
	test_jsonl_string_limit();
	test_writer_cuts();
	test_no_frames();
	test_nul_key();
	test_inherited();
	test_request();
	return tap_done();
}
