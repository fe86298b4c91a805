/* SPDX-License-Identifier: GPL-2.0 */
/* otlp_export.h: OTLP requests to a collector over HTTP, from a thread of their own behind a bounded queue. */
#ifndef __OTLP_EXPORT_H
#define __OTLP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OTLP_PROFILES_PATH "/v1development/profiles"
#define OTLP_DEFAULT_QUEUE 16 /* requests, one an interval */
#define OTLP_DEFAULT_TIMEOUT_MS 10000
#define OTLP_FLUSH_MS 5000 /* at exit, for what is still queued */
#define OTLP_FLUSH_UNHEARD_MS 1000 /* the same for a collector that has not answered yet */
/*
 * No request is larger before compression: one that is goes as halves
 * (otlp_split.h). The Collector takes 20 MiB by default
 * (max_request_body_size), of the body as sent and as decompressed.
 */
#define OTLP_MAX_REQUEST_BYTES (4 << 20)

/* Where and how requests go: --otlp and the OTEL_EXPORTER_OTLP_* variables. */
struct otlp_export_config {
	char *url; /* the full URL of the profiles endpoint */
	char **headers; /* "Name: value" */
	size_t nheaders;
	bool gzip;
	long timeout_ms; /* one attempt */
	char *ca_file, *cert_file, *key_file; /* NULL: the system's CAs, no client certificate */
	size_t queue_max;
	long flush_ms;
};

/*
 * The configuration from BASE_URL (--otlp; NULL: from the environment) and
 * the OTEL_EXPORTER_OTLP_* variables, the profiles-specific ones first:
 * _ENDPOINT (a base URL; _PROFILES_ENDPOINT is used as it is), _HEADERS
 * (k=v,k2=v2, percent-encoded), _COMPRESSION (gzip or none), _TIMEOUT
 * (ms), _CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY and _PROTOCOL (only
 * http/protobuf). Every setting is checked here, before anything is sent:
 * the URL as otlp_url_check does, the files as readable regular files. 1
 * when OTLP is to be sent, 0 when neither BASE_URL nor an endpoint
 * variable asks for it, -EINVAL (-ENOMEM) with the message in ERR, which
 * starts with the setting's name: "--otlp" or the variable's.
 */
int otlp_export__config(struct otlp_export_config *c, const char *base_url, char *err,
			size_t errlen);
void otlp_export__config_free(struct otlp_export_config *c);

/*
 * URL as an OTLP endpoint: http:// or https://, a host (a name, an IPv4
 * address, or an IPv6 address in brackets), a port, if given, from 1 to
 * 65535, no space or control character; with BASE (a URL the signal's
 * path goes after), no query or fragment. 0, or -EINVAL with the reason
 * in WHY.
 */
int otlp_url_check(const char *url, bool base, char *why, size_t len);

struct otlp_export_stats {
	uint64_t requests, samples, bytes; /* sent and taken by the collector */
	uint64_t retries; /* attempts that failed and were tried again */
	uint64_t dropped, dropped_samples; /* never delivered, for one of the causes below */
	uint64_t dropped_full; /* requests that found the queue full */
	uint64_t dropped_refused; /* refused for good (HTTP 4xx but 429, TLS, ...) */
	uint64_t dropped_too_large; /* refused for their size though one sample */
	uint64_t dropped_unsent; /* still unsent when retries or the exit's flush ran out */
	uint64_t splits; /* requests cut in halves for their size */
	uint64_t rejected; /* profiles the collector said it dropped (partial success) */
	uint64_t queue_high; /* the most requests waiting at once */
	uint64_t queued; /* waiting now, or being sent (otlp_export__stats only) */
	uint64_t last_sent_ns; /* CLOCK_REALTIME when the collector last took a request; 0: never */
};

struct otlp_export;

/* The export thread, started; NULL with the reason in ERR. C is copied. */
struct otlp_export *otlp_export__start(const struct otlp_export_config *c, const char *version,
				       char *err, size_t errlen);
/*
 * Hands BUF (LEN bytes, malloc'd) with SAMPLES samples to the thread, which
 * frees it. Never waits: a request that finds the queue full is dropped and
 * counted. One over OTLP_MAX_REQUEST_BYTES, or that the collector refuses
 * for its size (HTTP 413, or 400 saying so), goes as halves.
 */
void otlp_export__push(struct otlp_export *e, uint8_t *buf, size_t len, uint64_t samples);
void otlp_export__stats(struct otlp_export *e, struct otlp_export_stats *out);
/*
 * Sends what is queued for at most the flush time, counts what is left as
 * dropped, stops the thread, and frees E, leaving its totals in OUT (may
 * be NULL). Accepts NULL.
 */
void otlp_export__stop(struct otlp_export *e, struct otlp_export_stats *out);

#endif /* __OTLP_EXPORT_H */
