// SPDX-License-Identifier: GPL-2.0
/* rec.c: one output record as a JSON line, and JSON lines as an output. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonl.h"
#include "rec.h"

/* Length of the valid UTF-8 sequence at S (at most LEN bytes, LEN > 0), or 0. */
static size_t utf8_seq(const uint8_t *s, size_t len)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n > len)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* "2026-11-22T11:40:01.123456Z" for a CLOCK_REALTIME time in ns. */
static void format_rfc3339(uint64_t realtime_ns, char *buf, size_t len)
{
	/* a flush's records mostly share their seconds: the date is made once for them */
	static __thread time_t last = -1;
	static __thread char date[32];
	time_t sec = realtime_ns / 1000000000ULL;
	struct tm tm;

	if (sec != last) {
		gmtime_r(&sec, &tm);
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm);
		last = sec;
	}
	snprintf(buf, len, "%s.%06uZ", date, (unsigned int)(realtime_ns % 1000000000ULL / 1000));
}

const char *rec_origin__name(enum rec_origin o)
{
	switch (o) {
	case REC_WALL:
		return "wall";
	case REC_CUSTOM:
		return "custom";
	case REC_UPROBE:
		return "uprobe";
	case REC_REQUEST:
		return "request";
	case REC_ALLOC:
		return "alloc";
	default:
		return "sampling";
	}
}

static void put_str(struct strbuf *b, const char *s)
{
	strbuf__put(b, s, strlen(s));
}

static void put_fmt(struct strbuf *b, const char *fmt, uint64_t v)
{
	char buf[32];

	strbuf__put(b, buf, snprintf(buf, sizeof(buf), fmt, v));
}

/*
 * S as a JSON string: invalid UTF-8 becomes U+FFFD; quotes, backslashes
 * and control characters (NUL too) are escaped as jansson escapes them.
 * Cut where it would pass the limit readers hold strings to (only a
 * hostile binary's function name comes near it). A label key's NUL is
 * U+FFFD as well: JSON allows it in an object key, but jansson and many
 * other readers refuse it.
 */
static void put_json_as(struct strbuf *b, const uint8_t *s, size_t len, bool key)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0, run = 0, n, base;
	char esc[6];

	strbuf__put(b, "\"", 1);
	base = b->n;
	while (i < len) {
		if (b->n - base + run + 6 >= JSONL_MAX_STRING)
			break;
		/* function names and file paths: printable ASCII all through */
		if (s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\') {
			i++;
			run++;
			continue;
		}
		n = utf8_seq(s + i, len - i);
		if (n == 1 && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\') {
			i++;
			run++;
			continue;
		}
		strbuf__put(b, s + i - run, run);
		run = 0;
		if (n > 1) {
			strbuf__put(b, s + i, n);
			i += n;
			continue;
		}
		if (!n || (key && !s[i])) {
			strbuf__put(b, "\xef\xbf\xbd", 3);
		} else if (s[i] == '"' || s[i] == '\\') {
			esc[0] = '\\';
			esc[1] = s[i];
			strbuf__put(b, esc, 2);
		} else if (strchr("\b\f\n\r\t", s[i]) && s[i]) {
			esc[0] = '\\';
			esc[1] = "bfnrt"[strchr("\b\f\n\r\t", s[i]) - "\b\f\n\r\t"];
			strbuf__put(b, esc, 2);
		} else {
			memcpy(esc, "\\u00", 4);
			esc[4] = hex[s[i] >> 4];
			esc[5] = hex[s[i] & 15];
			strbuf__put(b, esc, 6);
		}
		i++;
	}
	strbuf__put(b, s + i - run, run);
	strbuf__put(b, "\"", 1);
}

static void put_json(struct strbuf *b, const uint8_t *s, size_t len)
{
	put_json_as(b, s, len, false);
}

static void put_cstr(struct strbuf *b, const char *s)
{
	if (s)
		put_json(b, (const uint8_t *)s, strlen(s));
	else
		put_str(b, "null");
}

/* ,"KEY": */
static void put_key(struct strbuf *b, const char *key)
{
	if (b->n && b->p[b->n - 1] == '{')
		strbuf__put(b, "\"", 1);
	else
		strbuf__put(b, ",\"", 2);
	put_str(b, key);
	strbuf__put(b, "\":", 2);
}

/* A frame's numbers, without printf: a record has some twenty */
static void put_hex(struct strbuf *b, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	*--p = '"';
	do
		*--p = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	strbuf__put(b, p, buf + sizeof(buf) - p);
}

static void put_int(struct strbuf *b, int64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do
		*--p = '0' + u % 10;
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	strbuf__put(b, p, buf + sizeof(buf) - p);
}

static void put_time(struct strbuf *b, int64_t ns)
{
	char buf[64];

	format_rfc3339(ns, buf, sizeof(buf));
	put_cstr(b, buf);
}

/* Two labels whose keys read the same once made valid UTF-8 (invalid bytes alike). */
static bool same_key(const struct rec_label *a, const struct rec_label *b)
{
	size_t i = 0, j = 0, n, m;

	while (i < a->key_len && j < b->key_len) {
		/* NUL is written as invalid bytes are */
		n = a->key[i] ? utf8_seq(a->key + i, a->key_len - i) : 0;
		m = b->key[j] ? utf8_seq(b->key + j, b->key_len - j) : 0;
		if (n != m || (n && memcmp(a->key + i, b->key + j, n)))
			return false;
		i += n ? n : 1;
		j += m ? m : 1;
	}
	return i == a->key_len && j == b->key_len;
}

/* As a JSON object keeps them: one key each, where it first came, with the last value. */
static void put_labels(struct strbuf *b, const struct rec *r)
{
	size_t i, last;

	strbuf__put(b, "{", 1);
	for (i = 0; i < r->nlabels; i++) {
		if ((last = rec__label_value(r, i)) == SIZE_MAX)
			continue;
		if (b->p[b->n - 1] != '{')
			strbuf__put(b, ",", 1);
		put_json_as(b, r->labels[i].key, r->labels[i].key_len, true);
		strbuf__put(b, ":", 1);
		put_json(b, r->labels[last].value, r->labels[last].value_len);
	}
	strbuf__put(b, "}", 1);
}

static void put_frame(struct strbuf *b, const struct rec_frame *f)
{
	char buf[32];

	put_str(b, "{\"func\":");
	if (f->func) {
		put_cstr(b, f->func);
	} else {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, f->pc);
		put_cstr(b, buf);
	}
	put_str(b, ",\"addr\":");
	put_hex(b, f->addr);
	if (f->file) {
		put_str(b, ",\"file\":");
		put_cstr(b, f->file);
		put_str(b, ",\"line\":");
		put_int(b, f->line);
	}
	if (f->inlined)
		put_str(b, ",\"inlined\":true");
	strbuf__put(b, "}", 1);
}

/* A sample's time after the record's start (never before it), its goid, its weight. */
enum { TIME_US, TIME_GOID, TIME_WEIGHT, TIME_DURATION };

static int64_t time_field(const struct rec_time *t, int field, int64_t start_us)
{
	int64_t us;

	switch (field) {
	case TIME_US:
		us = t->ns / 1000 - start_us;
		return us > 0 ? us : 0;
	case TIME_GOID:
		return (int64_t)(t->goid & INT64_MAX);
	case TIME_DURATION:
		return (int64_t)((t->weight & INT64_MAX) / 1000);
	default:
		return (int64_t)(t->weight & INT64_MAX);
	}
}

/*
 * ST's times as times_us (after the record's start), goids and, for wall
 * records, weights, for request records durations_us: up to LEFT of them,
 * which the record's stacks share.
 */
static void put_times(struct strbuf *b, const struct rec *r, const struct rec_stack *st,
		      size_t *left)
{
	static const char *const keys[] = { ",\"times_us\":[", ",\"goids\":[", ",\"weights\":[",
					    ",\"durations_us\":[" };
	size_t i, n = st->ntimes < *left ? st->ntimes : *left;
	int f, nfields = r->origin == REC_WALL || r->origin == REC_REQUEST ? 3 : 2, field;

	*left -= n;
	for (f = 0; f < nfields; f++) {
		field = f == 2 && r->origin == REC_REQUEST ? TIME_DURATION : f;
		put_str(b, keys[field]);
		for (i = 0; i < n; i++) {
			if (i)
				strbuf__put(b, ",", 1);
			put_int(b, time_field(&st->times[i], field, r->start_ns / 1000));
		}
		strbuf__put(b, "]", 1);
	}
}

/* An allocation record's or stack's alloc_objects and alloc_bytes. */
static void put_alloc(struct strbuf *b, int64_t objects, int64_t bytes)
{
	put_fmt(b, ",\"alloc_objects\":%" PRId64, (uint64_t)objects);
	put_fmt(b, ",\"alloc_bytes\":%" PRId64, (uint64_t)bytes);
}

int rec__json(const struct rec *r, struct strbuf *b)
{
	size_t i, j, left = REC_MAX_TIMES;

	b->oom = false;
	strbuf__put(b, "{", 1);
	put_key(b, "trace_id");
	put_cstr(b, r->trace_id);
	put_key(b, "trace_source");
	put_cstr(b, r->trace_id || r->inherited_trace_id ? r->trace_source : NULL);
	put_key(b, "span_id");
	put_cstr(b, r->span_id);
	put_key(b, "inherited_trace_id");
	put_cstr(b, r->inherited_trace_id);
	put_key(b, "request_goroutine");
	put_str(b, r->role == REC_ROLE_REQUEST ? "true" : r->role == REC_ROLE_STARTED ? "false" : "null");
	put_key(b, "labels");
	put_labels(b, r);
	put_key(b, "truncated");
	strbuf__put(b, "[", 1);
	for (i = 0, j = 0; i < r->nlabels; i++) {
		if (!r->labels[i].cut)
			continue;
		if (j++)
			strbuf__put(b, ",", 1);
		put_json_as(b, r->labels[i].key, r->labels[i].key_len, true);
	}
	strbuf__put(b, "]", 1);
	put_key(b, "more_labels");
	put_str(b, r->more_labels ? "true" : "false");
	put_fmt(b, ",\"pid\":%" PRIu64, r->pid);
	put_key(b, "comm");
	put_json(b, r->comm, r->comm_len);
	put_key(b, "service_name");
	put_cstr(b, r->service_name);
	put_key(b, "container_id");
	put_cstr(b, r->container_id);
	put_key(b, "pod_uid");
	put_cstr(b, r->pod_uid);
	put_key(b, "ns_pid");
	if (r->ns_pid)
		put_fmt(b, "%" PRId64, r->ns_pid);
	else
		put_str(b, "null");
	put_key(b, "origin");
	put_cstr(b, rec_origin__name(r->origin));
	put_fmt(b, ",\"samples\":%" PRIu64, r->samples);
	put_key(b, "cpu_ns");
	if (r->cpu_ns >= 0)
		put_fmt(b, "%" PRId64, r->cpu_ns);
	else
		put_str(b, "null");
	if (r->origin == REC_REQUEST)
		put_fmt(b, ",\"elapsed_ns\":%" PRId64, r->elapsed_ns);
	if (r->origin == REC_WALL) {
		put_fmt(b, ",\"wall_ns\":%" PRId64, r->wall_ns);
		put_fmt(b, ",\"observed\":%" PRIu64, r->observed);
		put_key(b, "state");
		put_cstr(b, r->state);
		put_key(b, "wait_reason");
		put_cstr(b, r->wait_reason);
	}
	if (r->origin == REC_ALLOC) {
		put_alloc(b, r->alloc_objects, r->alloc_bytes);
	}
	put_key(b, "start");
	put_time(b, r->start_ns);
	put_key(b, "end");
	put_time(b, r->end_ns);
	put_key(b, "stacks");
	strbuf__put(b, "[", 1);
	for (i = 0; i < r->nstacks; i++) {
		put_fmt(b, i ? ",{\"samples\":%" PRIu64 ",\"frames\":[" : "{\"samples\":%" PRIu64 ",\"frames\":[",
			r->stacks[i].samples);
		for (j = 0; j < r->stacks[i].nframes; j++) {
			if (j)
				strbuf__put(b, ",", 1);
			put_frame(b, &r->stacks[i].frames[j]);
		}
		strbuf__put(b, "]", 1);
		if (r->origin == REC_ALLOC)
			put_alloc(b, r->stacks[i].alloc_objects, r->stacks[i].alloc_bytes);
		if (r->origin == REC_SAMPLING || r->origin == REC_WALL || r->origin == REC_REQUEST ||
		    r->origin == REC_ALLOC)
			put_times(b, r, &r->stacks[i], &left);
		strbuf__put(b, "}", 1);
	}
	strbuf__put(b, "]", 1);
	put_key(b, "mappings");
	strbuf__put(b, "[", 1);
	for (i = 0; i < r->nmappings; i++) {
		const struct rec_mapping *m = &r->mappings[i];

		put_str(b, i ? ",{\"start\":" : "{\"start\":");
		put_hex(b, m->start);
		put_str(b, ",\"limit\":");
		put_hex(b, m->limit);
		put_str(b, ",\"offset\":");
		put_hex(b, m->offset);
		put_str(b, ",\"file\":");
		put_cstr(b, m->file);
		put_str(b, ",\"build_id\":");
		put_cstr(b, m->build_id);
		strbuf__put(b, "}", 1);
	}
	strbuf__put(b, "]", 1);
	if (r->origin == REC_CUSTOM || r->origin == REC_UPROBE) {
		/* past 2^63 - 1 as decimal digits: JSON readers (jansson, jq) would lose the integer */
		put_fmt(b, r->context <= INT64_MAX ? ",\"context\":%" PRIu64 : ",\"context\":\"%" PRIu64 "\"",
			r->context);
		put_fmt(b, ",\"tid\":%" PRIu64, r->tid);
		put_key(b, "goid");
		if (r->has_goid)
			put_fmt(b, "%" PRIu64, r->goid);
		else
			put_str(b, "null");
	}
	strbuf__put(b, "}\n", 2);
	return b->oom ? -ENOMEM : 0;
}

int rec__json_labels(const struct rec *r, struct strbuf *b)
{
	b->oom = false;
	put_labels(b, r);
	return b->oom ? -ENOMEM : 0;
}

size_t rec__label_value(const struct rec *r, size_t i)
{
	size_t j, last = i;

	/* a JSON object's keys, say: each label is its own, and the search would be quadratic */
	if (r->labels_distinct)
		return i;

	for (j = 0; j < i; j++)
		if (same_key(&r->labels[j], &r->labels[i]))
			return SIZE_MAX;
	for (j = i + 1; j < r->nlabels; j++)
		if (same_key(&r->labels[j], &r->labels[i]))
			last = j;
	return last;
}

const char *rec__valid(struct strbuf *b, const uint8_t *s, size_t len)
{
	size_t i, n;

	b->n = 0;
	b->oom = false;
	for (i = 0; i < len; i += n ? n : 1) {
		n = utf8_seq(s + i, len - i);
		if (n)
			strbuf__put(b, s + i, n);
		else
			strbuf__put(b, "\xef\xbf\xbd", 3);
	}
	strbuf__put(b, "", 1);
	return b->oom ? "" : b->p;
}

/* JSON lines: a line a record, into a stream its owner may replace; flushed at each interval's end. */
struct json_lines {
	FILE **stream;
	struct strbuf line;
};

static void *json_lines_new(const struct writer_dest *d)
{
	struct json_lines *j = calloc(1, sizeof(*j));

	if (j)
		j->stream = d->stream;
	return j;
}

static int json_lines_add(void *w, const struct rec *r)
{
	struct json_lines *j = w;
	int ret;

	j->line.n = 0;
	if ((ret = rec__json(r, &j->line)))
		return ret;
	/* stdio keeps the errno of the write(2) that failed */
	errno = 0;
	if (fwrite(j->line.p, 1, j->line.n, *j->stream) != j->line.n)
		return errno ? -errno : -EIO;
	return 0;
}

/* A line in stdio's buffer is not written yet. */
static int json_lines_flush(void *w, const struct writer_dest *d)
{
	errno = 0;
	if (fflush(*d->stream) != 0)
		return errno ? -errno : -EIO;
	return 0;
}

static void json_lines_free(void *w)
{
	struct json_lines *j = w;

	if (!j)
		return;
	strbuf__free(&j->line);
	free(j);
}

const struct writer_ops json_lines_writer = {
	.what = "records",
	.new = json_lines_new,
	.add = json_lines_add,
	.flush = json_lines_flush,
	.free = json_lines_free,
};
