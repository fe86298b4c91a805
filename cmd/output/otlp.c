// SPDX-License-Identifier: GPL-2.0
/* otlp.c: records as an OTLP ExportProfilesServiceRequest, through the code protobuf-c generates from the .proto files. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/arena.h"
#include "cmd/util/hashmap.h"
#include "cmd/util/vec.h"
#include "otlp.h"
#include "otlp_pb.h"
#include "profdict.h"

#define TRACE_BYTES 16
#define SPAN_BYTES 8
/* distinct label keys remembered as left out; past it they are no longer counted apart */
#define MAX_LEFT_OUT_KEYS 4096

/*
 * One sample of the request: its identity is (stack, attributes, link);
 * records that share it add to it.
 */
struct sample {
	int32_t stack, link;
	int32_t *attrs; /* ascending */
	size_t nattrs;
	int64_t value; /* CPU: samples; wall: nanoseconds */
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
	struct vec cpu, wall; /* struct sample */
	struct hashmap *cpu_ids, *wall_ids; /* identity -> index + 1 */
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

/*
 * The resource attributes a process's own facts fill, by semantic
 * conventions: the keys resource_attrs gives, which no label may take.
 */
enum {
	RES_SERVICE_NAME,
	RES_PID,
	RES_EXE_NAME,
	RES_EXE_PATH,
	RES_BUILD_ID,
	RES_RUNTIME_NAME,
	RES_RUNTIME_VERSION,
	RES_CONTAINER_ID,
	RES_POD_UID,
	RES_VPID,
};
static const char *const resource_keys[] = {
	[RES_SERVICE_NAME] = "service.name",
	[RES_PID] = "process.pid",
	[RES_EXE_NAME] = "process.executable.name",
	[RES_EXE_PATH] = "process.executable.path",
	[RES_BUILD_ID] = "process.executable.build_id.gnu",
	[RES_RUNTIME_NAME] = "process.runtime.name",
	[RES_RUNTIME_VERSION] = "process.runtime.version",
	[RES_CONTAINER_ID] = "container.id",
	[RES_POD_UID] = "k8s.pod.uid",
	[RES_VPID] = "process.vpid",
};
#define NRESOURCE_KEYS (sizeof(resource_keys) / sizeof(resource_keys[0]))

static void samples__free(struct vec *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		free(((struct sample *)v->items)[i].attrs);
		free(((struct sample *)v->items)[i].times.items);
	}
	free(v->items);
}

static void free_attrs(struct otlp_attr *attrs, size_t n)
{
	size_t i;

	for (i = 0; attrs && i < n; i++) {
		free((char *)attrs[i].key);
		free((char *)attrs[i].str);
	}
	free(attrs);
}

/* A copy of N attributes in RES; -ENOMEM. */
static int copy_attrs(struct resource *res, const struct otlp_attr *attrs, size_t n)
{
	if (!n)
		return 0;
	res->attrs = calloc(n, sizeof(*res->attrs));
	if (!res->attrs)
		return -ENOMEM;
	for (; res->nattrs < n; res->nattrs++) {
		struct otlp_attr *a = &res->attrs[res->nattrs];

		*a = attrs[res->nattrs];
		a->key = strdup(a->key);
		a->str = a->str ? strdup(a->str) : NULL;
		if (!a->key || (attrs[res->nattrs].str && !a->str)) {
			res->nattrs++;
			return -ENOMEM;
		}
	}
	return 0;
}

static void resource__free(struct resource *res)
{
	if (!res)
		return;
	samples__free(&res->cpu);
	samples__free(&res->wall);
	hashmap__free(res->cpu_ids, NULL);
	hashmap__free(res->wall_ids, NULL);
	free(res->comm);
	free(res->container_id);
	free(res->pod_uid);
	free(res->build_id);
	free(res->service_name);
	free(res->exe_path);
	free_attrs(res->attrs, res->nattrs);
	free(res->go_version);
	free(res);
}

/* Drops the request being built. */
static void reset(struct otlp *o)
{
	size_t i;

	for (i = 0; i < o->resources.n; i++)
		resource__free(((struct resource **)o->resources.items)[i]);
	for (i = 0; i < o->stacks.n; i++)
		free(((struct stack_entry *)o->stacks.items)[i].locations);
	free(o->resources.items);
	free(o->attrs.items);
	free(o->links.items);
	free(o->stacks.items);
	profdict__free(o->dict);
	hashmap__free(o->attr_index, NULL);
	hashmap__free(o->link_index, NULL);
	hashmap__free(o->stack_index, NULL);
	hashmap__free(o->by_pid, NULL);
	o->dict = NULL;
	o->attr_index = o->link_index = o->stack_index = o->by_pid = NULL;
	o->resources = (struct vec){ .size = sizeof(struct resource *) };
	o->attrs = (struct vec){ .size = sizeof(struct attr_entry) };
	o->links = (struct vec){ .size = sizeof(struct link_entry) };
	o->stacks = (struct vec){ .size = sizeof(struct stack_entry) };
	o->batch = (struct otlp_batch){};
	o->oom = false;
}

/* A new request: empty tables, each with its entry 0. */
static int start(struct otlp *o)
{
	o->dict = profdict__new();
	o->attr_index = hashmap__new();
	o->link_index = hashmap__new();
	o->stack_index = hashmap__new();
	o->by_pid = hashmap__new();
	if (!o->dict || !o->attr_index || !o->link_index || !o->stack_index || !o->by_pid ||
	    !vec__push(&o->attrs) || !vec__push(&o->links) || !vec__push(&o->stacks)) {
		reset(o);
		return -ENOMEM;
	}
	return 0;
}

struct otlp *otlp__new(const char *version, uint64_t cpu_period_ns, uint64_t wall_period_ns)
{
	struct otlp *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->cpu_period_ns = cpu_period_ns;
	o->wall_period_ns = wall_period_ns;
	o->version = strdup(version);
	o->left_out = hashmap__new();
	reset(o);
	if (!o->version || !o->left_out || start(o)) {
		otlp__free(o);
		return NULL;
	}
	return o;
}

static void keys__free(struct keys *k)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		free(k->k[i]);
	free(k->k);
	*k = (struct keys){};
}

static int keys__set(struct keys *k, const char *const *keys, size_t n)
{
	keys__free(k);
	k->k = calloc(n ? n : 1, sizeof(*k->k));
	if (!k->k)
		return -ENOMEM;
	for (k->n = 0; k->n < n; k->n++) {
		k->k[k->n] = strdup(keys[k->n]);
		if (!k->k[k->n]) {
			keys__free(k);
			return -ENOMEM;
		}
	}
	return 0;
}

/* KEY's place in K, or SIZE_MAX. */
static size_t keys__find(const struct keys *k, const char *key)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (!strcmp(k->k[i], key))
			return i;
	return SIZE_MAX;
}

void otlp__free(struct otlp *o)
{
	size_t i;

	if (!o)
		return;
	reset(o);
	for (i = 0; i < o->nagent; i++) {
		free(o->agent[i].key);
		free(o->agent[i].value);
	}
	free(o->agent);
	keys__free(&o->id_keys);
	keys__free(&o->labels);
	hashmap__free(o->left_out, NULL);
	for (i = 0; i < OTLP_LEFT_OUT_NAMES; i++)
		free(o->left_out_names[i]);
	free(o->version);
	strbuf__free(&o->valid);
	free(o);
}

int otlp__set_attribute(struct otlp *o, const char *key, const char *value)
{
	struct agent_attr *a = realloc(o->agent, (o->nagent + 1) * sizeof(*a));

	if (!a)
		return -ENOMEM;
	o->agent = a;
	a = &o->agent[o->nagent];
	a->key = strdup(key);
	a->value = strdup(value);
	if (!a->key || !a->value) {
		free(a->key);
		free(a->value);
		return -ENOMEM;
	}
	o->nagent++;
	return 0;
}

void otlp__set_processes(struct otlp *o, otlp_process_fn fn, void *ctx)
{
	o->process = fn;
	o->process_ctx = ctx;
}

int otlp__set_id_keys(struct otlp *o, const char *const *keys, size_t n)
{
	return keys__set(&o->id_keys, keys, n);
}

int otlp__set_labels(struct otlp *o, const char *const *keys, size_t n)
{
	o->labels_set = true;
	return keys__set(&o->labels, keys, n);
}

void otlp__stats(const struct otlp *o, struct otlp_stats *out)
{
	size_t i;

	*out = (struct otlp_stats){ .left_out_samples = o->left_out_samples,
				    .left_out_keys = hashmap__size(o->left_out) };
	for (i = 0; i < OTLP_LEFT_OUT_NAMES; i++)
		out->left_out_names[i] = o->left_out_names[i];
}

/* Index of what KEY (LEN bytes) names in TAB, through INDEX; added (ENTRY) when new; 0 on failure. */
static int32_t intern(struct otlp *o, struct hashmap *index, struct vec *tab, const void *key,
		      size_t len, const void *entry)
{
	void *v = hashmap__get(index, key, len), *slot;

	if (v)
		return (uintptr_t)v;
	slot = vec__push(tab);
	if (!slot || hashmap__add(index, key, len, (void *)(uintptr_t)(tab->n - 1))) {
		if (slot)
			tab->n--;
		o->oom = true;
		return 0;
	}
	memcpy(slot, entry, tab->size);
	return tab->n - 1;
}

/* The attribute of the string KEY (its number) and VALUE[0..LEN) made valid. */
static int32_t attribute(struct otlp *o, uint64_t key, const uint8_t *value, size_t len)
{
	struct attr_entry e = { key, profdict__valid(o->dict, value, len) };

	return intern(o, o->attr_index, &o->attrs, &e, sizeof(e), &e);
}

static int32_t attribute_str(struct otlp *o, const char *key, const char *value)
{
	return attribute(o, profdict__string(o->dict, key), (const uint8_t *)value, strlen(value));
}

/* Two hex digits a byte, as records print IDs; false on anything else. */
static bool unhex(const char *s, uint8_t *out, size_t n)
{
	size_t i;
	int j, v, c;

	if (!s || strlen(s) != 2 * n)
		return false;
	for (i = 0; i < n; i++) {
		for (v = 0, j = 0; j < 2; j++) {
			c = s[2 * i + j];
			if (c >= '0' && c <= '9')
				c -= '0';
			else if (c >= 'a' && c <= 'f')
				c -= 'a' - 10;
			else
				return false;
			v = v << 4 | c;
		}
		out[i] = v;
	}
	return true;
}

/*
 * The link of R's trace and span; 0 without a trace ID. Without a span ID
 * the span is 8 zero bytes: the trace spec's invalid span, which reads as
 * none, in the length that codecs of fixed-size IDs expect.
 */
static int32_t link(struct otlp *o, const struct rec *r)
{
	struct link_entry e = {};

	if (!unhex(r->trace_id, e.trace, TRACE_BYTES))
		return 0;
	if (r->span_id && !unhex(r->span_id, e.span, SPAN_BYTES))
		memset(e.span, 0, SPAN_BYTES);
	return intern(o, o->link_index, &o->links, &e, sizeof(e), &e);
}

/* The stack of ST's frames, leaf first, as location indexes. */
static int32_t stack(struct otlp *o, const struct rec *r, const struct rec_stack *st)
{
	int32_t *locs = calloc(st->nframes + 1, sizeof(*locs)), idx;
	struct stack_entry e = { 0, locs };
	size_t i;

	if (!locs) {
		o->oom = true;
		return 0;
	}
	for (i = 0; i < st->nframes;)
		locs[e.n++] = profdict__location(o->dict, r, st, &i);
	idx = intern(o, o->stack_index, &o->stacks, locs, e.n * sizeof(*locs), &e);
	/* kept by the table when new */
	if (!idx || ((struct stack_entry *)o->stacks.items)[idx].locations != locs)
		free(locs);
	return idx;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* One resource attribute: a string, or with STR NULL, an integer; or with ANY set, what it holds. */
struct res_attr {
	const char *key, *str;
	int64_t num;
	const struct otlp_attr *any;
};

/* KEY's attribute, unless an earlier one took the key. */
static void put(struct res_attr *out, size_t *n, const char *key, const char *str, int64_t num)
{
	size_t i;

	if (str && !*str)
		return;
	for (i = 0; i < *n; i++)
		if (!strcmp(out[i].key, key))
			return;
	out[(*n)++] = (struct res_attr){ key, str, num };
}

/* The process's own attribute K (RES_*). */
static void put_attr(struct res_attr *out, size_t *n, int k, const char *str, int64_t num)
{
	put(out, n, resource_keys[k], str, num);
}

/* Room for RES's resource attributes. */
static size_t resource_room(const struct otlp *o, const struct resource *res)
{
	return NRESOURCE_KEYS + o->nagent + res->nattrs;
}

/*
 * RES's resource attributes into OUT (room for resource_room): what its
 * process context publishes, then its own by semantic conventions, then
 * the agent's, each whose key no earlier one took. Their number.
 */
static size_t resource_attrs(const struct otlp *o, const struct resource *res, struct res_attr *out)
{
	const char *exe = res->exe_path ? basename_of(res->exe_path) : res->comm;
	size_t n = 0, i;

	for (i = 0; i < res->nattrs; i++) {
		size_t had = n;

		put(out, &n, res->attrs[i].key, NULL, 0);
		if (n > had)
			out[had].any = &res->attrs[i];
	}
	put_attr(out, &n, RES_SERVICE_NAME, res->service_name ?: exe, 0);
	put_attr(out, &n, RES_PID, NULL, res->pid);
	put_attr(out, &n, RES_EXE_NAME, exe, 0);
	if (res->exe_path)
		put_attr(out, &n, RES_EXE_PATH, res->exe_path, 0);
	if (res->build_id)
		put_attr(out, &n, RES_BUILD_ID, res->build_id, 0);
	put_attr(out, &n, RES_RUNTIME_NAME, "go", 0);
	if (res->go_version)
		put_attr(out, &n, RES_RUNTIME_VERSION, res->go_version, 0);
	if (res->container_id)
		put_attr(out, &n, RES_CONTAINER_ID, res->container_id, 0);
	if (res->pod_uid)
		put_attr(out, &n, RES_POD_UID, res->pod_uid, 0);
	if (res->ns_pid)
		put_attr(out, &n, RES_VPID, NULL, res->ns_pid);
	/* the agent's: host.name and OTEL_RESOURCE_ATTRIBUTES */
	for (i = 0; i < o->nagent; i++)
		put(out, &n, o->agent[i].key, o->agent[i].value, 0);
	return n;
}

/*
 * The goroutine labels a sample of RES may carry: what the resource and
 * our own attributes leave of the budget. The build ID counts from the
 * start when the executable is known (it comes with the first mapping),
 * so that the number never changes within a run of the process.
 */
static int labels_max(const struct otlp *o, struct resource *res)
{
	struct res_attr *tmp = calloc(resource_room(o, res), sizeof(*tmp));
	size_t n;

	if (!tmp)
		return -ENOMEM;
	n = resource_attrs(o, res, tmp) + (res->exe_path && !res->build_id);
	free(tmp);
	n += OTLP_OWN_ATTRIBUTES;
	res->labels_max = n < OTLP_MAX_ATTRIBUTES ? OTLP_MAX_ATTRIBUTES - n : 0;
	return 0;
}

/* R's process in this request, added when new. */
static struct resource *resource(struct otlp *o, const struct rec *r)
{
	struct resource *res = hashmap__get(o->by_pid, &r->pid, sizeof(r->pid)), **slot;
	struct otlp_process p = {};

	if (res)
		return res;
	res = calloc(1, sizeof(*res));
	slot = res ? vec__push(&o->resources) : NULL;
	if (!slot) {
		free(res);
		return NULL;
	}
	*slot = res;
	res->pid = r->pid;
	res->cpu.size = res->wall.size = sizeof(struct sample);
	res->cpu_ids = hashmap__new();
	res->wall_ids = hashmap__new();
	res->comm = strdup(rec__valid(&o->valid, r->comm, r->comm_len));
	res->container_id = dup_or_null(r->container_id);
	res->pod_uid = dup_or_null(r->pod_uid);
	res->ns_pid = r->ns_pid;
	res->first_ns = r->start_ns;
	res->last_ns = r->end_ns;
	/* asked now, while the process most likely lives */
	if (o->process && o->process(o->process_ctx, r->pid, &p)) {
		res->exe_path = dup_or_null(p.exe_path);
		res->go_version = dup_or_null(p.go_version);
		if (copy_attrs(res, p.attrs, p.nattrs))
			return NULL;
	}
	/* as the records name it: its context's, its environment's, its executable's */
	if (r->service_name && !(res->service_name = strdup(r->service_name)))
		return NULL;
	if (!res->comm || !res->cpu_ids || !res->wall_ids ||
	    (r->container_id && !res->container_id) || (r->pod_uid && !res->pod_uid) ||
	    (p.exe_path && !res->exe_path) ||
	    (p.go_version && !res->go_version) || labels_max(o, res) ||
	    hashmap__add(o->by_pid, &r->pid, sizeof(r->pid), res))
		return NULL;
	o->batch.resources++;
	return res;
}

/* A goroutine label named like one of ours is represented by ours. */
static bool ours(const char *k, bool wall)
{
	return !strcmp(k, "trace_source") || (wall && (!strcmp(k, "state") || !strcmp(k, "wait_reason")));
}

/* A resource attribute's key: a label of that name would be shadowed by the resource's. */
static bool resource_key(const struct otlp *o, const char *k)
{
	size_t i;

	for (i = 0; i < NRESOURCE_KEYS; i++)
		if (!strcmp(resource_keys[i], k))
			return true;
	for (i = 0; i < o->nagent; i++)
		if (!strcmp(o->agent[i].key, k))
			return true;
	return false;
}

/* Whether V[0..LEN) holds ID (hex digits, lowercase) in any case. */
static bool holds_id(const uint8_t *v, size_t len, const char *id)
{
	size_t n = id ? strlen(id) : 0, i, j;
	int c;

	for (i = 0; n && i + n <= len; i++) {
		for (j = 0; j < n; j++) {
			c = v[i + j];
			if (c >= 'A' && c <= 'F')
				c += 'a' - 'A';
			if (c != id[j])
				break;
		}
		if (j == n)
			return true;
	}
	return false;
}

/* Counts KEY as left out; its name kept among the first few. */
static void left_out(struct otlp *o, const char *key)
{
	size_t len = strlen(key), i;

	if (hashmap__get(o->left_out, key, len) || hashmap__size(o->left_out) >= MAX_LEFT_OUT_KEYS)
		return;
	if (hashmap__add(o->left_out, key, len, (void *)1)) {
		o->oom = true;
		return;
	}
	for (i = 0; i < OTLP_LEFT_OUT_NAMES && o->left_out_names[i]; i++)
		;
	if (i < OTLP_LEFT_OUT_NAMES && !(o->left_out_names[i] = strdup(key)))
		o->oom = true;
}

/* A label that may become an attribute: its value's index, its key, its rank. */
struct candidate {
	size_t label;
	uint64_t key; /* string */
	size_t rank; /* in --otlp-labels; 0 without */
};

/* By rank, then key: the order in which labels get the budget. */
static bool before(const struct otlp *o, const struct candidate *a, const struct candidate *b)
{
	const char *const *strs = profdict__strings(o->dict, &(size_t){ 0 });

	if (a->rank != b->rank)
		return a->rank < b->rank;
	return strcmp(strs[a->key], strs[b->key]) < 0;
}

/*
 * R's goroutine labels that may become attributes, in the order they get
 * the budget; their number. *CUT when one named like a resource attribute
 * was left out.
 */
static size_t candidates(struct otlp *o, const struct rec *r, struct candidate *c, bool *cut)
{
	bool wall = r->origin == REC_WALL;
	struct candidate t;
	size_t i, j, v, n = 0, rank = 0;
	const char *k;

	for (i = 0; i < r->nlabels; i++) {
		if ((v = rec__label_value(r, i)) == SIZE_MAX)
			continue;
		k = rec__valid(&o->valid, r->labels[i].key, r->labels[i].key_len);
		/* the IDs travel in the link */
		if (ours(k, wall) || keys__find(&o->id_keys, k) != SIZE_MAX ||
		    holds_id(r->labels[v].value, r->labels[v].value_len, r->trace_id) ||
		    holds_id(r->labels[v].value, r->labels[v].value_len, r->span_id))
			continue;
		if (o->labels_set && (rank = keys__find(&o->labels, k)) == SIZE_MAX)
			continue;
		if (resource_key(o, k)) {
			left_out(o, k);
			*cut = true;
			continue;
		}
		c[n++] = (struct candidate){ v, profdict__string(o->dict, k), rank };
	}
	/* insertion sort: a goroutine has a few labels */
	for (i = 1; i < n; i++) {
		t = c[i];
		for (j = i; j > 0 && before(o, &t, &c[j - 1]); j--)
			c[j] = c[j - 1];
		c[j] = t;
	}
	return n;
}

static int by_int32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The identity of R's samples, *N int32s: [0] for each stack's, its link,
 * then its attributes ascending: trace_source, a wall record's state and
 * reason, and its goroutine labels within RES's budget.
 */
static int32_t *sample_key(struct otlp *o, struct resource *res, const struct rec *r, size_t *n)
{
	bool wall = r->origin == REC_WALL, cut = false;
	int32_t *key = calloc(2 + OTLP_OWN_ATTRIBUTES + r->nlabels, sizeof(*key)), *a = key + 2;
	struct candidate *c = calloc(r->nlabels + 1, sizeof(*c));
	const char *const *strs;
	size_t i, nc;

	*n = 0;
	if (!key || !c) {
		free(key);
		free(c);
		return NULL;
	}
	key[1] = link(o, r);
	if (r->trace_id && r->trace_source)
		a[(*n)++] = attribute_str(o, "trace_source", r->trace_source);
	if (wall)
		a[(*n)++] = attribute_str(o, "state", r->state);
	if (wall && r->wait_reason)
		a[(*n)++] = attribute_str(o, "wait_reason", r->wait_reason);
	nc = candidates(o, r, c, &cut);
	for (i = 0; i < nc; i++) {
		if (i >= res->labels_max) {
			/* looked up afresh: interning moves the table */
			strs = profdict__strings(o->dict, &(size_t){ 0 });
			left_out(o, strs[c[i].key]);
			cut = true;
			continue;
		}
		a[(*n)++] = attribute(o, c[i].key, r->labels[c[i].label].value,
				      r->labels[c[i].label].value_len);
	}
	free(c);
	if (cut)
		o->left_out_samples += r->samples;
	qsort(a, *n, sizeof(*a), by_int32);
	*n += 2;
	return key;
}

/*
 * Whether a mapping of FILE is of the executable at EXE. A process in a
 * container names its files from its own root ("/app"), which /proc/PID/exe
 * may show from the host's ("/var/lib/.../rootfs/app"): the end of it.
 */
static bool is_exe(const char *file, const char *exe)
{
	size_t n = strlen(file), m = strlen(exe);

	return file[0] == '/' && n <= m && !strcmp(exe + m - n, file);
}

/* The build ID of the executable, from R's mapping of it. */
static void note_build_id(struct resource *res, const struct rec *r)
{
	size_t i;

	for (i = 0; !res->build_id && res->exe_path && i < r->nmappings; i++) {
		if (r->mappings[i].build_id && *r->mappings[i].build_id && r->mappings[i].file &&
		    is_exe(r->mappings[i].file, res->exe_path))
			res->build_id = strdup(r->mappings[i].build_id);
	}
}

/*
 * The sample of identity KEY (stack, link, attributes: N int32s) among
 * SAMPLES, added when new with a copy of its attributes.
 */
static struct sample *sample(struct vec *samples, struct hashmap *ids, const int32_t *key, size_t n)
{
	uintptr_t idx = (uintptr_t)hashmap__get(ids, key, n * sizeof(*key));
	struct sample *s;

	if (idx)
		return &((struct sample *)samples->items)[idx - 1];
	s = vec__push(samples);
	if (!s)
		return NULL;
	s->stack = key[0];
	s->link = key[1];
	s->times.size = sizeof(uint64_t);
	s->nattrs = n - 2;
	s->attrs = malloc((s->nattrs ? s->nattrs : 1) * sizeof(*s->attrs));
	if (!s->attrs || hashmap__add(ids, key, n * sizeof(*key), (void *)(uintptr_t)samples->n)) {
		free(s->attrs);
		samples->n--;
		return NULL;
	}
	memcpy(s->attrs, key + 2, s->nattrs * sizeof(*s->attrs));
	return s;
}

/* ST's sample times into S; counted as untimed when some are missing. */
static int add_times(struct sample *s, const struct rec_stack *st)
{
	uint64_t *t;
	size_t i;

	if (st->ntimes < st->samples)
		s->untimed = true;
	if (!st->ntimes)
		return 0;
	t = vec__extend(&s->times, st->ntimes);
	if (!t)
		return -ENOMEM;
	for (i = 0; i < st->ntimes; i++)
		t[i] = st->times[i].ns;
	return 0;
}

int otlp__add(struct otlp *o, const struct rec *r)
{
	bool wall = r->origin == REC_WALL;
	struct resource *res;
	struct sample *s;
	int32_t *key;
	size_t i, nkey;
	int64_t per;
	int ret = 0;

	if (r->origin != REC_SAMPLING && !wall)
		return 0;
	if (!r->samples)
		return 0;
	res = resource(o, r);
	if (!res)
		return -ENOMEM;
	if (r->start_ns < res->first_ns)
		res->first_ns = r->start_ns;
	if (r->end_ns > res->last_ns)
		res->last_ns = r->end_ns;
	note_build_id(res, r);
	key = sample_key(o, res, r, &nkey);
	per = wall ? r->wall_ns / (int64_t)r->samples : 1;
	for (i = 0; key && !ret && i < r->nstacks; i++) {
		key[0] = stack(o, r, &r->stacks[i]);
		s = wall ? sample(&res->wall, res->wall_ids, key, nkey) :
			   sample(&res->cpu, res->cpu_ids, key, nkey);
		if (!s) {
			ret = -ENOMEM;
			break;
		}
		s->value += (int64_t)r->stacks[i].samples * per;
		if (!wall)
			ret = add_times(s, &r->stacks[i]);
	}
	free(key);
	o->batch.records++;
	o->batch.samples += r->samples;
	return !key || ret || o->oom || profdict__oom(o->dict) ? -ENOMEM : 0;
}

/* The request as protobuf-c's structures: every part comes from one arena, freed after packing. */
#define NEW(a, type, init) arena__dup(a, &(type)init, sizeof(type))

static pb_anyvalue *string_value(struct arena *a, const char *s)
{
	pb_anyvalue *v = NEW(a, pb_anyvalue, OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT);

	if (v) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE;
		v->string_value = (char *)s;
	}
	return v;
}

static pb_anyvalue *int_value(struct arena *a, int64_t i)
{
	pb_anyvalue *v = NEW(a, pb_anyvalue, OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT);

	if (v) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE;
		v->int_value = i;
	}
	return v;
}

static pb_anyvalue *any_value(struct arena *a, const struct otlp_attr *at)
{
	pb_anyvalue *v;

	if (at->kind == OTLP_STRING)
		return string_value(a, at->str);
	if (at->kind == OTLP_INT)
		return int_value(a, at->num);
	v = NEW(a, pb_anyvalue, OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT);
	if (v && at->kind == OTLP_BOOL) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE;
		v->bool_value = at->num;
	} else if (v) {
		v->value_case = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_DOUBLE_VALUE;
		v->double_value = at->dbl;
	}
	return v;
}

/* A process's resource: its attributes as resource_attrs lists them. */
static pb_resource *build_resource(struct otlp *o, struct arena *a, const struct resource *res)
{
	pb_resource *r = NEW(a, pb_resource, OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT);
	struct res_attr *attrs = arena__alloc(a, resource_room(o, res), sizeof(*attrs));
	size_t n, i;

	if (!r || !attrs ||
	    !(r->attributes = arena__alloc(a, resource_room(o, res), sizeof(pb_keyvalue *))))
		return NULL;
	n = resource_attrs(o, res, attrs);
	for (i = 0; i < n; i++) {
		pb_keyvalue *kv = NEW(a, pb_keyvalue, OPENTELEMETRY__PROTO__COMMON__V1__KEY_VALUE__INIT);

		if (!kv)
			return NULL;
		kv->key = (char *)attrs[i].key;
		kv->value = attrs[i].any ? any_value(a, attrs[i].any) :
			    attrs[i].str ? string_value(a, attrs[i].str) :
					   int_value(a, attrs[i].num);
		if (!kv->value)
			return NULL;
		r->attributes[r->n_attributes++] = kv;
	}
	return r;
}

static pb_value_type *value_type(struct otlp *o, struct arena *a, const char *type, const char *unit)
{
	pb_value_type *v = NEW(a, pb_value_type,
			       OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__VALUE_TYPE__INIT);

	if (v) {
		v->type_strindex = profdict__string(o->dict, type);
		v->unit_strindex = profdict__string(o->dict, unit);
	}
	return v;
}

/*
 * One profile of RES. The format pairs each timestamp with one value, and
 * Pyroscope takes one value a sample: CPU samples go as their timestamps
 * alone, each one sample (what backends multiply by the period), or,
 * when some came without their time, as counts alone, all of the profile
 * alike; wall samples as their nanoseconds.
 */
static pb_profile *build_profile(struct otlp *o, struct arena *a, const struct resource *res,
				 bool wall)
{
	pb_profile *p = NEW(a, pb_profile, OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT);
	const struct vec *samples = wall ? &res->wall : &res->cpu;
	const struct sample *s = samples->items;
	bool timed = !wall;
	size_t i;

	if (!p)
		return NULL;
	if (wall) {
		p->sample_type = value_type(o, a, "wall", "nanoseconds");
		p->period_type = value_type(o, a, "wall", "nanoseconds");
		p->period = o->wall_period_ns;
	} else {
		p->sample_type = value_type(o, a, "samples", "count");
		p->period_type = value_type(o, a, "cpu", "nanoseconds");
		p->period = o->cpu_period_ns;
	}
	/* [time, time + duration) holds every sample */
	p->time_unix_nano = res->first_ns;
	p->duration_nano = res->last_ns - res->first_ns + 1;
	p->samples = arena__alloc(a, samples->n, sizeof(pb_sample *));
	if (!p->samples || !p->sample_type || !p->period_type)
		return NULL;
	for (i = 0; timed && i < samples->n; i++)
		timed = !s[i].untimed;
	for (i = 0; i < samples->n; i++) {
		pb_sample *ps = NEW(a, pb_sample,
				    OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SAMPLE__INIT);

		if (!ps)
			return NULL;
		ps->stack_index = s[i].stack;
		ps->link_index = s[i].link;
		ps->attribute_indices = s[i].attrs;
		ps->n_attribute_indices = s[i].nattrs;
		if (timed) {
			ps->timestamps_unix_nano = s[i].times.items;
			ps->n_timestamps_unix_nano = s[i].times.n;
		} else {
			ps->values = (int64_t *)&s[i].value;
			ps->n_values = 1;
		}
		p->samples[p->n_samples++] = ps;
	}
	return p;
}

static pb_resource_profiles *build_resource_profiles(struct otlp *o, struct arena *a,
						     const struct resource *res)
{
	pb_resource_profiles *rp = NEW(a, pb_resource_profiles,
				       OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__RESOURCE_PROFILES__INIT);
	pb_scope_profiles *sp = NEW(a, pb_scope_profiles,
				    OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SCOPE_PROFILES__INIT);
	pb_scope *scope = NEW(a, pb_scope,
			      OPENTELEMETRY__PROTO__COMMON__V1__INSTRUMENTATION_SCOPE__INIT);

	if (!rp || !sp || !scope)
		return NULL;
	scope->name = "ctxprof-go";
	scope->version = o->version;
	sp->scope = scope;
	sp->profiles = arena__alloc(a, 2, sizeof(pb_profile *));
	rp->scope_profiles = arena__alloc(a, 1, sizeof(pb_scope_profiles *));
	rp->resource = build_resource(o, a, res);
	if (!sp->profiles || !rp->scope_profiles || !rp->resource)
		return NULL;
	if (res->cpu.n && !(sp->profiles[sp->n_profiles++] = build_profile(o, a, res, false)))
		return NULL;
	if (res->wall.n && !(sp->profiles[sp->n_profiles++] = build_profile(o, a, res, true)))
		return NULL;
	rp->scope_profiles[rp->n_scope_profiles++] = sp;
	return rp;
}

/* The tables, each with its entry 0, from the profile dictionary and the request's own. */
/* The dictionary's functions, entry 0 the empty one: false when out of memory. */
static bool dict_functions(struct otlp *o, struct arena *a, pb_dictionary *d)
{
	const struct profdict_function *funcs;
	size_t n, i;

	funcs = profdict__functions(o->dict, &n);
	d->function_table = arena__alloc(a, n + 1, sizeof(pb_function *));
	for (i = 0; d->function_table && i <= n; i++) {
		pb_function *f = NEW(a, pb_function,
				     OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT);

		if (!f)
			return false;
		if (i) {
			f->name_strindex = f->system_name_strindex = funcs[i - 1].name;
			f->filename_strindex = funcs[i - 1].file;
		}
		d->function_table[d->n_function_table++] = f;
	}
	return true;
}

/* The dictionary's mappings, each with its build ID as an attribute: false when out of memory. */
static bool dict_mappings(struct otlp *o, struct arena *a, pb_dictionary *d)
{
	const struct profdict_mapping *maps;
	const char *const *strs;
	size_t n, i, j;

	maps = profdict__mappings(o->dict, &n);
	d->mapping_table = arena__alloc(a, n + 1, sizeof(pb_mapping *));
	for (i = 0; d->mapping_table && i <= n; i++) {
		pb_mapping *m = NEW(a, pb_mapping,
				    OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__MAPPING__INIT);

		if (!m)
			return false;
		if (i) {
			m->memory_start = maps[i - 1].start;
			m->memory_limit = maps[i - 1].limit;
			m->file_offset = maps[i - 1].offset;
			m->filename_strindex = maps[i - 1].file;
			if (maps[i - 1].build_id) {
				m->attribute_indices = arena__alloc(a, 1, sizeof(int32_t));
				if (!m->attribute_indices)
					return false;
				/* interning may move the table: looked up afresh each time */
				strs = profdict__strings(o->dict, &j);
				m->attribute_indices[0] =
					attribute_str(o, "process.executable.build_id.gnu",
						      strs[maps[i - 1].build_id]);
				m->n_attribute_indices = 1;
			}
		}
		d->mapping_table[d->n_mapping_table++] = m;
	}
	return true;
}

/* The dictionary's locations with their lines: false when out of memory. */
static bool dict_locations(struct otlp *o, struct arena *a, pb_dictionary *d)
{
	const struct profdict_location *const *locs;
	size_t n, i, j;

	locs = profdict__locations(o->dict, &n);
	d->location_table = arena__alloc(a, n + 1, sizeof(pb_location *));
	for (i = 0; d->location_table && i <= n; i++) {
		pb_location *l = NEW(a, pb_location,
				     OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT);

		if (!l)
			return false;
		if (i) {
			const struct profdict_location *pl = locs[i - 1];

			l->mapping_index = pl->mapping;
			l->address = pl->addr;
			/* innermost first, the last the function the others were inlined into */
			l->lines = arena__alloc(a, pl->nlines, sizeof(pb_line *));
			for (j = 0; l->lines && j < pl->nlines; j++) {
				pb_line *ln = NEW(a, pb_line,
						  OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINE__INIT);

				if (!ln)
					return false;
				ln->function_index = pl->lines[j].function;
				ln->line = pl->lines[j].line;
				l->lines[l->n_lines++] = ln;
			}
		}
		d->location_table[d->n_location_table++] = l;
	}
	return true;
}

/* The dictionary's links and stacks: false when out of memory. */
static bool dict_links_stacks(struct otlp *o, struct arena *a, pb_dictionary *d)
{
	size_t i;

	d->link_table = arena__alloc(a, o->links.n, sizeof(pb_link *));
	for (i = 0; d->link_table && i < o->links.n; i++) {
		struct link_entry *e = &((struct link_entry *)o->links.items)[i];
		pb_link *l = NEW(a, pb_link, OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT);

		if (!l)
			return false;
		/* entry 0 too: the zero value in the IDs' own lengths, as the format advises */
		l->trace_id = (ProtobufCBinaryData){ TRACE_BYTES, e->trace };
		l->span_id = (ProtobufCBinaryData){ SPAN_BYTES, e->span };
		d->link_table[d->n_link_table++] = l;
	}

	d->stack_table = arena__alloc(a, o->stacks.n, sizeof(pb_stack *));
	for (i = 0; d->stack_table && i < o->stacks.n; i++) {
		struct stack_entry *e = &((struct stack_entry *)o->stacks.items)[i];
		pb_stack *s = NEW(a, pb_stack, OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT);

		if (!s)
			return false;
		s->location_indices = e->locations;
		s->n_location_indices = e->n;
		d->stack_table[d->n_stack_table++] = s;
	}
	return true;
}

/* The dictionary's strings and attributes: false when out of memory. */
static bool dict_attributes(struct otlp *o, struct arena *a, pb_dictionary *d)
{
	const char *const *strs;
	size_t n, i;

	d->attribute_table = arena__alloc(a, o->attrs.n, sizeof(pb_kvu *));
	strs = profdict__strings(o->dict, &n);
	d->string_table = (char **)strs;
	d->n_string_table = n;
	for (i = 0; d->attribute_table && i < o->attrs.n; i++) {
		struct attr_entry *e = &((struct attr_entry *)o->attrs.items)[i];
		pb_kvu *kv = NEW(a, pb_kvu,
				 OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT);

		if (!kv)
			return false;
		if (i) {
			kv->key_strindex = e->key;
			kv->value = string_value(a, strs[e->value]);
		}
		d->attribute_table[d->n_attribute_table++] = kv;
	}
	return true;
}

static pb_dictionary *build_dictionary(struct otlp *o, struct arena *a)
{
	pb_dictionary *d = NEW(a, pb_dictionary,
			       OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT);

	/* attributes last: the build IDs of mappings may add to them */
	if (!d || !dict_functions(o, a, d) || !dict_mappings(o, a, d) || !dict_locations(o, a, d) ||
	    !dict_links_stacks(o, a, d) || !dict_attributes(o, a, d))
		return NULL;
	return a->oom ? NULL : d;
}

int otlp__take(struct otlp *o, uint8_t **buf, size_t *len, struct otlp_batch *what)
{
	pb_request req = OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	struct resource **res = o->resources.items;
	struct arena a = {};
	int ret = 0;
	size_t i;

	*buf = NULL;
	*len = 0;
	*what = o->batch;
	if (!o->resources.n)
		goto out;
	req.resource_profiles = arena__alloc(&a, o->resources.n, sizeof(pb_resource_profiles *));
	for (i = 0; req.resource_profiles && i < o->resources.n; i++) {
		req.resource_profiles[i] = build_resource_profiles(o, &a, res[i]);
		if (!req.resource_profiles[i])
			break;
		req.n_resource_profiles++;
	}
	/* the dictionary last: building the resources interns strings too */
	req.dictionary = build_dictionary(o, &a);
	if (a.oom || o->oom || !req.dictionary || profdict__oom(o->dict) ||
	    req.n_resource_profiles != o->resources.n) {
		ret = -ENOMEM;
		goto out;
	}
	*len = protobuf_c_message_get_packed_size(&req.base);
	*buf = malloc(*len ? *len : 1);
	if (!*buf) {
		ret = -ENOMEM;
		goto out;
	}
	protobuf_c_message_pack(&req.base, *buf);
out:
	arena__free(&a);
	reset(o);
	if (start(o))
		ret = ret ?: -ENOMEM;
	return ret;
}
