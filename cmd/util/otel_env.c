// SPDX-License-Identifier: GPL-2.0
/* otel_env.c: what the OpenTelemetry environment variables say: their key=value lists, a process's service. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otel_env.h"

static int hexdigit(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

/* S[0..N) percent-decoded and trimmed of spaces, into a new string; NULL on a bad escape. */
static char *decode(const char *s, size_t n)
{
	char *out, *p;
	size_t i;

	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	out = p = malloc(n + 1);
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] != '%') {
			*p++ = s[i];
			continue;
		}
		if (i + 2 >= n || hexdigit(s[i + 1]) < 0 || hexdigit(s[i + 2]) < 0) {
			free(out);
			return NULL;
		}
		*p++ = hexdigit(s[i + 1]) << 4 | hexdigit(s[i + 2]);
		i += 2;
	}
	*p = '\0';
	return out;
}

int otel_kv_list(const char *list, int (*fn)(void *ctx, const char *k, const char *v), void *ctx,
		 char *err, size_t errlen)
{
	const char *item = list, *end, *eq;
	char *k, *v;
	int ret;

	while (*item) {
		end = strchr(item, ',') ?: item + strlen(item);
		eq = memchr(item, '=', end - item);
		k = eq ? decode(item, eq - item) : NULL;
		v = eq ? decode(eq + 1, end - eq - 1) : NULL;
		if (!k || !v || !*k) {
			snprintf(err, errlen, "'%.*s' is not key=value", (int)(end - item), item);
			free(k);
			free(v);
			return -EINVAL;
		}
		ret = fn(ctx, k, v);
		free(k);
		free(v);
		if (ret)
			return ret;
		item = *end ? end + 1 : end;
	}
	return 0;
}

static int take_service_name(void *ctx, const char *k, const char *v)
{
	char **name = ctx;

	if (!strcmp(k, "service.name") && !*name)
		*name = strdup(v);
	return 0;
}

char *otel_env_service(pid_t pid)
{
	char path[64], *env = NULL, *name = NULL, err[128];
	const char *attrs = NULL, *p;
	size_t n = 0, cap = 0, got;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "re");
	while (f && cap < (1 << 20)) {
		char *grown = realloc(env, cap + 65536 + 1);

		if (!grown)
			break;
		env = grown;
		cap += 65536;
		got = fread(env + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
	}
	if (f)
		fclose(f);
	if (env)
		env[n] = '\0';
	for (p = env; env && p < env + n; p += strlen(p) + 1) {
		if (!strncmp(p, "OTEL_SERVICE_NAME=", 18) && p[18]) {
			name = strdup(p + 18);
			free(env);
			return name;
		}
		if (!strncmp(p, "OTEL_RESOURCE_ATTRIBUTES=", 25))
			attrs = p + 25;
	}
	/* a list that does not parse names no service */
	if (attrs)
		otel_kv_list(attrs, take_service_name, &name, err, sizeof(err));
	free(env);
	return name ?: strdup("");
}

