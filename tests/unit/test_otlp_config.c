// SPDX-License-Identifier: GPL-2.0
/* test_otlp_config.c: --otlp and the OTEL_EXPORTER_OTLP_* variables: precedence, lists, refusals. */
#include <stdlib.h>
#include <string.h>

#include "cmd/output/otlp_export.h"
#include "cmd/util/otel_env.h"
#include "tap.h"

static const char *const vars[] = {
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_PROFILES_HEADERS",
	"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TIMEOUT",
	"OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "OTEL_EXPORTER_OTLP_CERTIFICATE",
	"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_KEY",
	"OTEL_EXPORTER_OTLP_PROTOCOL",
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
	check(strstr(err, "'novalue' is not key=value in OTEL_EXPORTER_OTLP_HEADERS") != NULL,
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
