/* SPDX-License-Identifier: GPL-2.0 */
/* otel_env.h: what the OpenTelemetry environment variables say: their key=value lists, a process's service. */
#ifndef __OTEL_ENV_H
#define __OTEL_ENV_H

#include <stddef.h>
#include <sys/types.h>

/*
 * "k=v,k2=v2" as the OTel variables write lists (values percent-encoded):
 * FN gets each pair, decoded. -EINVAL, naming the bad item in ERR.
 */
int otel_kv_list(const char *list, int (*fn)(void *ctx, const char *k, const char *v), void *ctx,
		 char *err, size_t errlen);

/*
 * The service a process says it is, as its OpenTelemetry SDK would:
 * OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES, from
 * its environment at exec. "" when neither (or unreadable), NULL when out
 * of memory.
 */
char *otel_env_service(pid_t pid);

#endif /* __OTEL_ENV_H */
