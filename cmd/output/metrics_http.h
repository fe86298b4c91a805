/* SPDX-License-Identifier: GPL-2.0 */
/* metrics_http.h: /metrics over HTTP from a thread of its own, serving the page the recording last published. */
#ifndef __METRICS_HTTP_H
#define __METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct metrics_http;

/*
 * Listens on ADDR ("HOST:PORT", "[V6]:PORT" or ":PORT" for every address;
 * port 0 takes a free one) and serves GET /metrics, in Prometheus's text
 * format, from a thread of its own. NULL with the reason in ERR.
 */
struct metrics_http *metrics_http__start(const char *addr, char *err, size_t errlen);
/* Is ADDR of one of those forms, with a port of 0 to 65535? Its host is looked up only when it starts. */
bool metrics_http__addr_ok(const char *addr);
/* The address it listens on, "HOST:PORT" (for port 0). */
const char *metrics_http__addr(const struct metrics_http *m);
/* TEXT (LEN bytes) becomes the page; copied. -ENOMEM keeps the last one. */
int metrics_http__publish(struct metrics_http *m, const char *text, size_t len);
/* Stops the thread, closes the socket, frees M. Accepts NULL. */
void metrics_http__stop(struct metrics_http *m);

#endif /* __METRICS_HTTP_H */
