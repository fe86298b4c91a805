/* SPDX-License-Identifier: GPL-2.0 */
/* ctxprof.h: structures shared byte for byte between the BPF programs and user space. */
#ifndef __CTXPROF_H
#define __CTXPROF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* How runtime/pprof stores a goroutine's labels behind g.labels. */
#define GO_LABELS_MAP 1 /* Go <= 1.23: *labelMap -> *hmap with string buckets */
#define GO_LABELS_SLICE 2 /* Go >= 1.24: labelMap{ list []label } */

/* How a Go map is laid out: net/http.Header, map[string][]string, for the traceparent source. */
#define GO_MAP_HMAP 1 /* Go <= 1.23: *hmap -> buckets of 8 slots */
#define GO_MAP_SWISS 2 /* Go >= 1.24: *maps.Map -> one group, or a directory of tables of groups */

/*
 * A Go <= 1.23 map with string keys: runtime.hmap (B, flags, buckets,
 * oldbuckets: all in its first MAP_HEADER_LEN bytes) and its bucket type
 * (tophash, keys, values, overflow; size bytes). The label sets of Go <=
 * 1.23 and net/http.Header share it; gomap.h walks it.
 */
struct go_hmap_layout {
	__u32 count;
	__u32 b;
	__u32 flags;
	__u32 buckets;
	__u32 oldbuckets;
	__u32 size;
	__u32 tophash;
	__u32 keys;
	__u32 values;
	__u32 overflow;
};

/*
 * The traceparent source: where a served request's headers are, in
 * net/http.Request.Header, a map[string][]string. map is GO_MAP_* or 0
 * when the binary serves no net/http or its layout is unknown: then no
 * probe is attached and no sample looks for a request.
 */
struct go_header_layout {
	__u32 map;
	__u32 req_header; /* net/http.Request.Header */
	/* GO_MAP_HMAP: hash<string,[]string> and bucket<string,[]string> */
	struct go_hmap_layout hmap;
	/* GO_MAP_SWISS: maps.Map, table, group<string,[]string> and its slot */
	__u32 sm_dir_ptr;
	__u32 sm_dir_len;
	__u32 st_groups; /* table.groups.data */
	__u32 st_mask; /* table.groups.lengthMask */
	__u32 sg_size;
	__u32 sg_ctrl;
	__u32 sg_slots;
	__u32 ss_size;
	__u32 ss_key;
	__u32 ss_elem;
};

/*
 * The traceparent source in grpc-go servers: the header block a stream
 * starts with (golang.org/x/net/http2's MetaHeadersFrame, read on the
 * connection's reader goroutine) and the stream its handler serves.
 * stream_ok is 0 when the binary serves no grpc-go or its layout is unknown.
 */
struct go_grpc_layout {
	__u32 ok;
	__u32 mhf_fields; /* MetaHeadersFrame.Fields []hpack.HeaderField */
	__u32 fh_stream_id; /* MetaHeadersFrame -> *HeadersFrame -> FrameHeader.StreamID */
	__u32 hf_size; /* hpack.HeaderField */
	__u32 hf_name;
	__u32 hf_value;
	__u32 stream_id; /* grpc/internal/transport.Stream.id */
	__u32 __pad;
};

/*
 * The otel-sdk source: spans the OpenTelemetry Go SDK records. A span's
 * start is (*tracer).newRecordingSpan(tr, psc, sc SpanContext, ...), whose
 * SpanContext arguments hold arrays and so are passed on the stack:
 * start_sc is where sc is from SP at the function's entry. ok is 0 when
 * the binary does not link the SDK or its layout is unknown.
 */
struct go_otel_layout {
	__u32 ok;
	__u32 start_sc; /* sc, from SP at newRecordingSpan's entry */
	__u32 sc_trace; /* trace.SpanContext.traceID [16]byte */
	__u32 sc_span; /* .spanID [8]byte */
	__u32 sc_remote; /* .remote bool */
	__u32 span_ctx; /* sdk/trace.recordingSpan.spanContext */
	__u32 span_parent; /* .parent */
	__u32 sc_size; /* trace.SpanContext's size */
};

/*
 * Everything the sampler needs to walk fsbase -> g -> m -> curg -> labels in
 * one target process. Offsets are in bytes. tls_g_offset is the signed offset
 * of the g pointer from the thread pointer (fsbase, tpidr_el0), stored as
 * two's complement so that unsigned addition in BPF gives the right
 * address; GO_G_IN_REGISTER on arm64 without cgo, where only R28 has g.
 */
#define GO_G_IN_REGISTER 0

struct go_layout {
	__u64 tls_g_offset;
	__u32 labels_layout; /* GO_LABELS_MAP or GO_LABELS_SLICE */
	__u32 g_m;
	__u32 m_curg;
	__u32 g_labels;
	__u32 g_goid;
	/* GO_LABELS_MAP: hash<string,string> and bucket<string,string> */
	struct go_hmap_layout lmap;
	/* GO_LABELS_SLICE: labelMap.list and its {key, value string} element */
	__u32 label_list;
	__u32 label_size;
	__u32 label_key;
	__u32 label_value;
	__u32 g_parent_goid; /* Go >= 1.21: the goid of the goroutine that started this one */
	struct go_header_layout hdr;
	struct go_grpc_layout grpc;
	struct go_otel_layout otel;
	/*
	 * Where runtime.work.cycles is (the GC cycles started), in the
	 * binary as linked or, in a target's layout, in that process; 0 when
	 * unknown. While it is unchanged, no object that was reachable can
	 * have been freed, so a goroutine whose g.labels pointer is the one
	 * the CPU sent last still has those labels: they need no reading.
	 */
	__u64 gc_cycles;
	/*
	 * arm64, Go before 1.21: where the process's frame_sizes table starts
	 * in its memory (0: no table), and how many FRAME_SLOT_BYTES slots of
	 * code it covers
	 */
	__u64 frame_text;
	__u64 frame_slots;
	/*
	 * amd64, Go before 1.21: a prologue moves SP before it saves BP, and
	 * an epilogue restores BP before it moves SP back (SAMPLE_F_TOP_FAR)
	 */
	__u32 late_bp;
	/*
	 * runtime.morestack, called by a function's stack check before the
	 * function made its frame: its code and morestack_noctxt's, which
	 * follows it, [morestack, morestack_end); where in g it left that
	 * function's PC (g.sched.pc), its caller's return address (the word
	 * at g.sched.sp on amd64, g.sched.lr on arm64) and its frame pointer
	 * (g.sched.bp); and g.atomicstatus. 0: not known, and a stack
	 * through morestack ends there.
	 */
	__u32 sched_pc;
	__u64 morestack, morestack_end;
	__u32 sched_caller, sched_bp;
	__u32 g_status;
	__u32 __pad_status;
};

/*
 * Bounds of one sample. Past them: labels beyond MAX_LABELS are dropped and
 * SAMPLE_F_LABELS_CUT is set; longer keys and values are cut and their full
 * length is kept in key_len/value_len; deeper stacks lose their outer frames.
 */
#define MAX_LABELS 16
#define MAX_KEY_LEN 64
#define MAX_VALUE_LEN 128
#define MAX_STACK_DEPTH 127
/*
 * Go <= 1.23 label maps: at most 2^MAX_B buckets are read, and at most
 * MAX_BUCKET_VISITS buckets in all, counting old buckets of a map caught
 * mid-growth and overflow buckets. 16 labels fit in B = 2 with no overflow.
 */
#define MAX_B 3
#define MAX_BUCKET_VISITS 16
#define BUCKET_SLOTS 8
#define MAX_BUCKET_SIZE 512
/* a map slot is in use when its tophash is at least this (Go's minTopHash) */
#define MIN_TOPHASH 5

/* --trace-key: how many keys the sampler compares for --traced-only */
#define MAX_TRACE_KEYS 4
/* a trace ID label's value: 32 hex digits */
#define TRACE_HEX_LEN 32

struct go_label {
	__u32 key_len; /* length in the target; more than MAX_KEY_LEN means cut */
	__u32 value_len; /* likewise for MAX_VALUE_LEN */
	__u8 key[MAX_KEY_LEN]; /* zero-padded after key_len */
	__u8 value[MAX_VALUE_LEN];
};

/*
 * Trace and span IDs are found in the labels by user space, which has the
 * labels anyway: matching keys and decoding hex in BPF cost most of the
 * verifier's time at start-up. The sampler only tells, for --traced-only,
 * whether a trace key holds 32 hex digits (SAMPLE_F_TRACE).
 */
#define SAMPLE_F_CURG (1U << 0) /* a user goroutine was on the CPU (m.curg != 0) */
#define SAMPLE_F_TRACE (1U << 1) /* --traced-only: a trace key holds 32 hex digits */
#define SAMPLE_F_LABELS_CUT (1U << 3) /* the goroutine had more than MAX_LABELS labels */
#define SAMPLE_F_READ_ERR (1U << 4) /* a read of target memory failed mid-walk */
/*
 * The labels are those of the last full event from the same CPU and tgid
 * with the same gen; nlabels is 0 and none are sent. Goroutines keep a label
 * set for milliseconds, so most samples repeat the one before.
 */
#define SAMPLE_F_SAME_LABELS (1U << 6)
/*
 * top[] holds the two words at the user SP. A leaf interrupted before it
 * set up its frame pointer (frameless functions, prologues, epilogues)
 * leaves its caller out of the frame-pointer chain; its return address is
 * at SP + the function's SP delta, which user space knows from .gopclntab.
 */
#define SAMPLE_F_TOP_WORDS (1U << 7)
/*
 * With SAMPLE_F_TOP_WORDS, amd64 Go before 1.21: the leaf is at an
 * instruction that sits between its SP's move and BP's (a prologue's
 * MOVQ BP, d(SP) or LEAQ d(SP), BP; an epilogue's ADDQ $d, SP). top[0]
 * is the SP delta the instruction says, top[1] the word there: the
 * return address when .gopclntab gives the same delta.
 */
#define SAMPLE_F_TOP_FAR (1U << 14)
/*
 * The last label is no label: its value is the traceparent header of the
 * request the goroutine (or, Go >= 1.21, the one that started it) serves,
 * or of the SDK span it runs in, and its key names which: "traceparent"
 * or "otel-sdk". User space takes the trace ID from it when the labels
 * hold none.
 */
#define SAMPLE_F_TRACEPARENT (1U << 8)
/*
 * A request's lifetime. LABELS_ENDED: the goroutine's labels were set by
 * another goroutine, which has left them (its pprof.Do returned) or
 * exited: it only inherited them, and their request is over. CTX_CHILD:
 * the context is the one of the goroutine that started this one, not its
 * own; CTX_ENDED: and that goroutine has moved on from that request.
 */
#define SAMPLE_F_LABELS_ENDED (1U << 9)
#define SAMPLE_F_CTX_CHILD (1U << 10)
#define SAMPLE_F_CTX_ENDED (1U << 11)
/*
 * The goroutine set its labels itself: the request runs on it (a
 * handler), where the others with its labels are goroutines it started.
 * Said only where label sets are followed; a context's is !CTX_CHILD.
 */
#define SAMPLE_F_LABELS_OWN (1U << 12)
/* the process's label sets are followed: the two flags above were asked */
#define SAMPLE_F_LABELS_JUDGED (1U << 13)

/*
 * One sample as it crosses the ring buffer. Only what was filled is sent:
 * the header, nlabels labels, then stack_bytes of stack starting right after
 * the last label (at labels[nlabels], not at a fixed offset). stack_room only
 * reserves the space for the deepest stack after a full set of labels.
 */
struct sample_event {
	__u64 time_ns; /* bpf_ktime_get_ns() */
	__u64 goid;
	__u32 tgid;
	__u32 tid;
	__u32 flags; /* SAMPLE_F_* */
	__u32 nlabels;
	__u32 stack_bytes; /* user stack, 8 bytes per frame, leaf first */
	__u32 cpu;
	__u32 gen; /* per-CPU number of the label set this event carries or repeats */
	__u32 origin; /* ORIGIN_*: a CPU sample, or one event of a custom trace */
	__u32 trace_rank; /* --traced-only: index of the most preferred trace key seen */
	__u32 wall; /* ORIGIN_WALL: the goroutine's state (WALL_*) | its wait reason's index << 8 */
	__u64 labels_hash; /* of the label bytes read, in the order read */
	__u64 sp, bp; /* user registers at the sample */
	__u64 top[2]; /* [SP], [SP + 8], when SAMPLE_F_TOP_WORDS (SAMPLE_F_TOP_FAR: otherwise) */
	__u64 context; /* ORIGIN_CUSTOM and ORIGIN_UPROBE: the context value; ORIGIN_ALLOC: the size */
	char comm[16]; /* ORIGIN_CUSTOM and ORIGIN_UPROBE: the task's */
	struct go_label labels[MAX_LABELS];
	__u64 stack_room[MAX_STACK_DEPTH];
};

#define ORIGIN_SAMPLING 0
#define ORIGIN_CUSTOM 1 /* a tail call into custom__generic */
#define ORIGIN_UPROBE 2 /* a --uprobe that ctxprof-go attached */
/* a goroutine as --wall found it, read by user space: never crosses the ring buffer */
#define ORIGIN_WALL 3
/* --alloc: an allocation the Go runtime sampled; context is its size in bytes */
#define ORIGIN_ALLOC 4
/*
 * alloc_sample's attach cookie: the Go argument with the size (2 or 3) in
 * the low byte; ALLOC_COOKIE_AT_CHECK when the probe is on the branch of
 * runtime.mProf_Malloc's stack check
 */
#define ALLOC_COOKIE_ARG(cookie) ((cookie) & 0xff)
#define ALLOC_COOKIE_AT_CHECK (1ULL << 8)
#define WALL_REASON_NONE 0xff /* not waiting, or a reason the binary does not name */

/*
 * The sampler's first filter: a bit per tgid modulo TARGET_BITS (one 4 KB
 * page), set while a target has it. Tgids that share a bit go on to the
 * targets map.
 */
#define TARGET_BITS 32768

/*
 * A --pid target: its layout, until it execs. An exec tracepoint sets
 * execed, so the sampler never reads another program with this layout.
 * Comparing the executable's identity instead needs user space and the
 * kernel to name files alike, and they do not on every filesystem (on a
 * btrfs subvolume stat()'s st_dev is not the inode's i_sb->s_dev).
 */
struct target_info {
	struct go_layout layout;
	__u32 execed;
	/*
	 * Execs of the same file, counted: a PIE's new image is elsewhere, and
	 * user space, which reads its goroutines (--wall) at link-time
	 * addresses plus the load bias, reads that bias again.
	 */
	__u32 reexecs;
	/*
	 * The inode number of the executable user space checked. The exec
	 * record that makes user space add a process comes out before the exec
	 * tracepoint fires: an exec of this same file is that exec, caught
	 * late, and leaves the layout valid. Inode numbers agree where devices
	 * do not (btrfs); a mismatch only costs the samples until user space
	 * sees the exec.
	 */
	__u64 exe_ino;
	/*
	 * Label sets are followed (label_set runs) and those made before it
	 * was attached are known: a set with no owner then is one whose
	 * setter left it. Until then no sample is judged.
	 */
	__u32 label_owners;
	__u32 __pad;
};

/*
 * --uprobe: the attach cookie says where the context is and which binary's
 * layout reads its labels: bit 0 is UPROBE_COOKIE_C (RDI, else RAX), the
 * bits above are 1 + an index into probe_layouts, or 0 for none.
 */
#define UPROBE_COOKIE_C 1ULL
#define MAX_UPROBES 64

/*
 * The traceparent source. A uprobe at the start of a request's handler
 * stores the request's header under the serving goroutine's goid (never its
 * g: g structs are reused); the end of an HTTP/1.1 request deletes it.
 * Only the version-00 form's 55 characters are kept; user space parses them.
 */
#define TRACEPARENT_LEN 55
/*
 * A header map of Go <= 1.23: at most 2^MAX_HDR_B buckets (104 fields
 * before the map grows) are read; of any map, at most MAX_HDR_VISITS
 * buckets, their overflow buckets, or groups
 */
#define MAX_HDR_B 4
#define MAX_HDR_VISITS 24
/* a header of at most this many fields is read whole, in either kind of map */
#define HDR_FIELDS_READ 104
#define MAP_HEADER_LEN 48 /* the bytes of a map's header read at once (hmap, maps.Map) */
#define MAX_HDR_DIR 8 /* swiss tables read per header map */

struct goid_key {
	__u32 tgid;
	__u32 __pad;
	__u64 goid;
};

/*
 * A label set, by where it lives (g.labels; immutable once made), and the
 * goroutine that made it current with runtime/pprof.SetGoroutineLabels
 * (pprof.Do calls it), so that the goroutines that only inherited it can be
 * told apart once that goroutine has left it. Only sets that hold a trace
 * ID have one; a set without an owner is one its setter has left.
 */
struct labels_key {
	__u32 tgid;
	__u32 __pad;
	__u64 labels;
};

struct label_owner {
	/*
	 * The goroutine that set it; 0 while that is not known: a set made
	 * before the probe ran, that only goroutines on a CPU held when it
	 * was looked for (their stacks cannot be read). Such a set counts as
	 * live until a goroutine leaves it for another trace, or user space
	 * finds out.
	 */
	__u64 goid;
	__u64 g; /* and its g, where its goid and current labels are read */
	__u64 trace; /* trace_hash() of its trace ID; TRACE_UNREAD when it could not be read */
	/*
	 * Its request: bpf_ktime_get_ns() when the setter took up the trace.
	 * A set the same goroutine makes inside it (a nested pprof.Do, a
	 * child span) for the same trace keeps it, so that the setter still
	 * serves the request while it holds any set of the same epoch.
	 */
	__u64 epoch;
	/*
	 * A set a goroutine made from one it inherited, for the same trace
	 * (pprof.Do in a request's worker goroutine): that set, whose
	 * request this one lives no longer than; 0 for none.
	 */
	__u64 up;
	/*
	 * The set of another trace its setter left for this one, nested
	 * (pprof.Do inside pprof.Do), when the return to it is not seen
	 * (label_do): that set's setter still serves it underneath; 0 for none.
	 */
	__u64 under;
};

#define TRACE_UNREAD 2ULL
/* owners followed through up, at most */
#define MAX_OWNER_UP 3
/* label sets of every target that hold a trace ID and have a setter, at most */
#define MAX_LABEL_OWNERS 65536

/*
 * The trace ID label's value, 32 hex digits as four little-endian words,
 * as one odd number: case folded, since user space reads A-F as a-f.
 */
static inline __u64 trace_hash(const __u64 *v)
{
	__u64 h = 0x9e3779b97f4a7c15ULL;
	int i;

	for (i = 0; i < 4; i++)
		h = (h ^ (v[i] | 0x2020202020202020ULL)) * 0x100000001b3ULL;
	return (h ^ h >> 29) | 1;
}

/*
 * A request's span, for its elapsed time: a goroutine took up a request
 * (SPAN_BEGIN: a label set of a new epoch, a request's traceparent, an
 * SDK span of another trace than its own) or left it (SPAN_END: its
 * labels or context of another epoch, or none, from then on). An end
 * names the goroutine and epoch of its begin. Requests whose end no probe
 * sees (HTTP/2, grpc-go, a goroutine that exits holding its labels) have
 * no span.
 */
#define SPAN_BEGIN 1
#define SPAN_END 2
#define SPAN_LABEL 3 /* source: a label set; else TRACE_CTX_HEADER or TRACE_CTX_OTEL */

struct span_event {
	__u64 time_ns; /* bpf_ktime_get_ns() */
	__u64 goid;
	__u64 epoch;
	__u32 tgid;
	__u16 kind; /* SPAN_BEGIN, SPAN_END */
	__u16 source;
	__u8 trace[TRACE_HEX_LEN]; /* SPAN_BEGIN: the trace ID, 32 hex digits */
};

/*
 * The hits a probe may still take in this period, per process: the
 * goroutine-start probe (Go before 1.21) and --alloc's. Each costs the
 * process a uprobe hit: past the budget user space detaches the probe
 * until the next period, so that a process that starts goroutines or
 * allocates fast pays a bounded share of its CPU. The hit that spends the
 * last of it says so on budget_notes.
 */
struct probe_budget {
	__s64 left; /* user space refills it each period, and counts what was spent */
	__u64 bpf_ns; /* the program's own time in the hits, so far: a hit's price is measured */
	/*
	 * hits of its process's other probes that its share pays for too,
	 * and their program's time: the request probes of a Go before 1.21,
	 * so that the traceparent source as a whole keeps to the share
	 */
	__u64 paid, paid_ns;
};

/*
 * budget_refill's context, from user space and back: the probe's process
 * and kind (BUDGET_*), the next period's allowance; then what was left of
 * the period over, its program time, and the other hits it paid for
 */
struct budget_refill {
	__u32 tgid;
	__u32 kind;
	__s64 allowed;
	__s64 left;
	__u64 bpf_ns;
	__u64 paid, paid_ns;
	__s32 found;
	__u32 __pad;
};

/* Which probe spent its budget: a budget_note's kind */
#define BUDGET_SPAWN 0
#define BUDGET_ALLOC 1
#define BUDGET_KINDS 2

struct budget_note {
	__u32 tgid;
	__u32 kind; /* BUDGET_* */
};

struct trace_ctx {
	__u8 traceparent[TRACEPARENT_LEN + 1]; /* "00-TRACE-SPAN-01" for a span of the SDK */
	__u8 span_id[8]; /* TRACE_CTX_OTEL: the span's ID, by which its End is known */
	__u32 source; /* TRACE_CTX_* */
	/* with RET: how far below its goroutine's stack top the handler's frame begins */
	__u32 depth;
	/*
	 * Which request: a number no other request of the goroutine that
	 * serves it has (bpf_ktime_get_ns() when it began, or the one before
	 * plus a step, EPOCH_STATE clear).
	 * A nested span of the same trace keeps its request's. Its low bits
	 * (EPOCH_STATE) say whether the request's header is read yet; while
	 * it is rewritten in place, 0.
	 */
	__u64 epoch;
	/*
	 * 0 in the goroutine's own context. In one a goroutine took from the
	 * one that started it (spawn_ctxs): the goid whose own context it
	 * is, live while that goroutine's context has the same epoch.
	 */
	__u64 origin;
	/*
	 * A request whose end no probe sees (amd64, without --wall): the
	 * handler's return address, which its call pushed at DEPTH below the
	 * top of G's stack. The request lives while that word holds it: once
	 * the handler returns, the caller's next call writes its own there.
	 * 0: its end is probed, or it has none.
	 */
	__u64 ret;
	__u64 g;
	/* EPOCH_PENDING: the *http.Request whose header is still to be read */
	__u64 req;
};

/*
 * Where the goroutine-start probe (Go before 1.21) leaves the context a
 * new goroutine takes: a table by goid, written in the trap without an
 * LRU map's locks and allocation, once the largest part of the probe's
 * program. A slot holds the last goroutine whose index it is: in one
 * process, the context lasts SPAWN_SLOTS starts. The first sample of the
 * goroutine moves it into spawn_ctxs, where what samples use is kept.
 * SEQ is odd while a writer holds the slot; readers copy between two
 * equal even values. User space maps the table (BPF_F_MMAPABLE).
 */
#define SPAWN_SLOTS 32768
struct spawn_slot {
	__u64 seq;
	struct goid_key key;
	struct trace_ctx ctx;
};

static inline __u32 spawn_slot_index(__u32 tgid, __u64 goid)
{
	/* a process's goids run in order: consecutive slots */
	return ((__u32)goid ^ tgid * 2654435761u) & (SPAWN_SLOTS - 1);
}

/* An epoch's state bits */
#define EPOCH_STATE 3ULL
#define EPOCH_READ 0 /* the context is whole */
#define EPOCH_PENDING 1 /* the request's header is read when a sample first needs it */
#define EPOCH_NONE 2 /* no context: its header held no traceparent, or it ended */

#define TRACE_CTX_HEADER 0 /* a request's traceparent header */
#define TRACE_CTX_OTEL 1 /* a span the OpenTelemetry Go SDK records in the process */
#define TRACE_CTX_OBI 2 /* OBI's trace for the sampled thread (traces_ctx_v1) */

/*
 * A value of OBI's traces_ctx_v1 (an LRU hash of 16,384 entries, keyed by
 * a thread's pid_tgid, pinned at BPFFS/otel/traces_ctx_v1): the trace and
 * span the thread works for, as OBI's devdocs/trace-profile-correlation.md
 * gives them.
 */
struct obi_ctx_info {
	__u8 trace_id[16];
	__u8 span_id[8];
};
#define OBI_MAP_NAME "traces_ctx_v1"
#define OBI_MAP_ENTRIES (1 << 14)

/*
 * The traceparent probes' cookies: the kind below (for a request's start,
 * the register its *http.Request is in), in the low 32 bits; a request's
 * start also has g.goid's offset above them, so that without spans it
 * needs no look at its target (http_begin_lazy); PROBE_PAID besides.
 */
#define PROBE_KIND(cookie) ((__u32)(cookie) & ~PROBE_PAID)
#define PROBE_GOID_SHIFT 32
/* in a cookie: the process's goroutine-start budget pays for the hit (Go < 1.21) */
#define PROBE_PAID (1U << 31)
#define HTTP_PROBE_REQ_RDI 1 /* net/http.serverHandler.ServeHTTP(sh, rw, req) */
#define HTTP_PROBE_REQ_RCX 2 /* x/net/http2.(*serverConn).runHandler(sc, rw, req, handler) */
#define HTTP_PROBE_END 3 /* net/http.(*response).finishRequest: the request is done */
#define GRPC_PROBE_HEADERS 4 /* grpc transport.(*http2Server).operateHeaders(t, ctx, frame, handle) */
#define GRPC_PROBE_STREAM 5 /* grpc.(*Server).handleStream(s, t ServerTransport, stream) */
#define OTEL_PROBE_START 6 /* sdk/trace.(*tracer).newRecordingSpan: a recording span starts */
#define OTEL_PROBE_END 7 /* sdk/trace.(*recordingSpan).End(s, options...) */
#define GO_PROBE_SPAWN 8 /* runtime.newproc.func1's runqput(pp, newg, next): a goroutine starts */
#define MAX_GRPC_FIELDS 32 /* header fields of a stream's first block searched */

/* A grpc stream between its headers (reader goroutine) and its handler's start */
struct grpc_stream_key {
	__u32 tgid;
	__u32 stream_id;
	__u64 transport; /* the *http2Server */
};

/*
 * The frame size of the function at each slot of code, by which the
 * sampler follows arm64 frames whose saved frame pointer Go before 1.21
 * left pointing into a goroutine's old stack. Go aligns functions to 16
 * bytes on arm64, so every slot belongs to one function at most. Sizes
 * are in 8-byte words; 0 for none (no function, or one without a frame).
 */
#define FRAME_SLOT_SHIFT 4
#define FRAME_SLOT_BYTES (1 << FRAME_SLOT_SHIFT)
/* a table's entry: four slots' sizes, 16 bits each, the first in the lowest bits */
#define FRAME_SLOTS_PER_ENTRY 4

/*
 * Tags on a frame of an event's stack, above any user address. EXACT: the
 * interrupted PC under a signal frame, not a return address. MAYBE: the
 * link register there, the caller unless the function of the frame
 * before it had stored it (user space asks .gopclntab's SP delta).
 */
#define FRAME_EXACT (1ULL << 62)
#define FRAME_MAYBE (1ULL << 63)
#define FRAME_TAGS (FRAME_EXACT | FRAME_MAYBE)

/* A label key the sampler looks for, zero-padded so that it compares as words. */
struct label_key {
	__u32 len;
	__u32 __pad;
	__u8 name[MAX_KEY_LEN];
};

/*
 * Per-CPU counters in the stats map, for what never reaches user space or
 * went wrong; the hot path of a delivered sample touches none of them.
 */
enum ctxprof_stat {
	STAT_LOST_RINGBUF, /* ring buffer full: sample lost */
	STAT_READ_ERR, /* samples with SAMPLE_F_READ_ERR */
	STAT_FILTERED, /* dropped by --traced-only */
	STAT_EVENTS, /* custom-trace and uprobe events, sent or not */
	STAT_EVENTS_LOST, /* of those, lost to a full ring buffer */
	STAT_EXECED, /* samples of a target no longer running its file (exec, exit): dropped */
	STAT_BUSY, /* every work slot of the CPU was taken by interrupted programs: dropped */
	STAT_HTTP_ERR, /* requests and streams whose headers could not be read */
	STAT_NO_G, /* samples on a thread whose TLS slot held no g */
	STAT_NO_CURG, /* samples of an M between goroutines (m.curg 0) */
	/* -p: ticks of followed threads whose tgid is no target (a child they forked) */
	STAT_UNMARKED, /* its bit in target_bits clear */
	STAT_UNKNOWN, /* its bit set, but not in the targets map */
	STAT_HTTP_BARE, /* requests whose headers hold no traceparent */
	STAT_OWNERS_FULL, /* label sets whose setter could not be kept: label_owners was full */
	STAT_SPANS_LOST, /* --wall: requests' begins and ends lost to a full spans ring */
	STAT_HTTP_CUT, /* requests with more header fields than are read, none of those a traceparent */
	STAT_MAX,
};

#endif /* __CTXPROF_H */
