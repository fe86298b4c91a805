// SPDX-License-Identifier: GPL-2.0
/* metrics_http.c: /metrics over HTTP from a thread of its own, serving the page the recording last published. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "metrics_http.h"

/* a scraper that sends nothing, or slowly, holds the thread this long at most */
#define REQUEST_TIMEOUT_MS 2000
#define REQUEST_MAX 4096

struct metrics_http {
	int fd;
	int wake[2]; /* a byte on wake[1] ends the thread */
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	char *page;
	size_t len;
	char addr[INET6_ADDRSTRLEN + 8];
};

/* ADDR's host (NULL for every address) and port into HOST and PORT; false when malformed. */
static bool split_addr(const char *addr, char *host, size_t hostlen, const char **port)
{
	const char *colon;
	size_t n;

	if (addr[0] == '[') {
		colon = strstr(addr, "]:");
		if (!colon)
			return false;
		n = colon - addr - 1;
		*port = colon + 2;
		addr++;
	} else {
		colon = strrchr(addr, ':');
		if (!colon)
			return false;
		n = colon - addr;
		*port = colon + 1;
	}
	if (n >= hostlen || !**port)
		return false;
	memcpy(host, addr, n);
	host[n] = '\0';
	return true;
}

bool metrics_http__addr_ok(const char *addr)
{
	char host[256], *end;
	const char *port;
	unsigned long n;

	if (!split_addr(addr, host, sizeof(host), &port))
		return false;
	errno = 0;
	n = strtoul(port, &end, 10);
	return !errno && !*end && isdigit((unsigned char)*port) && n <= 65535;
}

static int listen_on(struct metrics_http *m, const char *addr, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char host[256], name[INET6_ADDRSTRLEN];
	struct addrinfo *res, *ai;
	const char *port;
	int rc, one = 1, saved = 0;

	if (!split_addr(addr, host, sizeof(host), &port)) {
		snprintf(err, errlen, "'%s': give HOST:PORT, [IPV6]:PORT or :PORT", addr);
		return -EINVAL;
	}
	rc = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "'%s': %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		m->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (m->fd < 0) {
			saved = errno;
			continue;
		}
		setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(m->fd, ai->ai_addr, ai->ai_addrlen) && !listen(m->fd, 16))
			break;
		saved = errno;
		close(m->fd);
		m->fd = -1;
	}
	freeaddrinfo(res);
	if (m->fd < 0) {
		snprintf(err, errlen, "cannot listen on '%s': %s", addr, strerror(saved));
		return -saved;
	}
	getsockname(m->fd, (struct sockaddr *)&ss, &sslen);
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &s6->sin6_addr, name, sizeof(name));
		snprintf(m->addr, sizeof(m->addr), "[%s]:%u", name, ntohs(s6->sin6_port));
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &s4->sin_addr, name, sizeof(name));
		snprintf(m->addr, sizeof(m->addr), "%s:%u", name, ntohs(s4->sin_port));
	}
	return 0;
}

/* All of BUF to FD; false when the scraper went away. */
static bool send_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		buf += n;
		len -= n;
	}
	return true;
}

static void respond(int fd, const char *status, const char *type, const char *body, size_t len)
{
	char head[256];
	int n;

	n = snprintf(head, sizeof(head),
		     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		     status, type, len);
	if (send_all(fd, head, n))
		send_all(fd, body, len);
}

/* One connection: its request line read (headers up to the blank line), one answer. */
static void serve(struct metrics_http *m, int fd)
{
	struct timeval tv = { REQUEST_TIMEOUT_MS / 1000, (REQUEST_TIMEOUT_MS % 1000) * 1000 };
	char req[REQUEST_MAX + 1], path[256], method[16];
	size_t got = 0;
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (got < REQUEST_MAX) {
		n = recv(fd, req + got, REQUEST_MAX - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
	}
	req[got] = '\0';
	if (sscanf(req, "%15s %255s", method, path) != 2) {
		respond(fd, "400 Bad Request", "text/plain", "a request line, please\n", 23);
		return;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		respond(fd, "405 Method Not Allowed", "text/plain", "GET only\n", 9);
		return;
	}
	/* the query (?name[]=...) is Prometheus's, not ours */
	path[strcspn(path, "?")] = '\0';
	if (strcmp(path, "/metrics")) {
		respond(fd, "404 Not Found", "text/plain", "ctxprof-go serves /metrics\n", 27);
		return;
	}
	pthread_mutex_lock(&m->mu);
	respond(fd, "200 OK", "text/plain; version=0.0.4; charset=utf-8", m->page ? m->page : "",
		!strcmp(method, "HEAD") ? 0 : m->len);
	pthread_mutex_unlock(&m->mu);
}

static void *run(void *arg)
{
	struct metrics_http *m = arg;
	struct pollfd p[2] = { { m->fd, POLLIN }, { m->wake[0], POLLIN } };
	int fd;

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		fd = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		serve(m, fd);
		close(fd);
	}
	return NULL;
}

struct metrics_http *metrics_http__start(const char *addr, char *err, size_t errlen)
{
	struct metrics_http *m = calloc(1, sizeof(*m));

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->fd = m->wake[0] = m->wake[1] = -1;
	pthread_mutex_init(&m->mu, NULL);
	if (listen_on(m, addr, err, errlen))
		goto fail;
	if (pipe2(m->wake, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (pthread_create(&m->thread, NULL, run, m)) {
		snprintf(err, errlen, "cannot start the /metrics thread");
		goto fail;
	}
	m->started = true;
	return m;
fail:
	metrics_http__stop(m);
	return NULL;
}

const char *metrics_http__addr(const struct metrics_http *m)
{
	return m->addr;
}

int metrics_http__publish(struct metrics_http *m, const char *text, size_t len)
{
	char *page = malloc(len + 1);

	if (!page)
		return -ENOMEM;
	memcpy(page, text, len);
	page[len] = '\0';
	pthread_mutex_lock(&m->mu);
	free(m->page);
	m->page = page;
	m->len = len;
	pthread_mutex_unlock(&m->mu);
	return 0;
}

void metrics_http__stop(struct metrics_http *m)
{
	if (!m)
		return;
	if (m->started) {
		if (write(m->wake[1], "x", 1) != 1)
			pthread_cancel(m->thread);
		pthread_join(m->thread, NULL);
	}
	if (m->fd >= 0)
		close(m->fd);
	if (m->wake[0] >= 0)
		close(m->wake[0]);
	if (m->wake[1] >= 0)
		close(m->wake[1]);
	free(m->page);
	pthread_mutex_destroy(&m->mu);
	free(m);
}
