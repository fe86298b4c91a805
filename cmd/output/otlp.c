// SPDX-License-Identifier: GPL-2.0
/* otlp.c: records as an OTLP ExportProfilesServiceRequest, through the code protobuf-c generates from the .proto files. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/util/hashmap.h"
#include "cmd/util/vec.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "otlp.h"
#include "profdict.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles pb_resource_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles pb_scope_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType pb_value_type;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping pb_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Profiles__V1development__Line pb_line;
typedef Opentelemetry__Proto__Profiles__V1development__Function pb_function;
typedef Opentelemetry__Proto__Profiles__V1development__Link pb_link;
typedef Opentelemetry__Proto__Profiles__V1development__Stack pb_stack;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit pb_kvu;
typedef Opentelemetry__Proto__Resource__V1__Resource pb_resource;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope pb_scope;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_keyvalue;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_anyvalue;

#define TRACE_BYTES 16
#define SPAN_BYTES 8

/* One sample before the request is built; table indexes as OTLP numbers them. */
struct sample {
	int32_t stack, link;
	int32_t *attrs;
	size_t nattrs;
	int64_t value;
	uint64_t *times; /* when each sample was taken, where known */
	size_t ntimes;
};

/* The samples of one process in this request. */
struct resource {
	uint32_t pid;
	char *comm, *container_id, *pod_uid, *build_id;
	char *service_name, *exe_path, *go_version; /* NULL: unknown */
	int64_t ns_pid;
	struct vec cpu, wall; /* struct sample */
	int64_t first_ns, last_ns; /* CLOCK_REALTIME */
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

struct otlp {
	char *version;
	uint64_t cpu_period_ns, wall_period_ns;
	struct agent_attr *agent;
	size_t nagent;
	otlp_process_fn process;
	void *process_ctx;
	/* the request being built */
	struct profdict *dict;
	struct hashmap *attr_index; /* struct attr_entry -> index */
	struct vec attrs; /* struct attr_entry; entry 0 is empty */
	struct hashmap *link_index; /* struct link_entry -> index */
	struct vec links; /* struct link_entry; entry 0 is empty */
	struct hashmap *stack_index; /* location numbers -> index */
	struct vec stacks; /* struct stack_entry; entry 0 is empty */
	struct hashmap *by_pid; /* pid -> struct resource * */
	struct vec resources; /* struct resource * */
	struct otlp_batch batch;
	struct strbuf valid;
	bool oom;
};

static void resource__free(struct resource *res)
{
	size_t i;

	if (!res)
		return;
	for (i = 0; i < res->cpu.n; i++) {
		free(((struct sample *)res->cpu.items)[i].attrs);
		free(((struct sample *)res->cpu.items)[i].times);
	}
	for (i = 0; i < res->wall.n; i++) {
		free(((struct sample *)res->wall.items)[i].attrs);
		free(((struct sample *)res->wall.items)[i].times);
	}
	free(res->cpu.items);
	free(res->wall.items);
	free(res->comm);
	free(res->container_id);
	free(res->pod_uid);
	free(res->build_id);
	free(res->service_name);
	free(res->exe_path);
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
	reset(o);
	if (!o->version || start(o)) {
		otlp__free(o);
		return NULL;
	}
	return o;
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

static int32_t attribute(struct otlp *o, const char *key, const uint8_t *value, size_t len)
{
	struct attr_entry e = { profdict__string(o->dict, key), profdict__valid(o->dict, value, len) };

	return intern(o, o->attr_index, &o->attrs, &e, sizeof(e), &e);
}

static int32_t attribute_str(struct otlp *o, const char *key, const char *value)
{
	return attribute(o, key, (const uint8_t *)value, strlen(value));
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

/* The link of R's trace and span; 0 without a trace ID. */
static int32_t link(struct otlp *o, const struct rec *r)
{
	struct link_entry e = {};

	if (!unhex(r->trace_id, e.trace, TRACE_BYTES))
		return 0;
	if (r->span_id)
		unhex(r->span_id, e.span, SPAN_BYTES);
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
	res->comm = strdup(rec__valid(&o->valid, r->comm, r->comm_len));
	res->container_id = dup_or_null(r->container_id);
	res->pod_uid = dup_or_null(r->pod_uid);
	res->ns_pid = r->ns_pid;
	res->first_ns = r->start_ns;
	res->last_ns = r->end_ns;
	/* asked now, while the process most likely lives */
	if (o->process && o->process(o->process_ctx, r->pid, &p)) {
		res->service_name = dup_or_null(p.service_name);
		res->exe_path = dup_or_null(p.exe_path);
		res->go_version = dup_or_null(p.go_version);
	}
	if (!res->comm || (p.service_name && !res->service_name) || (p.exe_path && !res->exe_path) ||
	    (p.go_version && !res->go_version) || hashmap__add(o->by_pid, &r->pid, sizeof(r->pid), res))
		return NULL;
	o->batch.resources++;
	return res;
}

/* A goroutine label named like one of ours is represented by ours. */
static bool ours(const char *k, bool wall)
{
	return !strcmp(k, "trace_source") || (wall && (!strcmp(k, "state") || !strcmp(k, "wait_reason")));
}

/* The attributes of R's samples: its labels, trace_source, and a wall record's state and reason. */
static int32_t *sample_attrs(struct otlp *o, const struct rec *r, size_t *n)
{
	bool wall = r->origin == REC_WALL;
	int32_t *a = calloc(r->nlabels + 3, sizeof(*a));
	size_t i, v;

	*n = 0;
	if (!a)
		return NULL;
	if (r->trace_id && r->trace_source)
		a[(*n)++] = attribute_str(o, "trace_source", r->trace_source);
	if (wall)
		a[(*n)++] = attribute_str(o, "state", r->state);
	if (wall && r->wait_reason)
		a[(*n)++] = attribute_str(o, "wait_reason", r->wait_reason);
	for (i = 0; i < r->nlabels; i++) {
		if ((v = rec__label_value(r, i)) == SIZE_MAX)
			continue;
		if (ours(rec__valid(&o->valid, r->labels[i].key, r->labels[i].key_len), wall))
			continue;
		a[(*n)++] = attribute(o, rec__valid(&o->valid, r->labels[i].key, r->labels[i].key_len),
				      r->labels[v].value, r->labels[v].value_len);
	}
	return a;
}

/* The build ID of the executable, from R's mapping of it. */
static void note_build_id(struct resource *res, const struct rec *r)
{
	size_t i;

	for (i = 0; !res->build_id && res->exe_path && i < r->nmappings; i++) {
		if (r->mappings[i].build_id && *r->mappings[i].build_id &&
		    !strcmp(r->mappings[i].file, res->exe_path))
			res->build_id = strdup(r->mappings[i].build_id);
	}
}

int otlp__add(struct otlp *o, const struct rec *r)
{
	bool wall = r->origin == REC_WALL;
	int64_t per = 0;
	struct resource *res;
	struct sample *s;
	int32_t lnk;
	size_t i, nattrs;
	int32_t *attrs, *shared;

	if (r->origin != REC_SAMPLING && !wall)
		return 0;
	if (!r->samples)
		return 0;
	per = wall ? r->wall_ns / (int64_t)r->samples : r->cpu_ns / (int64_t)r->samples;
	res = resource(o, r);
	if (!res)
		return -ENOMEM;
	if (r->start_ns < res->first_ns)
		res->first_ns = r->start_ns;
	if (r->end_ns > res->last_ns)
		res->last_ns = r->end_ns;
	note_build_id(res, r);
	lnk = link(o, r);
	/* the record's attributes are every one of its samples' */
	shared = sample_attrs(o, r, &nattrs);
	if (!shared)
		return -ENOMEM;
	for (i = 0; i < r->nstacks; i++) {
		attrs = i + 1 < r->nstacks ? malloc((nattrs + 1) * sizeof(*attrs)) : shared;
		s = attrs ? vec__push(wall ? &res->wall : &res->cpu) : NULL;
		if (!s) {
			if (attrs != shared)
				free(attrs);
			free(shared);
			return -ENOMEM;
		}
		if (attrs != shared)
			memcpy(attrs, shared, nattrs * sizeof(*attrs));
		s->stack = stack(o, r, &r->stacks[i]);
		s->link = lnk;
		s->attrs = attrs;
		s->nattrs = nattrs;
		s->value = (int64_t)r->stacks[i].samples * per;
		if (r->stacks[i].ntimes) {
			s->times = malloc(r->stacks[i].ntimes * sizeof(*s->times));
			if (!s->times)
				return -ENOMEM;
			memcpy(s->times, r->stacks[i].times, r->stacks[i].ntimes * sizeof(*s->times));
			s->ntimes = r->stacks[i].ntimes;
		}
	}
	if (!r->nstacks)
		free(shared);
	o->batch.records++;
	o->batch.samples += r->samples;
	return o->oom || profdict__oom(o->dict) ? -ENOMEM : 0;
}

/*
 * The request as protobuf-c's structures: every part is allocated from one
 * arena, freed at once after packing.
 */
struct arena {
	void **blocks;
	size_t n, cap;
	bool oom;
};

static void *arena_alloc(struct arena *a, size_t n, size_t size)
{
	void **blocks, *p;

	if (a->oom)
		return NULL;
	if (a->n == a->cap) {
		blocks = realloc(a->blocks, (a->cap ? 2 * a->cap : 1024) * sizeof(*blocks));
		if (!blocks) {
			a->oom = true;
			return NULL;
		}
		a->blocks = blocks;
		a->cap = a->cap ? 2 * a->cap : 1024;
	}
	p = calloc(n ? n : 1, size);
	if (!p) {
		a->oom = true;
		return NULL;
	}
	a->blocks[a->n++] = p;
	return p;
}

static void arena_free(struct arena *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		free(a->blocks[i]);
	free(a->blocks);
}

#define NEW(a, type, init) new_msg(a, sizeof(type), &(type)init)

static void *new_msg(struct arena *a, size_t size, const void *init)
{
	void *p = arena_alloc(a, 1, size);

	if (p)
		memcpy(p, init, size);
	return p;
}

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

static void add_kv(struct arena *a, pb_resource *r, const char *key, pb_anyvalue *value)
{
	pb_keyvalue *kv = NEW(a, pb_keyvalue, OPENTELEMETRY__PROTO__COMMON__V1__KEY_VALUE__INIT);

	if (!kv || !value)
		return;
	kv->key = (char *)key;
	kv->value = value;
	r->attributes[r->n_attributes++] = kv;
}

static void add_str(struct arena *a, pb_resource *r, const char *key, const char *value)
{
	if (value && *value)
		add_kv(a, r, key, string_value(a, value));
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A process's resource: semantic-convention attributes, then the agent's own. */
static pb_resource *build_resource(struct otlp *o, struct arena *a, const struct resource *res)
{
	pb_resource *r = NEW(a, pb_resource, OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT);
	const char *exe = res->exe_path ? basename_of(res->exe_path) : res->comm;
	size_t i;

	if (!r || !(r->attributes = arena_alloc(a, 12 + o->nagent, sizeof(pb_keyvalue *))))
		return NULL;
	add_str(a, r, "service.name", res->service_name ?: exe);
	add_kv(a, r, "process.pid", int_value(a, res->pid));
	add_str(a, r, "process.executable.name", exe);
	add_str(a, r, "process.executable.path", res->exe_path);
	add_str(a, r, "process.executable.build_id.gnu", res->build_id);
	add_str(a, r, "process.runtime.name", "go");
	add_str(a, r, "process.runtime.version", res->go_version);
	add_str(a, r, "container.id", res->container_id);
	add_str(a, r, "k8s.pod.uid", res->pod_uid);
	if (res->ns_pid)
		add_kv(a, r, "process.vpid", int_value(a, res->ns_pid));
	/* the agent's: host.name and OTEL_RESOURCE_ATTRIBUTES */
	for (i = 0; i < o->nagent; i++)
		add_str(a, r, o->agent[i].key, o->agent[i].value);
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

static pb_profile *build_profile(struct otlp *o, struct arena *a, const struct resource *res,
				 const struct vec *samples, const char *type, uint64_t period)
{
	pb_profile *p = NEW(a, pb_profile, OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT);
	const struct sample *s = samples->items;
	size_t i;

	if (!p)
		return NULL;
	p->sample_type = value_type(o, a, type, "nanoseconds");
	p->period_type = value_type(o, a, type, "nanoseconds");
	p->period = period;
	p->time_unix_nano = res->first_ns;
	p->duration_nano = res->last_ns - res->first_ns;
	p->samples = arena_alloc(a, samples->n, sizeof(pb_sample *));
	if (!p->samples)
		return NULL;
	for (i = 0; i < samples->n; i++) {
		pb_sample *ps = NEW(a, pb_sample,
				    OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SAMPLE__INIT);

		if (!ps)
			return NULL;
		ps->stack_index = s[i].stack;
		ps->link_index = s[i].link;
		ps->attribute_indices = s[i].attrs;
		ps->n_attribute_indices = s[i].nattrs;
		ps->values = (int64_t *)&s[i].value;
		ps->n_values = 1;
		ps->timestamps_unix_nano = s[i].times;
		ps->n_timestamps_unix_nano = s[i].ntimes;
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
	sp->profiles = arena_alloc(a, 2, sizeof(pb_profile *));
	rp->scope_profiles = arena_alloc(a, 1, sizeof(pb_scope_profiles *));
	rp->resource = build_resource(o, a, res);
	if (!sp->profiles || !rp->scope_profiles || !rp->resource)
		return NULL;
	if (res->cpu.n)
		sp->profiles[sp->n_profiles++] = build_profile(o, a, res, &res->cpu, "cpu", o->cpu_period_ns);
	if (res->wall.n)
		sp->profiles[sp->n_profiles++] = build_profile(o, a, res, &res->wall, "wall", o->wall_period_ns);
	rp->scope_profiles[rp->n_scope_profiles++] = sp;
	return rp;
}

/* The tables, each with its entry 0, from the profile dictionary and the request's own. */
static pb_dictionary *build_dictionary(struct otlp *o, struct arena *a)
{
	pb_dictionary *d = NEW(a, pb_dictionary,
			       OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT);
	const struct profdict_location *const *locs;
	const struct profdict_function *funcs;
	const struct profdict_mapping *maps;
	const char *const *strs;
	size_t n, i, j;

	if (!d)
		return NULL;
	funcs = profdict__functions(o->dict, &n);
	d->function_table = arena_alloc(a, n + 1, sizeof(pb_function *));
	for (i = 0; d->function_table && i <= n; i++) {
		pb_function *f = NEW(a, pb_function,
				     OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT);

		if (!f)
			return NULL;
		if (i) {
			f->name_strindex = f->system_name_strindex = funcs[i - 1].name;
			f->filename_strindex = funcs[i - 1].file;
		}
		d->function_table[d->n_function_table++] = f;
	}

	maps = profdict__mappings(o->dict, &n);
	d->mapping_table = arena_alloc(a, n + 1, sizeof(pb_mapping *));
	for (i = 0; d->mapping_table && i <= n; i++) {
		pb_mapping *m = NEW(a, pb_mapping,
				    OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__MAPPING__INIT);

		if (!m)
			return NULL;
		if (i) {
			m->memory_start = maps[i - 1].start;
			m->memory_limit = maps[i - 1].limit;
			m->file_offset = maps[i - 1].offset;
			m->filename_strindex = maps[i - 1].file;
			if (maps[i - 1].build_id) {
				m->attribute_indices = arena_alloc(a, 1, sizeof(int32_t));
				if (!m->attribute_indices)
					return NULL;
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

	locs = profdict__locations(o->dict, &n);
	d->location_table = arena_alloc(a, n + 1, sizeof(pb_location *));
	for (i = 0; d->location_table && i <= n; i++) {
		pb_location *l = NEW(a, pb_location,
				     OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT);

		if (!l)
			return NULL;
		if (i) {
			const struct profdict_location *pl = locs[i - 1];

			l->mapping_index = pl->mapping;
			l->address = pl->addr;
			/* innermost first, the last the function the others were inlined into */
			l->lines = arena_alloc(a, pl->nlines, sizeof(pb_line *));
			for (j = 0; l->lines && j < pl->nlines; j++) {
				pb_line *ln = NEW(a, pb_line,
						  OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINE__INIT);

				if (!ln)
					return NULL;
				ln->function_index = pl->lines[j].function;
				ln->line = pl->lines[j].line;
				l->lines[l->n_lines++] = ln;
			}
		}
		d->location_table[d->n_location_table++] = l;
	}

	d->link_table = arena_alloc(a, o->links.n, sizeof(pb_link *));
	for (i = 0; d->link_table && i < o->links.n; i++) {
		struct link_entry *e = &((struct link_entry *)o->links.items)[i];
		pb_link *l = NEW(a, pb_link, OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT);

		if (!l)
			return NULL;
		if (i) {
			l->trace_id = (ProtobufCBinaryData){ TRACE_BYTES, e->trace };
			l->span_id = (ProtobufCBinaryData){ SPAN_BYTES, e->span };
		}
		d->link_table[d->n_link_table++] = l;
	}

	d->stack_table = arena_alloc(a, o->stacks.n, sizeof(pb_stack *));
	for (i = 0; d->stack_table && i < o->stacks.n; i++) {
		struct stack_entry *e = &((struct stack_entry *)o->stacks.items)[i];
		pb_stack *s = NEW(a, pb_stack, OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT);

		if (!s)
			return NULL;
		s->location_indices = e->locations;
		s->n_location_indices = e->n;
		d->stack_table[d->n_stack_table++] = s;
	}

	/* last: the build IDs of mappings above may have added attributes */
	d->attribute_table = arena_alloc(a, o->attrs.n, sizeof(pb_kvu *));
	strs = profdict__strings(o->dict, &n);
	d->string_table = (char **)strs;
	d->n_string_table = n;
	for (i = 0; d->attribute_table && i < o->attrs.n; i++) {
		struct attr_entry *e = &((struct attr_entry *)o->attrs.items)[i];
		pb_kvu *kv = NEW(a, pb_kvu,
				 OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT);

		if (!kv)
			return NULL;
		if (i) {
			kv->key_strindex = e->key;
			kv->value = string_value(a, strs[e->value]);
		}
		d->attribute_table[d->n_attribute_table++] = kv;
	}
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
	req.resource_profiles = arena_alloc(&a, o->resources.n, sizeof(pb_resource_profiles *));
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
	arena_free(&a);
	reset(o);
	if (start(o))
		ret = ret ?: -ENOMEM;
	return ret;
}
