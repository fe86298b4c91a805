// SPDX-License-Identifier: GPL-2.0
/* test_otlp_config.c: --otlp and the OTEL_EXPORTER_OTLP_* variables: precedence, lists, URLs, files, refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/output/otlp_export.h"
#include "cmd/util/excerpt.h"
#include "cmd/util/otel_env.h"
#include "tap.h"

static const char *const vars[] = {
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_PROFILES_HEADERS",
	"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TIMEOUT",
	"OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "OTEL_EXPORTER_OTLP_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY", "OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION",
};

static void clear(void)
{
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static char joined[512];

static int join(void *ctx, const char *k, const char *v)
{
	size_t n = strlen(joined);

	snprintf(joined + n, sizeof(joined) - n, "%s[%s]=[%s]", n ? " " : "", k, v);
	return 0;
}

/* The URL the configuration ends with, or what became of it. */
static const char *url_of(const char *base, int *ret, char *err, size_t errlen)
{
	static char url[256];
	struct otlp_export_config c;

	*ret = otlp_export__config(&c, base, err, errlen);
	snprintf(url, sizeof(url), "%s", *ret == 1 ? c.url : *ret == 0 ? "(off)" : "(refused)");
	if (*ret == 1)
		otlp_export__config_free(&c);
	return url;
}

/* URLs otlp_url_check takes, as a base URL (--otlp, OTEL_EXPORTER_OTLP_ENDPOINT) */
static const char *const good_urls[] = {
	"http://col:4318",
	"https://gw.example:443/otlp/",
	"http://10.0.0.7:1",
	"http://col:65535",
	"http://[::1]:4318",
	"http://[::1]",
	"https://[2001:db8::7]/p",
	"http://[fe80::1%25eth0]:4318",
	"http://[::ffff:10.0.0.1]:80",
	"HTTP://Col_1.local:4318",
	"https://user:pass@pyroscope:4040",
	"http://col",
};

/* URLs it refuses, and the words of the reason */
static const struct {
	const char *url, *why;
} bad_urls[] = {
	{ "http://[::1", "no closing ']'" },
	{ "http://[::1/v1development/profiles", "no closing ']'" },
	{ "http://[::1]x:4318", "text after the IPv6 address" },
	{ "http://[zz::1]:4318", "'zz::1' is not an IPv6 address" },
	{ "http://[]:4318", "'' is not an IPv6 address" },
	{ "http://[10.0.0.1]:4318", "'10.0.0.1' is not an IPv6 address" },
	{ "http://::1:4318", "an IPv6 address goes in brackets" },
	{ "http://col:0", "port '0' is not a number from 1 to 65535" },
	{ "http://col:65536", "port '65536' is not a number" },
	{ "http://col:99999999999999999999", "port '99999999999999999999' is not" },
	{ "http://col:43a8", "port '43a8' is not" },
	{ "http://col:-1", "port '-1' is not" },
	{ "http://col:", "port '' is not" },
	{ "http://[::1]:", "port '' is not" },
	{ "http://:4318", "no host" },
	{ "http://", "no host" },
	{ "http:///v1development/profiles", "no host" },
	{ "http://user@:4318", "no host" },
	{ "ftp://col:4318", "not an http:// or https:// URL" },
	{ "col:4318", "not an http:// or https:// URL" },
	{ "http:/col:4318", "not an http:// or https:// URL" },
	{ "", "not an http:// or https:// URL" },
	{ "http://col 1:4318", "a space or control character at byte 10" },
	{ "http://col:4318/\t", "a space or control character at byte 16" },
	{ "http://co|l:4318", "'|' in the host" },
	{ "http://col:4318/?tenant=a", "a base URL has no query or fragment" },
	{ "http://col:4318#top", "a base URL has no query or fragment" },
};

/* The first line of ERR after configuring from the environment and BASE, with RET. */
static const char *refusal(const char *base, int *ret)
{
	static char err[512];
	struct otlp_export_config c;

	err[0] = '\0';
	*ret = otlp_export__config(&c, base, err, sizeof(err));
	if (*ret == 1)
		otlp_export__config_free(&c);
	return err;
}

/* URLs and files, checked before anything is sent; every message names its setting. */
static void test_checks(void)
{
	char why[256], path[] = "/tmp/test_otlp_config.XXXXXX", lng[400];
	const char *msg;
	size_t i;
	int ret, fd;

	for (i = 0; i < sizeof(good_urls) / sizeof(good_urls[0]); i++) {
		why[0] = '\0';
		ret = otlp_url_check(good_urls[i], true, why, sizeof(why));
		check(ret == 0, desc("a URL that holds: %s", good_urls[i]), "taken", why);
	}
	for (i = 0; i < sizeof(bad_urls) / sizeof(bad_urls[0]); i++) {
		why[0] = '\0';
		ret = otlp_url_check(bad_urls[i].url, true, why, sizeof(why));
		check(ret == -22 && strstr(why, bad_urls[i].why), desc("refused: '%s'", bad_urls[i].url),
		      bad_urls[i].why, ret ? why : "taken");
	}
	check_int("the profiles endpoint, used as it is, may have a query", 0,
		  otlp_url_check("http://col:4318/v1development/profiles?tenant=a", false, why, sizeof(why)));

	clear();
	check_str("--otlp's refusal names --otlp", "--otlp: invalid URL 'http://[::1': the IPv6 address has no closing ']'",
		  refusal("http://[::1", &ret));
	check_int("with -EINVAL", -22, ret);
	check_str("a control character in the value is quoted as \\xNN, not sent to the terminal",
		  "--otlp: invalid URL 'http://col:4318/\\x1b[2J': a space or control character at byte 16",
		  refusal("http://col:4318/\x1b[2J", &ret));
	snprintf(lng, sizeof(lng), "http://col:4318/%0300d x", 0);
	msg = refusal(lng, &ret);
	check(strlen(msg) < 400 && strstr(msg, "000" EXCERPT_CUT "': a space or control character at byte 316"),
	      "a long value is quoted cut, with an ellipsis", "under 400 bytes", msg);
	/* 'é' (two bytes) across the cut: left out whole */
	snprintf(lng, sizeof(lng), "http://col:4318/%0231d\xc3\xa9%0100d x", 0, 0);
	msg = refusal(lng, &ret);
	check(strstr(msg, "0000" EXCERPT_CUT "'") && !strstr(msg, "\xc3"),
	      "a UTF-8 character across the cut is left out whole", "no lone lead byte", msg);
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "x", 1);
	check_str("OTEL_EXPORTER_OTLP_ENDPOINT's names its variable",
		  "OTEL_EXPORTER_OTLP_ENDPOINT: invalid URL 'x': not an http:// or https:// URL",
		  refusal(NULL, &ret));
	check_int("--otlp wins: the variable's bad value is not read", 1,
		  (refusal("http://col:4318", &ret), ret));
	setenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "http://col:bad/v1development/profiles", 1);
	check_str("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT's names its own",
		  "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT: invalid URL 'http://col:bad/v1development/profiles': "
		  "port 'bad' is not a number from 1 to 65535",
		  refusal(NULL, &ret));
	clear();
	setenv("OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION", "zstd", 1);
	check_str("a signal's own variable is named, not the general one",
		  "OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION: 'zstd': gzip or none", refusal("http://col:4318", &ret));
	clear();

	setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem", 1);
	check_str("a CA file that does not exist, named with its variable",
		  "OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read '/nonexistent/ca.pem': No such file or directory",
		  refusal("https://col:4318", &ret));
	check_int("refused", -22, ret);
	clear();
	setenv("OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE", "/tmp", 1);
	check_str("a directory is no PEM file",
		  "OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE: '/tmp' is not a regular file (a PEM file is wanted)",
		  refusal("https://col:4318", &ret));
	clear();
	fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		exit(2);
	}
	close(fd);
	setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", path, 1);
	setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", path, 1);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY", "/nonexistent/client.key", 1);
	check_str("the key, in the signal's own variable",
		  "OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY: cannot read '/nonexistent/client.key': No such file or directory",
		  refusal("https://col:4318", &ret));
	setenv("OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY", path, 1);
	refusal("https://col:4318", &ret);
	check_int("files that can be read are taken", 1, ret);
	unsetenv("OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY");
	check_str("a client certificate without its key, both named",
		  "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set without OTEL_EXPORTER_OTLP_CLIENT_KEY: "
		  "a client certificate and its key go together",
		  refusal("https://col:4318", &ret));
	unlink(path);
	clear();
}

int main(void)
{
	struct otlp_export_config c;
	char err[256] = "";
	int ret;

	clear();
	check_str("no --otlp, no variable: off", "(off)", url_of(NULL, &ret, err, sizeof(err)));
	check_str("--otlp is a base URL", "http://col:4318/v1development/profiles",
		  url_of("http://col:4318", &ret, err, sizeof(err)));
	check_str("a trailing slash is one", "http://col:4318/v1development/profiles",
		  url_of("http://col:4318//", &ret, err, sizeof(err)));
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://gw:4318/otlp", 1);
	check_str("OTEL_EXPORTER_OTLP_ENDPOINT turns it on, as a base URL",
		  "https://gw:4318/otlp/v1development/profiles", url_of(NULL, &ret, err, sizeof(err)));
	setenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "https://p:9/exact", 1);
	check_str("the profiles endpoint is used as it is, before the base", "https://p:9/exact",
		  url_of(NULL, &ret, err, sizeof(err)));
	check_str("--otlp wins over both", "http://cli:1/v1development/profiles",
		  url_of("http://cli:1", &ret, err, sizeof(err)));
	clear();
	url_of("col:4318", &ret, err, sizeof(err));
	check_int("a URL without a scheme is refused", -22, ret);
	check(strstr(err, "not an http:// or https:// URL") != NULL, "saying why", "the reason", err);

	setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20a%2Cb , x-tenant=acme", 1);
	setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip", 1);
	setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2500", 1);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "700", 1);
	ret = otlp_export__config(&c, "http://col:4318", err, sizeof(err));
	check_int("headers, compression and timeouts", 1, ret);
	if (ret == 1) {
		check_int("two headers", 2, c.nheaders);
		check_str("percent-decoded and trimmed", "authorization: Bearer a,b",
			  c.nheaders ? c.headers[0] : "");
		check_str("the second", "x-tenant: acme", c.nheaders > 1 ? c.headers[1] : "");
		check_int("gzip", 1, c.gzip);
		check_int("the profiles signal's timeout comes first", 700, c.timeout_ms);
		check_int("the queue's default", OTLP_DEFAULT_QUEUE, c.queue_max);
		otlp_export__config_free(&c);
	}
	clear();
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
	url_of("http://col:4318", &ret, err, sizeof(err));
	check_int("OTEL_EXPORTER_OTLP_PROTOCOL=grpc is refused", -22, ret);
	check(strstr(err, "http/protobuf only") != NULL, "saying what is spoken", "the reason", err);
	clear();
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "novalue", 1);
	url_of("http://col:4318", &ret, err, sizeof(err));
	check_int("a header without = is refused", -22, ret);
	check(strstr(err, "OTEL_EXPORTER_OTLP_HEADERS: 'novalue' is not key=value") != NULL,
	      "naming the item and the variable", "the reason", err);
	clear();
	setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", 1);
	url_of("http://col:4318", &ret, err, sizeof(err));
	check_int("an unknown compression is refused", -22, ret);
	clear();
	setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "10s", 1);
	url_of("http://col:4318", &ret, err, sizeof(err));
	check_int("a timeout that is no number of milliseconds is refused", -22, ret);
	clear();
	setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "/c.pem", 1);
	url_of("http://col:4318", &ret, err, sizeof(err));
	check_int("a client certificate without its key is refused", -22, ret);
	clear();
	test_checks();

	joined[0] = '\0';
	check_int("a resource attribute list", 0,
		  otel_kv_list("k8s.node.name=n1,deployment.environment=test%20lab,empty=", join, NULL,
			       err, sizeof(err)));
	check_str("its pairs, decoded", "[k8s.node.name]=[n1] [deployment.environment]=[test lab] [empty]=[]",
		  joined);
	check_int("a bad escape is refused", -22, otel_kv_list("a=%zz", join, NULL, err, sizeof(err)));
	check_int("an empty key is refused", -22, otel_kv_list("=v", join, NULL, err, sizeof(err)));
	check_int("an empty list is none", 0, otel_kv_list("", join, NULL, err, sizeof(err)));
	return tap_done();
}
