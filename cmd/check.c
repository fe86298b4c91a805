// SPDX-License-Identifier: GPL-2.0
/* check.c: `ctxprof-go check`, the CI gate: can ctxprof-go profile these binaries? */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <jansson.h>

#include "offsets/go_binary.h"
#include "offsets/gopclntab.h"
#include "check.h"

enum { EXIT_SUPPORTED = 0, EXIT_UNSUPPORTED = 1, EXIT_USAGE = 2 };

static const char usage[] =
	"Usage: ctxprof-go check [--json] BINARY...\n"
	"\n"
	"Tells whether ctxprof-go can read trace IDs from each Go BINARY, and what\n"
	"it will read: Go version, where the g pointer sits in TLS, the runtime\n"
	"struct offsets (from DWARF, or from the built-in table when stripped),\n"
	"whether the program sets goroutine labels at all, and where its sampled\n"
	"allocations can be probed and their sampling rate read.\n"
	"\n"
	"  -j, --json   one JSON object per binary on stdout\n"
	"  -h, --help   show this help\n"
	"\n"
	"Exit status: 0 when every binary is supported, 1 when any is not,\n"
	"2 on a usage error or a file that cannot be read.\n"
	"\n"
	"Examples:\n"
	"  ctxprof-go check ./server                  # supported or why not; allocations\n"
	"  ctxprof-go check --json ./server | jq .offsets\n"
	"  ctxprof-go check bin/* || exit 1           # fail a CI job on any unsupported\n";

/* A Go <= 1.23 map's members, each under PREFIX and the name Go gives it. */
static void hmap_json(json_t *o, const char *prefix, const struct go_hmap_layout *m)
{
	const struct {
		const char *name;
		__u32 off;
	} members[] = {
		{ "hmap.B", m->b },
		{ "hmap.flags", m->flags },
		{ "hmap.buckets", m->buckets },
		{ "hmap.oldbuckets", m->oldbuckets },
		{ "bucket.size", m->size },
		{ "bucket.tophash", m->tophash },
		{ "bucket.keys", m->keys },
		{ "bucket.values", m->values },
		{ "bucket.overflow", m->overflow },
	};
	char key[64];
	size_t i;

	for (i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		snprintf(key, sizeof(key), "%s%s", prefix, members[i].name);
		json_object_set_new(o, key, json_integer(members[i].off));
	}
}

static json_t *offsets_json(const struct go_layout *l, uint32_t md_gofunc)
{
	json_t *o = json_object();

	json_object_set_new(o, "g.m", json_integer(l->g_m));
	json_object_set_new(o, "m.curg", json_integer(l->m_curg));
	json_object_set_new(o, "g.labels", json_integer(l->g_labels));
	json_object_set_new(o, "g.goid", json_integer(l->g_goid));
	if (l->labels_layout == GO_LABELS_MAP) {
		json_object_set_new(o, "hmap.count", json_integer(l->lmap.count));
		hmap_json(o, "", &l->lmap);
	} else if (l->labels_layout == GO_LABELS_SLICE) {
		json_object_set_new(o, "labelMap.list", json_integer(l->label_list));
		json_object_set_new(o, "label.size", json_integer(l->label_size));
		json_object_set_new(o, "label.key", json_integer(l->label_key));
		json_object_set_new(o, "label.value", json_integer(l->label_value));
	}
	if (l->g_parent_goid)
		json_object_set_new(o, "g.parentGoid", json_integer(l->g_parent_goid));
	if (l->hdr.map)
		json_object_set_new(o, "http.Request.Header", json_integer(l->hdr.req_header));
	if (l->hdr.map == GO_MAP_HMAP) {
		hmap_json(o, "Header.", &l->hdr.hmap);
	} else if (l->hdr.map == GO_MAP_SWISS) {
		json_object_set_new(o, "Header.map.dirPtr", json_integer(l->hdr.sm_dir_ptr));
		json_object_set_new(o, "Header.map.dirLen", json_integer(l->hdr.sm_dir_len));
		json_object_set_new(o, "Header.table.groups", json_integer(l->hdr.st_groups));
		json_object_set_new(o, "Header.table.lengthMask", json_integer(l->hdr.st_mask));
		json_object_set_new(o, "Header.group.size", json_integer(l->hdr.sg_size));
		json_object_set_new(o, "Header.group.ctrl", json_integer(l->hdr.sg_ctrl));
		json_object_set_new(o, "Header.group.slots", json_integer(l->hdr.sg_slots));
		json_object_set_new(o, "Header.slot.size", json_integer(l->hdr.ss_size));
		json_object_set_new(o, "Header.slot.key", json_integer(l->hdr.ss_key));
		json_object_set_new(o, "Header.slot.elem", json_integer(l->hdr.ss_elem));
	}
	/* where the symbolizer finds inlining trees */
	if (md_gofunc)
		json_object_set_new(o, "moduledata.gofunc", json_integer(md_gofunc));
	return o;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *notes_json(const struct go_binary *gb, size_t n,
			  const char *(*get)(const struct go_binary *, size_t))
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_string(get(gb, i)));
	return a;
}

static const char *header_map_name(__u32 map)
{
	return map == GO_MAP_HMAP ? "hmap" : map == GO_MAP_SWISS ? "swiss" : NULL;
}

/*
 * Where ctxprof-go sees label sets made: "pprof.Do" (its set only, one hit
 * a request: the program sets labels no other way), "runtime_setProfLabel"
 * (every set, and --wall always), or none.
 */
static const char *label_probe_name(const struct go_binary *gb)
{
	if (go_binary__do_probe(gb) >= 0)
		return "pprof.Do";
	return go_binary__label_probe(gb) >= 0 ? "runtime_setProfLabel" : NULL;
}

/* "a b c" as ["a", "b", "c"] */
static json_t *words_json(const char *words)
{
	json_t *a = json_array();
	const char *p = words, *end;

	while (*p) {
		end = strchrnul(p, ' ');
		json_array_append_new(a, json_stringn(p, end - p));
		p = *end ? end + 1 : end;
	}
	return a;
}

/*
 * How the goroutines a handler starts get its request: "parentGoid" (Go
 * 1.21 and later, one level), "probe" (a probe where goroutines start,
 * any depth), "none".
 */
static const char *goroutines_how(const struct go_binary *gb)
{
	struct go_layout l;

	if (go_binary__layout(gb, &l) == 0 && l.g_parent_goid)
		return "parentGoid";
	return go_binary__spawn_probe(gb) ? "probe" : "none";
}

/* Each trace source: can this binary give trace IDs from it, and if not, why not. */
static json_t *sources_json(const struct go_binary *gb)
{
	json_t *o = json_object(), *s;
	const char *why;
	int src;

	/* OBI's traces are the threads', whatever the binary */
	for (src = 0; src < TRACE_SOURCE_OBI; src++) {
		why = go_binary__trace_source_problem(gb, src);
		s = json_pack("{s:b, s:o}", "supported", !why, "reason",
			      why ? json_string(why) : json_null());
		/* which servers' requests: "net/http", "grpc-go" */
		if (src == TRACE_SOURCE_TRACEPARENT) {
			json_object_set_new(s, "servers", words_json(go_binary__trace_servers(gb)));
			json_object_set_new(s, "goroutines", json_string(goroutines_how(gb)));
		}
		json_object_set_new(o, trace_source__name(src), s);
	}
	return o;
}

/*
 * The members of Go modules' types the grpc-go and otel-sdk sources read,
 * with the module versions the build info names (null in a GOPATH build):
 * the rows of golayout/modules.tsv.
 */
static json_t *module_members_json(const struct go_binary *gb)
{
	const struct go_module_member *m;
	json_t *a = json_array();
	size_t i, n;

	n = go_binary__module_members(gb, &m);
	for (i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:s, s:o, s:o, s:s, s:i}", "package", m[i].pkg,
						   "module", str_or_null(m[i].module[0] ? m[i].module : NULL),
						   "version",
						   str_or_null(m[i].version[0] ? m[i].version : NULL),
						   "member", m[i].member, "offset", m[i].offset));
	return a;
}

/*
 * --wall: can every goroutine be read, and if not, why not; the g members
 * it reads and how many wait reasons the binary names.
 */
static json_t *wall_json(const struct go_binary *gb)
{
	const struct go_wall_layout *w = go_binary__wall(gb);
	const char *why = go_binary__wall_problem(gb);
	size_t i;
	json_t *names, *o = json_pack("{s:b, s:o}", "supported", !why, "reason",
			      why ? json_string(why) : json_null());

	if (!w)
		return o;
	json_object_set_new(o, "offsets",
			    json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "g.atomicstatus",
				      w->off.g_status, "g.waitreason", w->off.g_waitreason, "g.sched",
				      w->off.g_sched, "gobuf.sp", w->off.gobuf_sp, "gobuf.pc",
				      w->off.gobuf_pc, "gobuf.bp", w->off.gobuf_bp, "g.syscallsp",
				      w->off.g_syscallsp, "g.syscallpc", w->off.g_syscallpc, "gobuf.lr", w->off.gobuf_lr));
	/* link-time addresses: a PIE adds its load bias */
	json_object_set_new(o, "allgs", json_integer((json_int_t)w->allgs));
	json_object_set_new(o, "allglen", json_integer((json_int_t)w->allglen));
	json_object_set_new(o, "wait_reasons", json_integer(w->nreasons));
	names = json_array();
	for (i = 0; i < w->nreasons; i++)
		json_array_append_new(names, json_string(w->reasons[i]));
	json_object_set_new(o, "wait_reason_names", names);
	json_object_set_new(o, "sources",
			    json_pack("{s:s, s:s, s:s}", "offsets", w->offsets_from, "goroutines",
				      w->goroutines_from, "wait_reasons", w->reasons_from));
	return o;
}

/*
 * --alloc: where runtime.mProf_Malloc is probed and which argument is the
 * size; where runtime.MemProfileRate is and how it was found; whether the
 * linker turned memory profiling off. Null for what is not known.
 */
static json_t *alloc_json(const struct go_binary *gb)
{
	const char *why = go_binary__alloc_problem(gb), *rate_why = go_binary__alloc_rate_problem(gb);
	struct go_alloc_probe a;

	go_binary__alloc_probe(gb, &a);
	return json_pack("{s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "supported", !why, "reason",
			 str_or_null(why), "probe_offset",
			 a.offset >= 0 ? json_integer(a.offset) : json_null(), "size_arg",
			 a.size_arg ? json_integer(a.size_arg) : json_null(), "rate_addr",
			 a.rate_addr ? json_integer((json_int_t)a.rate_addr) : json_null(),
			 "rate_source", str_or_null(go_alloc_rate_source__name(a.rate_source)),
			 "rate_reason", str_or_null(rate_why), "memprofile_disabled",
			 a.memprof_disabled < 0 ? json_null() : json_boolean(a.memprof_disabled));
}

/* What `check --json` prints for a file that could be read. */
static json_t *report_json(const struct go_binary *gb)
{
	struct go_layout l = {};
	bool ok = go_binary__supported(gb);
	json_t *o = json_object();

	if (ok)
		go_binary__layout(gb, &l);
	json_object_set_new(o, "path", json_string(go_binary__path(gb)));
	json_object_set_new(o, "supported", json_boolean(ok));
	json_object_set_new(o, "go_version", str_or_null(go_binary__version(gb)));
	json_object_set_new(o, "arch", str_or_null(go_binary__arch(gb)));
	json_object_set_new(o, "source", str_or_null(ok ? go_layout_source__name(go_binary__source(gb)) : NULL));
	json_object_set_new(o, "pie", json_boolean(go_binary__pie(gb)));
	json_object_set_new(o, "cgo", json_boolean(go_binary__cgo(gb)));
	json_object_set_new(o, "dwarf", json_boolean(go_binary__has_dwarf(gb)));
	json_object_set_new(o, "symtab", json_boolean(go_binary__has_symtab(gb)));
	/* arm64 without cgo: g is in R28, no TLS slot */
	json_object_set_new(o, "tls_g_offset",
			    ok && go_binary__tls_source(gb) != GO_TLS_REGISTER ?
				    json_integer((int64_t)l.tls_g_offset) :
				    json_null());
	json_object_set_new(o, "tls_source", str_or_null(ok ? go_tls_source__name(go_binary__tls_source(gb)) : NULL));
	json_object_set_new(o, "labels_layout", str_or_null(ok ? go_labels_layout__name(l.labels_layout) : NULL));
	json_object_set_new(o, "offsets", ok ? offsets_json(&l, go_binary__md_gofunc(gb)) : json_null());
	json_object_set_new(o, "sets_labels", json_boolean(go_binary__sets_labels(gb)));
	json_object_set_new(o, "label_probe", str_or_null(label_probe_name(gb)));
	json_object_set_new(o, "header_map", str_or_null(ok ? header_map_name(l.hdr.map) : NULL));
	json_object_set_new(o, "trace_sources", sources_json(gb));
	json_object_set_new(o, "module_members", module_members_json(gb));
	json_object_set_new(o, "wall", wall_json(gb));
	json_object_set_new(o, "alloc", alloc_json(gb));
	json_object_set_new(o, "inlining", json_boolean(go_binary__pclntab(gb) &&
							 gopclntab__has_inlining(go_binary__pclntab(gb))));
	json_object_set_new(o, "problems", notes_json(gb, go_binary__nproblems(gb), go_binary__problem));
	json_object_set_new(o, "warnings", notes_json(gb, go_binary__nwarnings(gb), go_binary__warning));
	return o;
}

/* For a file that could not be read: same shape, so one jq filter serves every line. */
static json_t *io_error_json(const char *path, const char *err)
{
	json_t *o = json_pack("{s:s, s:b, s:n, s:n, s:n, s:b, s:b, s:b, s:b, s:n, s:n, s:n, s:n, s:b, s:n, s:n}",
			      "path", path, "supported", 0, "go_version", "arch", "source", "pie",
			      0, "cgo", 0, "dwarf", 0, "symtab", 0, "tls_g_offset", "tls_source",
			      "labels_layout", "offsets", "sets_labels", 0, "header_map",
			      "trace_sources");

	json_object_set_new(o, "label_probe", json_null());
	json_object_set_new(o, "module_members", json_array());
	json_object_set_new(o, "wall", json_pack("{s:b, s:s}", "supported", 0, "reason", err));
	json_object_set_new(o, "alloc",
			    json_pack("{s:b, s:s, s:n, s:n, s:n, s:n, s:s, s:n}", "supported", 0,
				      "reason", err, "probe_offset", "size_arg", "rate_addr",
				      "rate_source", "rate_reason", err, "memprofile_disabled"));
	json_object_set_new(o, "problems", json_pack("[s]", err));
	json_object_set_new(o, "warnings", json_array());
	return o;
}

static void print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);

	if (s)
		puts(s);
	free(s);
	json_decref(o);
}

/*
 * The trace sources that will give this binary's samples a trace ID, as
 * the user will see them: which servers' requests the traceparent source
 * follows, and how far (Go before 1.21 has no g.parentGoid: only the
 * handler's own goroutine, not those it starts).
 */
static void print_sources(const struct go_binary *gb, const struct go_layout *l)
{
	const char *servers = go_binary__trace_servers(gb), *p, *how;
	int src, n = 0;

	printf(", trace IDs from ");
	for (src = 0; src < TRACE_SOURCE_OBI; src++) {
		if (go_binary__trace_source_problem(gb, src))
			continue;
		printf("%s%s", n++ ? ", " : "", trace_source__name(src));
		if (src != TRACE_SOURCE_TRACEPARENT || !servers || !*servers)
			continue;
		printf(" (");
		for (p = servers; *p; p++)
			printf(*p == ' ' ? " and " : "%c", *p);
		if (l->g_parent_goid)
			how = ", and the goroutines a handler starts";
		else if (go_binary__spawn_probe(gb))
			how = ", and the goroutines they start, at any depth: a probe where "
			      "goroutines start";
		else
			how = ", in the handler's own goroutine only: no g.parentGoid, and no "
			      "goroutine-start probe site";
		printf(" requests%s)", how);
	}
	if (!n)
		printf("none: %s", go_binary__trace_source_problem(gb, TRACE_SOURCE_LABEL));
}

/*
 * The second line of a supported binary: where --alloc probes, which
 * argument is the size, where the sampling rate is read and from what,
 * and whether the linker turned memory profiling off.
 */
static void print_alloc(const struct go_binary *gb)
{
	const char *why = go_binary__alloc_problem(gb);
	struct go_alloc_probe a;

	printf("%s: allocations: ", go_binary__path(gb));
	go_binary__alloc_probe(gb, &a);
	if (why) {
		printf("no: %s\n", why);
		return;
	}
	printf("runtime.mProf_Malloc at file offset 0x%lx, size in argument %u; ", a.offset,
	       a.size_arg);
	if (a.rate_addr)
		printf("runtime.MemProfileRate at 0x%llx (from %s)", (unsigned long long)a.rate_addr,
		       go_alloc_rate_source__name(a.rate_source));
	else
		printf("runtime.MemProfileRate unknown: %s", go_binary__alloc_rate_problem(gb));
	if (a.memprof_disabled == 1)
		printf("; memory profiling: off (the linker disabled it: nothing in the program "
		       "reads memory profiles)");
	else if (a.memprof_disabled == 0)
		printf("; memory profiling: on, unless the program sets runtime.MemProfileRate to 0");
	putchar('\n');
}

static void print_human(const struct go_binary *gb)
{
	const struct go_wall_layout *w;
	struct go_layout l;
	char where[48];
	size_t i, n;

	if (!go_binary__supported(gb)) {
		printf("%s: unsupported:", go_binary__path(gb));
		n = go_binary__nproblems(gb);
		for (i = 0; i < n; i++)
			printf("%s %s", i ? ";" : "", go_binary__problem(gb, i));
		if (!n)
			printf(" incomplete layout");
		putchar('\n');
		return;
	}
	go_binary__layout(gb, &l);
	if (go_binary__tls_source(gb) == GO_TLS_REGISTER)
		snprintf(where, sizeof(where), "in R28");
	else
		snprintf(where, sizeof(where), "at %s%+lld", go_binary__thread_pointer(gb),
			 (long long)l.tls_g_offset);
	printf("%s: supported: %s %s, offsets from %s, labels %s, g %s, pie=%s cgo=%s",
	       go_binary__path(gb), go_binary__version(gb), go_binary__arch(gb),
	       go_layout_source__name(go_binary__source(gb)),
	       go_labels_layout__name(l.labels_layout) ?: "unknown", where,
	       go_binary__pie(gb) ? "yes" : "no", go_binary__cgo(gb) ? "yes" : "no");
	w = go_binary__wall(gb);
	if (w && (strcmp(w->offsets_from, "dwarf") || strcmp(w->goroutines_from, "symtab")))
		printf(", --wall yes (g members from %s, goroutine list from %s, wait reasons "
		       "from %s)",
		       w->offsets_from, w->goroutines_from, w->reasons_from);
	else
		printf(", --wall %s%s", w ? "yes" : "no: ", go_binary__wall_problem(gb) ?: "");
	print_sources(gb, &l);
	n = go_binary__nwarnings(gb);
	for (i = 0; i < n; i++)
		printf("; warning: %s", go_binary__warning(gb, i));
	putchar('\n');
	print_alloc(gb);
}

int check__main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, i, status = EXIT_SUPPORTED;
	bool json = false;
	struct go_binary *gb;
	char err[256];

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_SUPPORTED;
		default:
			/* getopt said which option */
			fprintf(stderr, "Try 'ctxprof-go check --help'.\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "check: no binary given\nTry 'ctxprof-go check --help'.\n");
		return EXIT_USAGE;
	}
	for (i = optind; i < argc; i++) {
		gb = go_binary__open(argv[i], err, sizeof(err));
		if (!gb) {
			fprintf(stderr, "%s: %s\n", argv[i], err);
			if (json)
				print_json(io_error_json(argv[i], err));
			status = EXIT_USAGE;
			continue;
		}
		if (json)
			print_json(report_json(gb));
		else
			print_human(gb);
		if (!go_binary__supported(gb) && status == EXIT_SUPPORTED)
			status = EXIT_UNSUPPORTED;
		go_binary__close(gb);
	}
	fflush(stdout);
	return status;
}
