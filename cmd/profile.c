// SPDX-License-Identifier: GPL-2.0
/* profile.c: `ctxprof-go --pid`: sample Go processes and print trace-tagged records. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>

#include "bpf/ctxprof.h"
#include "cmd/record/aggregate.h"
#include "cmd/record/custom.h"
#include "cmd/record/session.h"
#include "offsets/go_binary.h"
#include "profile.h"

#define MAX_TARGETS 4096
#define DEFAULT_FREQ 99
#define DEFAULT_INTERVAL 10
#define DEFAULT_WALL_HZ 19
#define MAX_WALL_HZ 1000
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
	"\n"
	"Samples the CPU of Go processes with eBPF and tags every sample with the\n"
	"trace ID its goroutine carries as a pprof label (pprof.Do). Prints one JSON\n"
	"line per (pid, trace ID, label set) with its stacks, every INTERVAL and at exit.\n"
	"\n"
	"  -p, --pid PID[,PID...]  Go process(es) to sample; repeatable\n"
	"  -a, --all               every Go process on the host, now and as they start\n"
	"      --cgroup PATH       only processes in this cgroup v2 subtree (a container's\n"
	"                          directory); filtered in the kernel; with -a or -p\n"
	"  -F, --frequency HZ      samples per second per CPU (default 99)\n"
	"  -d, --duration SECONDS  stop after SECONDS (default: until Ctrl-C or all targets exit)\n"
	"  -i, --interval SECONDS  print records every SECONDS (default 10)\n"
	"  -o, --output FILE       write records to FILE instead of stdout\n"
	"      --append            add to -o FILE instead of starting it anew (a service\n"
	"                          that restarts keeps what it wrote)\n"
	"      --pprof FILE        also write a gzipped pprof profile to FILE at exit\n"
	"  -f, --folded            write folded stacks (comm;root;...;leaf COUNT) to stdout\n"
	"                          at exit; JSON lines then go only to -o FILE, if given\n"
	"      --folded-trace-root like -f, with the trace ID as the root frame\n"
	"      --trace-key KEY     label holding the trace ID; repeatable, first match wins\n"
	"                          (default: otel.traceid, otel_traceid, trace_id, trace id)\n"
	"      --traced-only       drop samples whose goroutine has no trace ID\n"
	"      --trace-sources LIST  where trace IDs come from, comma-separated (default:\n"
	"                          all): label (goroutine labels), traceparent (the W3C\n"
	"                          header of the net/http or grpc-go request a goroutine\n"
	"                          serves), otel-sdk (the span the OpenTelemetry Go SDK\n"
	"                          records on the goroutine); labels win over the others\n"
	"      --ring-kib KIB      ring buffer per CPU (default 256; a power of two); a full\n"
	"                          one loses samples, counted in the statistics line\n"
	"      --no-leaf-repair    keep stacks as the frame-pointer walk gives them: a Go\n"
	"                          leaf caught without its frame set up then lacks its caller\n"
	"  -w, --wall              also sample every goroutine, running or not, HZ times a\n"
	"                          second: records with origin \"wall\", their state\n"
	"                          (running, runnable, waiting, syscall), Go's wait reason\n"
	"                          and stack; wall_ns = samples x 1/HZ. Read from user space,\n"
	"                          the target is never stopped\n"
	"      --wall-hz HZ        goroutine snapshots per second with -w (default 19)\n"
	"      --folded-wall       like -f, wall records only (where goroutines waited)\n"
	"\n"
	"Custom traces (one record per event, origin \"custom\" or \"uprobe\"; no -p needed):\n"
	"      --pin DIR           pin custom__generic and custom_context_map in DIR (bpffs)\n"
	"                          for other eBPF programs to tail-call with a context value\n"
	"      --uprobe BIN:SYM    record every call of SYM in BIN, with its first integer\n"
	"                          argument as the context; repeatable\n"
	"      --uprobe-abi go|c   where that argument is: RAX (go) or RDI (c); default: go\n"
	"                          for Go functions of BIN, c for anything else\n"
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
	"  go tool pprof -sample_index=wall -tagfocus=trace_id=4bf92f35... -top wall.pb.gz\n"
	"  ctxprof-go --all -o /var/log/ctxprof-go/cpu.jsonl\n"
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
	"  jq -s 'group_by(.trace_id)|map({trace_id:.[0].trace_id,ms:(map(.cpu_ns)|add/1e6)})' cpu.jsonl\n";

struct options {
	pid_t pids[MAX_TARGETS];
	int npids;
	unsigned long freq;
	double duration; /* 0: until stopped */
	double interval;
	const char *output;
	const char *trace_keys[MAX_TRACE_KEYS];
	int ntrace_keys;
	bool traced_only;
	unsigned int trace_sources;
	bool no_leaf_repair;
	int verbose; /* -v: details; -vv: libbpf's messages too */
	bool all;
	bool append;
	const char *cgroup;
	unsigned long ring_kib; /* per CPU */
	const char *pprof;
	bool folded, folded_trace_root, folded_wall;
	bool wall;
	unsigned long wall_hz;
	const char *pin_dir;
	const char *uprobes[MAX_UPROBES];
	int nuprobes;
	enum uprobe_abi uprobe_abi;
};

static int verbose;

/* libbpf's own messages, with -v only: its failures reach the user through ours */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return verbose > 1 ? vfprintf(stderr, fmt, args) : 0;
}

static int parse_seconds(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || *out <= 0 || *out > 1e7 ? -1 : 0;
}

static int parse_pids(const char *arg, struct options *o)
{
	char *copy = strdup(arg), *tok, *save = NULL, *end;
	long v;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || end == tok || *end || v <= 0 || v > INT_MAX) {
			fprintf(stderr, "invalid PID '%s'\n", tok);
			free(copy);
			return -1;
		}
		if (o->npids >= MAX_TARGETS) {
			fprintf(stderr, "too many PIDs (at most %d)\n", MAX_TARGETS);
			free(copy);
			return -1;
		}
		o->pids[o->npids++] = v;
	}
	free(copy);
	return 0;
}

enum {
	OPT_TRACE_KEY = 256,
	OPT_TRACED_ONLY,
	OPT_NO_LEAF_REPAIR,
	OPT_PIN,
	OPT_UPROBE,
	OPT_UPROBE_ABI,
	OPT_PPROF,
	OPT_FOLDED_TRACE_ROOT,
	OPT_RING_KIB,
	OPT_CGROUP,
	OPT_APPEND,
	OPT_TRACE_SOURCES,
	OPT_WALL_HZ,
	OPT_FOLDED_WALL,
};

/* --trace-sources: names into a set of 1 << TRACE_SOURCE_* bits; -1 on an unknown name. */
static int parse_sources(const char *list, unsigned int *out)
{
	char buf[128], *tok, *save;
	int src;

	if (!*list || strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	*out = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (src = 0; src < TRACE_SOURCE_COUNT; src++) {
			if (!strcmp(tok, trace_source__name(src)))
				break;
		}
		if (src == TRACE_SOURCE_COUNT)
			return -1;
		*out |= 1U << src;
	}
	return *out ? 0 : -1;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "trace-key", required_argument, NULL, OPT_TRACE_KEY },
		{ "traced-only", no_argument, NULL, OPT_TRACED_ONLY },
		{ "trace-sources", required_argument, NULL, OPT_TRACE_SOURCES },
		{ "no-leaf-repair", no_argument, NULL, OPT_NO_LEAF_REPAIR },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "folded", no_argument, NULL, 'f' },
		{ "folded-trace-root", no_argument, NULL, OPT_FOLDED_TRACE_ROOT },
		{ "folded-wall", no_argument, NULL, OPT_FOLDED_WALL },
		{ "wall", no_argument, NULL, 'w' },
		{ "wall-hz", required_argument, NULL, OPT_WALL_HZ },
		{ "ring-kib", required_argument, NULL, OPT_RING_KIB },
		{ "pin", required_argument, NULL, OPT_PIN },
		{ "uprobe", required_argument, NULL, OPT_UPROBE },
		{ "uprobe-abi", required_argument, NULL, OPT_UPROBE_ABI },
		{ "all", no_argument, NULL, 'a' },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "append", no_argument, NULL, OPT_APPEND },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	char *end;
	int c;

	o->freq = DEFAULT_FREQ;
	o->trace_sources = (1U << TRACE_SOURCE_COUNT) - 1;
	o->ring_kib = RINGBUF_PER_CPU_KIB;
	o->interval = DEFAULT_INTERVAL;
	o->wall_hz = DEFAULT_WALL_HZ;
	while ((c = getopt_long(argc, argv, "p:aF:d:i:o:fwvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pids(optarg, o))
				return 2;
			break;
		case 'F':
			errno = 0;
			o->freq = strtoul(optarg, &end, 10);
			if (errno || *end || o->freq == 0 || o->freq > 100000) {
				fprintf(stderr, "invalid frequency '%s' (1 to 100000 Hz)\n", optarg);
				return 2;
			}
			break;
		case 'd':
			if (parse_seconds(optarg, &o->duration)) {
				fprintf(stderr, "invalid duration '%s'\n", optarg);
				return 2;
			}
			break;
		case 'i':
			if (parse_seconds(optarg, &o->interval)) {
				fprintf(stderr, "invalid interval '%s'\n", optarg);
				return 2;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_TRACE_KEY:
			if (o->ntrace_keys >= MAX_TRACE_KEYS) {
				fprintf(stderr, "at most %d --trace-key options\n", MAX_TRACE_KEYS);
				return 2;
			}
			if (!*optarg || strlen(optarg) > MAX_KEY_LEN) {
				fprintf(stderr, "--trace-key must be 1 to %d bytes\n", MAX_KEY_LEN);
				return 2;
			}
			o->trace_keys[o->ntrace_keys++] = optarg;
			break;
		case OPT_TRACED_ONLY:
			o->traced_only = true;
			break;
		case OPT_TRACE_SOURCES:
			if (parse_sources(optarg, &o->trace_sources)) {
				fprintf(stderr, "--trace-sources: '%s' is not a list of label, "
						"traceparent and otel-sdk\n",
					optarg);
				return 2;
			}
			break;
		case OPT_NO_LEAF_REPAIR:
			o->no_leaf_repair = true;
			break;
		case OPT_PIN:
			o->pin_dir = optarg;
			break;
		case OPT_RING_KIB:
			errno = 0;
			o->ring_kib = strtoul(optarg, &end, 10);
			/* the kernel wants a power-of-two number of pages */
			if (errno || *end || o->ring_kib < 4 || o->ring_kib > RINGBUF_MAX_KIB ||
			    o->ring_kib & (o->ring_kib - 1)) {
				fprintf(stderr, "--ring-kib must be a power of two from 4 to %u\n",
					RINGBUF_MAX_KIB);
				return 2;
			}
			break;
		case OPT_PPROF:
			o->pprof = optarg;
			break;
		case 'f':
			o->folded = true;
			break;
		case OPT_FOLDED_TRACE_ROOT:
			o->folded = o->folded_trace_root = true;
			break;
		case OPT_FOLDED_WALL:
			o->folded = o->folded_wall = true;
			break;
		case 'w':
			o->wall = true;
			break;
		case OPT_WALL_HZ:
			errno = 0;
			o->wall_hz = strtoul(optarg, &end, 10);
			if (errno || *end || o->wall_hz == 0 || o->wall_hz > MAX_WALL_HZ) {
				fprintf(stderr, "invalid --wall-hz '%s' (1 to %d)\n", optarg,
					MAX_WALL_HZ);
				return 2;
			}
			break;
		case OPT_UPROBE:
			if (o->nuprobes >= MAX_UPROBES) {
				fprintf(stderr, "at most %d --uprobe options\n", MAX_UPROBES);
				return 2;
			}
			o->uprobes[o->nuprobes++] = optarg;
			break;
		case OPT_UPROBE_ABI:
			if (!strcmp(optarg, "go")) {
				o->uprobe_abi = UPROBE_ABI_GO;
			} else if (!strcmp(optarg, "c")) {
				o->uprobe_abi = UPROBE_ABI_C;
			} else {
				fprintf(stderr, "--uprobe-abi must be go or c\n");
				return 2;
			}
			break;
		case 'a':
			o->all = true;
			break;
		case OPT_CGROUP:
			o->cgroup = optarg;
			break;
		case OPT_APPEND:
			o->append = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("ctxprof-go %s\n", CTXPROF_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		if (optind + 1 < argc || parse_seconds(argv[optind], &o->duration)) {
			fprintf(stderr, "unexpected argument '%s'\n\n%s", argv[optind], usage);
			return 2;
		}
	}
	if (o->all && o->npids) {
		fprintf(stderr, "--all and -p exclude each other: --all samples every Go process\n");
		return 2;
	}
	if (o->folded_wall && !o->wall) {
		fprintf(stderr, "--folded-wall needs --wall: it writes wall records only\n");
		return 2;
	}
	if (o->wall && !o->npids && !o->all) {
		fprintf(stderr, "--wall samples the goroutines of targets: give -p PID or --all\n");
		return 2;
	}
	if (!o->npids && !o->all && !o->pin_dir && !o->nuprobes) {
		fprintf(stderr,
			"no target: give -p PID, --all, --pin DIR or --uprobe BINARY:SYMBOL\n\n%s",
			usage);
		return 2;
	}
	return -1;
}

/* Names the capabilities we lack, or returns 0 when sampling can work. */
static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	static const struct {
		int cap;
		const char *name;
	} need[] = { { CAP_BPF, "CAP_BPF" }, { CAP_PERFMON, "CAP_PERFMON" },
		     { CAP_SYS_PTRACE, "CAP_SYS_PTRACE" } };
	char missing[128] = "";
	size_t i;

	if (syscall(SYS_capget, &hdr, data) != 0)
		return 0; /* cannot tell: let the kernel say no */
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		int c = need[i].cap;

		if (!(data[c / 32].effective & (1U << (c % 32)))) {
			/* CAP_SYS_ADMIN still grants BPF and perf on every kernel */
			if (c != CAP_SYS_PTRACE &&
			    data[CAP_SYS_ADMIN / 32].effective & (1U << (CAP_SYS_ADMIN % 32)))
				continue;
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
				 *missing ? ", " : "", need[i].name);
		}
	}
	if (*missing) {
		fprintf(stderr,
			"ctxprof-go needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE; "
			"missing: %s (try: sudo ctxprof-go ...)\n",
			missing);
		return -EPERM;
	}
	return 0;
}

int profile__main(int argc, char **argv)
{
	struct options o = {};
	struct session_config cfg;
	struct session *s;
	int err, i;
	size_t k;

	err = parse_args(argc, argv, &o);
	if (err >= 0)
		return err;
	verbose = o.verbose;
	libbpf_set_print(libbpf_print);

	if (check_privileges())
		return 1;
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		fprintf(stderr, "kernel BTF not found at /sys/kernel/btf/vmlinux: ctxprof-go needs "
				"a kernel built with CONFIG_DEBUG_INFO_BTF=y\n");
		return 1;
	}
	if (!o.ntrace_keys) {
		for (k = 0; k < sizeof(default_trace_keys) / sizeof(default_trace_keys[0]); k++)
			o.trace_keys[o.ntrace_keys++] = default_trace_keys[k];
	}
	cfg = (struct session_config){
		.sampling = o.npids > 0 || o.all,
		.all = o.all,
		.cgroup = o.cgroup,
		.freq = o.freq,
		.duration = o.duration,
		.interval = o.interval,
		.output = o.output,
		.append = o.append,
		.trace_keys = o.trace_keys,
		.ntrace_keys = o.ntrace_keys,
		.traced_only = o.traced_only,
		.trace_sources = o.trace_sources,
		.leaf_repair = !o.no_leaf_repair,
		.verbose = o.verbose > 0,
		.ring_kib = o.ring_kib,
		.pprof = o.pprof,
		.folded = o.folded,
		.folded_trace_root = o.folded_trace_root,
		.folded_wall = o.folded_wall,
		.wall = o.wall,
		.wall_hz = o.wall_hz,
		.pin_dir = o.pin_dir,
		.uprobes = o.uprobes,
		.nuprobes = o.nuprobes,
		.uprobe_abi = o.uprobe_abi,
		.max_targets = o.all ? MAX_TARGETS : o.npids,
	};
	s = session__new(&cfg);
	if (!s)
		return 1;
	for (i = 0; i < o.npids; i++) {
		err = session__add_target(s, o.pids[i]);
		if (err) {
			session__free(s);
			return 1;
		}
	}
	if (o.all)
		session__discover(s);
	/* events can come from any process: only sampling alone ends with its targets */
	err = session__run(s, o.npids && !o.pin_dir && !o.nuprobes);
	session__free(s);
	if (fclose(stdout) != 0 && !err) {
		err = -errno;
		fprintf(stderr, "ctxprof-go: failed to write to stdout: %s\n", strerror(-err));
	}
	return err ? 1 : 0;
}
