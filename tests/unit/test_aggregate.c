// SPDX-License-Identifier: GPL-2.0
/* test_aggregate.c: sample events in, JSON lines out: labels by reference, stale bytes, hostile labels, sample times. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "cmd/record/aggregate.h"
#include "tap.h"

#define TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define PERIOD 10101010ULL

static uint8_t buf[sizeof(struct sample_event)];

/* A fresh event in BUF, with a two-frame stack placed after NLABELS labels. */
static struct sample_event *event(uint32_t cpu, uint32_t gen, uint32_t flags, uint32_t nlabels)
{
	struct sample_event *e = (struct sample_event *)buf;
	uint64_t *stack;

	e->time_ns = 1000;
	e->tgid = 4242;
	e->tid = 4243;
	e->cpu = cpu;
	e->gen = gen;
	e->flags = flags;
	e->nlabels = nlabels;
	e->stack_bytes = 16;
	stack = (uint64_t *)&e->labels[nlabels < MAX_LABELS ? nlabels : 0];
	stack[0] = 0x401000;
	stack[1] = 0x402000;
	return e;
}

static size_t size_of(const struct sample_event *e)
{
	return offsetof(struct sample_event, labels) + e->nlabels * sizeof(struct go_label) +
	       e->stack_bytes;
}

/* Sets label I; the buffers keep whatever bytes were there before, as the kernel's may. */
static void label(struct sample_event *e, int i, const void *key, uint32_t klen, const void *value,
		  uint32_t vlen)
{
	struct go_label *l = &e->labels[i];

	l->key_len = klen;
	l->value_len = vlen;
	memcpy(l->key, key, klen < MAX_KEY_LEN ? klen : MAX_KEY_LEN);
	memcpy(l->value, value, vlen < MAX_VALUE_LEN ? vlen : MAX_VALUE_LEN);
}

static bool lookup(void *ctx, uint32_t pid, uint64_t time_ns, struct agg_target *out)
{
	out->comm = "t";
	out->sym = NULL;
	return true;
}

/* Flushes A and parses every line; returns a JSON array of the records (or NULL). */
static json_t *flush(struct aggregate *a)
{
	json_t *all = json_array(), *o;
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct writer_dest d = { .stream = &f };
	struct writers *ws = writers__new();
	json_error_t jerr;
	bool valid = true;

	/* the records as the JSON lines writer writes them */
	if (!ws || writers__open(ws, &json_lines_writer, &d))
		abort();
	aggregate__set_writers(a, ws);
	aggregate__flush(a, lookup, NULL);
	writers__free(ws);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* \u0000 is valid JSON; jansson parses it only when asked */
		o = json_loads(line, JSON_ALLOW_NUL, &jerr);
		if (!o) {
			valid = false;
			printf("# invalid JSON: %s: %s\n", jerr.text, line);
			continue;
		}
		json_array_append_new(all, o);
	}
	free(text);
	check(valid, "every line parses as JSON", "valid", "invalid");
	return all;
}

static json_t *record_with(json_t *all, const char *route)
{
	size_t i;
	json_t *r;

	json_array_foreach(all, i, r) {
		const char *v = json_string_value(json_object_get(json_object_get(r, "labels"), "route"));

		if ((!route && !json_object_size(json_object_get(r, "labels"))) ||
		    (route && v && strcmp(v, route) == 0))
			return r;
	}
	return NULL;
}

static long long samples_of(json_t *r)
{
	return r ? json_integer_value(json_object_get(r, "samples")) : -1;
}

static void test_references_and_stale_bytes(void)
{
	struct aggregate *a = aggregate__new(PERIOD, 0);
	struct agg_stats st;
	struct sample_event *e;
	json_t *all, *r;

	memset(buf, 0, sizeof(buf));
	e = event(0, 1, SAMPLE_F_CURG | SAMPLE_F_TRACE, 2);
	label(e, 0, "otel.traceid", 12, TRACE, 32);
	label(e, 1, "route", 5, "/a-long-route-value", 19);
	check_int("full event accepted", 0, aggregate__add(a, buf, size_of(e)));
	/* the same set again, by reference */
	e = event(0, 1, SAMPLE_F_CURG | SAMPLE_F_TRACE | SAMPLE_F_SAME_LABELS, 0);
	check_int("reference accepted", 0, aggregate__add(a, buf, size_of(e)));
	/* a shorter value over the longer one's bytes */
	e = event(1, 1, SAMPLE_F_CURG | SAMPLE_F_TRACE, 2);
	label(e, 0, "otel.traceid", 12, TRACE, 32);
	label(e, 1, "route", 5, "/b", 2);
	check_str("stale bytes are still in the buffer", "/b-long-route-value",
		  (char *)e->labels[1].value);
	check_int("short value accepted", 0, aggregate__add(a, buf, size_of(e)));
	/* a reference to a set this CPU never sent */
	e = event(2, 7, SAMPLE_F_CURG | SAMPLE_F_TRACE | SAMPLE_F_SAME_LABELS, 0);
	check_int("dangling reference accepted", 0, aggregate__add(a, buf, size_of(e)));
	/* a reference with a stale generation */
	e = event(0, 5, SAMPLE_F_CURG | SAMPLE_F_TRACE | SAMPLE_F_SAME_LABELS, 0);
	check_int("stale-generation reference accepted", 0, aggregate__add(a, buf, size_of(e)));

	aggregate__stats(a, &st);
	check_int("unresolved references counted", 2, st.unresolved);
	all = flush(a);
	check_int("records", 3, json_array_size(all));
	r = record_with(all, "/a-long-route-value");
	check_int("reference counted with its full event", 2, samples_of(r));
	check_str("trace_id", TRACE, json_string_value(json_object_get(r, "trace_id")));
	check_int("cpu_ns = samples * period", 2 * PERIOD,
		  json_integer_value(json_object_get(r, "cpu_ns")));
	r = record_with(all, "/b");
	check_int("short value after a long one shows only its own bytes", 1, samples_of(r));
	r = record_with(all, NULL);
	check_int("unresolved references count without labels", 2, samples_of(r));
	check(json_is_null(json_object_get(r, "trace_id")), "unresolved: trace_id null", "null",
	      "a trace ID");
	json_decref(all);
	aggregate__free(a);
}

static void test_hostile_labels(void)
{
	static const uint8_t bad_utf8[] = { 'a', 0xff, 0xfe, 'b', 0xc3, 0x28, 0xed, 0xa0, 0x80 };
	static const char quoty[] = "k\"e\\y\x01\n";
	struct aggregate *a = aggregate__new(PERIOD, 0);
	struct sample_event *e;
	char longv[400];
	json_t *all, *r, *labels, *cut;
	const char *v;

	memset(buf, 0, sizeof(buf));
	memset(longv, 'x', sizeof(longv));
	e = event(0, 1, SAMPLE_F_CURG | SAMPLE_F_LABELS_CUT, 5);
	label(e, 0, "route", 5, "/h", 2);
	label(e, 1, "bad", 3, bad_utf8, sizeof(bad_utf8));
	label(e, 2, quoty, sizeof(quoty) - 1, "a\0b", 3);
	label(e, 3, "big", 3, longv, sizeof(longv));
	label(e, 4, "", 0, "empty key", 9);
	check_int("hostile event accepted", 0, aggregate__add(a, buf, size_of(e)));
	e = event(0, 2, SAMPLE_F_CURG, MAX_LABELS + 1);
	e->stack_bytes = 0;
	check_int("more labels than the limit is malformed", -EINVAL,
		  aggregate__add(a, buf, offsetof(struct sample_event, labels)));
	e = event(0, 2, SAMPLE_F_CURG, 1);
	check_int("event shorter than its labels is malformed", -EINVAL,
		  aggregate__add(a, buf, offsetof(struct sample_event, labels) + 10));

	all = flush(a);
	r = record_with(all, "/h");
	labels = json_object_get(r, "labels");
	v = json_string_value(json_object_get(labels, "bad"));
	check_str("invalid UTF-8 replaced", "a\xef\xbf\xbd\xef\xbf\xbd" "b\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", v);
	check_int("quotes, backslash, control characters in a key survive", 3,
		  json_string_length(json_object_get(labels, quoty)));
	check_int("value cut at MAX_VALUE_LEN", MAX_VALUE_LEN,
		  json_string_length(json_object_get(labels, "big")));
	check_str("empty key kept", "empty key", json_string_value(json_object_get(labels, "")));
	cut = json_object_get(r, "truncated");
	check_int("truncated lists the cut key", 1, json_array_size(cut));
	check_str("truncated key", "big", json_string_value(json_array_get(cut, 0)));
	check(json_is_true(json_object_get(r, "more_labels")), "more_labels set", "true", "false");
	json_decref(all);
	aggregate__free(a);
}

/* R's string FIELD is WANT, or null when WANT is NULL. */
static void check_field(const char *what, json_t *r, const char *field, const char *want)
{
	json_t *v = json_object_get(r, field);

	check_str(desc("%s: %s", what, field), want ?: "null",
		  json_is_string(v) ? json_string_value(v) : "null");
}

/* One goroutine's labels, one key/value pair per route, in and out: its trace_id and span_id. */
static void expect_ids(const char *what, const char *tkey, const char *tval, const char *skey,
		       const char *sval, const char *want_trace, const char *want_span)
{
	struct aggregate *a = aggregate__new(PERIOD, 0);
	struct sample_event *e;
	json_t *all, *r, *v;

	memset(buf, 0, sizeof(buf));
	e = event(0, 1, SAMPLE_F_CURG, 3);
	label(e, 0, tkey, strlen(tkey), tval, strlen(tval));
	label(e, 1, skey, strlen(skey), sval, strlen(sval));
	label(e, 2, "route", 5, what, strlen(what));
	aggregate__add(a, buf, size_of(e));
	all = flush(a);
	r = record_with(all, what);
	check_field(what, r, "trace_id", want_trace);
	check_field(what, r, "span_id", want_span);
	v = json_object_get(json_object_get(r, "labels"), skey);
	check_str(desc("%s: the span label is kept as it was", what), sval, json_string_value(v) ?: "");
	json_decref(all);
	aggregate__free(a);
}

static void test_conventions(void)
{
	expect_ids("Datadog", "trace id", TRACE, "span id", "1234567890123456789", TRACE,
		   "112210f47de98115");
	expect_ids("Datadog, 16 decimal digits", "trace id", TRACE, "span id", "1000000000000000",
		   TRACE, "00038d7ea4c68000");
	expect_ids("Datadog, u64 max", "trace id", TRACE, "span id", "18446744073709551615", TRACE,
		   "ffffffffffffffff");
	expect_ids("Datadog, past u64", "trace id", TRACE, "span id", "18446744073709551616", TRACE,
		   NULL);
	expect_ids("Grafana", "trace_id", TRACE, "span_id", "00f067aa0ba902b7", TRACE,
		   "00f067aa0ba902b7");
	expect_ids("Grafana, 16 decimal digits are hex there", "trace_id", TRACE, "span_id",
		   "1000000000000000", TRACE, "1000000000000000");
	expect_ids("otel.spanid in decimal", "otel_traceid", TRACE, "otel.spanid", "42", TRACE,
		   "000000000000002a");
	expect_ids("a span ID that is neither", "otel.traceid", TRACE, "span id", "12ab", TRACE, NULL);
	expect_ids("a negative span ID", "otel.traceid", TRACE, "span id", "-1", TRACE, NULL);
	expect_ids("a trace ID in decimal is none", "trace id", "1234", "span_id", "00f067aa0ba902b7",
		   NULL, "00f067aa0ba902b7");
}

/*
 * A goroutine with the label route=WHAT (and TKEY=TVAL when TKEY), serving
 * a request whose traceparent is TP: the record's trace_id, span_id and
 * trace_source; then the same set once more by reference, which must land
 * in the same record.
 */
static void expect_traceparent(const char *what, const char *tkey, const char *tval,
			       const char *tp, const char *want_trace, const char *want_span,
			       const char *want_source)
{
	struct aggregate *a = aggregate__new(PERIOD, 0);
	uint32_t n = tkey ? 3 : 2, flags = SAMPLE_F_CURG | SAMPLE_F_TRACEPARENT;
	struct sample_event *e;
	json_t *all, *r;

	memset(buf, 0, sizeof(buf));
	e = event(0, 1, flags, n);
	label(e, 0, "route", 5, what, strlen(what));
	if (tkey)
		label(e, 1, tkey, strlen(tkey), tval, strlen(tval));
	/* the sampler's: after the labels, its key naming the source */
	label(e, n - 1, "traceparent", 11, tp, strlen(tp));
	aggregate__add(a, buf, size_of(e));
	e = event(0, 1, flags | SAMPLE_F_SAME_LABELS, 0);
	aggregate__add(a, buf, size_of(e));
	all = flush(a);
	check_int(desc("%s: one record", what), 1, json_array_size(all));
	r = record_with(all, what);
	check_int(desc("%s: both samples in it", what), 2, samples_of(r));
	check_field(what, r, "trace_id", want_trace);
	check_field(what, r, "span_id", want_span);
	check_field(what, r, "trace_source", want_source);
	check_int(desc("%s: the traceparent is no label", what), tkey ? 2 : 1,
		  json_object_size(json_object_get(r, "labels")));
	json_decref(all);
	aggregate__free(a);
}

static void test_traceparent(void)
{
	expect_traceparent("valid", NULL, NULL, "00-" TRACE "-00f067aa0ba902b7-01", TRACE,
			   "00f067aa0ba902b7", "traceparent");
	expect_traceparent("a later version", NULL, NULL, "cc-" TRACE "-00f067aa0ba902b7-09", TRACE,
			   "00f067aa0ba902b7", "traceparent");
	expect_traceparent("labels win", "otel.traceid", "0af7651916cd43dd8448eb211c80319c",
			   "00-" TRACE "-00f067aa0ba902b7-01", "0af7651916cd43dd8448eb211c80319c",
			   NULL, "label");
	expect_traceparent("uppercase hex", NULL, NULL, "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
			   NULL, NULL, NULL);
	expect_traceparent("version ff", NULL, NULL, "ff-" TRACE "-00f067aa0ba902b7-01", NULL, NULL,
			   NULL);
	expect_traceparent("an all-zero trace ID", NULL, NULL,
			   "00-00000000000000000000000000000000-00f067aa0ba902b7-01", NULL, NULL, NULL);
	expect_traceparent("an all-zero parent ID", NULL, NULL, "00-" TRACE "-0000000000000000-01",
			   NULL, NULL, NULL);
	expect_traceparent("no dashes", NULL, NULL, "00_" TRACE "_00f067aa0ba902b7_01", NULL, NULL,
			   NULL);
	expect_traceparent("too short", NULL, NULL, "00-" TRACE "-00f067aa0ba902b7-1", NULL, NULL,
			   NULL);
}

/*
 * A goroutine with a trace label (LABELS) or a request's traceparent (not
 * LABELS), flagged by the sampler with FLAGS, after one without them: the
 * trace is still the request's (trace_id) or one it only inherited
 * (inherited_trace_id, no trace_id or span_id), as WANT_OWN says, and
 * its request_goroutine is ROLE ("null", "true", "false"); the two land
 * in WANT_RECORDS records: apart, unless the flags judge them alike.
 */
static void expect_lifetime(const char *what, bool labels, uint32_t flags, bool want_own,
			    const char *role, size_t want_records)
{
	struct aggregate *a = aggregate__new(PERIOD, 0);
	uint32_t base = SAMPLE_F_CURG | (labels ? 0 : SAMPLE_F_TRACEPARENT);
	struct sample_event *e;
	struct agg_stats st;
	json_t *all, *r = NULL;
	size_t i;

	memset(buf, 0, sizeof(buf));
	for (i = 0; i < 2; i++) {
		e = event(0, 1 + i, base | (i ? flags : 0), 2);
		e->time_ns = 1000 + 1000 * i;
		label(e, 0, "route", 5, "/pay", 4);
		if (labels)
			label(e, 1, "otel.traceid", 12, TRACE, 32);
		else
			label(e, 1, "traceparent", 11, "00-" TRACE "-00f067aa0ba902b7-01", 55);
		aggregate__add(a, buf, size_of(e));
	}
	aggregate__stats(a, &st);
	all = flush(a);
	check_int(desc("%s: records", what), want_records, json_array_size(all));
	/* the second sample's: the record that ends the latest */
	json_array_foreach(all, i, r) {
		if (!strcmp(json_string_value(json_object_get(r, "end")) ?: "",
			    "1970-01-01T00:00:00.000002Z"))
			break;
	}
	check_str(desc("%s: request_goroutine", what), role,
		  json_is_true(json_object_get(r, "request_goroutine"))	 ? "true" :
		  json_is_false(json_object_get(r, "request_goroutine")) ? "false" :
									  "null");
	check_field(what, r, "trace_id", want_own ? TRACE : NULL);
	check_field(what, r, "inherited_trace_id", want_own ? NULL : TRACE);
	check_field(what, r, "trace_source", labels ? "label" : "traceparent");
	if (!labels)
		check_field(what, r, "span_id", want_own ? "00f067aa0ba902b7" : NULL);
	check_int(desc("%s: samples with a trace ID, then inherited", what), want_own ? 2 : 1,
		  st.traced);
	check_int(desc("%s: inherited samples", what), want_own ? 0 : 1, st.inherited);
	json_decref(all);
	aggregate__free(a);
}

static void test_lifetime(void)
{
	/* the first sample's: labels not judged (null), a context its own (true) */
	expect_lifetime("labels whose setter left them", true,
			SAMPLE_F_LABELS_JUDGED | SAMPLE_F_LABELS_ENDED, false, "null", 2);
	expect_lifetime("a context whose request ended", false,
			SAMPLE_F_CTX_CHILD | SAMPLE_F_CTX_ENDED, false, "null", 2);
	expect_lifetime("a live request's context, taken from the starter", false,
			SAMPLE_F_CTX_CHILD, true, "false", 2);
	expect_lifetime("labels their goroutine set itself", true,
			SAMPLE_F_LABELS_JUDGED | SAMPLE_F_LABELS_OWN, true, "true", 2);
	expect_lifetime("labels of a live request, inherited", true, SAMPLE_F_LABELS_JUDGED, true,
			"false", 2);
	/* the flag judges the source that gave the trace ID, no other */
	expect_lifetime("ended labels, the trace from a live context", false,
			SAMPLE_F_LABELS_JUDGED | SAMPLE_F_LABELS_ENDED, true, "true", 1);
	expect_lifetime("a context that ended, the trace from live labels", true,
			SAMPLE_F_CTX_ENDED, true, "null", 1);
}

/* A request's span begins or ends, as the kernel says it. */
static void span(struct aggregate *a, uint32_t kind, uint64_t goid, uint64_t epoch, uint64_t ns,
		 uint32_t source)
{
	struct span_event e = { .time_ns = ns, .goid = goid, .epoch = epoch, .tgid = 4242,
				.kind = kind, .source = source };

	memcpy(e.trace, TRACE, TRACE_HEX_LEN);
	check_int(desc("span %u of goroutine %llu taken", kind, (unsigned long long)goid), 0,
		  aggregate__add_span(a, &e, sizeof(e)));
}

/* Three requests of one trace: two label sets on goroutine 17, a header on 23. */
static void three_requests(struct aggregate *a)
{
	span(a, SPAN_BEGIN, 17, 1, 1000000, SPAN_LABEL);
	span(a, SPAN_END, 17, 1, 26000000, SPAN_LABEL);
	span(a, SPAN_BEGIN, 17, 2, 30000000, SPAN_LABEL);
	span(a, SPAN_END, 17, 2, 40000000, SPAN_LABEL);
	span(a, SPAN_BEGIN, 23, 3, 2000000, TRACE_CTX_HEADER);
	span(a, SPAN_END, 23, 3, 12000000, TRACE_CTX_HEADER);
}

/*
 * Requests' spans: a begin and its end are one request of the trace's
 * request record, its start, goroutine and duration; an end without its
 * begin (a request from before the recording) and a begin not ended yet
 * count nothing; each source's record is its own; and they are written
 * only for a trace the profile has samples of.
 */
static void test_requests(void)
{
	struct aggregate *a = aggregate__new(PERIOD, 0);
	struct sample_event *e;
	char line[256];
	json_t *all, *r, *st;
	struct agg_stats stats;
	size_t i;

	aggregate__keep_times(a, 100, 100);
	span(a, SPAN_END, 19, 7, 5000000, SPAN_LABEL);
	span(a, SPAN_BEGIN, 21, 9, 5000000, SPAN_LABEL);
	three_requests(a);
	aggregate__stats(a, &stats);
	check_int("requests ended: those whose begin came", 3, stats.requests);
	check_int("... and no CPU sample counted", 0, stats.samples);
	all = flush(a);
	check_int("no record of the requests of a trace the profile has no sample of", 0,
		  json_array_size(all));
	json_decref(all);
	aggregate__stats(a, &stats);
	check_int("... and they are said", 3, stats.requests_unsampled);
	three_requests(a);
	memset(buf, 0, sizeof(buf));
	e = event(0, 1, SAMPLE_F_CURG, 1);
	label(e, 0, "otel.traceid", 12, TRACE, 32);
	aggregate__add(a, (uint8_t *)e, size_of(e));
	all = flush(a);
	check_int("with a sample of the trace: its record and a request record per trace source", 3,
		  json_array_size(all));
	json_array_foreach(all, i, r) {
		const char *src = json_string_value(json_object_get(r, "trace_source"));

		if (strcmp(json_string_value(json_object_get(r, "origin")) ?: "", "request"))
			continue;

		char *times, *goids, *durations;
		const char *want;

		st = json_array_get(json_object_get(r, "stacks"), 0);
		times = json_dumps(json_object_get(st, "times_us"), JSON_COMPACT);
		goids = json_dumps(json_object_get(st, "goids"), JSON_COMPACT);
		durations = json_dumps(json_object_get(st, "durations_us"), JSON_COMPACT);
		snprintf(line, sizeof(line), "%s: %s %lld %lld %s %s %s", src,
			 json_string_value(json_object_get(r, "origin")),
			 json_integer_value(json_object_get(r, "samples")),
			 json_integer_value(json_object_get(r, "elapsed_ns")), times, goids, durations);
		free(times);
		free(goids);
		free(durations);
		want = !strcmp(src, "label") ? "label: request 2 35000000 [0,29000] [17,17] [25000,10000]" :
					       "traceparent: request 1 10000000 [0] [23] [10000]";
		check(!strcmp(line, want),
		      desc("the %s record: origin, requests, elapsed, starts, goroutines, durations", src),
		      want, line);
		check_field(src, r, "trace_id", TRACE);
		check(json_is_null(json_object_get(r, "cpu_ns")), desc("%s: no CPU", src), "null", "a number");
	}
	json_decref(all);
	aggregate__free(a);
}

/* An integer array of a record's first stack, as "1,2,3". */
static const char *ints(json_t *r, const char *key, char *out, size_t len)
{
	json_t *a = json_object_get(json_array_get(json_object_get(r, "stacks"), 0), key), *v;
	size_t i, o = 0;

	out[0] = '\0';
	if (!a)
		return "absent";
	json_array_foreach(a, i, v)
		o += snprintf(out + o, len - o, "%s%lld", i ? "," : "", (long long)json_integer_value(v));
	return out;
}

static json_t *record_of(json_t *all, const char *origin)
{
	size_t i;
	json_t *r;

	json_array_foreach(all, i, r)
		if (!strcmp(json_string_value(json_object_get(r, "origin")), origin))
			return r;
	return NULL;
}

/*
 * Each sample's time and goroutine (times_us, goids), in order, within the
 * interval's bound; a wall look's weight, and the snapshots a repeat adds
 * to the look just counted.
 */
static void test_times(void)
{
	struct aggregate *a = aggregate__new(PERIOD, 0);
	struct agg_slot slot = {};
	static const uint64_t times[] = { 9000000, 12000000 }, weights[] = { 2, 3 };
	struct sample_event *e;
	char got[128];
	json_t *all, *r;

	aggregate__set_wall_period(a, 52631578);
	aggregate__keep_times(a, 3, 10);
	memset(buf, 0, sizeof(buf));
	/* CPU: three of goroutine 17, out of order as rings are read, and one off any goroutine */
	e = event(0, 1, SAMPLE_F_CURG, 0);
	e->goid = 17;
	e->time_ns = 3000000;
	aggregate__add(a, buf, size_of(e));
	e->time_ns = 1000000;
	aggregate__add(a, buf, size_of(e));
	e->flags = 0;
	e->time_ns = 2000000;
	aggregate__add(a, buf, size_of(e));
	/* past the interval's bound of 3: counted, not timed */
	e->flags = SAMPLE_F_CURG;
	e->time_ns = 4000000;
	aggregate__add(a, buf, size_of(e));
	/* wall: goroutine 9 looked at once for 3 snapshots, then twice more for 2 and 3 */
	e = event(0, 2, SAMPLE_F_CURG, 0);
	e->origin = ORIGIN_WALL;
	e->wall = WALL_WAITING;
	e->goid = 9;
	e->time_ns = 5000000;
	check_int("a wall look counted in a slot", 0, aggregate__add_slot(a, buf, size_of(e), &slot));
	check(aggregate__repeat(a, &slot, 2, 0, 5000000, 5000000, NULL, NULL, 9),
	      "2 more snapshots for the look just counted", "true", "false");
	aggregate__repeat(a, &slot, 5, 2, 9000000, 12000000, times, weights, 9);
	all = flush(a);
	r = record_of(all, "sampling");
	check_int("CPU record: 4 samples", 4, samples_of(r));
	check_str("CPU record: times_us in order, from its start, 3 kept of 4", "0,1000,2000",
		  ints(r, "times_us", got, sizeof(got)));
	check_str("CPU record: goids (0: off any goroutine)", "17,0,17", ints(r, "goids", got, sizeof(got)));
	check_str("CPU record: no weights", "absent", ints(r, "weights", got, sizeof(got)));
	r = record_of(all, "wall");
	check_int("wall record: 8 samples", 8, samples_of(r));
	check_int("wall record: 3 looks", 3, json_integer_value(json_object_get(r, "observed")));
	check_str("wall record: times_us", "0,4000,7000", ints(r, "times_us", got, sizeof(got)));
	check_str("wall record: weights add up to samples", "3,2,3", ints(r, "weights", got, sizeof(got)));
	check_str("wall record: goids", "9,9,9", ints(r, "goids", got, sizeof(got)));
	json_decref(all);
	aggregate__release_slot(a, &slot);
	aggregate__free(a);
}

int main(void)
{
	test_times();
	test_references_and_stale_bytes();
	test_hostile_labels();
	test_conventions();
	test_traceparent();
	test_lifetime();
	test_requests();
	return tap_done();
}
