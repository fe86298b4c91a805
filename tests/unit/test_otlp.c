// SPDX-License-Identifier: GPL-2.0
/* test_otlp.c: records in, an OTLP profiles request out, read back with protobuf-c: tables, links, stacks, resources. */
#include <stdlib.h>
#include <string.h>

#include "cmd/output/otlp.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"
#include "tap.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Resource__V1__Resource pb_resource;

#define TRACE_A "4bf92f3577b34da6a3ce929d0e0e4736"
#define SPAN_A "00f067aa0ba902b7"
#define TRACE_B "0af7651916cd43dd8448eb211c80319c"
#define PERIOD 10101010
#define WALL_PERIOD 52631578
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

static const uint8_t key_trace[] = "otel.traceid", key_route[] = "route", val_route[] = "/pay";
static const uint8_t val_bad[] = "\xff" "ok";

static bool process(void *ctx, uint32_t pid, struct otlp_process *out)
{
	if (pid != 4242)
		return false;
	out->service_name = "checkout";
	out->exe_path = "/usr/bin/shop";
	out->go_version = "go1.24.4";
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

int main(void)
{
	struct rec_label labels_a[] = {
		{ key_trace, (const uint8_t *)TRACE_A, 12, 32 },
		{ key_route, val_route, 5, 4 },
		{ key_route, val_bad, 5, 3 }, /* a duplicate key: the JSON object keeps the last */
	};
	static const int64_t times_a[] = { T0 + 10, T0 + 20, T0 + 30 };
	struct rec_stack stacks_a[] = { { 3, 3, frames_a, 3, times_a }, { 2, 2, frames_b } };
	struct rec_stack stacks_wall[] = { { 5, 3, frames_a } };
	struct rec recs[4] = {
		{ .trace_id = TRACE_A, .trace_source = "label", .span_id = SPAN_A, .labels = labels_a,
		  .nlabels = 3, .pid = 4242, .comm = (const uint8_t *)"shop", .comm_len = 4,
		  .container_id = "f00dcafe00000000000000000000000000000000000000000000000000000000",
		  .origin = REC_SAMPLING, .samples = 5, .cpu_ns = 5LL * PERIOD, .wall_ns = -1,
		  .start_ns = T0, .end_ns = T0 + 2000000000LL, .stacks = stacks_a, .nstacks = 2,
		  .mappings = maps, .nmappings = 1 },
		{ .pid = 7, .comm = (const uint8_t *)"other", .comm_len = 5, .origin = REC_SAMPLING,
		  .samples = 3, .cpu_ns = 3LL * PERIOD, .start_ns = T0, .end_ns = T0 + 1000,
		  .stacks = stacks_a, .nstacks = 1, .mappings = maps, .nmappings = 1 },
		{ .trace_id = TRACE_B, .trace_source = "traceparent", .pid = 4242,
		  .comm = (const uint8_t *)"shop", .comm_len = 4, .origin = REC_WALL, .samples = 5,
		  .cpu_ns = -1, .wall_ns = 5LL * WALL_PERIOD, .state = "waiting",
		  .wait_reason = "chan receive", .start_ns = T0 + 100, .end_ns = T0 + 3000000000LL,
		  .stacks = stacks_wall, .nstacks = 1, .mappings = maps, .nmappings = 1 },
		{ .pid = 4242, .comm = (const uint8_t *)"shop", .comm_len = 4, .origin = REC_UPROBE,
		  .samples = 1, .cpu_ns = -1, .stacks = stacks_a, .nstacks = 1 },
	};
	struct otlp *o = otlp__new("v-test", PERIOD, WALL_PERIOD);
	struct otlp_batch what;
	pb_request *req;
	const pb_dictionary *d;
	const pb_resource *res;
	const pb_profile *cpu = NULL, *wall = NULL, *other = NULL;
	uint8_t *buf;
	size_t len, i;
	int ret;

	if (!check(o != NULL, "otlp__new", "an encoder", "NULL"))
		return tap_done();
	otlp__set_processes(o, process, NULL);
	check_int("agent-wide attribute", 0, otlp__set_attribute(o, "host.name", "node-7"));
	for (i = 0; i < 4; i++)
		check_int(desc("otlp__add record %zu", i), 0, otlp__add(o, &recs[i]));
	ret = otlp__take(o, &buf, &len, &what);
	check_int("otlp__take", 0, ret);
	check_int("the request counts the CPU and wall records, not the event", 3, what.records);
	check_int("and their samples", 13, what.samples);
	check_int("and the processes", 2, what.resources);
	req = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(
		NULL, len, buf);
	if (!check(req != NULL, "protobuf-c reads the request back", "a request", "NULL"))
		return tap_done();
	d = req->dictionary;
	check(d != NULL, "the request carries a ProfilesDictionary", "one", "none");
	check_str("string_table[0]", "", str(d, 0));
	check_int("mapping_table[0] is empty", 0, d->mapping_table[0]->memory_limit);
	check_int("location_table[0] is empty", 0, d->location_table[0]->n_lines);
	check_int("function_table[0] is empty", 0, d->function_table[0]->name_strindex);
	check_int("link_table[0] is empty", 0, d->link_table[0]->trace_id.len);
	check_int("stack_table[0] is empty", 0, d->stack_table[0]->n_location_indices);
	check_int("attribute_table[0] is empty", 0, d->attribute_table[0]->key_strindex);
	check_int("mappings: one per process and start", 1 + 2, d->n_mapping_table);
	check_int("locations: 0x401000 (two lines), 0x401fff, 0x7f0000001000, per process", 1 + 3 + 2,
		  d->n_location_table);
	check_int("links: none, TRACE_A/SPAN_A, TRACE_B", 3, d->n_link_table);
	check_int("one ResourceProfiles per process", 2, req->n_resource_profiles);

	res = req->resource_profiles[0]->resource;
	check_str("service.name from the process", "checkout", res_attr(res, "service.name"));
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

	for (i = 0; i < req->resource_profiles[0]->scope_profiles[0]->n_profiles; i++) {
		const pb_profile *p = req->resource_profiles[0]->scope_profiles[0]->profiles[i];

		if (!strcmp(str(d, p->sample_type->type_strindex), "cpu"))
			cpu = p;
		if (!strcmp(str(d, p->sample_type->type_strindex), "wall"))
			wall = p;
	}
	other = req->resource_profiles[1]->scope_profiles[0]->profiles[0];
	if (!check(cpu && wall, "pid 4242 has a cpu and a wall profile", "both", "not both"))
		return tap_done();
	check_str("cpu sample unit", "nanoseconds", str(d, cpu->sample_type->unit_strindex));
	check_int("cpu period", PERIOD, cpu->period);
	check_int("wall period", WALL_PERIOD, wall->period);
	check_int("cpu profile time", T0, cpu->time_unix_nano);
	check_int("cpu profile duration: the process's records, both origins", 3000000000LL,
		  cpu->duration_nano);
	check_int("cpu samples: one per stack", 2, cpu->n_samples);
	check_int("value of the first stack: 3 samples", 3LL * PERIOD, cpu->samples[0]->values[0]);
	check_int("value of the second stack: 2 samples", 2LL * PERIOD, cpu->samples[1]->values[0]);
	check_int("a stack's sample times travel with it", 3, cpu->samples[0]->n_timestamps_unix_nano);
	check_int("as they were", T0 + 20, cpu->n_samples ? cpu->samples[0]->timestamps_unix_nano[1] : 0);
	check_int("a stack without them has none", 0, cpu->samples[1]->n_timestamps_unix_nano);
	check_str("an inlined call is a second line of one location, innermost first",
		  "main.leaf:12 main.caller:20 | main.root:30", stack_text(d, cpu->samples[0]));
	check_str("a frame nothing names keeps its PC as its name",
		  "0x7f0000001000:0 | main.root:30", stack_text(d, cpu->samples[1]));
	check_str("the link's trace ID", TRACE_A, hex(&d->link_table[cpu->samples[0]->link_index]->trace_id));
	check_str("the link's span ID", SPAN_A, hex(&d->link_table[cpu->samples[0]->link_index]->span_id));
	check_int("both stacks of a record share its link", cpu->samples[0]->link_index,
		  cpu->samples[1]->link_index);
	check_str("attribute trace_source", "label", sample_attr(d, cpu->samples[0], "trace_source"));
	check_str("a goroutine label is an attribute, and the last of a duplicate key wins",
		  "\xef\xbf\xbdok", sample_attr(d, cpu->samples[0], "route"));
	check_str("the trace label itself", TRACE_A, sample_attr(d, cpu->samples[0], "otel.traceid"));
	check_int("an untraced sample has no link", 0, other->samples[0]->link_index);
	check_int("the same frames in two processes are two stacks", 1,
		  other->samples[0]->stack_index != cpu->samples[0]->stack_index);
	check_int("wall samples", 1, wall->n_samples);
	check_int("wall value: samples x the wall period", 5LL * WALL_PERIOD, wall->samples[0]->values[0]);
	check_str("wall state", "waiting", sample_attr(d, wall->samples[0], "state"));
	check_str("wall wait_reason", "chan receive", sample_attr(d, wall->samples[0], "wait_reason"));
	check_str("a wall sample's link", TRACE_B, hex(&d->link_table[wall->samples[0]->link_index]->trace_id));
	check_int("a link without a span ID has 8 zero bytes", 8,
		  d->link_table[wall->samples[0]->link_index]->span_id.len);
	check_int("the same frames in one process are one stack", cpu->samples[0]->stack_index,
		  wall->samples[0]->stack_index);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__free_unpacked(
		req, NULL);
	free(buf);

	ret = otlp__take(o, &buf, &len, &what);
	check_int("a take with nothing added", 0, ret);
	check(buf == NULL && what.records == 0, "gives no request", "NULL, 0 records",
	      buf ? "a request" : "records counted");
	free(buf);
	otlp__free(o);
	return tap_done();
}
