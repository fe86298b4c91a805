// SPDX-License-Identifier: GPL-2.0
/* otlp_config.c: --otlp and the OTEL_EXPORTER_OTLP_* variables, read and checked before anything is loaded. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/util/excerpt.h"
#include "cmd/util/otel_env.h"
#include "otlp_export.h"

/* A setting's value and where it came from: "--otlp" or a variable's name, for its messages. */
struct setting {
	char name[64];
	const char *value;
};

/*
 * V as a message quotes it, into BUF (more than 8 bytes): a control
 * character as \xNN, so that a value that holds one cannot move the
 * terminal's cursor, and what does not fit cut off with an ellipsis,
 * never inside a UTF-8 character.
 */
static const char *shown(const char *v, char *buf, size_t len)
{
	size_t n = 0;

	for (; *v && n + 8 < len; v++) {
		if ((unsigned char)*v < ' ' || *v == 0x7f)
			n += snprintf(buf + n, len - n, "\\x%02x", (unsigned char)*v);
		else
			buf[n++] = *v;
	}
	if (*v) {
		/* the last character, whole or not, goes when the next byte continues it */
		if (((unsigned char)*v & 0xc0) == 0x80) {
			while (n && ((unsigned char)buf[n - 1] & 0xc0) == 0x80)
				n--;
			if (n && (unsigned char)buf[n - 1] >= 0xc0)
				n--;
		}
		memcpy(buf + n, EXCERPT_CUT, sizeof(EXCERPT_CUT) - 1);
		n += sizeof(EXCERPT_CUT) - 1;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * The variable of the profiles signal named OTEL_EXPORTER_OTLP_PROFILES_SUFFIX,
 * else the one of every signal; false when neither is set.
 */
static bool otel_env(const char *suffix, struct setting *s)
{
	const char *v;

	snprintf(s->name, sizeof(s->name), "OTEL_EXPORTER_OTLP_PROFILES_%s", suffix);
	v = getenv(s->name);
	if (!v || !*v) {
		snprintf(s->name, sizeof(s->name), "OTEL_EXPORTER_OTLP_%s", suffix);
		v = getenv(s->name);
	}
	s->value = v && *v ? v : NULL;
	return s->value;
}

/* The port of a URL, END - P bytes: a number 1 to 65535. */
static bool valid_port(const char *p, const char *end)
{
	long port = 0;

	if (p == end || end - p > 5)
		return false;
	for (; p < end; p++) {
		if (!isdigit((unsigned char)*p))
			return false;
		port = port * 10 + (*p - '0');
	}
	return port >= 1 && port <= 65535;
}

/* The bracketed host at P, END - P bytes, of AUTH: an IPv6 address; its end, or NULL with WHY. */
static const char *ipv6_host(const char *p, const char *end, char *why, size_t len)
{
	const char *close = memchr(p, ']', end - p);
	struct in6_addr a;
	char addr[INET6_ADDRSTRLEN + 1];
	size_t n;

	if (!close) {
		snprintf(why, len, "the IPv6 address has no closing ']'");
		return NULL;
	}
	/* a zone (fe80::1%25eth0) is libcurl's to read */
	n = strcspn(p + 1, "%]");
	if (n >= sizeof(addr) || (memcpy(addr, p + 1, n), addr[n] = '\0', inet_pton(AF_INET6, addr, &a) != 1)) {
		snprintf(why, len, "'%.*s' is not an IPv6 address", (int)(close - p - 1), p + 1);
		return NULL;
	}
	if (close + 1 < end && close[1] != ':') {
		snprintf(why, len, "text after the IPv6 address: a port comes as ]:PORT");
		return NULL;
	}
	return close + 1;
}

/* The host at P, END - P bytes: a name or an IPv4 address; its end, or NULL with WHY. */
static const char *name_host(const char *p, const char *end, char *why, size_t len)
{
	const char *colon = memchr(p, ':', end - p), *q;

	if (colon && memchr(colon + 1, ':', end - colon - 1)) {
		snprintf(why, len, "an IPv6 address goes in brackets, as http://[::1]:4318");
		return NULL;
	}
	if (!colon)
		colon = end;
	if (colon == p) {
		snprintf(why, len, "no host");
		return NULL;
	}
	for (q = p; q < colon; q++) {
		/* letters, digits, -._~ and the bytes of a name in UTF-8, as libcurl takes them */
		if (!isalnum((unsigned char)*q) && !strchr("-._~", *q) && !((unsigned char)*q & 0x80)) {
			snprintf(why, len, "'%c' in the host", *q);
			return NULL;
		}
	}
	return colon;
}

int otlp_url_check(const char *url, bool base, char *why, size_t len)
{
	const char *p, *auth, *end, *host;

	for (p = url; *p; p++) {
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			snprintf(why, len, "a space or control character at byte %zu", (size_t)(p - url));
			return -EINVAL;
		}
	}
	if (!strncasecmp(url, "http://", 7))
		auth = url + 7;
	else if (!strncasecmp(url, "https://", 8))
		auth = url + 8;
	else {
		snprintf(why, len, "not an http:// or https:// URL");
		return -EINVAL;
	}
	end = auth + strcspn(auth, "/?#");
	if (base && end[strcspn(end, "?#")]) {
		snprintf(why, len, "a base URL has no query or fragment: %s goes after its path",
			 OTLP_PROFILES_PATH);
		return -EINVAL;
	}
	/* user:password@ is libcurl's, for basic authentication */
	for (host = p = auth; p < end; p++)
		if (*p == '@')
			host = p + 1;
	if (host == end) {
		snprintf(why, len, "no host");
		return -EINVAL;
	}
	p = *host == '[' ? ipv6_host(host, end, why, len) : name_host(host, end, why, len);
	if (!p)
		return -EINVAL;
	if (p < end && !valid_port(p + 1, end)) {
		snprintf(why, len, "port '%.*s' is not a number from 1 to 65535", (int)(end - p - 1), p + 1);
		return -EINVAL;
	}
	return 0;
}

/*
 * The file a variable names, checked as libcurl will read it: a regular
 * file that opens for reading. -errno with the message in ERR.
 */
static int check_file(const struct setting *s, char *err, size_t errlen)
{
	struct stat st;
	char v[256];
	int fd, ret = 0;

	/* not blocking on a FIFO */
	fd = open(s->value, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot read '%s': %s", s->name, shown(s->value, v, sizeof(v)),
			 strerror(-ret));
	} else if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(err, errlen, "%s: '%s' is not a regular file (a PEM file is wanted)", s->name,
			 shown(s->value, v, sizeof(v)));
	}
	if (fd >= 0)
		close(fd);
	return ret;
}

static int add_header(void *ctx, const char *k, const char *v)
{
	struct otlp_export_config *c = ctx;
	char **h = realloc(c->headers, (c->nheaders + 1) * sizeof(*h));

	if (!h)
		return -ENOMEM;
	c->headers = h;
	if (asprintf(&h[c->nheaders], "%s: %s", k, v) < 0)
		return -ENOMEM;
	c->nheaders++;
	return 0;
}

/*
 * The URL of the profiles endpoint: BASE's path with the signal's after
 * it. With WHOLE_OK, a BASE that ends in the signal's path already is the
 * endpoint, as the exporters' signal-specific variable takes it.
 */
static char *profiles_url(const char *base, bool whole_ok)
{
	size_t n = strlen(base), path = strlen(OTLP_PROFILES_PATH);
	char *url;

	while (n && base[n - 1] == '/')
		n--;
	if (whole_ok && n > path && !strncmp(base + n - path, OTLP_PROFILES_PATH, path))
		n -= path;
	return asprintf(&url, "%.*s%s", (int)n, base, OTLP_PROFILES_PATH) < 0 ? NULL : url;
}

/*
 * The endpoint's URL into C, from --otlp, the profiles endpoint (as it is)
 * or every signal's base, each checked as given: 1, 0 when none asks for
 * OTLP, -errno with the message in ERR.
 */
static int endpoint(struct otlp_export_config *c, const char *base_url, char *err, size_t errlen)
{
	struct setting s = { "--otlp", base_url };
	bool base = true;
	char why[160], v[256];

	if (!base_url && otel_env("ENDPOINT", &s) && !strncmp(s.name, "OTEL_EXPORTER_OTLP_PROFILES_", 28))
		base = false;
	if (!s.value)
		return 0;
	if (otlp_url_check(s.value, base, why, sizeof(why))) {
		snprintf(err, errlen, "%s: invalid URL '%s': %s", s.name, shown(s.value, v, sizeof(v)), why);
		return -EINVAL;
	}
	/* --otlp ending in the signal's path is the endpoint; the base variable always is a base */
	c->url = base ? profiles_url(s.value, base_url != NULL) : strdup(s.value);
	if (!c->url) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 1;
}

/* OTEL_EXPORTER_OTLP_{CERTIFICATE,CLIENT_CERTIFICATE,CLIENT_KEY}: files that can be read. */
static int tls_files(struct otlp_export_config *c, char *err, size_t errlen)
{
	static const char *const suffix[] = { "CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY" };
	char **dst[] = { &c->ca_file, &c->cert_file, &c->key_file };
	struct setting s, named[3] = {};
	int i, ret;

	for (i = 0; i < 3; i++) {
		if (!otel_env(suffix[i], &s))
			continue;
		if ((ret = check_file(&s, err, errlen)))
			return ret;
		named[i] = s;
		if (!(*dst[i] = strdup(s.value))) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	if (!c->cert_file != !c->key_file) {
		i = c->cert_file ? 1 : 2;
		snprintf(err, errlen, "%s is set without OTEL_EXPORTER_OTLP_%s: a client certificate and its key go together",
			 named[i].name, i == 1 ? "CLIENT_KEY" : "CLIENT_CERTIFICATE");
		return -EINVAL;
	}
	return 0;
}

/* _PROTOCOL, _HEADERS, _COMPRESSION and _TIMEOUT into C; -errno with the message in ERR. */
static int options(struct otlp_export_config *c, char *err, size_t errlen)
{
	struct setting s;
	char why[256], v[128];
	char *end;
	int ret;

	if (otel_env("PROTOCOL", &s) && strcmp(s.value, "http/protobuf")) {
		snprintf(err, errlen, "%s: '%s': ctxprof-go speaks http/protobuf only", s.name,
			 shown(s.value, v, sizeof(v)));
		return -EINVAL;
	}
	if (otel_env("HEADERS", &s) && (ret = otel_kv_list(s.value, add_header, c, why, sizeof(why)))) {
		if (ret == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		else
			snprintf(err, errlen, "%s: %s", s.name, why);
		return ret;
	}
	if (otel_env("COMPRESSION", &s) && strcmp(s.value, "gzip") && strcmp(s.value, "none")) {
		snprintf(err, errlen, "%s: '%s': gzip or none", s.name, shown(s.value, v, sizeof(v)));
		return -EINVAL;
	}
	/* gzip unless told otherwise: a profile's tables compress about tenfold */
	c->gzip = !s.value || !strcmp(s.value, "gzip");
	if (otel_env("TIMEOUT", &s)) {
		errno = 0;
		c->timeout_ms = strtol(s.value, &end, 10);
		if (errno || *end || end == s.value || c->timeout_ms <= 0) {
			snprintf(err, errlen, "%s: '%s': milliseconds, more than 0", s.name,
				 shown(s.value, v, sizeof(v)));
			return -EINVAL;
		}
	}
	return 0;
}

int otlp_export__config(struct otlp_export_config *c, const char *base_url, char *err,
			size_t errlen)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->queue_max = OTLP_DEFAULT_QUEUE;
	c->timeout_ms = OTLP_DEFAULT_TIMEOUT_MS;
	c->flush_ms = OTLP_FLUSH_MS;
	ret = endpoint(c, base_url, err, errlen);
	if (ret <= 0)
		return ret;
	if ((ret = options(c, err, errlen)) || (ret = tls_files(c, err, errlen))) {
		otlp_export__config_free(c);
		return ret == -ENOMEM ? ret : -EINVAL;
	}
	return 1;
}

void otlp_export__config_free(struct otlp_export_config *c)
{
	size_t i;

	for (i = 0; i < c->nheaders; i++)
		free(c->headers[i]);
	free(c->headers);
	free(c->url);
	free(c->ca_file);
	free(c->cert_file);
	free(c->key_file);
	memset(c, 0, sizeof(*c));
}
