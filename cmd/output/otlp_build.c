// SPDX-License-Identifier: GPL-2.0
/* otlp_build.c: the gathered request as an ExportProfilesServiceRequest, packed by protobuf-c. */
#include <errno.h>
#include <stdlib.h>

#include "cmd/util/arena.h"
#include "otlp.h"
#include "otlp_pb.h"
#include "otlp_priv.h"
#include "profdict.h"

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

/* A process's resource: its attributes as otlp_resource_attrs lists them. */
static pb_resource *build_resource(struct otlp *o, struct arena *a, const struct resource *res)
{
	pb_resource *r = NEW(a, pb_resource, OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT);
	struct res_attr *attrs = arena__alloc(a, otlp_resource_room(o, res), sizeof(*attrs));
	size_t n, i;

	if (!r || !attrs ||
	    !(r->attributes = arena__alloc(a, otlp_resource_room(o, res), sizeof(pb_keyvalue *))))
		return NULL;
	n = otlp_resource_attrs(o, res, attrs);
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
 * The profiles of a process, each one sample type, as the format has it
 * since 1.8 (Pyroscope reads no other): an allocation record's objects and
 * bytes go as two profiles of the same samples.
 */
enum profile_kind { PROFILE_CPU, PROFILE_WALL, PROFILE_ALLOC_OBJECTS, PROFILE_ALLOC_SPACE, NPROFILES };

/*
 * What each is, as Pyroscope names it: samples/count with period
 * cpu/nanoseconds is its process_cpu, each sample the period times its
 * count; any other profile it names after its period type, so wall is
 * wall. The allocation profiles have Go's own sample types (what
 * runtime/pprof, Pyroscope's Go SDK and godeltaprof send) and period
 * memory/bytes, so that they are named memory, where Grafana looks for
 * memory. The SDK's memory:alloc_space:bytes:space:bytes is out of reach:
 * the period type is both the name and the type ID's fourth field, and
 * Go's own, space, would name them space.
 */
static const struct profile_shape {
	const char *type, *unit, *period_type, *period_unit;
} shapes[NPROFILES] = {
	[PROFILE_CPU] = { "samples", "count", "cpu", "nanoseconds" },
	[PROFILE_WALL] = { "wall", "nanoseconds", "wall", "nanoseconds" },
	[PROFILE_ALLOC_OBJECTS] = { "alloc_objects", "count", "memory", "bytes" },
	[PROFILE_ALLOC_SPACE] = { "alloc_space", "bytes", "memory", "bytes" },
};

static const struct vec *kind_samples(const struct resource *res, enum profile_kind kind)
{
	return kind == PROFILE_CPU ? &res->cpu : kind == PROFILE_WALL ? &res->wall : &res->alloc;
}

/*
 * The period of KIND: one CPU or wall sample's nanoseconds; for
 * allocations the bytes between two sampled ones on average, the
 * process's runtime.MemProfileRate, 1 when unknown (its records were then
 * not unbiased either, as with a rate of 1: every allocation sampled).
 */
static int64_t kind_period(const struct otlp *o, const struct resource *res, enum profile_kind kind)
{
	if (kind == PROFILE_CPU)
		return o->cpu_period_ns;
	if (kind == PROFILE_WALL)
		return o->wall_period_ns;
	return res->memprofile_rate > 1 ? res->memprofile_rate : 1;
}

/*
 * One profile of RES. The format pairs each timestamp with one value, and
 * Pyroscope takes one value a sample: CPU samples go as their timestamps
 * alone, each one sample (what backends multiply by the period), or,
 * when some came without their time, as counts alone, all of the profile
 * alike; wall samples as their nanoseconds, allocation samples as their
 * objects or their bytes: a weighted sample cannot keep its times.
 */
static pb_profile *build_profile(struct otlp *o, struct arena *a, const struct resource *res,
				 enum profile_kind kind)
{
	pb_profile *p = NEW(a, pb_profile, OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT);
	const struct profile_shape *sh = &shapes[kind];
	const struct vec *samples = kind_samples(res, kind);
	const struct sample *s = samples->items;
	bool timed = kind == PROFILE_CPU;
	size_t i;

	if (!p)
		return NULL;
	p->sample_type = value_type(o, a, sh->type, sh->unit);
	p->period_type = value_type(o, a, sh->period_type, sh->period_unit);
	p->period = kind_period(o, res, kind);
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
			ps->values = (int64_t *)(kind == PROFILE_ALLOC_SPACE ? &s[i].bytes : &s[i].value);
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
	enum profile_kind kind;

	if (!rp || !sp || !scope)
		return NULL;
	scope->name = "ctxprof-go";
	scope->version = o->version;
	sp->scope = scope;
	sp->profiles = arena__alloc(a, NPROFILES, sizeof(pb_profile *));
	rp->scope_profiles = arena__alloc(a, 1, sizeof(pb_scope_profiles *));
	rp->resource = build_resource(o, a, res);
	if (!sp->profiles || !rp->scope_profiles || !rp->resource)
		return NULL;
	/* alloc_space right after alloc_objects: otlp_split keeps the two together */
	for (kind = 0; kind < NPROFILES; kind++)
		if (kind_samples(res, kind)->n &&
		    !(sp->profiles[sp->n_profiles++] = build_profile(o, a, res, kind)))
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
					otlp_attribute_str(o, "process.executable.build_id.gnu",
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
	if (otlp_next_request(o))
		ret = ret ?: -ENOMEM;
	return ret;
}
