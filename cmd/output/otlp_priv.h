/* SPDX-License-Identifier: GPL-2.0 */
/* otlp_priv.h: what otlp.c and otlp_build.c share; no other module includes it. */
#ifndef __OTLP_PRIV_H
#define __OTLP_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/util/hashmap.h"
#include "cmd/util/strbuf.h"
#include "cmd/util/vec.h"
#include "otlp.h"
#include "profdict.h"

#define TRACE_BYTES 16
#define SPAN_BYTES 8

/*
 * One sample of the request: its identity is (stack, attributes, link);
 * records that share it add to it.
 */
struct sample {
	int32_t stack, link;
	int32_t *attrs; /* ascending */
	size_t nattrs;
	int64_t value; /* CPU: samples; wall: nanoseconds; alloc: objects */
	int64_t bytes; /* alloc: bytes, of the same allocations */
	struct vec times; /* CPU: uint64_t, when each sample was taken */
	bool untimed; /* some of its CPU samples came without their time */
};

/* The samples of one process in this request. */
struct resource {
	uint32_t pid;
	char *comm, *container_id, *pod_uid, *build_id;
	char *service_name, *exe_path, *go_version; /* NULL: unknown */
	struct otlp_attr *attrs; /* its process context's */
	size_t nattrs;
	int64_t ns_pid;
	int64_t memprofile_rate; /* <= 0: unknown */
	struct vec cpu, wall, alloc; /* struct sample */
	struct hashmap *cpu_ids, *wall_ids, *alloc_ids; /* identity -> index + 1 */
	int64_t first_ns, last_ns; /* CLOCK_REALTIME */
	size_t labels_max; /* goroutine labels a sample may carry as attributes */
};

struct attr_entry {
	uint64_t key, value; /* strings */
};

struct link_entry {
	uint8_t trace[TRACE_BYTES], span[SPAN_BYTES];
};

struct stack_entry {
	size_t n;
	int32_t *locations;
};

struct agent_attr {
	char *key, *value;
};

/* A list of keys, copied. */
struct keys {
	char **k;
	size_t n;
};

struct otlp {
	char *version;
	uint64_t cpu_period_ns, wall_period_ns;
	struct agent_attr *agent;
	size_t nagent;
	otlp_process_fn process;
	void *process_ctx;
	struct keys id_keys; /* labels that carry IDs */
	struct keys labels; /* --otlp-labels, in order of preference */
	bool labels_set;
	/* what was left out, over the run */
	struct hashmap *left_out; /* key -> 1 */
	char *left_out_names[OTLP_LEFT_OUT_NAMES];
	uint64_t left_out_samples;
	/* the request being built */
	struct profdict *dict;
	struct hashmap *attr_index; /* struct attr_entry -> index */
	struct vec attrs; /* struct attr_entry; entry 0 is empty */
	struct hashmap *link_index; /* struct link_entry -> index */
	struct vec links; /* struct link_entry; entry 0 is all zero bytes */
	struct hashmap *stack_index; /* location numbers -> index */
	struct vec stacks; /* struct stack_entry; entry 0 is empty */
	struct hashmap *by_pid; /* pid -> struct resource * */
	struct vec resources; /* struct resource * */
	struct otlp_batch batch;
	struct strbuf valid;
	bool oom;
};

/* One resource attribute: a string, or with STR NULL, an integer; or with ANY set, what it holds. */
struct res_attr {
	const char *key, *str;
	int64_t num;
	const struct otlp_attr *any;
};

/*
 * otlp.c's, for otlp_build.c: a resource is sent with the attributes its
 * label budget was counted from, and the build IDs of mappings become
 * attributes of the same table as the samples'.
 */
int32_t otlp_attribute_str(struct otlp *o, const char *key, const char *value);
size_t otlp_resource_room(const struct otlp *o, const struct resource *res);
size_t otlp_resource_attrs(const struct otlp *o, const struct resource *res, struct res_attr *out);
int otlp_next_request(struct otlp *o);

#endif /* __OTLP_PRIV_H */
