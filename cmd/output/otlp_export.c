// SPDX-License-Identifier: GPL-2.0
/* otlp_export.c: OTLP/HTTP with protobuf to a collector through libcurl: a queue, a thread, retries with backoff. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <curl/curl.h>
#include <zlib.h>

#include "cmd/util/clock.h"
#include "cmd/util/excerpt.h"
#include "cmd/util/plural.h"
#include "cmd/util/strbuf.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "otlp_export.h"
#include "otlp_split.h"

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS 30000
#define RETRY_AFTER_MAX_MS 300000
/* a request is given up after retrying this long */
#define GIVE_UP_MS 300000
#define RESPONSE_MAX 65536
/* of the collector's answer, what a message quotes: one line */
#define ANSWER_MAX 200
/* libcurl4's, which libcurl4-openssl-dev links against */
#define LIBCURL_SONAME "libcurl.so.4"

/*
 * libcurl, opened by the first export: linked in, it and the libraries it
 * needs would be loaded and relocated at every start-up of ctxprof-go,
 * which runs without --otlp do not use.
 */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *curl);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode code);
	void (*easy_cleanup)(CURL *curl);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
} libcurl;

static int open_libcurl(char *err, size_t errlen)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	const char *missing = NULL;
	void *h;

	pthread_mutex_lock(&mu);
	if (libcurl.global_init)
		goto out;
	h = dlopen(LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "--otlp needs libcurl: %s", dlerror());
		pthread_mutex_unlock(&mu);
		return -ENOENT;
	}
#define SYM(field)                                                                  \
	do {                                                                        \
		if (!missing && !(*(void **)&libcurl.field = dlsym(h, "curl_" #field))) \
			missing = "curl_" #field;                                   \
	} while (0)
	SYM(easy_init);
	SYM(easy_setopt);
	SYM(easy_perform);
	SYM(easy_getinfo);
	SYM(easy_strerror);
	SYM(easy_cleanup);
	SYM(slist_append);
	SYM(slist_free_all);
	/* last: the one that says all are there */
	SYM(global_init);
#undef SYM
	if (missing) {
		snprintf(err, errlen, "--otlp needs libcurl: %s has no %s", LIBCURL_SONAME, missing);
		libcurl.global_init = NULL;
		dlclose(h);
		pthread_mutex_unlock(&mu);
		return -ENOENT;
	}
out:
	pthread_mutex_unlock(&mu);
	return 0;
}

static int copy_config(struct otlp_export_config *dst, const struct otlp_export_config *src)
{
	size_t i;

	*dst = *src;
	dst->headers = calloc(src->nheaders + 1, sizeof(char *));
	dst->url = strdup(src->url);
	dst->ca_file = src->ca_file ? strdup(src->ca_file) : NULL;
	dst->cert_file = src->cert_file ? strdup(src->cert_file) : NULL;
	dst->key_file = src->key_file ? strdup(src->key_file) : NULL;
	for (i = 0; dst->headers && i < src->nheaders; i++)
		dst->headers[i] = strdup(src->headers[i]);
	if (!dst->headers || !dst->url || (src->ca_file && !dst->ca_file) ||
	    (src->cert_file && !dst->cert_file) || (src->key_file && !dst->key_file))
		return -ENOMEM;
	for (i = 0; i < src->nheaders; i++) {
		if (!dst->headers[i])
			return -ENOMEM;
	}
	return 0;
}

struct item {
	uint8_t *buf;
	size_t len;
	uint64_t samples;
};

struct otlp_export {
	struct otlp_export_config cfg;
	char *user_agent;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct item *q; /* a ring of cfg.queue_max */
	size_t head, n;
	bool stopping;
	/*
	 * CLOCK_MONOTONIC, 0 until the run ends: what is not sent by then is
	 * dropped, the request in flight too (read without the lock, by the
	 * transfer's progress callback)
	 */
	uint64_t stop_by_ns;
	bool inflight; /* a request is being sent */
	struct otlp_export_stats st;
	/* the thread's own */
	CURL *curl;
	struct curl_slist *hdrs;
	struct strbuf body, gz;
	long retry_after_ms;
	char curl_err[CURL_ERROR_SIZE];
	bool said_permanent, said_rejected, said_split, failing;
	size_t refused_len; /* the smallest request refused for its size: those as large go as halves */
	bool heard; /* the collector has answered HTTP at least once */
};

/* What one attempt came to. */
enum outcome {
	SENT,
	RETRY,
	REFUSED, /* permanent: the request is dropped */
	TOO_LARGE, /* refused for its size: it goes as halves */
	GAVE_UP, /* the exit's deadline passed while it was in flight: dropped */
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct otlp_export *e = ctx;

	if (e->body.n < RESPONSE_MAX)
		strbuf__put(&e->body, p, size * n);
	return size * n;
}

/* libcurl, during a transfer: past the end of the flush at exit, the request in flight ends too. */
static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct otlp_export *e = ctx;
	uint64_t by = __atomic_load_n(&e->stop_by_ns, __ATOMIC_ACQUIRE);

	return by && now_ns(CLOCK_MONOTONIC) >= by;
}

/* Retry-After in seconds (an HTTP date is left to the backoff). */
static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	struct otlp_export *e = ctx;
	size_t len = size * n;
	char buf[64];
	long s;

	if (len > 12 && len < sizeof(buf) && !strncasecmp(p, "Retry-After:", 12)) {
		memcpy(buf, p + 12, len - 12);
		buf[len - 12] = '\0';
		if (sscanf(buf, "%ld", &s) == 1 && s >= 0)
			e->retry_after_ms = s * 1000 < RETRY_AFTER_MAX_MS ? s * 1000 : RETRY_AFTER_MAX_MS;
	}
	return len;
}

/*
 * What the collector said, into MSG on one line of at most ANSWER_MAX
 * bytes: a google.rpc.Status's message (field 2), else the body as text
 * (a proxy's HTML page, say).
 */
static void response_message(const struct strbuf *b, char *msg, size_t len)
{
	const uint8_t *p = (const uint8_t *)b->p, *end = p + b->n;
	uint64_t key, l;
	int shift;

	msg[0] = '\0';
	while (p < end) {
		for (key = 0, shift = 0; p < end && shift < 64; shift += 7) {
			key |= (uint64_t)(*p & 0x7f) << shift;
			if (!(*p++ & 0x80))
				break;
		}
		if ((key & 7) == 0) {
			while (p < end && (*p++ & 0x80))
				;
			continue;
		}
		if ((key & 7) != 2)
			break;
		for (l = 0, shift = 0; p < end && shift < 64; shift += 7) {
			l |= (uint64_t)(*p & 0x7f) << shift;
			if (!(*p++ & 0x80))
				break;
		}
		if (l > (uint64_t)(end - p))
			break;
		if (key >> 3 == 2) {
			excerpt(msg, len, p, l, ANSWER_MAX);
			return;
		}
		p += l;
	}
	/* not a Status: the text */
	excerpt(msg, len, b->p, b->n, ANSWER_MAX);
}

/*
 * Profiles the collector says it rejected, from an ExportProfilesServiceResponse;
 * its message into MSG.
 */
static uint64_t rejected_profiles(const struct strbuf *b, char *msg, size_t len)
{
	Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse *r;
	uint64_t n = 0;

	if (!b->n)
		return 0;
	r = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__unpack(
		NULL, b->n, (const uint8_t *)b->p);
	if (!r)
		return 0;
	if (r->partial_success && r->partial_success->rejected_profiles > 0) {
		n = r->partial_success->rejected_profiles;
		excerpt(msg, len, r->partial_success->error_message ?: "",
			strlen(r->partial_success->error_message ?: ""), ANSWER_MAX);
	}
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__free_unpacked(
		r, NULL);
	return n;
}

/* BUF gzip-compressed into e->gz; false when zlib failed. */
static bool compress_gzip(struct otlp_export *e, const uint8_t *buf, size_t len)
{
	z_stream z = {};
	uLong bound;
	char *p;
	bool ok;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return false;
	bound = deflateBound(&z, len);
	if (bound > e->gz.cap) {
		p = realloc(e->gz.p, bound);
		if (!p) {
			deflateEnd(&z);
			return false;
		}
		e->gz.p = p;
		e->gz.cap = bound;
	}
	z.next_in = (Bytef *)buf;
	z.avail_in = len;
	z.next_out = (Bytef *)e->gz.p;
	z.avail_out = e->gz.cap;
	ok = deflate(&z, Z_FINISH) == Z_STREAM_END;
	e->gz.n = z.total_out;
	deflateEnd(&z);
	return ok;
}

static bool retryable_curl(CURLcode c)
{
	switch (c) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

/*
 * One attempt at IT, of at most TIMEOUT_MS, without the lock: the reason
 * of a failure in WHY; once sent, the bytes and the profiles the collector
 * rejected in *SENT.
 */
static enum outcome attempt(struct otlp_export *e, const struct item *it, long timeout_ms, char *why,
			    size_t len, struct otlp_export_stats *sent)
{
	const uint8_t *data = it->buf;
	size_t size = it->len;
	long status = 0;
	CURLcode rc;
	char msg[512];

	if (e->cfg.gzip) {
		if (!compress_gzip(e, it->buf, it->len)) {
			snprintf(why, len, "gzip failed");
			return REFUSED;
		}
		data = (const uint8_t *)e->gz.p;
		size = e->gz.n;
	}
	e->body.n = 0;
	e->retry_after_ms = 0;
	e->curl_err[0] = '\0';
	libcurl.easy_setopt(e->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	libcurl.easy_setopt(e->curl, CURLOPT_POSTFIELDS, data);
	libcurl.easy_setopt(e->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)size);
	rc = libcurl.easy_perform(e->curl);
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		snprintf(why, len, "the run ended before the collector answered");
		return GAVE_UP;
	}
	if (rc != CURLE_OK) {
		snprintf(why, len, "%s", *e->curl_err ? e->curl_err : libcurl.easy_strerror(rc));
		return retryable_curl(rc) ? RETRY : REFUSED;
	}
	libcurl.easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
	/* it answers, if only to say it is busy: at exit it gets the whole flush time */
	__atomic_store_n(&e->heard, true, __ATOMIC_RELAXED);
	if (status >= 200 && status < 300) {
		sent->bytes = size;
		sent->rejected = rejected_profiles(&e->body, why, len);
		return SENT;
	}
	response_message(&e->body, msg, sizeof(msg));
	snprintf(why, len, "HTTP %ld%s%s", status, *msg ? ": " : "", msg);
	/* the Collector answers 400 "request body too large" past max_request_body_size */
	if (status == 413 || (status == 400 && strcasestr(msg, "too large")))
		return TOO_LARGE;
	return status == 429 || status == 502 || status == 503 || status == 504 ? RETRY : REFUSED;
}

/* Sleeps MS with the lock held, or less: at exit, never past the end of the flush. */
static void wait_ms(struct otlp_export *e, long ms)
{
	uint64_t until = now_ns(CLOCK_MONOTONIC) + (uint64_t)ms * 1000000, left;
	struct timespec ts;

	for (;;) {
		if (e->stopping && e->stop_by_ns < until)
			until = e->stop_by_ns;
		if (now_ns(CLOCK_MONOTONIC) >= until)
			return;
		/* the condition variable keeps CLOCK_REALTIME */
		left = until - now_ns(CLOCK_MONOTONIC);
		left = now_ns(CLOCK_REALTIME) + left;
		ts.tv_sec = left / NSEC_PER_SEC;
		ts.tv_nsec = left % NSEC_PER_SEC;
		pthread_cond_timedwait(&e->cv, &e->mu, &ts);
	}
}

/* Milliseconds to the end of the flush at exit, at least 1. */
static long ms_left(const struct otlp_export *e)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);

	return now < e->stop_by_ns ? (e->stop_by_ns - now) / 1000000 + 1 : 1;
}

static long jitter(long ms)
{
	/* +-25%, so that agents restarted together do not retry together */
	return ms * 3 / 4 + random() % (ms / 2 + 1);
}

static void deliver(struct otlp_export *e, const struct item *it);

/*
 * IT as two requests, each delivered; false when it cannot be cut (one
 * sample). With the lock held, dropped while cutting.
 */
static bool deliver_halves(struct otlp_export *e, const struct item *it, const char *why)
{
	struct otlp_part half[2];
	int i, ret;

	pthread_mutex_unlock(&e->mu);
	ret = otlp_split(it->buf, it->len, it->samples, half);
	pthread_mutex_lock(&e->mu);
	if (ret) {
		if (ret != -E2BIG)
			fprintf(stderr, "ctxprof-go: otlp: cannot cut a request of %zu bytes in two: %s\n",
				it->len, strerror(-ret));
		return false;
	}
	if (!e->said_split)
		fprintf(stderr, "ctxprof-go: otlp: a request of %zu bytes goes as halves: %s (said once; "
				"later ones are counted)\n",
			it->len, why);
	e->said_split = true;
	e->st.splits++;
	for (i = 0; i < 2; i++) {
		struct item h = { half[i].buf, half[i].len, half[i].samples };

		deliver(e, &h);
		free(h.buf);
	}
	return true;
}

/* Delivers IT, retrying, or as halves; with the lock held, dropped while sending. */
static void deliver(struct otlp_export *e, const struct item *it)
{
	uint64_t start = now_ns(CLOCK_MONOTONIC);
	struct otlp_export_stats sent = {};
	long backoff = BACKOFF_FIRST_MS;
	long timeout;
	enum outcome out;
	char why[640];

	why[0] = '\0';
	if (it->len > OTLP_MAX_REQUEST_BYTES)
		snprintf(why, sizeof(why), "over the %d bytes ctxprof-go sends at once",
			 OTLP_MAX_REQUEST_BYTES);
	else if (e->refused_len && it->len >= e->refused_len)
		snprintf(why, sizeof(why), "as large as one the collector refused (%zu bytes)",
			 e->refused_len);
	if (*why && deliver_halves(e, it, why))
		return;
	for (;;) {
		why[0] = '\0';
		/* at exit, no attempt outlasts the flush time */
		timeout = e->cfg.timeout_ms;
		if (e->stopping)
			timeout = ms_left(e) < timeout ? ms_left(e) : timeout;
		e->inflight = true;
		pthread_mutex_unlock(&e->mu);
		out = attempt(e, it, timeout, why, sizeof(why), &sent);
		pthread_mutex_lock(&e->mu);
		e->inflight = false;
		if (out == SENT) {
			e->st.requests++;
			e->st.last_sent_ns = now_ns(CLOCK_REALTIME);
			e->st.samples += it->samples;
			e->st.bytes += sent.bytes;
			e->st.rejected += sent.rejected;
			if (sent.rejected && !e->said_rejected)
				fprintf(stderr, "ctxprof-go: otlp: %s took a request in part, rejecting %llu "
						"profiles: %s (said once; later rejections are counted)\n",
					e->cfg.url, (unsigned long long)sent.rejected, *why ? why : "no reason given");
			e->said_rejected |= sent.rejected > 0;
			if (e->failing)
				fprintf(stderr, "ctxprof-go: otlp: %s takes requests again\n", e->cfg.url);
			e->failing = false;
			return;
		}
		if (out == GAVE_UP) {
			e->st.dropped_unsent++;
			break;
		}
		if (out == TOO_LARGE) {
			if (!e->refused_len || it->len < e->refused_len)
				e->refused_len = it->len;
			if (deliver_halves(e, it, why))
				return;
			e->st.dropped_too_large++;
			fprintf(stderr, "ctxprof-go: otlp: %s refused a request of one sample for its size: %s\n",
				e->cfg.url, why);
			break;
		}
		if (out == REFUSED) {
			e->st.dropped_refused++;
			if (!e->said_permanent)
				fprintf(stderr, "ctxprof-go: otlp: %s refused a request, not retried: %s "
						"(said once; later refusals are counted)\n",
					e->cfg.url, why);
			e->said_permanent = true;
			break;
		}
		if (!e->failing)
			fprintf(stderr, "ctxprof-go: otlp: %s: %s; retrying with backoff\n", e->cfg.url,
				why);
		e->failing = true;
		if ((e->stopping && now_ns(CLOCK_MONOTONIC) >= e->stop_by_ns) ||
		    now_ns(CLOCK_MONOTONIC) - start > (uint64_t)GIVE_UP_MS * 1000000) {
			e->st.dropped_unsent++;
			break;
		}
		e->st.retries++;
		/* as long as the collector asks (its memory limiter's 429, a 503), else backoff */
		wait_ms(e, e->retry_after_ms ? e->retry_after_ms : jitter(backoff));
		backoff = backoff * 2 < BACKOFF_MAX_MS ? backoff * 2 : BACKOFF_MAX_MS;
	}
	e->st.dropped++;
	e->st.dropped_samples += it->samples;
}

static void *run(void *arg)
{
	struct otlp_export *e = arg;
	struct item it;

	pthread_mutex_lock(&e->mu);
	for (;;) {
		while (!e->n && !e->stopping)
			pthread_cond_wait(&e->cv, &e->mu);
		if (!e->n)
			break;
		it = e->q[e->head];
		e->head = (e->head + 1) % e->cfg.queue_max;
		e->n--;
		if (e->stopping && now_ns(CLOCK_MONOTONIC) >= e->stop_by_ns) {
			e->st.dropped++;
			e->st.dropped_unsent++;
			e->st.dropped_samples += it.samples;
		} else {
			deliver(e, &it);
		}
		free(it.buf);
	}
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

/* libcurl's handle, set up once: its connection is kept from one request to the next. */
static int setup_curl(struct otlp_export *e, char *err, size_t errlen)
{
	size_t i;

	e->curl = libcurl.easy_init();
	e->hdrs = libcurl.slist_append(NULL, "Content-Type: application/x-protobuf");
	/* a collector answers at once: no wait for "100 Continue" */
	if (e->hdrs)
		e->hdrs = libcurl.slist_append(e->hdrs, "Expect:");
	if (e->hdrs && e->cfg.gzip)
		e->hdrs = libcurl.slist_append(e->hdrs, "Content-Encoding: gzip");
	for (i = 0; e->hdrs && i < e->cfg.nheaders; i++)
		e->hdrs = libcurl.slist_append(e->hdrs, e->cfg.headers[i]);
	if (!e->curl || !e->hdrs) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	libcurl.easy_setopt(e->curl, CURLOPT_URL, e->cfg.url);
	libcurl.easy_setopt(e->curl, CURLOPT_POST, 1L);
	/* the exit's deadline reaches the request in flight: curl asks about once a second, or sooner */
	libcurl.easy_setopt(e->curl, CURLOPT_NOPROGRESS, 0L);
	libcurl.easy_setopt(e->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	libcurl.easy_setopt(e->curl, CURLOPT_XFERINFODATA, e);
	libcurl.easy_setopt(e->curl, CURLOPT_HTTPHEADER, e->hdrs);
	libcurl.easy_setopt(e->curl, CURLOPT_USERAGENT, e->user_agent);
	libcurl.easy_setopt(e->curl, CURLOPT_NOSIGNAL, 1L);
	libcurl.easy_setopt(e->curl, CURLOPT_ERRORBUFFER, e->curl_err);
	libcurl.easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, on_body);
	libcurl.easy_setopt(e->curl, CURLOPT_WRITEDATA, e);
	libcurl.easy_setopt(e->curl, CURLOPT_HEADERFUNCTION, on_header);
	libcurl.easy_setopt(e->curl, CURLOPT_HEADERDATA, e);
	/* only what was asked: no redirects to elsewhere (a proxy from the environment is taken) */
	libcurl.easy_setopt(e->curl, CURLOPT_FOLLOWLOCATION, 0L);
	libcurl.easy_setopt(e->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (e->cfg.ca_file)
		libcurl.easy_setopt(e->curl, CURLOPT_CAINFO, e->cfg.ca_file);
	if (e->cfg.cert_file) {
		libcurl.easy_setopt(e->curl, CURLOPT_SSLCERT, e->cfg.cert_file);
		libcurl.easy_setopt(e->curl, CURLOPT_SSLKEY, e->cfg.key_file);
	}
	return 0;
}

static void export_free(struct otlp_export *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; e->q && i < e->n; i++)
		free(e->q[(e->head + i) % e->cfg.queue_max].buf);
	free(e->q);
	libcurl.slist_free_all(e->hdrs);
	if (e->curl)
		libcurl.easy_cleanup(e->curl);
	strbuf__free(&e->body);
	strbuf__free(&e->gz);
	otlp_export__config_free(&e->cfg);
	free(e->user_agent);
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->cv);
	free(e);
}

struct otlp_export *otlp_export__start(const struct otlp_export_config *c, const char *version,
				       char *err, size_t errlen)
{
	struct otlp_export *e = calloc(1, sizeof(*e));
	CURLcode rc;

	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	if (copy_config(&e->cfg, c) || asprintf(&e->user_agent, "ctxprof-go/%s", version) < 0 ||
	    !(e->q = calloc(c->queue_max ? c->queue_max : 1, sizeof(*e->q)))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (!e->cfg.queue_max)
		e->cfg.queue_max = 1;
	if (open_libcurl(err, errlen))
		goto fail;
	rc = libcurl.global_init(CURL_GLOBAL_DEFAULT);
	if (rc != CURLE_OK) {
		snprintf(err, errlen, "libcurl: %s", libcurl.easy_strerror(rc));
		goto fail;
	}
	if (setup_curl(e, err, errlen))
		goto fail;
	srandom(now_ns(CLOCK_MONOTONIC));
	if (pthread_create(&e->thread, NULL, run, e)) {
		snprintf(err, errlen, "cannot start the export thread: %s", strerror(errno));
		goto fail;
	}
	e->started = true;
	return e;
fail:
	export_free(e);
	return NULL;
}

void otlp_export__push(struct otlp_export *e, uint8_t *buf, size_t len, uint64_t samples)
{
	pthread_mutex_lock(&e->mu);
	if (e->n == e->cfg.queue_max) {
		e->st.dropped++;
		e->st.dropped_full++;
		e->st.dropped_samples += samples;
		free(buf);
	} else {
		e->q[(e->head + e->n) % e->cfg.queue_max] = (struct item){ buf, len, samples };
		e->n++;
		if (e->n > e->st.queue_high)
			e->st.queue_high = e->n;
		pthread_cond_signal(&e->cv);
	}
	pthread_mutex_unlock(&e->mu);
}

void otlp_export__stats(struct otlp_export *e, struct otlp_export_stats *out)
{
	pthread_mutex_lock(&e->mu);
	*out = e->st;
	out->queued = e->n + e->inflight;
	pthread_mutex_unlock(&e->mu);
}

void otlp_export__stop(struct otlp_export *e, struct otlp_export_stats *out)
{
	bool heard;
	size_t pending;
	long ms;

	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	e->stopping = true;
	/* a collector that has not answered in this run is not waited for: one short try */
	heard = __atomic_load_n(&e->heard, __ATOMIC_RELAXED);
	ms = heard ? e->cfg.flush_ms : e->cfg.flush_ms < OTLP_FLUSH_UNHEARD_MS ? e->cfg.flush_ms :
											 OTLP_FLUSH_UNHEARD_MS;
	__atomic_store_n(&e->stop_by_ns, now_ns(CLOCK_MONOTONIC) + (uint64_t)ms * 1000000, __ATOMIC_RELEASE);
	pending = e->n + e->inflight;
	if (pending)
		fprintf(stderr, "ctxprof-go: otlp: sending %zu request%s to %s before exiting, for %.1f s at most%s\n",
			pending, plural(pending), e->cfg.url, ms / 1000.0,
			heard ? "" : " (it has answered none in this run)");
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
	if (e->started)
		pthread_join(e->thread, NULL);
	if (out)
		*out = e->st;
	export_free(e);
}
