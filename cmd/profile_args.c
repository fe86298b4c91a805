// SPDX-License-Identifier: GPL-2.0
/* profile_args.c: the recording's command line, parsed into its one configuration, and checked. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/ctxprof.h"
#include "cmd/output/metrics_http.h"
#include "cmd/output/otlp_export.h"
#include "cmd/record/aggregate.h"
#include "cmd/record/custom.h"
#include "cmd/util/duration.h"
#include "cmd/util/procfs.h"
#include "cmd/util/version.h"
#include "offsets/go_binary.h"
#include "profile_args.h"

#define DEFAULT_FREQ 99
#define DEFAULT_INTERVAL 10
#define DEFAULT_WALL_HZ 19
/* Go < 1.21: goroutine starts the probe watches a second, per process (tests/bench/README.md) */
#define DEFAULT_START_SHARE 2.0 /* percent */
#define DEFAULT_ALLOC_SHARE 5.0 /* percent */
#define MAX_STARTS_LIMIT 1000000
#define MAX_WALL_HZ 1000
#define MAX_OTLP_QUEUE 4096
/*
 * Ring buffer bytes per CPU: small enough to stay in cache, large enough for
 * several polls' worth of samples at 999 Hz (a sample is 0.2 to 4 KiB).
 */
#define RINGBUF_PER_CPU_KIB 256
#define RINGBUF_MAX_KIB (1U << 20)

static const char *const default_trace_keys[] = { AGG_DEFAULT_TRACE_KEYS };

static const char usage[] =
	"Usage: ctxprof-go -p PID [OPTIONS] [DURATION]\n"
	"       ctxprof-go -a [--cgroup PATH] [OPTIONS] [DURATION]\n"
	"       ctxprof-go --pin DIR | --uprobe BINARY:SYMBOL [OPTIONS] [DURATION]\n"
	"       ctxprof-go check [--json] BINARY...\n"
	"       ctxprof-go addr2line [-a] [-i] BINARY < ADDRESSES\n"
	"       ctxprof-go convert (--pprof FILE | -f | --html FILE | --speedscope FILE) [INPUT]\n"
	"\n"
	"Samples the CPU of Go processes with eBPF and tags every sample with the\n"
	"trace ID of the request its goroutine serves: from a pprof label (pprof.Do),\n"
	"from the W3C traceparent of its net/http or grpc-go request, or from the\n"
	"OpenTelemetry SDK span it runs in. Prints one JSON line per (pid, trace ID,\n"
	"label set) with its stacks, every INTERVAL and at exit.\n"
	"\n"
	"  -p, --pid PID[,PID...]  Go process(es) to sample; repeatable; spaces too, in\n"
	"                          quotes: -p \"$(pidof api worker)\"\n"
	"  -a, --all               every Go process on the host, now and as they start\n"
	"      --cgroup PATH       only processes in this cgroup v2 subtree (a container's\n"
	"                          directory), filtered in the kernel; with -a, -p, --pin\n"
	"                          or --uprobe\n"
	"  -F, --frequency HZ      samples per second per CPU (default 99, at most 100000)\n"
	"  -d, --duration SECONDS  stop after SECONDS, or a Go duration: 500ms, 10s, 2m\n"
	"                          (default: until Ctrl-C or all targets exit)\n"
	"  -i, --interval SECONDS  print records every SECONDS (default 10; 2m too)\n"
	"  -o, --output FILE       write records to FILE instead of stdout\n"
	"      --append            add to -o FILE instead of starting it anew (a service\n"
	"                          that restarts keeps what it wrote)\n"
	"      --pprof FILE        also write a gzipped pprof profile to FILE at exit\n"
	"      --html FILE         also write a report page to FILE at exit: every trace,\n"
	"                          its flame graphs and the timeline of its samples; one\n"
	"                          self-contained file (see convert --html)\n"
	"  -f, --folded            write folded stacks (comm;root;...;leaf COUNT) to stdout\n"
	"                          at exit; JSON lines then go only to -o FILE, if given\n"
	"      --folded-trace-root like -f, with the trace ID as the root frame\n"
	"      --trace-key KEY     label holding the trace ID; repeatable, first match wins\n"
	"                          (default: otel.traceid, otel_traceid, trace_id, trace id)\n"
	"      --traced-only       drop samples whose goroutine has no trace ID (or one\n"
	"                          inherited from a request that ended)\n"
	"      --trace-sources LIST  where trace IDs come from, comma-separated (default:\n"
	"                          all): label (goroutine labels), traceparent (the W3C\n"
	"                          header of the net/http or grpc-go request a goroutine\n"
	"                          serves), otel-sdk (the span the OpenTelemetry Go SDK\n"
	"                          records on the goroutine), obi (the trace OBI says the\n"
	"                          sampled thread works for); labels win, obi comes last\n"
	"      --bpffs DIR         where bpffs is, for OBI's otel/traces_ctx_v1 (default\n"
	"                          /sys/fs/bpf)\n"
	"      --goroutine-start-share PCT  Go < 1.21 keeps no goroutine's parent: a\n"
	"                          probe hands each new goroutine its starter's trace\n"
	"                          ID at a uprobe hit a start; it spends at most PCT%\n"
	"                          of each process's CPU with its request probes' hits\n"
	"                          (default 2; 0 for no probe), or 100 starts a second,\n"
	"                          and rests past that\n"
	"      --max-goroutine-starts N  and at most N starts a second (default: no\n"
	"                          cap; 0 for no probe)\n"
	"      --ring-kib KIB      ring buffer per CPU (default 256; a power of two from 4\n"
	"                          to 1048576); a full one loses samples, counted in the\n"
	"                          statistics line\n"
	"      --realtime          the thread that reads the rings runs SCHED_FIFO (as\n"
	"                          perf record -r): no loss where busier cgroups take\n"
	"                          every CPU; needs CAP_SYS_NICE\n"
	"      --no-leaf-repair    keep stacks as the frame-pointer walk gives them: a Go\n"
	"                          leaf caught without its frame set up then lacks its caller\n"
	"  -w, --wall              also sample every goroutine, running or not, HZ times a\n"
	"                          second: records with origin \"wall\", their state\n"
	"                          (running, runnable, waiting, syscall), Go's wait reason\n"
	"                          and stack; wall_ns = samples x 1/HZ. Read from user space,\n"
	"                          the target is never stopped; past 1578 goroutines (19 Hz)\n"
	"                          a snapshot reads a rotating share (observed: the looks)\n"
	"      --wall-hz HZ        goroutine snapshots per second with -w (default 19, at\n"
	"                          most 1000)\n"
	"      --folded-wall       like -f, wall records only (where goroutines waited)\n"
	"      --alloc             also record the allocations Go's runtime samples (one\n"
	"                          per runtime.MemProfileRate bytes, 512 KiB by default):\n"
	"                          records with origin \"alloc\", alloc_objects and\n"
	"                          alloc_bytes by trace, unbiased as Go's heap profile is\n"
	"      --alloc-share PCT   the share of a target's CPU --alloc's probe may spend\n"
	"                          (default 5): past it the probe rests to the end of a\n"
	"                          tenth of a second, and the statistics say what it missed\n"
	"      --folded-alloc      like -f, alloc records only, each stack's count its\n"
	"                          bytes allocated (where memory went)\n"
	"      --otlp URL          also send each interval's profiles to an OpenTelemetry\n"
	"                          Collector, OTLP/HTTP with protobuf to\n"
	"                          URL/v1development/profiles (URL may be that already);\n"
	"                          every sample linked to its\n"
	"                          trace and span. OTEL_EXPORTER_OTLP_* variables apply\n"
	"                          (an _ENDPOINT there turns it on as --otlp does)\n"
	"      --otlp-queue N      requests waiting to be sent at most (default 16); when\n"
	"                          the collector is slow or down, more are dropped, counted\n"
	"      --otlp-labels LIST  the goroutine labels --otlp sends as sample attributes,\n"
	"                          comma-separated, first preferred ('' for none); default:\n"
	"                          all but those holding trace or span IDs, which go in each\n"
	"                          sample's link. Past 25 attributes a series (resource and\n"
	"                          sample ones together) the rest are left out and counted\n"
	"      --metrics-addr ADDR serve the statistics on http://ADDR/metrics in Prometheus's\n"
	"                          text format (HOST:PORT, or :PORT for every address)\n"
	"\n"
	"Custom traces (one record per event, origin \"custom\" or \"uprobe\"; no -p needed):\n"
	"      --pin DIR           pin custom__generic and custom_context_map in DIR (bpffs)\n"
	"                          for other eBPF programs to tail-call with a context value\n"
	"      --uprobe BIN:SYM    record every call of SYM in BIN, with its first integer\n"
	"                          argument as the context; repeatable\n"
	"      --uprobe-abi go|c   where that argument is: RAX (go) or RDI (c), on arm64\n"
	"                          R0 for both; default: go for Go functions of BIN, c\n"
	"                          for anything else\n"
	"      --quiet             no summary at exit of the costliest traces (by CPU, wall\n"
	"                          time and allocated bytes, each with its commonest leaf\n"
	"                          function)\n"
	"  -v, --verbose           per-target details (layout, processes skipped by --all);\n"
	"                          twice (-vv): libbpf's own messages too\n"
	"  -h, --help              show this help\n"
	"  -V, --version           print the version\n"
	"\n"
	"Needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE, and a kernel with BTF.\n"
	"\n"
	"Examples:\n"
	"  ctxprof-go -p $(pidof checkout) -d 30 > cpu.jsonl\n"
	"  ctxprof-go -p 4242,4243 -F 499 -i 5 -o cpu.jsonl\n"
	"  ctxprof-go -p $(pidof api) --wall -d 30 --pprof wall.pb.gz > prof.jsonl\n"
	"  ctxprof-go -p $(pidof api) --wall -d 30 --html report.html > prof.jsonl\n"
	"  go tool pprof -sample_index=wall -tagfocus=trace_id=4bf92f35... -top wall.pb.gz\n"
	"  ctxprof-go --all -o /var/log/ctxprof-go/cpu.jsonl\n"
	"  ctxprof-go --all --otlp http://localhost:4318 -o /var/log/ctxprof-go/cpu.jsonl\n"
	"  ctxprof-go -p $(pidof api) --otlp http://pyroscope:4040 --otlp-labels route,tenant\n"
	"  ctxprof-go --all --otlp http://otelcol:4318 --metrics-addr :9464 -o /dev/null\n"
	"  ctxprof-go --all --cgroup /sys/fs/cgroup/system.slice/docker-$ID.scope 30\n"
	"  ctxprof-go -p 4242 --trace-key request_id 10\n"
	"  ctxprof-go -p $(pidof api) --trace-sources traceparent -d 30 > cpu.jsonl\n"
	"  ctxprof-go -p 4242 -d 30 --pprof cpu.pb.gz > cpu.jsonl; go tool pprof -top cpu.pb.gz\n"
	"  ctxprof-go -p 4242 -d 30 --folded-trace-root | flamegraph.pl > cpu.svg\n"
	"  ctxprof-go --uprobe ./server:main.handleQuery -o events.jsonl\n"
	"  ctxprof-go --pin /sys/fs/bpf/ctxprof\n"
	"  jq 'select(.trace_id==\"4bf92f3577b34da6a3ce929d0e0e4736\")' cpu.jsonl\n"
	"  jq 'select(.trace_source==\"traceparent\")|{trace_id,span_id,cpu_ns}' cpu.jsonl\n"
	"  jq -s 'map(select(.origin==\"wall\"))|group_by(.wait_reason)|map({wait_reason:.[0].wait_reason,ms:(map(.wall_ns)|add/1e6)})' prof.jsonl\n"
	"  jq -s 'map(select(.origin==\"sampling\"))|group_by(.trace_id)|map({trace_id:.[0].trace_id,ms:(map(.cpu_ns)|add/1e6)})' cpu.jsonl\n"
	"  jq -s 'map(select(.origin==\"request\"))|group_by(.trace_id)|map({trace_id:.[0].trace_id,requests:(map(.samples)|add),elapsed_ms:(map(.elapsed_ns)|add/1e6)})' prof.jsonl\n";

/*
 * Options are a table: each row names its parser, which sets one member of
 * struct session_config from the argument (NULL for a flag); FLAG, COUNT, STRING
 * and FOLDED rows name the member they set. A parser returns
 * ARG_OK, ARG_BAD after saying what is wrong, or ARG_EXIT when the program
 * is done (--help, --version).
 */
enum { ARG_OK, ARG_BAD, ARG_EXIT };

struct opt_spec {
	const char *name;
	int has_arg;
	int key; /* the short option, or an OPT_* above the characters */
	int (*parse)(struct session_config *o, size_t member, const char *arg);
	size_t member; /* offsetof the member that FLAG, COUNT and STRING set */
};

enum {
	OPT_TRACE_KEY = 256,
	OPT_TRACED_ONLY,
	OPT_NO_LEAF_REPAIR,
	OPT_PIN,
	OPT_UPROBE,
	OPT_UPROBE_ABI,
	OPT_PPROF,
	OPT_HTML,
	OPT_FOLDED_TRACE_ROOT,
	OPT_RING_KIB,
	OPT_REALTIME,
	OPT_CGROUP,
	OPT_APPEND,
	OPT_TRACE_SOURCES,
	OPT_WALL_HZ,
	OPT_FOLDED_WALL,
	OPT_ALLOC,
	OPT_ALLOC_SHARE,
	OPT_FOLDED_ALLOC,
	OPT_OTLP,
	OPT_OTLP_QUEUE,
	OPT_OTLP_LABELS,
	OPT_METRICS_ADDR,
	OPT_BPFFS,
	OPT_QUIET,
	OPT_MAX_STARTS,
	OPT_START_SHARE,
};

#define MEMBER(o, m, type) ((type *)((char *)(o) + (m)))

static int set_flag(struct session_config *o, size_t m, const char *arg)
{
	*MEMBER(o, m, bool) = true;
	return ARG_OK;
}

static int set_off(struct session_config *o, size_t m, const char *arg)
{
	*MEMBER(o, m, bool) = false;
	return ARG_OK;
}

static int set_count(struct session_config *o, size_t m, const char *arg)
{
	++*MEMBER(o, m, int);
	return ARG_OK;
}

static int set_string(struct session_config *o, size_t m, const char *arg)
{
	*MEMBER(o, m, const char *) = arg;
	return ARG_OK;
}

/* An integer from LO to HI, or false. */
static bool parse_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return !errno && end != s && !*end && *out >= lo && *out <= hi;
}

/* A comma-separated list with an empty item (",,", or a comma first or last), which strtok would skip. */
static bool empty_item(const char *list)
{
	size_t n = strlen(list);

	return !n || list[0] == ',' || list[n - 1] == ',' || strstr(list, ",,");
}

static int parse_pids(struct session_config *o, size_t m, const char *arg)
{
	char *copy, *tok, *save = NULL, *end;
	int ret = ARG_OK;
	long v;

	if (empty_item(arg)) {
		fprintf(stderr, "-p '%s': an empty item; PIDs are separated by single commas\n", arg);
		return ARG_BAD;
	}
	if (!(copy = strdup(arg)))
		return ARG_BAD;
	/* commas, or the spaces of a quoted $(pidof a b) */
	for (tok = strtok_r(copy, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || end == tok || *end || v <= 0 || v > INT_MAX) {
			fprintf(stderr, "invalid PID '%s'\n", tok);
			ret = ARG_BAD;
			break;
		}
		if (o->npids >= MAX_TARGETS) {
			fprintf(stderr, "too many PIDs (at most %d)\n", MAX_TARGETS);
			ret = ARG_BAD;
			break;
		}
		o->pids[o->npids++] = v;
	}
	free(copy);
	return ret;
}

static int parse_frequency(struct session_config *o, size_t m, const char *arg)
{
	if (parse_ulong(arg, 1, 100000, &o->freq))
		return ARG_OK;
	fprintf(stderr, "invalid frequency '%s' (1 to 100000 Hz)\n", arg);
	return ARG_BAD;
}

static int parse_duration(struct session_config *o, size_t m, const char *arg)
{
	if (!duration__seconds(arg, &o->duration))
		return ARG_OK;
	fprintf(stderr, "invalid duration '%s' (seconds, or a Go duration such as 500ms, 10s, 2m; "
			"more than 0, at most 10000000 s)\n", arg);
	return ARG_BAD;
}

static int parse_interval(struct session_config *o, size_t m, const char *arg)
{
	if (!duration__seconds(arg, &o->interval))
		return ARG_OK;
	fprintf(stderr, "invalid interval '%s' (seconds, or a Go duration such as 500ms, 10s, 2m; "
			"more than 0, at most 10000000 s)\n", arg);
	return ARG_BAD;
}

static int parse_trace_key(struct session_config *o, size_t m, const char *arg)
{
	if (o->ntrace_keys >= MAX_TRACE_KEYS) {
		fprintf(stderr, "at most %d --trace-key options\n", MAX_TRACE_KEYS);
		return ARG_BAD;
	}
	if (!*arg || strlen(arg) > MAX_KEY_LEN) {
		fprintf(stderr, "--trace-key must be 1 to %d bytes\n", MAX_KEY_LEN);
		return ARG_BAD;
	}
	o->trace_keys[o->ntrace_keys++] = arg;
	return ARG_OK;
}

/* --trace-sources: names into a set of 1 << TRACE_SOURCE_* bits. */
static int parse_sources(struct session_config *o, size_t m, const char *arg)
{
	char buf[128], *tok, *save;
	unsigned int set = 0;
	int src;

	if (empty_item(arg) || strlen(arg) >= sizeof(buf))
		goto bad;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (src = 0; src < TRACE_SOURCE_COUNT; src++) {
			if (!strcmp(tok, trace_source__name(src)))
				break;
		}
		if (src == TRACE_SOURCE_COUNT)
			goto bad;
		set |= 1U << src;
	}
	if (!set)
		goto bad;
	o->trace_sources = set;
	o->obi_asked = set & (1U << TRACE_SOURCE_OBI);
	o->sources_asked = true;
	return ARG_OK;
bad:
	fprintf(stderr, "--trace-sources: '%s' is not a list of label, traceparent, otel-sdk and obi\n",
		arg);
	return ARG_BAD;
}

static int parse_ring_kib(struct session_config *o, size_t m, const char *arg)
{
	/* the kernel wants a power-of-two number of pages */
	if (parse_ulong(arg, 4, RINGBUF_MAX_KIB, &o->ring_kib) && !(o->ring_kib & (o->ring_kib - 1)))
		return ARG_OK;
	fprintf(stderr, "--ring-kib must be a power of two from 4 to %u\n", RINGBUF_MAX_KIB);
	return ARG_BAD;
}

/* -f and its variants: folded output, and the variant's own flag */
static int set_folded(struct session_config *o, size_t m, const char *arg)
{
	o->folded = true;
	return set_flag(o, m, arg);
}

static int parse_wall_hz(struct session_config *o, size_t m, const char *arg)
{
	if (parse_ulong(arg, 1, MAX_WALL_HZ, &o->wall_hz))
		return ARG_OK;
	fprintf(stderr, "invalid --wall-hz '%s' (1 to %d)\n", arg, MAX_WALL_HZ);
	return ARG_BAD;
}

/* A share of a target's CPU, "0" to "100" percent, into the double at member M. */
static int parse_share(struct session_config *o, size_t m, const char *arg, const char *name)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (!errno && end != arg && !*end && v >= 0 && v <= 100) {
		*(double *)((char *)o + m) = v / 100;
		return ARG_OK;
	}
	fprintf(stderr, "invalid --%s '%s' (0 to 100, a percentage)\n", name, arg);
	return ARG_BAD;
}

static int parse_start_share(struct session_config *o, size_t m, const char *arg)
{
	return parse_share(o, offsetof(struct session_config, start_share), arg,
			   "goroutine-start-share");
}

static int parse_alloc_share(struct session_config *o, size_t m, const char *arg)
{
	return parse_share(o, offsetof(struct session_config, alloc_share), arg, "alloc-share");
}

static int parse_max_starts(struct session_config *o, size_t m, const char *arg)
{
	if (parse_ulong(arg, 0, MAX_STARTS_LIMIT, &o->max_starts))
		return ARG_OK;
	fprintf(stderr, "invalid --max-goroutine-starts '%s' (0 to %d a second)\n", arg,
		MAX_STARTS_LIMIT);
	return ARG_BAD;
}

static int parse_otlp_queue(struct session_config *o, size_t m, const char *arg)
{
	if (parse_ulong(arg, 1, MAX_OTLP_QUEUE, &o->otlp_queue))
		return ARG_OK;
	fprintf(stderr, "invalid --otlp-queue '%s' (1 to %d requests)\n", arg, MAX_OTLP_QUEUE);
	return ARG_BAD;
}

static int parse_metrics_addr(struct session_config *o, size_t m, const char *arg)
{
	if (metrics_http__addr_ok(arg)) {
		o->metrics_addr = arg;
		return ARG_OK;
	}
	fprintf(stderr, "invalid --metrics-addr '%s': give HOST:PORT, [IPV6]:PORT or :PORT "
			"(a port of 0 to 65535; :9464 for every address)\n", arg);
	return ARG_BAD;
}

/* --otlp-labels: label keys, one list; '' for none. IDs are refused later, once --trace-key is known. */
static int parse_otlp_labels(struct session_config *o, size_t m, const char *arg)
{
	char *tok, *save = NULL;
	int i;

	if (o->otlp_labels_set) {
		fprintf(stderr, "--otlp-labels is given once, with every label in its list\n");
		return ARG_BAD;
	}
	o->otlp_labels_set = true;
	if (!*arg)
		return ARG_OK;
	if (empty_item(arg)) {
		fprintf(stderr, "--otlp-labels '%s': an empty item; keys are separated by single "
				"commas\n", arg);
		return ARG_BAD;
	}
	o->otlp_labels_buf = strdup(arg);
	if (!o->otlp_labels_buf)
		return ARG_BAD;
	for (tok = strtok_r(o->otlp_labels_buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strlen(tok) > MAX_KEY_LEN) {
			fprintf(stderr, "--otlp-labels: '%s' is longer than a label key is read (%d "
					"bytes)\n", tok, MAX_KEY_LEN);
			return ARG_BAD;
		}
		for (i = 0; i < o->notlp_labels; i++) {
			if (!strcmp(o->otlp_labels[i], tok)) {
				fprintf(stderr, "--otlp-labels: '%s' is named twice\n", tok);
				return ARG_BAD;
			}
		}
		if (o->notlp_labels == MAX_OTLP_LABELS) {
			fprintf(stderr, "--otlp-labels: at most %d labels\n", MAX_OTLP_LABELS);
			return ARG_BAD;
		}
		o->otlp_labels[o->notlp_labels++] = tok;
	}
	return ARG_OK;
}

static int parse_uprobe(struct session_config *o, size_t m, const char *arg)
{
	const char *colon = strrchr(arg, ':');

	if (!colon || colon == arg || !colon[1]) {
		fprintf(stderr, "--uprobe '%s': expected BINARY:SYMBOL, both named\n", arg);
		return ARG_BAD;
	}
	if (o->nuprobes >= MAX_UPROBES) {
		fprintf(stderr, "at most %d --uprobe options\n", MAX_UPROBES);
		return ARG_BAD;
	}
	o->uprobes[o->nuprobes++] = arg;
	return ARG_OK;
}

static int parse_uprobe_abi(struct session_config *o, size_t m, const char *arg)
{
	if (!strcmp(arg, "go")) {
		o->uprobe_abi = UPROBE_ABI_GO;
	} else if (!strcmp(arg, "c")) {
		o->uprobe_abi = UPROBE_ABI_C;
	} else {
		fprintf(stderr, "--uprobe-abi must be go or c\n");
		return ARG_BAD;
	}
	return ARG_OK;
}

static int print_help(struct session_config *o, size_t m, const char *arg)
{
	fputs(usage, stdout);
	return ARG_EXIT;
}

static int print_version(struct session_config *o, size_t m, const char *arg)
{
	printf("%s\n", ctxprof_generator);
	return ARG_EXIT;
}

#define FLAG(name, key, m) { name, no_argument, key, set_flag, offsetof(struct session_config, m) }
#define OFF(name, key, m) { name, no_argument, key, set_off, offsetof(struct session_config, m) }
#define COUNT(name, key, m) { name, no_argument, key, set_count, offsetof(struct session_config, m) }
#define STRING(name, key, m) { name, required_argument, key, set_string, offsetof(struct session_config, m) }
#define FOLDED(name, key, m) { name, no_argument, key, set_folded, offsetof(struct session_config, m) }
#define PARSE(name, key, fn) { name, required_argument, key, fn, 0 }
#define ACTION(name, key, fn) { name, no_argument, key, fn, 0 }

static const struct opt_spec opt_table[] = {
	PARSE("pid", 'p', parse_pids),
	FLAG("all", 'a', all),
	STRING("cgroup", OPT_CGROUP, cgroup),
	PARSE("frequency", 'F', parse_frequency),
	PARSE("duration", 'd', parse_duration),
	PARSE("interval", 'i', parse_interval),
	STRING("output", 'o', output),
	FLAG("append", OPT_APPEND, append),
	STRING("pprof", OPT_PPROF, pprof),
	STRING("html", OPT_HTML, html),
	FOLDED("folded", 'f', folded),
	FOLDED("folded-trace-root", OPT_FOLDED_TRACE_ROOT, folded_trace_root),
	FOLDED("folded-wall", OPT_FOLDED_WALL, folded_wall),
	PARSE("trace-key", OPT_TRACE_KEY, parse_trace_key),
	FLAG("traced-only", OPT_TRACED_ONLY, traced_only),
	PARSE("trace-sources", OPT_TRACE_SOURCES, parse_sources),
	PARSE("max-goroutine-starts", OPT_MAX_STARTS, parse_max_starts),
	PARSE("goroutine-start-share", OPT_START_SHARE, parse_start_share),
	PARSE("ring-kib", OPT_RING_KIB, parse_ring_kib),
	FLAG("realtime", OPT_REALTIME, realtime),
	OFF("no-leaf-repair", OPT_NO_LEAF_REPAIR, leaf_repair),
	FLAG("wall", 'w', wall),
	PARSE("wall-hz", OPT_WALL_HZ, parse_wall_hz),
	FLAG("alloc", OPT_ALLOC, alloc),
	PARSE("alloc-share", OPT_ALLOC_SHARE, parse_alloc_share),
	FOLDED("folded-alloc", OPT_FOLDED_ALLOC, folded_alloc),
	STRING("otlp", OPT_OTLP, otlp_url),
	PARSE("otlp-queue", OPT_OTLP_QUEUE, parse_otlp_queue),
	PARSE("otlp-labels", OPT_OTLP_LABELS, parse_otlp_labels),
	PARSE("metrics-addr", OPT_METRICS_ADDR, parse_metrics_addr),
	STRING("pin", OPT_PIN, pin_dir),
	STRING("bpffs", OPT_BPFFS, bpffs),
	FLAG("quiet", OPT_QUIET, quiet),
	PARSE("uprobe", OPT_UPROBE, parse_uprobe),
	PARSE("uprobe-abi", OPT_UPROBE_ABI, parse_uprobe_abi),
	COUNT("verbose", 'v', verbose),
	ACTION("help", 'h', print_help),
	ACTION("version", 'V', print_version),
};

#define NOPTS (sizeof(opt_table) / sizeof(opt_table[0]))

static void set_defaults(struct session_config *o)
{
	o->freq = DEFAULT_FREQ;
	o->trace_sources = (1U << TRACE_SOURCE_COUNT) - 1;
	o->ring_kib = RINGBUF_PER_CPU_KIB;
	o->bpffs = "/sys/fs/bpf";
	o->interval = DEFAULT_INTERVAL;
	o->wall_hz = DEFAULT_WALL_HZ;
	o->start_share = DEFAULT_START_SHARE / 100;
	o->alloc_share = DEFAULT_ALLOC_SHARE / 100;
	o->max_starts = ULONG_MAX;
	o->leaf_repair = true;
}

/* getopt_long's view of the table: its long options, and the short ones as "p:aF:...". */
static void getopt_tables(struct option *longs, char *shorts)
{
	size_t i;

	for (i = 0; i < NOPTS; i++) {
		longs[i] = (struct option){ opt_table[i].name, opt_table[i].has_arg, NULL,
					    opt_table[i].key };
		if (opt_table[i].key >= 256)
			continue;
		*shorts++ = opt_table[i].key;
		if (opt_table[i].has_arg == required_argument)
			*shorts++ = ':';
	}
	longs[NOPTS] = (struct option){};
	*shorts = '\0';
}

/*
 * `--html -d 3`: a value of its own word that looks like an option (a
 * dash, and more but a digit) is the next option, not the value; said
 * with both.
 * Written `--html=-d`, it is taken.
 */
static bool eats_option(const struct opt_spec *row, char **argv, int next)
{
	char name[64];

	/* no option is a digit: -1 is a bad number, for the row's parser to say */
	if (row->has_arg != required_argument || optarg != argv[next - 1] || optarg[0] != '-' ||
	    !optarg[1] || isdigit((unsigned char)optarg[1]))
		return false;
	if (row->key < 256)
		snprintf(name, sizeof(name), "-%c (--%s)", row->key, row->name);
	else
		snprintf(name, sizeof(name), "--%s", row->name);
	fprintf(stderr, "%s takes a value; '%s' looks like the next option (a value that starts "
			"with '-': --%s=%s)\n",
		name, optarg, row->name, optarg);
	return true;
}

/* Every option through its row's parser: -1 when all were taken, else the exit status. */
static int parse_options(int argc, char **argv, struct session_config *o)
{
	struct option longs[NOPTS + 1];
	char shorts[2 * NOPTS + 1];
	int c, ret;
	size_t i;

	getopt_tables(longs, shorts);
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		for (i = 0; i < NOPTS && opt_table[i].key != c; i++)
			;
		if (i == NOPTS)
			return 2; /* getopt said which option */
		if (eats_option(&opt_table[i], argv, optind))
			return 2;
		ret = opt_table[i].parse(o, opt_table[i].member, optarg);
		if (ret != ARG_OK)
			return ret == ARG_EXIT ? 0 : 2;
	}
	return -1;
}

/*
 * Is S a whole number that is the pid of a live process with a program?
 * Small durations are kernel threads' pids (2 is kthreadd): they have no
 * executable, and no one profiles them with -p.
 */
static bool live_pid(const char *s)
{
	char path[64], exe[16];
	unsigned long v;

	if (!parse_ulong(s, 1, INT_MAX, &v))
		return false;
	snprintf(path, sizeof(path), "/proc/%lu/exe", v);
	return readlink(path, exe, sizeof(exe)) > 0;
}

/*
 * `-p $(pidof a b)` gives `-p 3948 3949`: a second PID that would pass for
 * the duration is refused, with the forms that say it.
 */
static bool pids_split(int argc, char **argv, const struct session_config *o)
{
	int i;

	if (!o->npids)
		return false;
	for (i = optind; i < argc && live_pid(argv[i]); i++)
		;
	if (i < argc)
		return false;
	fprintf(stderr,
		"'%s' after -p %d is a running process too: give the PIDs as one argument, "
		"-p %d,%s or -p \"%d %s\" (a duration: 30s)\n",
		argv[optind], o->pids[o->npids - 1], o->pids[o->npids - 1], argv[optind],
		o->pids[o->npids - 1], argv[optind]);
	return true;
}

/* `ctxprof-go -p 4242 30`: a last argument is the duration. */
static int parse_operands(int argc, char **argv, struct session_config *o)
{
	if (optind == argc)
		return 0;
	double d;

	if (pids_split(argc, argv, o))
		return -1;
	if (optind + 1 < argc || duration__seconds(argv[optind], &d)) {
		fprintf(stderr, "unexpected argument '%s': neither a duration in seconds nor a "
				"subcommand (check, addr2line, convert)\n",
			argv[optind]);
		return -1;
	}
	/* -d and a duration after the options: the same, or which one is meant is not ours to guess */
	if (o->duration > 0 && d != o->duration) {
		fprintf(stderr, "-d %g and the duration %s disagree: give one\n", o->duration, argv[optind]);
		return -1;
	}
	o->duration = d;
	return 0;
}

/* "-" is stdout, for one output at most: -1 when so, else 2 with what else wants it. */
static int check_stdout(const struct session_config *o)
{
	const char *takers[4];
	int n = 0;

	if (o->pprof && !strcmp(o->pprof, "-"))
		takers[n++] = "--pprof -";
	if (o->html && !strcmp(o->html, "-"))
		takers[n++] = "--html -";
	if (o->folded)
		takers[n++] = "the folded stacks of -f";
	else if (!o->output)
		takers[n++] = "the records (give -o FILE for them)";
	if (n < 2)
		return -1;
	fprintf(stderr, "%s and %s would both go to stdout\n", takers[0], takers[1]);
	return 2;
}

/* Options that exclude or need each other; -1 when the set makes sense, else 2. */
static int check_combination(const struct session_config *o)
{
	if (o->all && o->npids) {
		fprintf(stderr, "--all and -p exclude each other: --all samples every Go process\n");
		return 2;
	}
	if (o->folded_wall && !o->wall) {
		fprintf(stderr, "--folded-wall needs --wall: it writes wall records only\n");
		return 2;
	}
	if (o->folded_alloc && !o->alloc) {
		fprintf(stderr, "--folded-alloc needs --alloc: it writes alloc records only\n");
		return 2;
	}
	if (o->folded_alloc && o->folded_wall) {
		fprintf(stderr, "--folded-wall and --folded-alloc exclude each other: folded stacks "
				"count one thing, time or bytes\n");
		return 2;
	}
	if (o->otlp_url && !o->npids && !o->all) {
		fprintf(stderr, "--otlp sends the profiles of targets: give -p PID or --all\n");
		return 2;
	}
	if (o->otlp_queue && !o->otlp_url) {
		fprintf(stderr, "--otlp-queue sizes the queue of --otlp\n");
		return 2;
	}
	if (o->alloc && !o->npids && !o->all) {
		fprintf(stderr, "--alloc records the allocations of targets: give -p PID or --all\n");
		return 2;
	}
	if (o->wall && !o->npids && !o->all) {
		fprintf(stderr, "--wall samples the goroutines of targets: give -p PID or --all\n");
		return 2;
	}
	if (!o->npids && !o->all && !o->pin_dir && !o->nuprobes) {
		fprintf(stderr, "no target: give -p PID, --all, --pin DIR or --uprobe BINARY:SYMBOL\n");
		return 2;
	}
	if (o->append && !o->output) {
		fprintf(stderr, "--append adds to the file of -o FILE: give -o\n");
		return 2;
	}
	return check_stdout(o);
}

/*
 * --otlp URL, or an endpoint in the OTEL_EXPORTER_OTLP_* variables, with
 * the rest of them, each checked now, before anything is loaded: -1 to go
 * on, else the exit status. Only sampled profiles are sent: a run without
 * targets sends nothing.
 */
static int otlp_config(struct session_config *o)
{
	char err[512];
	int ret;

	if (!o->npids && !o->all)
		return -1;
	ret = otlp_export__config(&o->otlp, o->otlp_url, err, sizeof(err));
	if (ret < 0) {
		/* the message names the setting: --otlp, or the variable */
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (ret && o->otlp_queue)
		o->otlp.queue_max = o->otlp_queue;
	return -1;
}

/*
 * --otlp-labels needs OTLP on, and names no label that holds an ID (any
 * convention's, or --trace-key's): those go in the link. -1 to go on, else 2.
 */
static int check_otlp_labels(const struct session_config *o)
{
	const char *ids[AGG_MAX_ID_KEYS];
	size_t nids, k;
	int i;

	if (!o->otlp_labels_set)
		return -1;
	if (!o->otlp.url) {
		fprintf(stderr, "--otlp-labels chooses what --otlp sends: give --otlp URL or "
				"OTEL_EXPORTER_OTLP_ENDPOINT\n");
		return 2;
	}
	nids = aggregate__id_keys(o->trace_keys, o->ntrace_keys, ids);
	for (i = 0; i < o->notlp_labels; i++) {
		for (k = 0; k < nids; k++) {
			if (strcmp(o->otlp_labels[i], ids[k]))
				continue;
			fprintf(stderr, "--otlp-labels: '%s' holds trace or span IDs, which every "
					"sample carries in its link, never as an attribute (one "
					"series a request)\n",
				o->otlp_labels[i]);
			return 2;
		}
	}
	return -1;
}

/* The options into O: -1 to go on and record, else the exit status (0 after --help). */
static int parse_args(int argc, char **argv, struct session_config *o)
{
	int ret;

	set_defaults(o);
	ret = parse_options(argc, argv, o);
	if (ret >= 0)
		return ret;
	if (parse_operands(argc, argv, o))
		return 2;
	/* -o - is stdout, where records go anyway */
	if (o->output && !strcmp(o->output, "-"))
		o->output = NULL;
	ret = check_combination(o);
	if (ret >= 0)
		return ret;
	if (o->folded && o->wall && !o->folded_wall && !o->folded_alloc)
		fprintf(stderr, "note: -f writes the CPU samples' stacks; --folded-wall writes --wall's "
				"(where goroutines waited, the wait as the leaf)\n");
	if (o->folded && o->alloc && !o->folded_alloc && !o->folded_wall)
		fprintf(stderr, "note: -f writes the CPU samples' stacks; --folded-alloc writes --alloc's "
				"(the bytes each stack allocated)\n");
	ret = otlp_config(o);
	if (ret >= 0)
		return ret;
	return check_otlp_labels(o);
}

/* What the options imply, once they are parsed: the default trace keys, whether to sample. */
static void finish_config(struct session_config *o)
{
	size_t k;

	if (!o->ntrace_keys) {
		for (k = 0; k < sizeof(default_trace_keys) / sizeof(default_trace_keys[0]); k++)
			o->trace_keys[o->ntrace_keys++] = default_trace_keys[k];
	}
	o->sampling = o->npids > 0 || o->all;
	o->max_targets = o->all ? MAX_TARGETS : o->npids;
}

/* The process of thread TID (its Tgid), or 0 when /proc does not say. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	long tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &tgid) == 1)
			break;
	fclose(f);
	return tgid > 0 && tgid <= INT_MAX ? (pid_t)tgid : 0;
}

/*
 * -p given a thread ID (what top -H and perf report show) means its
 * process: said, and taken so, once.
 */
static void resolve_threads(struct session_config *o)
{
	char comm[32] = "";
	int i, j, n = 0;
	pid_t tgid;

	for (i = 0; i < o->npids; i++) {
		tgid = tgid_of(o->pids[i]);
		if (tgid && tgid != o->pids[i]) {
			procfs__comm(tgid, comm, sizeof(comm));
			fprintf(stderr, "ctxprof-go: %d is a thread of process %d (%s): profiling the process\n",
				(int)o->pids[i], (int)tgid, comm);
			o->pids[i] = tgid;
		}
		for (j = 0; j < n && o->pids[j] != o->pids[i]; j++)
			;
		if (j == n)
			o->pids[n++] = o->pids[i];
	}
	o->npids = n;
}

/* What parsing the options allocated. */
static void config_free(struct session_config *o)
{
	otlp_export__config_free(&o->otlp);
	free(o->otlp_labels_buf);
}

int profile_args__parse(int argc, char **argv, struct session_config *cfg)
{
	int ret = parse_args(argc, argv, cfg);

	if (ret >= 0)
		return ret;
	resolve_threads(cfg);
	finish_config(cfg);
	return -1;
}

void profile_args__free(struct session_config *cfg)
{
	config_free(cfg);
}
