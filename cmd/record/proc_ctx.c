// SPDX-License-Identifier: GPL-2.0
/* proc_ctx.c: OTEP 4719 process contexts: found in /proc/PID/maps, read with process_vm_readv, decoded with protobuf-c. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/output/rec.h"
#include "cmd/util/clock.h"
#include "cmd/util/procfs.h"
#include "cmd/util/strbuf.h"
#include "opentelemetry/proto/processcontext/v1development/process_context.pb-c.h"
#include "proc_ctx.h"

typedef Opentelemetry__Proto__Processcontext__V1development__ProcessContext pb_process_context;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_keyvalue;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_anyvalue;
#define ctx_unpack opentelemetry__proto__processcontext__v1development__process_context__unpack
#define ctx_free_unpacked opentelemetry__proto__processcontext__v1development__process_context__free_unpacked

#define CTX_SIGNATURE "OTEL_CTX"
#define CTX_VERSION 2
/* an update in progress, or one made while the payload was read: looked at again this often */
#define CTX_ATTEMPTS 3
/* values within values: protobuf-c recurses once for each */
#define CTX_MAX_DEPTH 16
#define CTX_MAX_KEY 256
#define CTX_MAX_VALUE 4096
/*
 * An SDK publishes as its process starts: one that has not within this
 * long of being found is looked for ever less often, the gap doubling
 * from the first to the last, since each look reads all of /proc/PID/maps.
 */
#define CTX_EAGER_NS (10 * NSEC_PER_SEC)
#define CTX_FIRST_GAP_NS (2 * NSEC_PER_SEC)
#define CTX_LAST_GAP_NS (64 * NSEC_PER_SEC)

/* The 32 bytes at the start of the mapping, in the publisher's byte order (the host's). */
struct ctx_header {
	char signature[8];
	uint32_t version;
	uint32_t payload_size;
	uint64_t published_at_ns; /* CLOCK_BOOTTIME; 0 while an update is in progress */
	uint64_t payload; /* in the publisher's address space */
};

struct proc_ctx {
	pid_t pid;
	uint64_t addr; /* the mapping's; 0: none known */
	uint64_t published_at_ns; /* of the attributes held; 0: none held */
	uint64_t since_ns; /* CLOCK_MONOTONIC: since when none is known */
	uint64_t next_look_ns; /* the next look for one, none known */
	uint64_t gap_ns; /* between the looks for one, once past CTX_EAGER_NS */
	struct otlp_attr attrs[PROC_CTX_MAX_ATTRS];
	size_t nattrs;
	struct strbuf valid;
};

struct proc_ctx *proc_ctx__new(pid_t pid)
{
	struct proc_ctx *c = calloc(1, sizeof(*c));

	if (c) {
		c->pid = pid;
		c->since_ns = now_ns(CLOCK_MONOTONIC);
	}
	return c;
}

/* Drops the attributes held; true when there were some. */
static bool forget(struct proc_ctx *c)
{
	bool had = c->nattrs;
	size_t i;

	for (i = 0; i < c->nattrs; i++) {
		free((char *)c->attrs[i].key);
		free((char *)c->attrs[i].str);
	}
	c->nattrs = 0;
	c->published_at_ns = 0;
	return had;
}

void proc_ctx__free(struct proc_ctx *c)
{
	if (!c)
		return;
	forget(c);
	strbuf__free(&c->valid);
	free(c);
}

/* The names OTEP 4719 gives the mapping: named by prctl, or the memfd's own name when that failed. */
static bool ctx_name(const char *name)
{
	static const char *const names[] = {
		"[anon_shmem:OTEL_CTX]", "[anon:OTEL_CTX]", "/memfd:OTEL_CTX", "/memfd:OTEL_CTX (deleted)",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/* In *FOUND, the start of PID's readable, not executable mapping named OTEL_CTX (0: none); -errno. */
static int find_mapping(pid_t pid, uint64_t *found)
{
	char path[64], perms[8], *line = NULL;
	unsigned long start, end;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int off;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	*found = 0;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!*found && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		off = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &start, &end, perms, &off) != 3 || !off)
			continue;
		if (perms[0] == 'r' && perms[2] != 'x' && end - start >= sizeof(struct ctx_header) &&
		    ctx_name(line + off))
			*found = start;
	}
	free(line);
	fclose(f);
	return 0;
}

/* Where a field of a message leads, for the messages that can nest. */
enum msg { M_LEAF, M_CONTEXT, M_RESOURCE, M_KV, M_ANY, M_ARRAY, M_KVLIST };

static enum msg child(enum msg m, uint64_t field)
{
	switch (m) {
	case M_CONTEXT:
		return field == 1 ? M_RESOURCE : field == 2 ? M_KV : M_LEAF;
	case M_RESOURCE:
	case M_KVLIST:
		return field == 1 ? M_KV : M_LEAF;
	case M_KV:
	case M_ARRAY:
		return (m == M_KV ? field == 2 : field == 1) ? M_ANY : M_LEAF;
	case M_ANY:
		return field == 5 ? M_ARRAY : field == 6 ? M_KVLIST : M_LEAF;
	default:
		return M_LEAF;
	}
}

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	int shift;

	*v = 0;
	for (shift = 0; *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * Is P[0..N) well-formed protobuf, with values nested at most
 * CTX_MAX_DEPTH deep? protobuf-c would recurse as deep as a payload says.
 */
static bool well_formed(const uint8_t *p, size_t n, enum msg m, int depth)
{
	const uint8_t *end = p + n;
	uint64_t tag, len;

	if (depth > CTX_MAX_DEPTH)
		return false;
	while (p < end) {
		if (!varint(&p, end, &tag) || !(tag >> 3))
			return false;
		switch (tag & 7) {
		case 0:
			if (!varint(&p, end, &len))
				return false;
			break;
		case 1:
		case 5:
			len = (tag & 7) == 1 ? 8 : 4;
			if ((uint64_t)(end - p) < len)
				return false;
			p += len;
			break;
		case 2:
			if (!varint(&p, end, &len) || len > (uint64_t)(end - p))
				return false;
			if (child(m, tag >> 3) != M_LEAF && !well_formed(p, len, child(m, tag >> 3), depth + 1))
				return false;
			p += len;
			break;
		default: /* groups, which proto3 has not */
			return false;
		}
	}
	return true;
}

/* S as it is, when it is valid UTF-8 of 1 to MAX bytes without NUL; else NULL. */
static char *valid_dup(struct proc_ctx *c, const char *s, size_t max)
{
	size_t len = s ? strlen(s) : 0;
	const char *v;

	if (!len || len > max)
		return NULL;
	v = rec__valid(&c->valid, (const uint8_t *)s, len);
	return v && !strcmp(v, s) ? strdup(s) : NULL;
}

static bool held(const struct proc_ctx *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->nattrs; i++)
		if (!strcmp(c->attrs[i].key, key))
			return true;
	return false;
}

/* KV as a resource attribute, when it is one we carry: a scalar, its key new. -ENOMEM. */
static int take(struct proc_ctx *c, const pb_keyvalue *kv)
{
	const pb_anyvalue *v = kv->value;
	struct otlp_attr a = {};

	if (!v || c->nattrs == PROC_CTX_MAX_ATTRS || !kv->key || held(c, kv->key))
		return 0;
	switch (v->value_case) {
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE:
		a.kind = OTLP_STRING;
		if (!(a.str = valid_dup(c, v->string_value, CTX_MAX_VALUE)))
			return 0;
		break;
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE:
		a.kind = OTLP_INT;
		a.num = v->int_value;
		break;
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE:
		a.kind = OTLP_BOOL;
		a.num = v->bool_value;
		break;
	case OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE:
		a.kind = OTLP_DOUBLE;
		a.dbl = v->double_value;
		break;
	default: /* arrays, lists, bytes and dictionary references: not carried */
		return 0;
	}
	if (!(a.key = valid_dup(c, kv->key, CTX_MAX_KEY))) {
		free((char *)a.str);
		return 0;
	}
	c->attrs[c->nattrs++] = a;
	return 0;
}

static int decode(struct proc_ctx *c, const uint8_t *p, size_t n, char *why, size_t len)
{
	pb_process_context *pc;
	size_t i;

	if (!well_formed(p, n, M_CONTEXT, 0)) {
		snprintf(why, len, "its payload is not protobuf, or nests deeper than %d", CTX_MAX_DEPTH);
		return -EINVAL;
	}
	pc = ctx_unpack(NULL, n, p);
	if (!pc) {
		snprintf(why, len, "its payload is no ProcessContext message");
		return -EINVAL;
	}
	forget(c);
	for (i = 0; pc->resource && i < pc->resource->n_attributes; i++)
		take(c, pc->resource->attributes[i]);
	ctx_free_unpacked(pc, NULL);
	return 0;
}

/* The header at the mapping, checked: -EINVAL (WHY says why) when it is none of ours. */
static int read_header(struct proc_ctx *c, struct ctx_header *h, char *why, size_t len)
{
	int err = procfs__read_mem(c->pid, c->addr, h, sizeof(*h));

	if (err) {
		snprintf(why, len, "its header is unreadable: %s", strerror(-err));
		return err;
	}
	if (memcmp(h->signature, CTX_SIGNATURE, sizeof(h->signature))) {
		snprintf(why, len, "no OTEL_CTX signature at its start");
		return -EINVAL;
	}
	if (h->version != CTX_VERSION) {
		snprintf(why, len, "version %" PRIu32 ", where %d is read", h->version, CTX_VERSION);
		return -EINVAL;
	}
	return 0;
}

/* One look at a publication that differs from the one held: 1 read, 0 to look again, <0 skipped. */
static int read_once(struct proc_ctx *c, const struct ctx_header *h, char *why, size_t len)
{
	struct ctx_header again;
	uint8_t *payload;
	int err;

	if (!h->payload_size || h->payload_size > PROC_CTX_MAX_PAYLOAD) {
		snprintf(why, len, "a payload of %" PRIu32 " bytes (1 to %d are read)", h->payload_size,
			 PROC_CTX_MAX_PAYLOAD);
		return -EINVAL;
	}
	payload = malloc(h->payload_size);
	if (!payload)
		return -ENOMEM;
	err = procfs__read_mem(c->pid, h->payload, payload, h->payload_size);
	if (err) {
		snprintf(why, len, "its payload at 0x%" PRIx64 " is unreadable: %s", h->payload,
			 strerror(-err));
		free(payload);
		return err == -ENOMEM ? -EFAULT : err;
	}
	/* the publisher may have started an update meanwhile: only an unchanged header vouches */
	err = read_header(c, &again, why, len);
	if (!err && !memcmp(&again, h, sizeof(again))) {
		err = decode(c, payload, h->payload_size, why, len);
		if (!err) {
			c->published_at_ns = h->published_at_ns;
			err = 1;
		}
	}
	free(payload);
	return err;
}

int proc_ctx__refresh(struct proc_ctx *c, char *why, size_t len)
{
	struct ctx_header h;
	int i, err = 0;

	if (!c->addr) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);

		if (now < c->next_look_ns)
			return 0;
		/* a process gone keeps what it published last */
		if (find_mapping(c->pid, &c->addr))
			return 0;
		if (!c->addr && now - c->since_ns >= CTX_EAGER_NS) {
			c->gap_ns = c->gap_ns ? c->gap_ns * 2 : CTX_FIRST_GAP_NS;
			if (c->gap_ns > CTX_LAST_GAP_NS)
				c->gap_ns = CTX_LAST_GAP_NS;
			c->next_look_ns = now + c->gap_ns;
		}
	}
	if (!c->addr)
		return forget(c) ? 1 : 0;
	for (i = 0; i < CTX_ATTEMPTS; i++) {
		err = read_header(c, &h, why, len);
		if (err)
			break;
		if (!h.published_at_ns)
			continue;
		if (h.published_at_ns == c->published_at_ns)
			return 0;
		err = read_once(c, &h, why, len);
		if (err)
			break;
	}
	if (err > 0)
		return 1;
	if (err == -ESRCH)
		return 0;
	if (!err) {
		/* a publisher busy with updates: what was read before stands until one is read */
		snprintf(why, len, "%s in %d looks",
			 h.published_at_ns ? "it changed while read" : "an update was in progress",
			 CTX_ATTEMPTS);
		return -EAGAIN;
	}
	/* gone or not a context: looked for again next time, as in a new process; nothing of it stands */
	c->addr = 0;
	c->since_ns = now_ns(CLOCK_MONOTONIC);
	c->gap_ns = 0;
	c->next_look_ns = 0;
	forget(c);
	return err;
}

const char *proc_ctx__service_name(const struct proc_ctx *c)
{
	size_t i;

	for (i = 0; c && i < c->nattrs; i++)
		if (c->attrs[i].kind == OTLP_STRING && !strcmp(c->attrs[i].key, "service.name"))
			return c->attrs[i].str;
	return NULL;
}

const struct otlp_attr *proc_ctx__attrs(const struct proc_ctx *c, size_t *n)
{
	*n = c ? c->nattrs : 0;
	return c ? c->attrs : NULL;
}
