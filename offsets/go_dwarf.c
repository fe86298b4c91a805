// SPDX-License-Identifier: GPL-2.0
/* go_dwarf.c: runtime struct offsets and the labels layout, read from a Go binary's DWARF. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <elfutils/libdw.h>
#include <dwarf.h>

#include "debug_info.h"
#include "go_dwarf.h"
#include "util.h"

/* Levels of embedded structs between labelMap and its slice (two seen: LabelSet, Set). */
#define MAX_EMBED_DEPTH 4
/* Typedef chains are one or two long in Go's DWARF. */
#define MAX_TYPEDEFS 8

enum wanted {
	W_G,
	W_M,
	W_LABELMAP,
	W_MODULEDATA,
	W_WORK,
	W_REQUEST,
	W_META_HEADERS,
	W_HEADERS_FRAME,
	W_HEADER_FIELD,
	W_GRPC_STREAM,
	W_SPAN_CONTEXT,
	W_RECORDING_SPAN,
	W_COUNT
};

static const char *const wanted_names[W_COUNT] = {
	[W_G] = "runtime.g",
	[W_M] = "runtime.m",
	[W_LABELMAP] = "runtime/pprof.labelMap",
	[W_MODULEDATA] = "runtime.moduledata",
	[W_WORK] = "runtime.workType",
	[W_REQUEST] = "net/http.Request",
	[W_META_HEADERS] = "golang.org/x/net/http2.MetaHeadersFrame",
	[W_HEADERS_FRAME] = "golang.org/x/net/http2.HeadersFrame",
	[W_HEADER_FIELD] = "golang.org/x/net/http2/hpack.HeaderField",
	[W_GRPC_STREAM] = "google.golang.org/grpc/internal/transport.Stream",
	[W_SPAN_CONTEXT] = "go.opentelemetry.io/otel/trace.SpanContext",
	[W_RECORDING_SPAN] = "go.opentelemetry.io/otel/sdk/trace.recordingSpan",
};

#define W_GRPC_FIRST W_META_HEADERS
#define W_GRPC_LAST W_GRPC_STREAM

#define fail(ret, err, errlen, ...) (set_err(err, errlen, __VA_ARGS__), (ret))

static int attr_udata(Dwarf_Die *die, unsigned int name, Dwarf_Word *val)
{
	Dwarf_Attribute attr;

	return dwarf_formudata(dwarf_attr(die, name, &attr), val);
}

static int attr_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute attr;

	return dwarf_formref_die(dwarf_attr(die, DW_AT_type, &attr), type) ? 0 : -1;
}

/* Follows typedefs to the type they name. */
static int strip_typedefs(Dwarf_Die *die)
{
	int i;

	for (i = 0; i < MAX_TYPEDEFS && dwarf_tag(die) == DW_TAG_typedef; i++) {
		if (attr_type(die, die) != 0)
			return -1;
	}
	return dwarf_tag(die) == DW_TAG_typedef ? -1 : 0;
}

/* Offset of member NAME of struct ST, and optionally its type. */
static int member(Dwarf_Die *st, const char *name, __u32 *off, Dwarf_Die *type)
{
	Dwarf_Die child;
	Dwarf_Word loc;
	const char *mname;

	if (dwarf_child(st, &child) != 0)
		return -ENOENT;
	do {
		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		mname = dwarf_diename(&child);
		if (!mname || strcmp(mname, name) != 0)
			continue;
		if (attr_udata(&child, DW_AT_data_member_location, &loc) != 0 || loc > UINT32_MAX)
			return -EINVAL;
		*off = loc;
		if (type && (attr_type(&child, type) != 0 || strip_typedefs(type) != 0))
			return -EINVAL;
		return 0;
	} while (dwarf_siblingof(&child, &child) == 0);
	return -ENOENT;
}

static int first_member(Dwarf_Die *st, __u32 *off, Dwarf_Die *type)
{
	Dwarf_Die child;
	Dwarf_Word loc;

	if (dwarf_child(st, &child) != 0)
		return -ENOENT;
	do {
		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		if (attr_udata(&child, DW_AT_data_member_location, &loc) != 0 || loc > UINT32_MAX)
			return -EINVAL;
		*off = loc;
		if (attr_type(&child, type) != 0 || strip_typedefs(type) != 0)
			return -EINVAL;
		return 0;
	} while (dwarf_siblingof(&child, &child) == 0);
	return -ENOENT;
}

/* Pointed-to type of pointer type PTR, typedefs stripped. */
static int pointee(Dwarf_Die *ptr, Dwarf_Die *out)
{
	if (dwarf_tag(ptr) != DW_TAG_pointer_type || attr_type(ptr, out) != 0)
		return -EINVAL;
	return strip_typedefs(out);
}

static int byte_size(Dwarf_Die *die, __u32 *size)
{
	Dwarf_Word v;

	if (attr_udata(die, DW_AT_byte_size, &v) != 0 || v > UINT32_MAX)
		return -EINVAL;
	*size = v;
	return 0;
}

#define NEED(expr, what)                                                                    \
	do {                                                                                \
		if ((expr) != 0)                                                            \
			return fail(-ENOENT, err, errlen, "DWARF: %s not found%s%s", what,  \
				    dwarf_errno() ? ": " : "",                              \
				    dwarf_errno() ? dwarf_errmsg(-1) : "");                  \
	} while (0)

/* NEED, for a member of the map OF names */
#define NEED_OF(expr, what, of)                                                             \
	do {                                                                                \
		if ((expr) != 0)                                                            \
			return fail(-ENOENT, err, errlen, "DWARF: %s%s not found%s%s", what, \
				    of, dwarf_errno() ? ": " : "",                          \
				    dwarf_errno() ? dwarf_errmsg(-1) : "");                  \
	} while (0)

/*
 * A Go <= 1.23 map behind HMAP, a hash<string,V>, into M: its header and
 * its bucket type. OF names the map in errors.
 */
static int read_hmap(Dwarf_Die *hmap, struct go_hmap_layout *m, const char *of, char *err,
		     size_t errlen)
{
	Dwarf_Die buckets, bucket;

	NEED_OF(member(hmap, "count", &m->count, NULL), "hmap.count", of);
	NEED_OF(member(hmap, "B", &m->b, NULL), "hmap.B", of);
	NEED_OF(member(hmap, "flags", &m->flags, NULL), "hmap.flags", of);
	NEED_OF(member(hmap, "buckets", &m->buckets, &buckets), "hmap.buckets", of);
	NEED_OF(member(hmap, "oldbuckets", &m->oldbuckets, NULL), "hmap.oldbuckets", of);
	NEED_OF(pointee(&buckets, &bucket), "bucket type of hmap.buckets", of);
	NEED_OF(member(&bucket, "tophash", &m->tophash, NULL), "bucket.tophash", of);
	NEED_OF(member(&bucket, "keys", &m->keys, NULL), "bucket.keys", of);
	NEED_OF(member(&bucket, "values", &m->values, NULL), "bucket.values", of);
	NEED_OF(member(&bucket, "overflow", &m->overflow, NULL), "bucket.overflow", of);
	NEED_OF(byte_size(&bucket, &m->size), "bucket byte size", of);
	return 0;
}

/* map[string]string: labelMap -> *hash<string,string> whose buckets are bucket<string,string>. */
static int read_map_layout(Dwarf_Die *hash_ptr, struct go_layout *l, char *err, size_t errlen)
{
	Dwarf_Die hmap;
	int ret;

	NEED(pointee(hash_ptr, &hmap), "map header type behind runtime/pprof.labelMap");
	ret = read_hmap(&hmap, &l->lmap, "", err, errlen);
	if (ret)
		return ret;
	l->labels_layout = GO_LABELS_MAP;
	return 0;
}

/* struct labelMap { [embedded structs...] list []label }, label being {key, value string}. */
static int read_slice_layout(Dwarf_Die *st, struct go_layout *l, char *err, size_t errlen)
{
	Dwarf_Die cur = *st, next, array, elem;
	__u32 off = 0, moff, lenoff;
	int depth;

	for (depth = 0; depth < MAX_EMBED_DEPTH; depth++) {
		if (dwarf_tag(&cur) != DW_TAG_structure_type)
			break;
		if (member(&cur, "array", &moff, &array) == 0 &&
		    member(&cur, "len", &lenoff, NULL) == 0) {
			/* the BPF side reads a slice header as {array, len} */
			if (moff != 0 || lenoff != 8)
				return fail(-EINVAL, err, errlen,
					    "DWARF: labels slice header is not {array, len}");
			l->label_list = off;
			NEED(pointee(&array, &elem), "element type of the labels slice");
			/* unexported before Go 1.26 moved the type to internal/runtime/pprof/label */
			NEED(member(&elem, "key", &l->label_key, NULL) &&
				     member(&elem, "Key", &l->label_key, NULL),
			     "label.key");
			NEED(member(&elem, "value", &l->label_value, NULL) &&
				     member(&elem, "Value", &l->label_value, NULL),
			     "label.value");
			NEED(byte_size(&elem, &l->label_size), "label byte size");
			/* a binary that never makes a label keeps only the type's name */
			if (!l->label_size)
				return -ENODATA;
			l->labels_layout = GO_LABELS_SLICE;
			return 0;
		}
		NEED(first_member(&cur, &moff, &next), "first member of the labels struct");
		off += moff;
		cur = next;
	}
	return fail(-ENOENT, err, errlen,
		    "DWARF: runtime/pprof.labelMap is neither a map nor a struct holding a slice");
}

/* The element type of array type ARR, typedefs stripped. */
static int array_elem(Dwarf_Die *arr, Dwarf_Die *out)
{
	if (dwarf_tag(arr) != DW_TAG_array_type || attr_type(arr, out) != 0)
		return -EINVAL;
	return strip_typedefs(out);
}

/* Go <= 1.23: map[string][]string is *hash<string,[]string>, whose buckets hold 8 slots. */
static int read_header_hmap(Dwarf_Die *hmap, struct go_header_layout *h, char *err, size_t errlen)
{
	int ret = read_hmap(hmap, &h->hmap, " of net/http.Header", err, errlen);

	if (ret)
		return ret;
	/* no walk reads it, and the per-version table keeps none for stripped binaries */
	h->hmap.count = 0;
	h->map = GO_MAP_HMAP;
	return 0;
}

/*
 * Go >= 1.24: a swiss map, *maps.Map: dirPtr is one group while dirLen is
 * 0, else an array of *table, each with groupsReference {data, lengthMask};
 * a group is a control word and 8 slots of {key, elem}.
 */
static int read_header_swiss(Dwarf_Die *m, struct go_header_layout *h, char *err, size_t errlen)
{
	Dwarf_Die dir, tabp, tab, groups, data, group, slots, slot;
	__u32 goff, doff, moff;

	NEED(member(m, "dirPtr", &h->sm_dir_ptr, &dir), "maps.Map.dirPtr of net/http.Header");
	NEED(member(m, "dirLen", &h->sm_dir_len, NULL), "maps.Map.dirLen of net/http.Header");
	NEED(pointee(&dir, &tabp) || pointee(&tabp, &tab), "table type of net/http.Header");
	NEED(member(&tab, "groups", &goff, &groups), "table.groups of net/http.Header");
	NEED(member(&groups, "data", &doff, &data), "groupsReference.data of net/http.Header");
	NEED(member(&groups, "lengthMask", &moff, NULL),
	     "groupsReference.lengthMask of net/http.Header");
	h->st_groups = goff + doff;
	h->st_mask = goff + moff;
	NEED(pointee(&data, &group), "group type of net/http.Header");
	NEED(member(&group, "ctrl", &h->sg_ctrl, NULL), "group.ctrl of net/http.Header");
	NEED(member(&group, "slots", &h->sg_slots, &slots), "group.slots of net/http.Header");
	NEED(byte_size(&group, &h->sg_size), "group byte size of net/http.Header");
	NEED(array_elem(&slots, &slot), "slot type of net/http.Header");
	NEED(member(&slot, "key", &h->ss_key, NULL), "slot.key of net/http.Header");
	NEED(member(&slot, "elem", &h->ss_elem, NULL), "slot.elem of net/http.Header");
	NEED(byte_size(&slot, &h->ss_size), "slot byte size of net/http.Header");
	h->map = GO_MAP_SWISS;
	return 0;
}

/* net/http.Request.Header, a map[string][]string, for the traceparent source. */
static int read_http_layout(Dwarf_Die *types, struct go_layout *l, char *err, size_t errlen)
{
	struct go_header_layout *h = &l->hdr;
	Dwarf_Die *req = &types[W_REQUEST], hdr, m;
	__u32 off;

	NEED(member(req, "Header", &h->req_header, &hdr), "net/http.Request.Header");
	NEED(pointee(&hdr, &m), "map type of net/http.Header");
	if (member(&m, "buckets", &off, NULL) == 0)
		return read_header_hmap(&m, h, err, errlen);
	if (member(&m, "dirPtr", &off, NULL) == 0)
		return read_header_swiss(&m, h, err, errlen);
	return fail(-ENOENT, err, errlen, "DWARF: net/http.Header is neither an hmap nor a swiss map");
}

/*
 * grpc-go's server: the header fields a stream starts with, its stream ID
 * (in the FrameHeader that HeadersFrame embeds), and transport.Stream.id.
 */
static int read_grpc_layout(Dwarf_Die *types, struct go_layout *l, char *err, size_t errlen)
{
	struct go_grpc_layout *g = &l->grpc;
	Dwarf_Die fht;
	__u32 hdrs, fh, sid;

	NEED(member(&types[W_META_HEADERS], "HeadersFrame", &hdrs, NULL),
	     "golang.org/x/net/http2.MetaHeadersFrame.HeadersFrame");
	NEED(member(&types[W_META_HEADERS], "Fields", &g->mhf_fields, NULL),
	     "golang.org/x/net/http2.MetaHeadersFrame.Fields");
	NEED(member(&types[W_HEADERS_FRAME], "FrameHeader", &fh, &fht),
	     "golang.org/x/net/http2.HeadersFrame.FrameHeader");
	NEED(member(&fht, "StreamID", &sid, NULL), "golang.org/x/net/http2.FrameHeader.StreamID");
	NEED(member(&types[W_HEADER_FIELD], "Name", &g->hf_name, NULL),
	     "golang.org/x/net/http2/hpack.HeaderField.Name");
	NEED(member(&types[W_HEADER_FIELD], "Value", &g->hf_value, NULL),
	     "golang.org/x/net/http2/hpack.HeaderField.Value");
	NEED(byte_size(&types[W_HEADER_FIELD], &g->hf_size), "hpack.HeaderField byte size");
	NEED(member(&types[W_GRPC_STREAM], "id", &g->stream_id, NULL),
	     "google.golang.org/grpc/internal/transport.Stream.id");
	/* the probe reads the embedded *HeadersFrame as the frame's first word */
	if (hdrs != 0)
		return fail(-EINVAL, err, errlen,
			    "DWARF: MetaHeadersFrame.HeadersFrame is not its first member");
	g->fh_stream_id = fh + sid;
	g->ok = 1;
	return 0;
}

/*
 * The OpenTelemetry Go SDK: a SpanContext's IDs and size, and where a
 * recording span keeps its own and its parent's.
 */
static int read_otel_layout(Dwarf_Die *types, struct go_layout *l, char *err, size_t errlen)
{
	struct go_otel_layout *o = &l->otel;
	__u32 size;

	NEED(member(&types[W_SPAN_CONTEXT], "traceID", &o->sc_trace, NULL),
	     "go.opentelemetry.io/otel/trace.SpanContext.traceID");
	NEED(member(&types[W_SPAN_CONTEXT], "spanID", &o->sc_span, NULL),
	     "go.opentelemetry.io/otel/trace.SpanContext.spanID");
	NEED(member(&types[W_SPAN_CONTEXT], "remote", &o->sc_remote, NULL),
	     "go.opentelemetry.io/otel/trace.SpanContext.remote");
	NEED(byte_size(&types[W_SPAN_CONTEXT], &size), "trace.SpanContext byte size");
	NEED(member(&types[W_RECORDING_SPAN], "spanContext", &o->span_ctx, NULL),
	     "go.opentelemetry.io/otel/sdk/trace.recordingSpan.spanContext");
	NEED(member(&types[W_RECORDING_SPAN], "parent", &o->span_parent, NULL),
	     "go.opentelemetry.io/otel/sdk/trace.recordingSpan.parent");
	o->sc_size = size;
	o->ok = 1;
	return 0;
}

static int read_labels_layout(Dwarf_Die *labelmap, struct go_layout *l, char *err, size_t errlen)
{
	Dwarf_Die t = *labelmap;

	if (strip_typedefs(&t) != 0)
		return fail(-EINVAL, err, errlen, "DWARF: runtime/pprof.labelMap: broken typedef");
	switch (dwarf_tag(&t)) {
	case DW_TAG_pointer_type:
		return read_map_layout(&t, l, err, errlen);
	case DW_TAG_structure_type:
		return read_slice_layout(&t, l, err, errlen);
	default:
		return fail(-EINVAL, err, errlen,
			    "DWARF: runtime/pprof.labelMap has unexpected tag 0x%x", dwarf_tag(&t));
	}
}

/*
 * One pass over a unit's top-level DIEs, stopping once everything is found.
 * Returns how many wanted types are still missing.
 */
static int find_types(Dwarf_Die *cudie, Dwarf_Die found[W_COUNT], bool have[W_COUNT])
{
	Dwarf_Die die;
	const char *name;
	int tag, i, left = 0;

	for (i = 0; i < W_COUNT; i++)
		left += !have[i];
	if (dwarf_child(cudie, &die) != 0)
		return left;
	do {
		tag = dwarf_tag(&die);
		if (tag != DW_TAG_structure_type && tag != DW_TAG_typedef)
			continue;
		name = dwarf_diename(&die);
		if (!name)
			continue;
		for (i = 0; i < W_COUNT; i++) {
			if (!have[i] && strcmp(name, wanted_names[i]) == 0) {
				found[i] = die;
				have[i] = true;
				left--;
			}
		}
	} while (left > 0 && dwarf_siblingof(&die, &die) == 0);
	return left;
}

/*
 * Go's linker puts all types in a unit named "runtime"; there are several
 * units of that name (one per assembly boundary), so visit each, skipping
 * every other unit after reading only its header and root DIE.
 */
static void find_runtime_types(Dwarf *dbg, Dwarf_Die found[W_COUNT], bool have[W_COUNT])
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t unit_type;
	const char *name;

	while (dwarf_get_units(dbg, cu, &cu, &version, &unit_type, &cudie, NULL) == 0) {
		name = dwarf_diename(&cudie);
		if (name && strcmp(name, "runtime") == 0 && find_types(&cudie, found, have) == 0)
			return;
	}
}

static bool have_all(const bool *have, int first, int last)
{
	int i;

	for (i = first; i <= last; i++) {
		if (!have[i])
			return false;
	}
	return true;
}

/* What a goroutine off the CPU left behind: its state, why it waits, where it stopped. */
static void read_wall_offsets(Dwarf_Die *gt, struct go_wall_offsets *w)
{
	Dwarf_Die gobuf;

	w->ok = member(gt, "atomicstatus", &w->g_status, NULL) == 0 &&
		member(gt, "waitreason", &w->g_waitreason, NULL) == 0 &&
		member(gt, "sched", &w->g_sched, &gobuf) == 0 &&
		member(&gobuf, "sp", &w->gobuf_sp, NULL) == 0 &&
		member(&gobuf, "pc", &w->gobuf_pc, NULL) == 0 &&
		member(&gobuf, "bp", &w->gobuf_bp, NULL) == 0 &&
		member(&gobuf, "lr", &w->gobuf_lr, NULL) == 0 &&
		member(gt, "syscallsp", &w->g_syscallsp, NULL) == 0 &&
		member(gt, "syscallpc", &w->g_syscallpc, NULL) == 0;
}

typedef int (*layout_reader)(Dwarf_Die *types, struct go_layout *l, char *err, size_t errlen);

/*
 * A layout only some binaries have (net/http's, grpc-go's, the SDK's),
 * read by READ into L once its types FIRST..LAST are all found. 0 whether
 * or not it was (ERR then says why not, and L keeps none of it); -EAGAIN
 * while more units may hold what its types refer to.
 */
static int read_optional(Dwarf_Die *types, const bool *have, int first, int last, bool complete,
			 layout_reader read, struct go_layout *l, char *err, size_t errlen,
			 const char *missing)
{
	struct go_layout tmp = *l;

	if (!have_all(have, first, last)) {
		snprintf(err, errlen, "%s", missing);
		return 0;
	}
	if (read(types, &tmp, err, errlen) != 0)
		return complete ? 0 : -EAGAIN;
	*l = tmp;
	return 0;
}

/* Everything from the DIEs found so far; -EAGAIN when more of .debug_info may hold the rest. */
static int read_layout(Dwarf *dbg, bool complete, bool want_http, bool want_grpc,
		       bool want_otel, struct go_dwarf_result *res, char *err, size_t errlen)
{
	Dwarf_Die types[W_COUNT], gt, mt;
	bool have[W_COUNT] = {};
	struct go_layout *l = &res->layout;
	__u32 stack_off;
	int ret;

	memset(res, 0, sizeof(*res));
	find_runtime_types(dbg, types, have);
	if (!complete && (!have[W_G] || !have[W_M] || !have[W_LABELMAP] || !have[W_MODULEDATA] ||
			  !have[W_WORK] || (want_http && !have[W_REQUEST]) ||
			  (want_grpc && !have_all(have, W_GRPC_FIRST, W_GRPC_LAST)) ||
			  (want_otel && !have_all(have, W_SPAN_CONTEXT, W_RECORDING_SPAN))))
		return -EAGAIN;
	if (!have[W_G] || !have[W_M])
		return fail(-ENOENT, err, errlen, "DWARF: %s not found in the runtime units%s%s",
			    !have[W_G] ? "runtime.g" : "runtime.m", dwarf_errno() ? ": " : "",
			    dwarf_errno() ? dwarf_errmsg(-1) : "");
	gt = types[W_G];
	mt = types[W_M];
	/* the sampler reads g.stack {lo, hi} at offset 0, as every Go release has it */
	if (member(&gt, "stack", &stack_off, NULL) != 0 || stack_off != 0)
		return fail(-ENOENT, err, errlen, "DWARF: runtime.g.stack is not at offset 0");
	if (member(&gt, "m", &l->g_m, NULL) != 0 || member(&gt, "labels", &l->g_labels, NULL) != 0 ||
	    member(&gt, "goid", &l->g_goid, NULL) != 0 || member(&mt, "curg", &l->m_curg, NULL) != 0)
		return fail(complete ? -ENOENT : -EAGAIN, err, errlen,
			    "DWARF: runtime.g {m, labels, goid} or runtime.m {curg} incomplete");
	/* Go 1.16 and 1.17 have no gofunc: their funcdata are addresses */
	if (have[W_MODULEDATA])
		member(&types[W_MODULEDATA], "gofunc", &res->md_gofunc, NULL);
	/* the GC cycle count: a plain uint32, or an atomic.Uint32 whose value comes first */
	if (have[W_WORK] && member(&types[W_WORK], "cycles", &res->work_cycles, NULL) != 0)
		res->work_cycles = 0;
	/* Go >= 1.21 */
	if (member(&gt, "parentGoid", &l->g_parent_goid, NULL) != 0)
		l->g_parent_goid = 0;
	read_wall_offsets(&gt, &res->wall);
	if ((want_http && (ret = read_optional(types, have, W_REQUEST, W_REQUEST, complete,
					       read_http_layout, l, res->http_err,
					       sizeof(res->http_err),
					       "DWARF: net/http.Request not found"))) ||
	    (want_grpc &&
	     (ret = read_optional(types, have, W_GRPC_FIRST, W_GRPC_LAST, complete, read_grpc_layout,
				  l, res->grpc_err, sizeof(res->grpc_err),
				  "DWARF: grpc-go's stream or x/net's header frame types not found"))) ||
	    (want_otel &&
	     (ret = read_optional(types, have, W_SPAN_CONTEXT, W_RECORDING_SPAN, complete,
				  read_otel_layout, l, res->otel_err, sizeof(res->otel_err),
				  "DWARF: the SDK's SpanContext or recordingSpan type not found"))))
		return ret;
	if (!have[W_LABELMAP])
		return 0;
	ret = read_labels_layout(&types[W_LABELMAP], l, err, errlen);
	/* a type it refers to may lie past the units inflated so far */
	if (ret != 0 && ret != -ENODATA && !complete)
		return -EAGAIN;
	/* no labels type to read from, as if runtime/pprof were not linked */
	if (ret == -ENODATA) {
		struct go_layout kept = { .g_m = l->g_m, .m_curg = l->m_curg,
					  .g_labels = l->g_labels, .g_goid = l->g_goid,
					  .g_parent_goid = l->g_parent_goid, .hdr = l->hdr,
					  .grpc = l->grpc, .otel = l->otel };

		*l = kept;
		return 0;
	}
	res->have_labels_type = ret == 0;
	return ret;
}

int go_dwarf__read(const struct elf_image *img, bool want_http, bool want_grpc, bool want_otel,
		   struct go_dwarf_result *res, char *err, size_t errlen)
{
	struct debug_info *di;
	bool complete = false;
	Dwarf *dbg;
	int ret = -EAGAIN;

	memset(res, 0, sizeof(*res));
	di = debug_info__open(img, err, errlen);
	if (!di)
		return -EINVAL;
	while (ret == -EAGAIN) {
		dbg = debug_info__grow(di, &complete, err, errlen);
		if (!dbg) {
			ret = -EINVAL;
			break;
		}
		ret = read_layout(dbg, complete, want_http, want_grpc, want_otel, res, err, errlen);
	}
	debug_info__close(di);
	return ret;
}
