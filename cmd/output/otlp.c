// SPDX-License-Identifier: GPL-2.0
/* otlp.c: records gathered for one OTLP request: its processes, their samples, its tables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "cmd/util/vec.h"
#include "otlp.h"
#include "otlp_priv.h"
#include "profdict.h"

/* distinct label keys remembered as left out; past it they are no longer counted apart */
#define MAX_LEFT_OUT_KEYS 4096

/*
 * The resource attributes a process's own facts fill, by semantic
 * conventions: the keys otlp_resource_attrs gives, which no label may take.
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
	samples__free(&res->alloc);
	hashmap__free(res->cpu_ids, NULL);
	hashmap__free(res->wall_ids, NULL);
	hashmap__free(res->alloc_ids, NULL);
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

/* Drops the request taken and starts the next: -ENOMEM without its tables. */
int otlp_next_request(struct otlp *o)
{
	reset(o);
	return start(o);
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

int32_t otlp_attribute_str(struct otlp *o, const char *key, const char *value)
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
size_t otlp_resource_room(const struct otlp *o, const struct resource *res)
{
	return NRESOURCE_KEYS + o->nagent + res->nattrs;
}

/*
 * RES's resource attributes into OUT (room for otlp_resource_room): what its
 * process context publishes, then its own by semantic conventions, then
 * the agent's, each whose key no earlier one took. Their number.
 */
size_t otlp_resource_attrs(const struct otlp *o, const struct resource *res, struct res_attr *out)
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
	struct res_attr *tmp = calloc(otlp_resource_room(o, res), sizeof(*tmp));
	size_t n;

	if (!tmp)
		return -ENOMEM;
	n = otlp_resource_attrs(o, res, tmp) + (res->exe_path && !res->build_id);
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
	res->cpu.size = res->wall.size = res->alloc.size = sizeof(struct sample);
	res->cpu_ids = hashmap__new();
	res->wall_ids = hashmap__new();
	res->alloc_ids = hashmap__new();
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
		res->memprofile_rate = p.memprofile_rate;
		if (copy_attrs(res, p.attrs, p.nattrs))
			return NULL;
	}
	/* as the records name it: its context's, its environment's, its executable's */
	if (r->service_name && !(res->service_name = strdup(r->service_name)))
		return NULL;
	if (!res->comm || !res->cpu_ids || !res->wall_ids || !res->alloc_ids ||
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
		a[(*n)++] = otlp_attribute_str(o, "trace_source", r->trace_source);
	if (wall)
		a[(*n)++] = otlp_attribute_str(o, "state", r->state);
	if (wall && r->wait_reason)
		a[(*n)++] = otlp_attribute_str(o, "wait_reason", r->wait_reason);
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

/* The samples of RES that records of ORIGIN go to, and their index by identity; NULL: none. */
static struct vec *samples_of(struct resource *res, enum rec_origin origin, struct hashmap **ids)
{
	switch (origin) {
	case REC_SAMPLING:
		*ids = res->cpu_ids;
		return &res->cpu;
	case REC_WALL:
		*ids = res->wall_ids;
		return &res->wall;
	case REC_ALLOC:
		*ids = res->alloc_ids;
		return &res->alloc;
	default:
		*ids = NULL;
		return NULL;
	}
}

/*
 * ST's share of its sample S: CPU samples with their times, a wall
 * record's nanoseconds (PER a sample), an allocation record's objects and
 * bytes as the runtime's sampling unbiased them.
 */
static int add_stack(struct sample *s, const struct rec *r, const struct rec_stack *st, int64_t per)
{
	switch (r->origin) {
	case REC_ALLOC:
		s->value += st->alloc_objects;
		s->bytes += st->alloc_bytes;
		return 0;
	case REC_WALL:
		s->value += (int64_t)st->samples * per;
		return 0;
	default:
		s->value += (int64_t)st->samples;
		return add_times(s, st);
	}
}

int otlp__add(struct otlp *o, const struct rec *r)
{
	struct hashmap *ids = NULL;
	struct resource *res;
	struct vec *samples;
	struct sample *s;
	int32_t *key;
	size_t i, nkey;
	int64_t per;
	uint64_t taken = 0;
	int ret = 0;

	/* events (custom, uprobe) and requests are no profile */
	if ((r->origin != REC_SAMPLING && r->origin != REC_WALL && r->origin != REC_ALLOC) ||
	    !r->samples)
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
	per = r->origin == REC_WALL ? r->wall_ns / (int64_t)r->samples : 1;
	samples = samples_of(res, r->origin, &ids);
	for (i = 0; key && !ret && i < r->nstacks; i++) {
		const struct rec_stack *st = &r->stacks[i];

		/* a value of 0 or less is no sample to a backend: Pyroscope drops it */
		if (r->origin == REC_ALLOC && (st->alloc_objects <= 0 || st->alloc_bytes <= 0))
			continue;
		key[0] = stack(o, r, st);
		s = sample(samples, ids, key, nkey);
		if (!s) {
			ret = -ENOMEM;
			break;
		}
		ret = add_stack(s, r, st, per);
		taken += st->samples;
	}
	free(key);
	o->batch.records++;
	/* an allocation record's samples are the allocations the runtime sampled */
	o->batch.samples += r->origin == REC_ALLOC ? taken : r->samples;
	return !key || ret || o->oom || profdict__oom(o->dict) ? -ENOMEM : 0;
}
