/* SPDX-License-Identifier: GPL-2.0 */
/* part_service.h: the service a target's records name, from its process context, environment or executable. */
#ifndef __PART_SERVICE_H
#define __PART_SERVICE_H

#include <stddef.h>

#include "part.h"

struct otlp_attr;

/* The resource attributes its OpenTelemetry SDK publishes (OTEP 4719); *N of them. */
const struct otlp_attr *service_part__attrs(const struct part_ctx *c, size_t *n);

#endif /* __PART_SERVICE_H */
