// SPDX-License-Identifier: GPL-2.0
/* test_otlp.c: records in, an OTLP profiles request out, read back with protobuf-c: tables, shapes, links, attributes, budget, halves. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/output/otlp.h"
#include "cmd/output/otlp_split.h"
#include "cmd/output/otlp_pb.h"
#include "tap.h"

#define TRACE_A "4bf92f3577b34da6a3ce929d0e0e4736"
#define SPAN_A "00f067aa0ba902b7"
#define TRACE_B "0af7651916cd43dd8448eb211c80319c"
#define SPAN_B "1234567890abcdef" /* Datadog's "span id" 1311768467294899695 */
#define PERIOD 10101010
#define WALL_PERIOD 52631578
#define RATE 65536 /* runtime.MemProfileRate of the known processes */
#define T0 1764072000000000000LL /* 2025-11-25T12:00:00Z */

/* main.leaf inlined into main.caller at one address, called by main.root */
static const struct rec_frame frames_a[] = {
	{ .func = "main.leaf", .file = "/src/main.go", .line = 12, .addr = 0x401000, .pc = 0x401000, .inlined = true },
	{ .func = "main.caller", .file = "/src/main.go", .line = 20, .addr = 0x401000, .pc = 0x401000 },
	{ .func = "main.root", .file = "/src/main.go", .line = 30, .addr = 0x401fff, .pc = 0x402000 },
};
/* a frame nothing names */
static const struct rec_frame frames_b[] = {
	{ .addr = 0x7f0000001000, .pc = 0x7f0000001000 },
	{ .func = "main.root", .file = "/src/main.go", .line = 30, .addr = 0x401fff, .pc = 0x402000 },
};

static const struct rec_mapping maps[] = {
	{ 0x400000, 0x500000, 0, "/usr/bin/shop", "a5f47288fbb17df6cde1c0b65b8683cae61419ec" },
};

#define L(k, v) { (const uint8_t *)(k), (const uint8_t *)(v), sizeof(k) - 1, sizeof(v) - 1 }

static bool process(void *ctx, uint32_t pid, struct otlp_process *out)
{
	if (pid < 4242 || pid > 4249)
		return false;
	out->exe_path = "/usr/bin/shop";
	out->go_version = "go1.24.4";
	out->memprofile_rate = RATE;
	return true;
}

static const char *str(const pb_dictionary *d, int32_t i)
{
	return i >= 0 && (size_t)i < d->n_string_table ? d->string_table[i] : "(out of range)";
}

/* The resource attribute KEY as a string ("" when absent, its int printed for ints). */
static const char *res_attr(const pb_resource *r, const char *key)
{
	static char buf[64];
	size_t i;

	for (i = 0; i < r->n_attributes; i++) {
		if (strcmp(r->attributes[i]->key, key))
			continue;
		if (r->attributes[i]->value->value_case ==
		    OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE) {
			snprintf(buf, sizeof(buf), "%lld", (long long)r->attributes[i]->value->int_value);
			return buf;
		}
		return r->attributes[i]->value->string_value;
	}
	return "";
}

/* How many of R's attributes are named KEY. */
static int res_count(const pb_resource *r, const char *key)
{
	size_t i;
	int n = 0;

	for (i = 0; i < r->n_attributes; i++)
		n += !strcmp(r->attributes[i]->key, key);
	return n;
}

/* The sample attribute KEY of S, or "". */
static const char *sample_attr(const pb_dictionary *d, const pb_sample *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n_attribute_indices; i++) {
		const Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit *kv =
			d->attribute_table[s->attribute_indices[i]];

		if (!strcmp(str(d, kv->key_strindex), key))
			return kv->value->string_value;
	}
	return "";
}

/* "k=v k=v" of a sample's attributes, in their order. */
static const char *attrs_text(const pb_dictionary *d, const pb_sample *s)
{
	static char buf[1024];
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < s->n_attribute_indices && n < sizeof(buf); i++) {
		const Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit *kv =
			d->attribute_table[s->attribute_indices[i]];

		n += snprintf(buf + n, sizeof(buf) - n, "%s%s=%s", i ? " " : "",
			      str(d, kv->key_strindex), kv->value->string_value);
	}
	return buf;
}

/* "func:line func:line | func:line" of a sample's stack: locations split by |, lines innermost first. */
static const char *stack_text(const pb_dictionary *d, const pb_sample *s)
{
	static char buf[512];
	size_t i, j, n = 0;

	buf[0] = '\0';
	for (i = 0; i < d->stack_table[s->stack_index]->n_location_indices; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Location *l =
			d->location_table[d->stack_table[s->stack_index]->location_indices[i]];

		n += snprintf(buf + n, sizeof(buf) - n, "%s", i ? " | " : "");
		for (j = 0; j < l->n_lines; j++)
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s:%lld", j ? " " : "",
				      str(d, d->function_table[l->lines[j]->function_index]->name_strindex),
				      (long long)l->lines[j]->line);
	}
	return buf;
}

static const char *hex(const ProtobufCBinaryData *b)
{
	static char buf[64];
	size_t i;

	for (i = 0; i < b->len && 2 * i + 2 < sizeof(buf); i++)
		snprintf(buf + 2 * i, 3, "%02x", b->data[i]);
	buf[2 * i] = '\0';
	return buf;
}

/* N records through O, read back; NULL after a failed check. */
static pb_request *encode(struct otlp *o, const struct rec *recs, size_t n)
{
	struct otlp_batch what;
	pb_request *req;
	uint8_t *buf;
	size_t len, i;
	int ret = 0;

	for (i = 0; i < n && !ret; i++)
		ret = otlp__add(o, &recs[i]);
	if (!check_int("the records are taken", 0, ret) ||
	    !check_int("otlp__take", 0, otlp__take(o, &buf, &len, &what)))
		return NULL;
	req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	free(buf);
	check(req != NULL, "protobuf-c reads the request back", "a request", "NULL");
	return req;
}

static void request_free(pb_request *req)
{
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
		req, NULL);
}

/* Resource profiles I's profile whose sample type is TYPE, or NULL. */
static const pb_profile *profile(const pb_request *req, size_t i, const char *type)
{
	const Opentelemetry__Proto__Profiles__V1development__ScopeProfiles *sp;
	size_t j;

	if (i >= req->n_resource_profiles)
		return NULL;
	sp = req->resource_profiles[i]->scope_profiles[0];
	for (j = 0; j < sp->n_profiles; j++)
		if (!strcmp(str(req->dictionary, sp->profiles[j]->sample_type->type_strindex), type))
			return sp->profiles[j];
	return NULL;
}

/* Whether any sample attribute of the request holds NEEDLE in its key or value. */
static bool any_attr_holds(const pb_dictionary *d, const pb_profile *p, const char *needle)
{
	size_t i, j;

	for (i = 0; p && i < p->n_samples; i++) {
		for (j = 0; j < p->samples[i]->n_attribute_indices; j++) {
			const Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit *kv =
				d->attribute_table[p->samples[i]->attribute_indices[j]];

			if (strcasestr(kv->value->string_value, needle) ||
			    !strcmp(str(d, kv->key_strindex), needle))
				return true;
		}
	}
	return false;
}

/* Tables, resources, the CPU and wall shapes, links. */
static void test_request(void)
{
	struct rec_label labels_a[] = {
		L("otel.traceid", TRACE_A),
		L("route", "/pay"),
		L("route", "\xff" "ok"), /* a duplicate key: the JSON object keeps the last */
		L("span_id", SPAN_A),
	};
	static const struct rec_time times_a[] = { { T0 + 10, 1, 1 }, { T0 + 20, 1, 1 }, { T0 + 30, 1, 1 } };
	struct rec_stack stacks_a[] = { { 3, 3, frames_a, 3, times_a }, { 2, 2, frames_b } };
	struct rec_stack stacks_wall[] = { { 5, 3, frames_a, 3, times_a } };
	struct rec recs[4] = {
		{ .trace_id = TRACE_A, .trace_source = "label", .span_id = SPAN_A, .labels = labels_a,
		  .nlabels = 4, .pid = 4242, .service_name = "checkout", .comm = (const uint8_t *)"shop", .comm_len = 4,
		  .container_id = "f00dcafe00000000000000000000000000000000000000000000000000000000",
		  .origin = REC_SAMPLING, .samples = 5, .cpu_ns = 5LL * PERIOD, .wall_ns = -1,
		  .start_ns = T0, .end_ns = T0 + 2000000000LL, .stacks = stacks_a, .nstacks = 2,
		  .mappings = maps, .nmappings = 1 },
		/* every sample with its time */
		{ .pid = 7, .comm = (const uint8_t *)"other", .comm_len = 5, .origin = REC_SAMPLING,
		  .samples = 3, .cpu_ns = 3LL * PERIOD, .start_ns = T0, .end_ns = T0 + 30,
		  .stacks = stacks_a, .nstacks = 1, .mappings = maps, .nmappings = 1 },
		{ .trace_id = TRACE_B, .trace_source = "traceparent", .pid = 4242, .service_name = "checkout",
		  .comm = (const uint8_t *)"shop", .comm_len = 4, .origin = REC_WALL, .samples = 5,
		  .cpu_ns = -1, .wall_ns = 5LL * WALL_PERIOD, .state = "waiting",
		  .wait_reason = "chan receive", .start_ns = T0 + 100, .end_ns = T0 + 3000000000LL,
		  .stacks = stacks_wall, .nstacks = 1, .mappings = maps, .nmappings = 1 },
		{ .pid = 4242, .service_name = "checkout", .comm = (const uint8_t *)"shop", .comm_len = 4, .origin = REC_UPROBE,
		  .samples = 1, .cpu_ns = -1, .stacks = stacks_a, .nstacks = 1 },
	};
	static const char *const ids[] = { "otel.traceid", "span_id" };
	struct otlp *o = otlp__new("v-test", PERIOD, WALL_PERIOD);
	struct otlp_batch what;
	const pb_profile *cpu, *wall, *other;
	const pb_dictionary *d;
	const pb_resource *res;
	pb_request *req;
	uint8_t *buf;
	size_t len, i;

	if (!check(o != NULL, "otlp__new", "an encoder", "NULL"))
		return;
	otlp__set_processes(o, process, NULL);
	check_int("agent-wide attribute", 0, otlp__set_attribute(o, "host.name", "node-7"));
	check_int("ID keys", 0, otlp__set_id_keys(o, ids, 2));
	for (i = 0; i < 4; i++)
		check_int(desc("otlp__add record %zu", i), 0, otlp__add(o, &recs[i]));
	check_int("otlp__take", 0, otlp__take(o, &buf, &len, &what));
	check_int("the request counts the CPU and wall records, not the event", 3, what.records);
	check_int("and their samples", 13, what.samples);
	check_int("and the processes", 2, what.resources);
	req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	free(buf);
	if (!check(req != NULL, "protobuf-c reads the request back", "a request", "NULL"))
		goto out;
	d = req->dictionary;
	check(d != NULL, "the request carries a ProfilesDictionary", "one", "none");
	check_str("string_table[0]", "", str(d, 0));
	check_int("mapping_table[0] is empty", 0, d->mapping_table[0]->memory_limit);
	check_int("location_table[0] is empty", 0, d->location_table[0]->n_lines);
	check_int("function_table[0] is empty", 0, d->function_table[0]->name_strindex);
	check_str("link_table[0]'s trace ID: 16 zero bytes, as the format advises",
		  "00000000000000000000000000000000", hex(&d->link_table[0]->trace_id));
	check_str("link_table[0]'s span ID: 8 zero bytes", "0000000000000000",
		  hex(&d->link_table[0]->span_id));
	check_int("stack_table[0] is empty", 0, d->stack_table[0]->n_location_indices);
	check_int("attribute_table[0] is empty", 0, d->attribute_table[0]->key_strindex);
	check_int("mappings: one per process and start", 1 + 2, d->n_mapping_table);
	check_int("locations: 0x401000 (two lines), 0x401fff, 0x7f0000001000, per process", 1 + 3 + 2,
		  d->n_location_table);
	check_int("links: none, TRACE_A/SPAN_A, TRACE_B", 3, d->n_link_table);
	check_int("one ResourceProfiles per process", 2, req->n_resource_profiles);

	res = req->resource_profiles[0]->resource;
	check_str("service.name as the records name it", "checkout", res_attr(res, "service.name"));
	check_str("process.pid", "4242", res_attr(res, "process.pid"));
	check_str("process.executable.name", "shop", res_attr(res, "process.executable.name"));
	check_str("process.executable.path", "/usr/bin/shop", res_attr(res, "process.executable.path"));
	check_str("process.runtime.name", "go", res_attr(res, "process.runtime.name"));
	check_str("process.runtime.version", "go1.24.4", res_attr(res, "process.runtime.version"));
	check_str("process.executable.build_id.gnu, of the executable's mapping",
		  "a5f47288fbb17df6cde1c0b65b8683cae61419ec",
		  res_attr(res, "process.executable.build_id.gnu"));
	check_str("container.id", recs[0].container_id, res_attr(res, "container.id"));
	check_str("host.name, agent-wide", "node-7", res_attr(res, "host.name"));
	res = req->resource_profiles[1]->resource;
	check_str("an unknown process is named by its comm", "other", res_attr(res, "service.name"));
	check_str("an unknown process has no runtime version", "", res_attr(res, "process.runtime.version"));
	check_str("the agent-wide attribute is on every resource", "node-7", res_attr(res, "host.name"));
	check_str("scope name", "ctxprof-go", req->resource_profiles[0]->scope_profiles[0]->scope->name);
	check_str("scope version", "v-test", req->resource_profiles[0]->scope_profiles[0]->scope->version);

	cpu = profile(req, 0, "samples");
	wall = profile(req, 0, "wall");
	other = profile(req, 1, "samples");
	if (!check(cpu && wall && other, "pid 4242 has a CPU and a wall profile, pid 7 a CPU one",
		   "all three", "not all"))
		goto out;
	/* what Pyroscope files as process_cpu: it multiplies each sample by the period */
	check_str("CPU sample type", "samples", str(d, cpu->sample_type->type_strindex));
	check_str("CPU sample unit", "count", str(d, cpu->sample_type->unit_strindex));
	check_str("CPU period type", "cpu", str(d, cpu->period_type->type_strindex));
	check_str("CPU period unit", "nanoseconds", str(d, cpu->period_type->unit_strindex));
	check_int("CPU period: the sampling period in ns", PERIOD, cpu->period);
	check_str("wall sample type", "wall", str(d, wall->sample_type->type_strindex));
	check_str("wall sample unit", "nanoseconds", str(d, wall->sample_type->unit_strindex));
	check_str("wall period type", "wall", str(d, wall->period_type->type_strindex));
	check_int("wall period", WALL_PERIOD, wall->period);
	check_int("cpu profile time", T0, cpu->time_unix_nano);
	check_int("cpu profile duration: the process's records, both origins, end included",
		  3000000001LL, cpu->duration_nano);
	check_int("cpu samples: one per stack", 2, cpu->n_samples);
	/* a stack without its times: the profile's samples go as counts, all alike */
	check_int("a profile with an untimed sample: the first stack is a count", 1, cpu->samples[0]->n_values);
	check_int("of 3 samples", 3, cpu->samples[0]->n_values ? cpu->samples[0]->values[0] : -1);
	check_int("the second stack: 2 samples", 2, cpu->samples[1]->n_values ? cpu->samples[1]->values[0] : -1);
	check_int("and no timestamps beside counts (the format pairs them one to one)", 0,
		  cpu->samples[0]->n_timestamps_unix_nano + cpu->samples[1]->n_timestamps_unix_nano);
	check_int("every sample timed: timestamps alone, no values", 0, other->samples[0]->n_values);
	check_int("one a sample", 3, other->samples[0]->n_timestamps_unix_nano);
	check_int("as they were", T0 + 20,
		  other->samples[0]->n_timestamps_unix_nano ? other->samples[0]->timestamps_unix_nano[1] : 0);
	check_str("an inlined call is a second line of one location, innermost first",
		  "main.leaf:12 main.caller:20 | main.root:30", stack_text(d, cpu->samples[0]));
	check_str("a frame nothing names keeps its PC as its name",
		  "0x7f0000001000:0 | main.root:30", stack_text(d, cpu->samples[1]));
	check_str("the link's trace ID", TRACE_A, hex(&d->link_table[cpu->samples[0]->link_index]->trace_id));
	check_str("the link's span ID", SPAN_A, hex(&d->link_table[cpu->samples[0]->link_index]->span_id));
	check_int("both stacks of a record share its link", cpu->samples[0]->link_index,
		  cpu->samples[1]->link_index);
	check_str("attributes: trace_source and route, the last of a duplicate key winning; no ID label",
		  "trace_source=label route=\xef\xbf\xbdok", attrs_text(d, cpu->samples[0]));
	check_int("an untraced sample has no link", 0, other->samples[0]->link_index);
	check_int("the same frames in two processes are two stacks", 1,
		  other->samples[0]->stack_index != cpu->samples[0]->stack_index);
	check_int("wall samples", 1, wall->n_samples);
	check_int("wall: one value", 1, wall->samples[0]->n_values);
	check_int("samples x the wall period", 5LL * WALL_PERIOD,
		  wall->samples[0]->n_values ? wall->samples[0]->values[0] : -1);
	check_int("wall: no timestamps (one value a sample, as Pyroscope reads it)", 0,
		  wall->samples[0]->n_timestamps_unix_nano);
	check_str("wall state", "waiting", sample_attr(d, wall->samples[0], "state"));
	check_str("wall wait_reason", "chan receive", sample_attr(d, wall->samples[0], "wait_reason"));
	check_str("a wall sample's link", TRACE_B, hex(&d->link_table[wall->samples[0]->link_index]->trace_id));
	check_str("a link without a span ID has the zero span, 8 bytes", "0000000000000000",
		  hex(&d->link_table[wall->samples[0]->link_index]->span_id));
	check_int("the same frames in one process are one stack", cpu->samples[0]->stack_index,
		  wall->samples[0]->stack_index);
out:
	if (req)
		request_free(req);
	check_int("a take with nothing added", 0, otlp__take(o, &buf, &len, &what));
	check(buf == NULL && what.records == 0, "gives no request", "NULL, 0 records",
	      buf ? "a request" : "records counted");
	free(buf);
	otlp__free(o);
}

/* IDs under every convention stay in the link; records that differ by them alone are one sample. */
static void test_ids(void)
{
	static const struct rec_time t1[] = { { T0 + 1, 1, 1 } }, t2[] = { { T0 + 2, 1, 1 } },
				     t3[] = { { T0 + 3, 1, 1 } };
	struct rec_stack s1[] = { { 1, 3, frames_a, 1, t1 } }, s2[] = { { 1, 3, frames_a, 1, t2 } },
			 s3[] = { { 1, 3, frames_a, 1, t3 } };
	struct rec_label dd1[] = { L("trace id", TRACE_B), L("span id", "1311768467294899695"),
				   L("local root span id", "7"), L("route", "/dd") };
	struct rec_label dd2[] = { L("trace id", TRACE_B), L("span id", "1311768467294899695"),
				   L("local root span id", "8"), L("route", "/dd") };
	/* an unknown key whose value holds the IDs; a --trace-key key; a label to slice by */
	struct rec_label other[] = { L("tp", "00-0AF7651916CD43DD8448EB211C80319C-1234567890ABCDEF-01"),
				     L("req_trace", "ffffffffffffffffffffffffffffffff"),
				     L("tenant", "acme") };
	struct rec base = { .trace_id = TRACE_B, .trace_source = "label", .span_id = SPAN_B,
			    .pid = 4243, .service_name = "checkout", .comm = (const uint8_t *)"shop", .comm_len = 4,
			    .origin = REC_SAMPLING, .samples = 1, .cpu_ns = PERIOD, .start_ns = T0,
			    .end_ns = T0 + 3, .nstacks = 1, .mappings = maps, .nmappings = 1 };
	static const char *const ids[] = { "otel.traceid", "otel_traceid", "trace_id", "trace id",
					   "span_id", "otel.spanid", "span id", "local root span id",
					   "req_trace" };
	struct rec recs[3] = { base, base, base };
	struct otlp *o = otlp__new("v-test", PERIOD, 0);
	const pb_profile *cpu;
	pb_request *req;
	const pb_sample *dd = NULL, *mixed = NULL;
	size_t i;

	recs[0].labels = dd1, recs[0].nlabels = 4, recs[0].stacks = s1;
	recs[1].labels = dd2, recs[1].nlabels = 4, recs[1].stacks = s2;
	recs[2].labels = other, recs[2].nlabels = 3, recs[2].stacks = s3;
	otlp__set_processes(o, process, NULL);
	check_int("ID keys", 0, otlp__set_id_keys(o, ids, sizeof(ids) / sizeof(ids[0])));
	req = encode(o, recs, 3);
	cpu = req ? profile(req, 0, "samples") : NULL;
	if (!check(cpu != NULL, "a CPU profile", "one", "none"))
		goto out;
	for (i = 0; i < cpu->n_samples; i++) {
		if (!strcmp(sample_attr(req->dictionary, cpu->samples[i], "route"), "/dd"))
			dd = cpu->samples[i];
		if (!strcmp(sample_attr(req->dictionary, cpu->samples[i], "tenant"), "acme"))
			mixed = cpu->samples[i];
	}
	check_int("two samples: Datadog's two records are one", 2, cpu->n_samples);
	if (!check(dd && mixed, "the /dd and tenant samples", "both", "not both"))
		goto out;
	check_str("Datadog's labels: route alone stays", "trace_source=label route=/dd",
		  attrs_text(req->dictionary, dd));
	check_int("the merged sample has both records' times", 2, dd->n_timestamps_unix_nano);
	check_str("a label holding the IDs under another key, a --trace-key label: tenant alone stays",
		  "trace_source=label tenant=acme", attrs_text(req->dictionary, mixed));
	check_str("the span travels in the link", SPAN_B,
		  hex(&req->dictionary->link_table[dd->link_index]->span_id));
	check(!any_attr_holds(req->dictionary, cpu, TRACE_B) &&
		      !any_attr_holds(req->dictionary, cpu, "1311768467294899695") &&
		      !any_attr_holds(req->dictionary, cpu, "local root span id"),
	      "no attribute holds the trace ID, the span ID or the local root's", "none", "one does");
out:
	if (req)
		request_free(req);
	otlp__free(o);
}

/*
 * The budget: a process in a pod, with five OTEL_RESOURCE_ATTRIBUTES, and
 * 16 goroutine labels; a label named like a resource attribute; an agent
 * attribute whose key the process's own fills.
 */
static void test_budget(void)
{
	static const struct rec_time t[] = { { T0 + 1, 1, 1 }, { T0 + 2, 1, 1 } };
	struct rec_stack st[] = { { 2, 3, frames_a, 2, t } }, wst[] = { { 1, 3, frames_a } };
	/* the executable as the container's root names it */
	static const struct rec_mapping cmaps[] = {
		{ 0x400000, 0x500000, 0, "/bin/shop", "a5f47288fbb17df6cde1c0b65b8683cae61419ec" },
	};
	struct rec_label labels[18] = { L("otel.traceid", TRACE_A), L("host.name", "spoof") };
	char keys[16][4], vals[16][4];
	static const char *const ids[] = { "otel.traceid" };
	static const char *const env[][2] = { { "k8s.namespace.name", "shop" },
					      { "k8s.pod.name", "checkout-7d9" },
					      { "k8s.container.name", "app" },
					      { "k8s.node.name", "node-7" },
					      { "k8s.deployment.name", "checkout" } };
	struct rec r = { .trace_id = TRACE_A, .trace_source = "label", .labels = labels,
			 .nlabels = 18, .pid = 4244, .service_name = "checkout", .comm = (const uint8_t *)"shop", .comm_len = 4,
			 .container_id = "f00dcafe00000000000000000000000000000000000000000000000000000000",
			 .pod_uid = "7c1e7f5a-2b8c-4c51-9f42-0e6a1b2c3d4e", .ns_pid = 1,
			 .origin = REC_SAMPLING, .samples = 2, .cpu_ns = 2LL * PERIOD,
			 .start_ns = T0, .end_ns = T0 + 2, .stacks = st, .nstacks = 1,
			 .mappings = cmaps, .nmappings = 1 };
	struct rec recs[2] = { r, r };
	struct otlp *o = otlp__new("v-test", PERIOD, WALL_PERIOD);
	const pb_profile *cpu, *wall;
	const pb_resource *res;
	struct otlp_stats stats;
	pb_request *req;
	size_t i;

	for (i = 0; i < 16; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%02zu", i);
		snprintf(vals[i], sizeof(vals[i]), "v%zu", i);
		/* from the last: the encoder sorts them by key */
		labels[17 - i] = (struct rec_label){ (const uint8_t *)keys[i], (const uint8_t *)vals[i],
						     3, strlen(vals[i]) };
	}
	recs[1].origin = REC_WALL;
	recs[1].samples = 1;
	recs[1].cpu_ns = -1;
	recs[1].wall_ns = WALL_PERIOD;
	recs[1].state = "waiting";
	recs[1].wait_reason = "select";
	recs[1].stacks = wst;
	otlp__set_processes(o, process, NULL);
	otlp__set_id_keys(o, ids, 1);
	otlp__set_attribute(o, "host.name", "node-7");
	otlp__set_attribute(o, "service.name", "the-agent");
	for (i = 0; i < 5; i++)
		otlp__set_attribute(o, env[i][0], env[i][1]);
	req = encode(o, recs, 2);
	cpu = req ? profile(req, 0, "samples") : NULL;
	wall = req ? profile(req, 0, "wall") : NULL;
	if (!check(cpu && wall && cpu->n_samples == 1 && wall->n_samples == 1,
		   "one CPU and one wall sample", "both", "not so"))
		goto out;
	res = req->resource_profiles[0]->resource;
	check_int("resource: the process's 10 and the agent's 6 (service.name is the process's)", 16,
		  res->n_attributes);
	check_str("the build ID, of a mapping named from the container's root", cmaps[0].build_id,
		  res_attr(res, "process.executable.build_id.gnu"));
	check_int("service.name once", 1, res_count(res, "service.name"));
	check_str("the process's own", "checkout", res_attr(res, "service.name"));
	check_str("CPU: trace_source and the first 6 labels by key",
		  "trace_source=label k00=v0 k01=v1 k02=v2 k03=v3 k04=v4 k05=v5",
		  attrs_text(req->dictionary, cpu->samples[0]));
	check_int("CPU: resource and sample attributes within the budget", 1,
		  res->n_attributes + cpu->samples[0]->n_attribute_indices <= OTLP_MAX_ATTRIBUTES);
	check_int("wall: the budget met exactly (trace_source, state, wait_reason, 6 labels)",
		  OTLP_MAX_ATTRIBUTES, res->n_attributes + wall->samples[0]->n_attribute_indices);
	check_str("wall: the same labels as CPU", "v5", sample_attr(req->dictionary, wall->samples[0], "k05"));
	check_str("a label named like a resource attribute is not sent", "",
		  sample_attr(req->dictionary, cpu->samples[0], "host.name"));
	otlp__stats(o, &stats);
	check_int("left out: k06 to k15 and host.name", 11, stats.left_out_keys);
	check_int("in the CPU and the wall samples", 3, stats.left_out_samples);
	check_str("named, first the shadowed one", "host.name", stats.left_out_names[0] ?: "NULL");
	check_str("then the first past the budget", "k06", stats.left_out_names[1] ?: "NULL");
out:
	if (req)
		request_free(req);
	otlp__free(o);
}

/* --otlp-labels: only the listed labels, in its order of preference within the budget. */
static void test_allow_list(void)
{
	static const struct rec_time t[] = { { T0 + 1, 1, 1 } };
	struct rec_stack st[] = { { 1, 3, frames_a, 1, t } };
	struct rec_label labels[] = { L("k00", "a"), L("k01", "b"), L("k09", "c"), L("route", "/x"),
				      L("tenant", "acme") };
	static const char *const allow[] = { "k09", "route", "k01" };
	struct rec r = { .labels = labels, .nlabels = 5, .pid = 9, .comm = (const uint8_t *)"bin",
			 .comm_len = 3, .origin = REC_SAMPLING, .samples = 1, .cpu_ns = PERIOD,
			 .start_ns = T0, .end_ns = T0 + 1, .stacks = st, .nstacks = 1 };
	struct otlp *o = otlp__new("v-test", PERIOD, 0);
	struct otlp_stats stats;
	const pb_profile *cpu;
	pb_request *req;
	char key[16];
	size_t i;

	/* an unknown process has 4 attributes: with 16 of the agent's, 2 labels are left */
	for (i = 0; i < 16; i++) {
		snprintf(key, sizeof(key), "a.%02zu", i);
		otlp__set_attribute(o, key, "x");
	}
	check_int("the allow-list", 0, otlp__set_labels(o, allow, 3));
	req = encode(o, &r, 1);
	cpu = req ? profile(req, 0, "samples") : NULL;
	if (!check(cpu && cpu->n_samples == 1, "one sample", "one", "not one"))
		goto out;
	check_int("20 resource attributes", 20, req->resource_profiles[0]->resource->n_attributes);
	check_str("the first two of the list, none outside it", "k09=c route=/x",
		  attrs_text(req->dictionary, cpu->samples[0]));
	otlp__stats(o, &stats);
	check_int("k01, listed, is left out and counted", 1, stats.left_out_keys);
	check_str("by name", "k01", stats.left_out_names[0] ?: "NULL");
	check_int("its sample counted once; tenant and k00, not listed, are no part of it", 1,
		  stats.left_out_samples);
	request_free(req);
	otlp__free(o);

	/* --otlp-labels '': none */
	o = otlp__new("v-test", PERIOD, 0);
	check_int("an empty allow-list", 0, otlp__set_labels(o, NULL, 0));
	req = encode(o, &r, 1);
	cpu = req ? profile(req, 0, "samples") : NULL;
	if (check(cpu && cpu->n_samples == 1, "one sample", "one", "not one"))
		check_int("no attribute at all", 0, cpu->samples[0]->n_attribute_indices);
	otlp__stats(o, &stats);
	check_int("and nothing counted as left out", 0, stats.left_out_samples);
out:
	if (req)
		request_free(req);
	otlp__free(o);
}

/* COUNT sampled allocations of SIZE bytes at RATE into ST, unbiased as runtime/pprof does. */
static void unbiased(struct rec_stack *st, uint64_t count, int64_t size)
{
	double scale = 1 / (1 - exp(-(double)size / RATE));

	st->samples = count;
	st->alloc_objects = (int64_t)((double)count * scale);
	st->alloc_bytes = (int64_t)((double)count * (double)size * scale);
}

/* The samples of each part BUF is cut down to, one unit each, into W (at most MAX); their number. */
static size_t part_samples(const uint8_t *buf, size_t len, uint64_t samples, uint64_t *w, size_t max)
{
	struct otlp_part half[2];
	size_t n = 0;
	int i;

	if (!max)
		return 0;
	if (otlp_split(buf, len, samples, half)) {
		w[0] = samples;
		return 1;
	}
	for (i = 0; i < 2; i++) {
		n += part_samples(half[i].buf, half[i].len, half[i].samples, w + n, max - n);
		free(half[i].buf);
	}
	return n;
}

/* Allocation records: two profiles of the same samples, Go's sample types, the rate as the period. */
static void test_alloc(void)
{
	struct rec_label labels[] = { L("otel.traceid", TRACE_A), L("route", "/pay") };
	static const struct rec_time times[] = { { T0 + 10, 1, 1 }, { T0 + 20, 1, 1 }, { T0 + 30, 1, 1 } };
	struct rec_stack traced[] = { { 0, 3, frames_a, 3, times }, { 0, 2, frames_b, 2, times } };
	struct rec_stack untraced[] = { { 0, 2, frames_b, 1, times } };
	/* a process of unknown rate: its records were left unscaled */
	struct rec_stack raw[] = { { 1, 2, frames_b, 1, times, 1, 2048 } };
	struct rec_stack cpu_stacks[] = { { 2, 3, frames_a, 2, times } };
	struct rec base = { .pid = 4244, .service_name = "checkout", .comm = (const uint8_t *)"shop",
			    .comm_len = 4, .origin = REC_ALLOC, .cpu_ns = -1, .start_ns = T0,
			    .end_ns = T0 + 30, .nstacks = 1, .mappings = maps, .nmappings = 1 };
	struct rec recs[4] = { base, base, base, base };
	static const char *const ids[] = { "otel.traceid" };
	struct otlp *o = otlp__new("v-test", PERIOD, 0);
	const pb_profile *objs, *space, *cpu;
	const pb_scope_profiles *sp;
	struct otlp_batch what;
	uint64_t w[16], want_w[] = { 2, 3, 2, 1, 1 };
	const pb_dictionary *d;
	pb_request *req = NULL;
	uint8_t *buf;
	size_t len, nw, i;
	bool same;

	unbiased(&traced[0], 3, 64);
	unbiased(&traced[1], 2, 65536);
	unbiased(&untraced[0], 1, 2048);
	recs[0].trace_id = TRACE_A, recs[0].trace_source = "label", recs[0].span_id = SPAN_A;
	recs[0].labels = labels, recs[0].nlabels = 2, recs[0].stacks = traced, recs[0].nstacks = 2;
	recs[0].samples = 5;
	recs[1].stacks = untraced, recs[1].samples = 1;
	recs[2] = recs[0], recs[2].origin = REC_SAMPLING, recs[2].stacks = cpu_stacks;
	recs[2].nstacks = 1, recs[2].samples = 2, recs[2].cpu_ns = 2LL * PERIOD;
	recs[3].pid = 7, recs[3].comm = (const uint8_t *)"other", recs[3].comm_len = 5;
	recs[3].stacks = raw, recs[3].samples = 1;
	otlp__set_processes(o, process, NULL);
	check_int("ID keys", 0, otlp__set_id_keys(o, ids, 1));
	for (i = 0; i < 4; i++)
		check_int(desc("otlp__add record %zu", i), 0, otlp__add(o, &recs[i]));
	check_int("otlp__take", 0, otlp__take(o, &buf, &len, &what));
	check_int("the request counts the sampled allocations as samples, with the CPU's", 5 + 1 + 2 + 1,
		  what.samples);
	nw = part_samples(buf, len, what.samples, w, 16);
	req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	free(buf);
	if (!check(req != NULL, "protobuf-c reads the request back", "a request", "NULL"))
		goto out;
	d = req->dictionary;
	sp = req->resource_profiles[0]->scope_profiles[0];
	objs = profile(req, 0, "alloc_objects");
	space = profile(req, 0, "alloc_space");
	cpu = profile(req, 0, "samples");
	if (!check(objs && space && cpu && sp->n_profiles == 3,
		   "pid 4244: a CPU profile and two allocation profiles", "3", "not so"))
		goto out;
	check(sp->profiles[1] == objs && sp->profiles[2] == space,
	      "alloc_space right after alloc_objects", "CPU, objects, space", "another order");
	check_str("objects: sample type", "alloc_objects/count",
		  desc("%s/%s", str(d, objs->sample_type->type_strindex), str(d, objs->sample_type->unit_strindex)));
	check_str("space: sample type", "alloc_space/bytes",
		  desc("%s/%s", str(d, space->sample_type->type_strindex), str(d, space->sample_type->unit_strindex)));
	check_str("both: period type memory/bytes, what Pyroscope names them after", "memory/bytes memory/bytes",
		  desc("%s/%s %s/%s", str(d, objs->period_type->type_strindex),
		       str(d, objs->period_type->unit_strindex), str(d, space->period_type->type_strindex),
		       str(d, space->period_type->unit_strindex)));
	check_int("objects: period, the process's rate", RATE, objs->period);
	check_int("space: period, the process's rate", RATE, space->period);
	check_int("samples: the traced record's two stacks and the untraced one's", 3, objs->n_samples);
	check_int("the same samples in both", objs->n_samples, space->n_samples);
	for (i = 0, same = true; i < objs->n_samples && i < space->n_samples; i++)
		same &= objs->samples[i]->stack_index == space->samples[i]->stack_index &&
			objs->samples[i]->link_index == space->samples[i]->link_index &&
			objs->samples[i]->n_values == 1 && space->samples[i]->n_values == 1 &&
			!objs->samples[i]->n_timestamps_unix_nano && !space->samples[i]->n_timestamps_unix_nano;
	check(same, "sample for sample: stack and link alike, one value, no timestamps", "alike", "not");
	check_int("a stack's objects, unbiased", traced[0].alloc_objects, objs->samples[0]->values[0]);
	check_int("its bytes, unbiased", traced[0].alloc_bytes, space->samples[0]->values[0]);
	check_int("the second stack's bytes", traced[1].alloc_bytes, space->samples[1]->values[0]);
	check_str("the link's trace ID", TRACE_A, hex(&d->link_table[objs->samples[0]->link_index]->trace_id));
	check_str("the link's span ID", SPAN_A, hex(&d->link_table[objs->samples[0]->link_index]->span_id));
	check_str("attributes as the CPU sample's of the same record", attrs_text(d, cpu->samples[0]),
		  attrs_text(d, space->samples[0]));
	check_int("the untraced record's sample has no link", 0, space->samples[2]->link_index);
	check_int("the same stack with another link is another sample", 1,
		  space->samples[2]->stack_index == space->samples[1]->stack_index);
	check_int("the CPU profile keeps its times", 2, cpu->samples[0]->n_timestamps_unix_nano);
	objs = profile(req, 1, "alloc_objects");
	check_int("a process of unknown rate: period 1, as its records were left unscaled", 1,
		  objs ? objs->period : -1);
	/*
	 * each part one CPU sample, or one allocation sample with its twin,
	 * in order: its samples, the sampled allocations behind it (the last
	 * part takes what the others leave, so the others must be exact)
	 */
	for (i = 0, same = nw == 5; same && i < nw; i++)
		same = w[i] == want_w[i];
	check(same, "cut down to single samples, each half counts its sampled allocations",
	      "5 parts: 2 3 2 1 1", desc("%zu parts: %llu %llu %llu %llu %llu", nw,
					(unsigned long long)w[0], (unsigned long long)w[1],
					(unsigned long long)w[2], (unsigned long long)w[3],
					(unsigned long long)w[4]));
out:
	if (req)
		request_free(req);
	otlp__free(o);
}

/* One line a sample of REQ: process, profile type, stack, attributes, link, values or times. */
static size_t describe(const pb_request *req, char **lines, size_t max)
{
	const pb_dictionary *d = req->dictionary;
	size_t i, j, p, s, t, n = 0;

	for (i = 0; i < req->n_resource_profiles; i++) {
		const Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp =
			req->resource_profiles[i];

		for (j = 0; j < rp->n_scope_profiles; j++) {
			for (p = 0; p < rp->scope_profiles[j]->n_profiles; p++) {
				const pb_profile *pr = rp->scope_profiles[j]->profiles[p];

				for (s = 0; s < pr->n_samples && n < max; s++) {
					const pb_sample *x = pr->samples[s];
					char buf[2048];
					int len;

					len = snprintf(buf, sizeof(buf), "%s %s/%s %s [%s] %s %s:",
						       res_attr(rp->resource, "process.pid"),
						       str(d, pr->sample_type->type_strindex),
						       str(d, pr->period_type->type_strindex), stack_text(d, x),
						       attrs_text(d, x), hex(&d->link_table[x->link_index]->trace_id),
						       str(d, d->mapping_table[d->location_table[d->stack_table[x->stack_index]->location_indices[0]]->mapping_index]->filename_strindex));
					for (t = 0; t < x->n_values; t++)
						len += snprintf(buf + len, sizeof(buf) - len, " v%lld",
								(long long)x->values[t]);
					for (t = 0; t < x->n_timestamps_unix_nano; t++)
						len += snprintf(buf + len, sizeof(buf) - len, " t%llu",
								(unsigned long long)x->timestamps_unix_nano[t]);
					lines[n++] = strdup(buf);
				}
			}
		}
	}
	return n;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* BUF cut in halves down to single samples; their lines added to LINES, their samples to *SAMPLES. */
static size_t split_down(const uint8_t *buf, size_t len, uint64_t samples, char **lines, size_t max,
			 uint64_t *total, size_t *parts, bool *smaller)
{
	struct otlp_part half[2];
	pb_request *req;
	size_t n = 0;
	int ret, i;

	ret = otlp_split(buf, len, samples, half);
	if (ret == -E2BIG) {
		req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
			NULL, len, buf);
		if (!req)
			return 0;
		n = describe(req, lines, max);
		request_free(req);
		*total += samples;
		(*parts)++;
		return n;
	}
	if (!check_int("otlp_split of a request of two samples or more", 0, ret))
		return 0;
	for (i = 0; i < 2; i++) {
		*smaller &= half[i].len < len;
		n += split_down(half[i].buf, half[i].len, half[i].samples, lines + n, max - n, total,
				parts, smaller);
		free(half[i].buf);
	}
	return n;
}

/* Halves hold every sample once, with the same stack, attributes, link and counts. */
static void test_split(void)
{
	struct rec_label labels[] = { L("otel.traceid", TRACE_A), L("route", "/pay") };
	static const struct rec_time times[] = { { T0 + 10, 1, 1 }, { T0 + 20, 2, 1 }, { T0 + 30, 1, 1 } };
	struct rec_stack stacks[] = { { 4, 3, frames_a, 3, times }, { 2, 2, frames_b } };
	struct rec_stack stacks_wall[] = { { 5, 3, frames_a, 3, times }, { 1, 2, frames_b } };
	struct rec_stack stacks_alloc[] = { { 3, 3, frames_a, 3, times }, { 2, 2, frames_b } };
	struct rec recs[] = {
		{ .trace_id = TRACE_A, .trace_source = "label", .labels = labels, .nlabels = 2, .pid = 4242, .service_name = "checkout",
		  .comm = (const uint8_t *)"shop", .comm_len = 4, .origin = REC_SAMPLING, .samples = 6,
		  .cpu_ns = 6LL * PERIOD, .wall_ns = -1, .start_ns = T0, .end_ns = T0 + 30, .stacks = stacks,
		  .nstacks = 2, .mappings = maps, .nmappings = 1 },
		{ .trace_id = TRACE_B, .trace_source = "traceparent", .pid = 4243, .service_name = "checkout",
		  .comm = (const uint8_t *)"cart", .comm_len = 4, .origin = REC_SAMPLING, .samples = 4,
		  .cpu_ns = 4LL * PERIOD, .wall_ns = -1, .start_ns = T0, .end_ns = T0 + 30,
		  .stacks = stacks, .nstacks = 1, .mappings = maps, .nmappings = 1 },
		{ .pid = 7, .comm = (const uint8_t *)"other", .comm_len = 5, .origin = REC_SAMPLING,
		  .samples = 2, .cpu_ns = 2LL * PERIOD, .start_ns = T0, .end_ns = T0 + 30,
		  .stacks = stacks + 1, .nstacks = 1, .mappings = maps, .nmappings = 1 },
		{ .trace_id = TRACE_B, .pid = 4243, .service_name = "checkout", .comm = (const uint8_t *)"cart", .comm_len = 4,
		  .origin = REC_WALL, .samples = 6, .cpu_ns = -1, .wall_ns = 6LL * WALL_PERIOD,
		  .state = "waiting", .wait_reason = "chan receive", .start_ns = T0, .end_ns = T0 + 30,
		  .stacks = stacks_wall, .nstacks = 2, .mappings = maps, .nmappings = 1 },
		{ .trace_id = TRACE_A, .trace_source = "label", .labels = labels, .nlabels = 2, .pid = 4242,
		  .service_name = "checkout", .comm = (const uint8_t *)"shop", .comm_len = 4, .origin = REC_ALLOC,
		  .samples = 5, .cpu_ns = -1, .start_ns = T0, .end_ns = T0 + 30, .stacks = stacks_alloc,
		  .nstacks = 2, .mappings = maps, .nmappings = 1 },
	};
	struct otlp *o = otlp__new("v-test", PERIOD, WALL_PERIOD);
	char *want[64], *got[64];
	struct otlp_batch what;
	struct otlp_part half[2];
	size_t len, nwant, ngot, parts = 0, twins = 0, i;
	uint64_t total = 0;
	bool smaller = true, same = true;
	pb_request *req;
	uint8_t *buf;

	unbiased(&stacks_alloc[0], 3, 64);
	unbiased(&stacks_alloc[1], 2, 65536);
	otlp__set_processes(o, process, NULL);
	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
		otlp__add(o, &recs[i]);
	if (!check_int("otlp__take", 0, otlp__take(o, &buf, &len, &what)))
		return;
	req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	nwant = describe(req, want, 64);
	request_free(req);
	ngot = split_down(buf, len, what.samples, got, 64, &total, &parts, &smaller);
	for (i = 0; i < nwant; i++)
		twins += strstr(want[i], " alloc_space/") != NULL;
	check_int("halves down to one sample each, an alloc_space sample with its alloc_objects twin",
		  nwant - twins, parts);
	check_int("the halves' samples add up to the request's", what.samples, total);
	check(smaller, "every half is smaller than what it was cut from", "smaller", "not smaller");
	qsort(want, nwant, sizeof(*want), cmp_lines);
	qsort(got, ngot, sizeof(*got), cmp_lines);
	same = nwant == ngot;
	for (i = 0; same && i < nwant; i++)
		same = !strcmp(want[i], got[i]);
	check(same, "each sample keeps its process, type, stack, attributes, link and counts",
	      nwant ? want[0] : "", ngot ? got[0] : "");
	for (i = 0; i < nwant; i++)
		free(want[i]);
	for (i = 0; i < ngot; i++)
		free(got[i]);
	check_int("bytes that are not a request", -EINVAL,
		  otlp_split((const uint8_t *)"\xff\xff\xff", 3, 1, half));
	buf[len / 2] ^= 0xff;
	check(otlp_split(buf, len, what.samples, half) < 0 || (free(half[0].buf), free(half[1].buf), true),
	      "a damaged request is refused or cut, never read past", "no crash", "crash");
	free(buf);
	otlp__free(o);
}

int main(void)
{
	test_request();
	test_ids();
	test_budget();
	test_allow_list();
	test_alloc();
	test_split();
	return tap_done();
}
