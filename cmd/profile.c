// SPDX-License-Identifier: GPL-2.0
/* profile.c: `ctxprof-go --pid`: sample Go processes and print trace-tagged records. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>

#include "../bpf/ctxprof.h"
#include "ctxprof.skel.h"
#include "aggregate.h"
#include "binaries.h"
#include "convert.h"
#include "custom.h"
#include "processes.h"
#include "profile.h"
#include "../offsets/go_binary.h"

#define MAX_TARGETS 4096
#define DEFAULT_FREQ 99
#define DEFAULT_INTERVAL 10
#define POLL_MS 100
/* time spent reading rings before the loop looks at the clock, signals and targets */
#define READ_BUDGET_NS (200 * 1000000ULL)
#define NSEC_PER_SEC 1000000000ULL
/*
 * Ring buffer bytes per CPU: small enough to stay in cache, large enough for
 * several polls' worth of samples at 999 Hz (a sample is 0.2 to 4 KiB).
 */
#define RINGBUF_PER_CPU_KIB 256
#define RINGBUF_MAX_KIB (1U << 20)

static const char *const default_trace_keys[] = { AGG_DEFAULT_TRACE_KEYS };
static const char *const default_span_keys[] = { AGG_DEFAULT_SPAN_KEYS };

static const char usage[] =
	"Usage: ctxprof-go -p PID [OPTIONS] [DURATION]\n"
	"       ctxprof-go --pin DIR | --uprobe BINARY:SYMBOL [OPTIONS] [DURATION]\n"
	"       ctxprof-go check [--json] BINARY...\n"
	"\n"
	"Samples the CPU of Go processes with eBPF and tags every sample with the\n"
	"trace ID its goroutine carries as a pprof label (pprof.Do). Prints one JSON\n"
	"line per (pid, trace ID, label set) with its stacks, every INTERVAL and at exit.\n"
	"\n"
	"  -p, --pid PID[,PID...]  Go process(es) to sample; repeatable\n"
	"  -F, --frequency HZ      samples per second per CPU (default 99)\n"
	"  -d, --duration SECONDS  stop after SECONDS (default: until Ctrl-C or all targets exit)\n"
	"  -i, --interval SECONDS  print records every SECONDS (default 10)\n"
	"  -o, --output FILE       write records to FILE instead of stdout\n"
	"      --pprof FILE        also write a gzipped pprof profile to FILE at exit\n"
	"  -f, --folded            write folded stacks (comm;root;...;leaf COUNT) to stdout\n"
	"                          at exit; JSON lines then go only to -o FILE, if given\n"
	"      --folded-trace-root like -f, with the trace ID as the root frame\n"
	"      --trace-key KEY     label holding the trace ID; repeatable, first match wins\n"
	"                          (default: otel.traceid, otel_traceid, trace_id)\n"
	"      --traced-only       drop samples whose goroutine has no trace ID\n"
	"      --ring-kib KIB      ring buffer per CPU (default 256; a power of two); a full\n"
	"                          one loses samples, counted in the statistics line\n"
	"      --no-leaf-repair    keep stacks as the frame-pointer walk gives them: a Go\n"
	"                          leaf caught without its frame set up then lacks its caller\n"
	"\n"
	"Custom traces (one record per event, origin \"custom\" or \"uprobe\"; no -p needed):\n"
	"      --pin DIR           pin custom__generic and custom_context_map in DIR (bpffs)\n"
	"                          for other eBPF programs to tail-call with a context value\n"
	"      --uprobe BIN:SYM    record every call of SYM in BIN, with its first integer\n"
	"                          argument as the context; repeatable\n"
	"      --uprobe-abi go|c   where that argument is: RAX (go) or RDI (c); default: go\n"
	"                          for Go functions of BIN, c for anything else\n"
	"  -v, --verbose           show libbpf's messages and per-target details\n"
	"  -h, --help              show this help\n"
	"  -V, --version           print the version\n"
	"\n"
	"Needs root, or CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE, and a kernel with BTF.\n"
	"\n"
	"Examples:\n"
	"  ctxprof-go -p $(pidof checkout) -d 30 > cpu.jsonl\n"
	"  ctxprof-go -p 4242,4243 -F 499 -i 5 -o cpu.jsonl\n"
	"  ctxprof-go -p 4242 --trace-key request_id 10\n"
	"  ctxprof-go -p 4242 -d 30 --pprof cpu.pb.gz > cpu.jsonl; go tool pprof -top cpu.pb.gz\n"
	"  ctxprof-go -p 4242 -d 30 --folded-trace-root | flamegraph.pl > cpu.svg\n"
	"  ctxprof-go --uprobe ./server:main.handleQuery -o events.jsonl\n"
	"  ctxprof-go --pin /sys/fs/bpf/ctxprof\n"
	"  jq 'select(.trace_id==\"4bf92f3577b34da6a3ce929d0e0e4736\")' cpu.jsonl\n"
	"  jq -s 'group_by(.trace_id)|map({trace_id:.[0].trace_id,ms:(map(.cpu_ns)|add/1e6)})' cpu.jsonl\n";

struct target {
	pid_t pid;
	int pidfd;
	bool live;
	char comm[32];
	/* held for the run: replicas of one binary read its DWARF once */
	struct go_binary *gb;
};

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
	bool no_leaf_repair;
	bool verbose;
	unsigned long ring_kib; /* per CPU */
	const char *pprof;
	bool folded, folded_trace_root;
	const char *pin_dir;
	const char *uprobes[MAX_UPROBES];
	int nuprobes;
	enum uprobe_abi uprobe_abi;
};

static volatile sig_atomic_t exiting;
static bool verbose;

static void on_signal(int sig)
{
	exiting = 1;
}

/* libbpf's own messages, with -v only: its failures reach the user through ours */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return verbose ? vfprintf(stderr, fmt, args) : 0;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
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
};

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
		{ "no-leaf-repair", no_argument, NULL, OPT_NO_LEAF_REPAIR },
		{ "pprof", required_argument, NULL, OPT_PPROF },
		{ "folded", no_argument, NULL, 'f' },
		{ "folded-trace-root", no_argument, NULL, OPT_FOLDED_TRACE_ROOT },
		{ "ring-kib", required_argument, NULL, OPT_RING_KIB },
		{ "pin", required_argument, NULL, OPT_PIN },
		{ "uprobe", required_argument, NULL, OPT_UPROBE },
		{ "uprobe-abi", required_argument, NULL, OPT_UPROBE_ABI },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	char *end;
	int c;

	o->freq = DEFAULT_FREQ;
	o->ring_kib = RINGBUF_PER_CPU_KIB;
	o->interval = DEFAULT_INTERVAL;
	while ((c = getopt_long(argc, argv, "p:F:d:i:o:fvhV", opts, NULL)) != -1) {
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
		case 'v':
			o->verbose = true;
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
	if (!o->npids && !o->pin_dir && !o->nuprobes) {
		fprintf(stderr, "no target: give -p PID, --pin DIR or --uprobe BINARY:SYMBOL\n\n%s",
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

static int read_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Checks one PID and loads its layout into the targets map; its mappings are read now. */
static int add_target(struct ctxprof_bpf *skel, struct processes *procs, struct target *t,
		      pid_t pid)
{
	char exe[64], path[PATH_MAX], err[256];
	struct target_info info = {};
	struct stat before, after;
	struct go_binary *gb;
	ssize_t n;
	size_t i;
	int ret;

	t->pid = pid;
	t->pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0) {
		ret = -errno;
		if (ret == -ESRCH)
			fprintf(stderr, "pid %d: no such process\n", (int)pid);
		else
			fprintf(stderr, "pid %d: failed to open: %s\n", (int)pid, strerror(-ret));
		return ret;
	}
	read_comm(pid, t->comm, sizeof(t->comm));
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	n = readlink(exe, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	if (stat(exe, &before) != 0) {
		ret = -errno;
		fprintf(stderr, "pid %d (%s): cannot read its executable %s: %s\n", (int)pid, t->comm,
			path, strerror(-ret));
		return ret;
	}
	/* shared with the symbolizer, and with other targets running the same file */
	gb = binaries__get(exe, err, sizeof(err));
	if (!gb) {
		ret = -errno;
		fprintf(stderr, "pid %d (%s): cannot read its executable %s: %s\n", (int)pid, t->comm,
			path, err);
		return ret;
	}
	if (!go_binary__supported(gb)) {
		/* without a version the problem already says it is not Go */
		fprintf(stderr, "pid %d (%s, %s): %s", (int)pid, t->comm, path,
			go_binary__version(gb) ? "unsupported Go build: " : "");
		for (i = 0; i < go_binary__nproblems(gb); i++)
			fprintf(stderr, "%s%s", i ? "; " : "", go_binary__problem(gb, i));
		fputc('\n', stderr);
		binaries__put(gb);
		return -ENOTSUP;
	}
	go_binary__layout(gb, &info.layout);
	for (i = 0; i < go_binary__nwarnings(gb); i++)
		fprintf(stderr, "pid %d (%s): warning: %s\n", (int)pid, t->comm, go_binary__warning(gb, i));
	if (verbose)
		fprintf(stderr, "pid %d (%s, %s): %s, offsets from %s, labels %s, g at fs%+lld\n",
			(int)pid, t->comm, path, go_binary__version(gb),
			go_layout_source__name(go_binary__source(gb)),
			go_labels_layout__name(info.layout.labels_layout) ?: "unknown",
			(long long)info.layout.tls_g_offset);

	t->gb = gb;
	if (!symbolizer__known(processes__get(procs, pid, now_ns(CLOCK_MONOTONIC))))
		fprintf(stderr, "pid %d (%s): warning: cannot read its mappings: frames will be "
				"addresses\n",
			(int)pid, t->comm);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.targets), &(__u32){ pid }, &info, BPF_ANY)) {
		ret = -errno;
		fprintf(stderr, "pid %d: failed to add to the targets map: %s\n", (int)pid,
			strerror(-ret));
		return ret;
	}
	/*
	 * An exec from now on is marked by the exec tracepoint; one that came
	 * between reading the executable and adding the layout shows here.
	 */
	if (stat(exe, &after) != 0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino) {
		bpf_map_delete_elem(bpf_map__fd(skel->maps.targets), &(__u32){ pid });
		fprintf(stderr, "pid %d (%s): exited or ran another program while being added\n",
			(int)pid, t->comm);
		return -ESRCH;
	}
	t->live = true;
	return 0;
}

struct run {
	struct target *targets;
	int ntargets;
	struct aggregate *agg;
	FILE *out;
	const char *out_name; /* for messages: the -o FILE, or "stdout" */
	bool unflushed; /* events written into OUT's buffer since its last flush */
	/*
	 * A ring that never empties (a flood of events) must not hold the
	 * loop: -d, signals, flushes and the reader's health wait on it.
	 * Reading stops for this round past this moment.
	 */
	uint64_t read_until_ns;
	uint64_t nread;
	/* the first failure that loses data (a write, memory): it ends the run */
	int fail;
	const char *fail_what;
	struct processes *procs; /* every process's mappings, targets or not */
	struct ring_buffer *rb;
};

static void run__fail(struct run *r, int err, const char *what)
{
	if (r->fail)
		return;
	r->fail = err;
	r->fail_what = what;
}

static bool lookup_target(void *ctx, uint32_t pid, uint64_t time_ns, struct agg_target *out)
{
	struct run *r = ctx;
	int i;

	out->comm = "";
	for (i = 0; i < r->ntargets; i++) {
		if (r->targets[i].pid == (pid_t)pid) {
			out->comm = r->targets[i].comm;
			break;
		}
	}
	/* events come from any process: its mappings as they were at the event */
	out->sym = processes__get(r->procs, pid, time_ns);
	return true;
}

static int to_converter(void *ctx, json_t *record)
{
	char err[256];
	int ret;

	ret = convert__add(ctx, record, err, sizeof(err));
	if (ret)
		fprintf(stderr, "ctxprof-go: a record left out of the converted output: %s\n", err);
	return ret;
}

/* One event from the ring; a failure that loses data stops the reading (malformed ones are counted). */
static int handle_event(void *ctx, void *data, size_t size)
{
	const struct sample_event *e = data;
	struct run *r = ctx;
	int ret;

	if (size >= offsetof(struct sample_event, labels) && e->origin != ORIGIN_SAMPLING) {
		ret = aggregate__write_event(r->agg, data, size, r->out, lookup_target, r);
		if (ret && ret != -EINVAL)
			run__fail(r, ret, "write records to");
		r->unflushed = true;
	} else {
		ret = aggregate__add(r->agg, data, size);
		if (ret && ret != -EINVAL)
			run__fail(r, ret, "count samples for");
	}
	if (r->fail)
		return r->fail;
	/* the rest of the ring waits for the next round */
	if (++r->nread % 256 == 0 && now_ns(CLOCK_MONOTONIC) > r->read_until_ns)
		return -EAGAIN;
	return 0;
}

/* Has the reader of F gone away (a closed pipe or socket)? Regular files never say so. */
static bool reader_gone(FILE *f)
{
	struct pollfd pfd = { .fd = fileno(f), .events = 0 };

	return poll(&pfd, 1, 0) == 1 && pfd.revents & (POLLERR | POLLHUP);
}

/* Reads the rings between records of a long flush, within the usual budget. */
static void read_rings(void *ctx)
{
	struct run *r = ctx;

	if (r->fail || !r->rb)
		return;
	r->read_until_ns = now_ns(CLOCK_MONOTONIC) + READ_BUDGET_NS;
	ring_buffer__consume(r->rb);
}

/* Events go out as they come: a reader on a pipe sees them within a poll. */
static void flush_events(struct run *r)
{
	if (!r->unflushed || r->fail)
		return;
	r->unflushed = false;
	errno = 0;
	if (fflush(r->out) != 0)
		run__fail(r, errno ? -errno : -EIO, "write records to");
}

/* Which possible CPUs are online, from "0-3,5"; all of them if the file cannot be read. */
static int online_cpus(bool **online, int *n)
{
	int ncpus = libbpf_num_possible_cpus(), a, b, i;
	char buf[1024], *tok, *save = NULL, *end;
	FILE *f;

	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	*online = calloc(ncpus, sizeof(bool));
	if (!*online)
		return -ENOMEM;
	*n = ncpus;
	f = fopen("/sys/devices/system/cpu/online", "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		for (i = 0; i < ncpus; i++)
			(*online)[i] = true;
		return 0;
	}
	fclose(f);
	for (tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		a = strtol(tok, &end, 10);
		b = *end == '-' ? strtol(end + 1, &end, 10) : a;
		for (i = a < 0 ? 0 : a; i <= b && i < ncpus; i++)
			(*online)[i] = true;
	}
	return 0;
}

static int open_perf_event(int cpu, uint64_t period_ns)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = period_ns,
	};

	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void print_stats(struct ctxprof_bpf *skel, const struct aggregate *agg, int ntargets,
			const struct processes *procs)
{
	struct processes_stats ps;
	int ncpus = libbpf_num_possible_cpus(), i, k;
	__u64 totals[STAT_MAX] = {}, *vals;
	struct agg_stats st;

	vals = calloc(ncpus > 0 ? ncpus : 1, sizeof(*vals));
	for (k = 0; vals && k < STAT_MAX; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.stats), &k, vals) != 0)
			continue;
		for (i = 0; i < ncpus; i++)
			totals[k] += vals[i];
	}
	free(vals);
	aggregate__stats(agg, &st);
	if (ntargets)
		fprintf(stderr,
		"ctxprof-go: %llu samples from %d target%s, %llu (%.1f%%) with a trace ID, "
		"%llu records; lost %llu (ring buffer full), %llu label read errors, "
		"%llu without their label set, %llu filtered (--traced-only), %llu malformed; "
		"%llu stacks got back a leaf's caller\n",
		(unsigned long long)st.samples, ntargets, ntargets == 1 ? "" : "s",
		(unsigned long long)st.traced, st.samples ? 100.0 * st.traced / st.samples : 0.0,
		(unsigned long long)st.records, (unsigned long long)totals[STAT_LOST_RINGBUF],
		(unsigned long long)totals[STAT_READ_ERR], (unsigned long long)st.unresolved,
		(unsigned long long)totals[STAT_FILTERED],
		(unsigned long long)st.malformed, (unsigned long long)st.repaired);
	if (totals[STAT_EVENTS])
		fprintf(stderr,
			"ctxprof-go: %llu custom-trace and uprobe events: %llu reported, %llu lost "
			"(ring buffer full), %llu not written\n",
			(unsigned long long)totals[STAT_EVENTS], (unsigned long long)st.events,
			(unsigned long long)totals[STAT_EVENTS_LOST],
			(unsigned long long)(totals[STAT_EVENTS] - totals[STAT_EVENTS_LOST] - st.events));
	if (totals[STAT_BUSY])
		fprintf(stderr,
			"ctxprof-go: %llu samples and events dropped: every work slot of their CPU was "
			"taken by programs they interrupted\n",
			(unsigned long long)totals[STAT_BUSY]);
	processes__stats(procs, &ps);
	if (ps.lost)
		fprintf(stderr,
			"ctxprof-go: %llu mmap, exec and exit records lost (perf ring full): frames of "
			"processes that started meanwhile may stay addresses\n",
			(unsigned long long)ps.lost);
	if (totals[STAT_EXECED])
		fprintf(stderr,
			"ctxprof-go: %llu samples dropped from targets that no longer ran their Go "
			"program (an exec, or the end of an exit)\n",
			(unsigned long long)totals[STAT_EXECED]);
}

/* Notices targets that exited: their last samples are read before they are dropped. */
static int reap_targets(struct run *r, struct ctxprof_bpf *skel, struct ring_buffer *rb)
{
	struct target_info info;
	struct pollfd pfd;
	int i, live = 0;

	for (i = 0; i < r->ntargets; i++) {
		struct target *t = &r->targets[i];

		if (!t->live)
			continue;
		pfd.fd = t->pidfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) == 1) {
			ring_buffer__consume(rb);
			bpf_map_delete_elem(bpf_map__fd(skel->maps.targets), &(__u32){ t->pid });
			t->live = false;
			fprintf(stderr, "ctxprof-go: pid %d (%s) exited\n", (int)t->pid, t->comm);
			continue;
		}
		/* the kernel side already drops its samples; this says so, once */
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.targets), &(__u32){ t->pid }, &info) == 0 &&
		    info.execed) {
			ring_buffer__consume(rb);
			bpf_map_delete_elem(bpf_map__fd(skel->maps.targets), &(__u32){ t->pid });
			t->live = false;
			fprintf(stderr,
				"ctxprof-go: pid %d (%s) now runs another program (exec); no longer "
				"sampled\n",
				(int)t->pid, t->comm);
			continue;
		}
		live++;
	}
	return live;
}

int profile__main(int argc, char **argv)
{
	struct options o = {};
	struct ctxprof_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct bpf_link **links = NULL, *uprobe_links[MAX_UPROBES] = {}, *exec_link = NULL;
	struct pins *pins = NULL;
	struct convert *conv = NULL;
	struct run run = {};
	FILE *out = stdout;
	bool *online = NULL;
	uint64_t period_ns, start, next_flush, deadline = 0, consumed;
	char errbuf[256];
	struct agg_stats st;
	int ret;
	int *ring_fds = NULL;
	int err = 0, ncpus = 0, i, nevents = 0, fd;
	size_t k;

	err = parse_args(argc, argv, &o);
	if (err >= 0)
		return err;
	err = 0;
	verbose = o.verbose;
	libbpf_set_print(libbpf_print);

	if (check_privileges())
		return 1;
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		fprintf(stderr, "kernel BTF not found at /sys/kernel/btf/vmlinux: ctxprof-go needs "
				"a kernel built with CONFIG_DEBUG_INFO_BTF=y\n");
		return 1;
	}
	if (o.output) {
		out = fopen(o.output, "w");
		if (!out) {
			fprintf(stderr, "failed to open %s: %s\n", o.output, strerror(errno));
			return 1;
		}
	}
	period_ns = NSEC_PER_SEC / o.freq;

	skel = ctxprof_bpf__open();
	if (!skel) {
		err = -errno;
		fprintf(stderr, "failed to open BPF skeleton: %s\n", strerror(-err));
		goto cleanup;
	}
	if (!o.ntrace_keys) {
		for (k = 0; k < sizeof(default_trace_keys) / sizeof(default_trace_keys[0]); k++)
			o.trace_keys[o.ntrace_keys++] = default_trace_keys[k];
	}
	for (i = 0; i < o.ntrace_keys; i++) {
		skel->rodata->trace_keys[i].len = strlen(o.trace_keys[i]);
		memcpy(skel->rodata->trace_keys[i].name, o.trace_keys[i], strlen(o.trace_keys[i]));
	}
	skel->rodata->ntrace_keys = o.ntrace_keys;
	skel->rodata->traced_only = o.traced_only;
	skel->rodata->leaf_repair = !o.no_leaf_repair;

	err = online_cpus(&online, &ncpus);
	if (err) {
		fprintf(stderr, "failed to list CPUs: %s\n", strerror(-err));
		goto cleanup;
	}
	bpf_map__set_max_entries(skel->maps.events, ncpus);
	bpf_map__set_max_entries(skel->maps.targets, o.npids > 1024 ? o.npids : 1024);
	/* only what this run uses is loaded: the verifier's time is start-up time */
	bpf_program__set_autoload(skel->progs.on_sample, o.npids > 0);
	bpf_program__set_autoload(skel->progs.on_exec, o.npids > 0);
	bpf_program__set_autoload(skel->progs.uprobe_event, o.nuprobes > 0);
	bpf_program__set_autoload(skel->progs.custom__generic, o.pin_dir != NULL);

	err = ctxprof_bpf__load(skel);
	if (err) {
		fprintf(stderr, "failed to load BPF programs: %s\n", strerror(-err));
		goto cleanup;
	}

	/* mappings are followed before any are read, so that none falls between */
	run.procs = processes__new(true, errbuf, sizeof(errbuf));
	if (!run.procs) {
		fprintf(stderr, "ctxprof-go: warning: %s; frames of processes that exit before "
				"their events are read will be addresses\n",
			errbuf);
		run.procs = processes__new(false, errbuf, sizeof(errbuf));
		if (!run.procs) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	/* before any target is added: an exec from then on is marked in the kernel */
	if (o.npids) {
		exec_link = bpf_program__attach(skel->progs.on_exec);
		if (!exec_link) {
			err = -errno;
			fprintf(stderr, "failed to attach to the sched_process_exec tracepoint: %s\n",
				strerror(-err));
			goto cleanup;
		}
	}
	run.targets = calloc(o.npids, sizeof(*run.targets));
	if (!run.targets) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < o.npids; i++) {
		run.targets[i].pidfd = -1;
		run.ntargets++;
		err = add_target(skel, run.procs, &run.targets[i], o.pids[i]);
		if (err)
			goto cleanup;
	}

	run.out = out;
	run.out_name = o.output ?: "stdout";
	run.agg = aggregate__new(period_ns,
				 (int64_t)(now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC)));
	if (!run.agg) {
		err = -ENOMEM;
		goto cleanup;
	}
	aggregate__set_keys(run.agg, o.trace_keys, o.ntrace_keys, default_span_keys,
			    sizeof(default_span_keys) / sizeof(default_span_keys[0]));
	if (!o.no_leaf_repair)
		aggregate__repair_leaves(run.agg, lookup_target, &run);
	aggregate__set_progress(run.agg, read_rings, &run);
	if (o.pprof || o.folded) {
		/* the same converter as `ctxprof-go convert`, fed the same records */
		conv = convert__new();
		if (!conv) {
			err = -ENOMEM;
			goto cleanup;
		}
		/* folded stacks go to stdout; JSON lines then only to -o FILE, if given */
		aggregate__set_sink(run.agg, to_converter, conv, !o.folded || o.output);
	}
	ring_fds = calloc(ncpus, sizeof(*ring_fds));
	if (!ring_fds) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < ncpus; i++)
		ring_fds[i] = -1;
	for (i = 0; i < ncpus; i++) {
		ring_fds[i] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "ctxprof_ring", 0, 0,
					     o.ring_kib * 1024, NULL);
		if (ring_fds[i] < 0) {
			err = -errno;
			fprintf(stderr, "failed to create ring buffer for CPU %d: %s\n", i,
				strerror(-err));
			goto cleanup;
		}
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.events), &i, &ring_fds[i], 0)) {
			err = -errno;
			fprintf(stderr, "failed to install ring buffer for CPU %d: %s\n", i,
				strerror(-err));
			goto cleanup;
		}
		err = rb ? ring_buffer__add(rb, ring_fds[i], handle_event, &run) : 0;
		if (!rb)
			rb = ring_buffer__new(ring_fds[i], handle_event, &run, NULL);
		if (!rb || err) {
			err = err ?: -errno;
			fprintf(stderr, "failed to read ring buffer of CPU %d: %s\n", i,
				strerror(-err));
			goto cleanup;
		}
	}

	if (o.pin_dir) {
		pins = pins__create(skel, o.pin_dir);
		if (!pins) {
			err = -EINVAL;
			goto cleanup;
		}
		fprintf(stderr, "ctxprof-go: pinned %s/%s and %s/%s for tail calls\n", o.pin_dir,
			PIN_PROG, o.pin_dir, PIN_MAP);
	}
	for (i = 0; i < o.nuprobes; i++) {
		uprobe_links[i] = uprobe__attach(skel, o.uprobes[i], o.uprobe_abi, i);
		if (!uprobe_links[i]) {
			err = -EINVAL;
			goto cleanup;
		}
	}

	links = calloc(ncpus, sizeof(*links));
	if (!links) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < ncpus && o.npids; i++) {
		if (!online[i])
			continue;
		fd = open_perf_event(i, period_ns);
		if (fd < 0) {
			if (errno == ENODEV)
				continue;
			err = -errno;
			fprintf(stderr, "failed to open perf event on CPU %d: %s\n", i, strerror(-err));
			goto cleanup;
		}
		links[i] = bpf_program__attach_perf_event(skel->progs.on_sample, fd);
		if (!links[i]) {
			err = -errno;
			close(fd);
			fprintf(stderr, "failed to attach to perf event on CPU %d: %s\n", i,
				strerror(-err));
			goto cleanup;
		}
		nevents++;
	}

	run.rb = rb;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* a reader that went away is an error we report (EPIPE), after cleaning up our pins */
	signal(SIGPIPE, SIG_IGN);
	start = now_ns(CLOCK_MONOTONIC);
	next_flush = start + (uint64_t)(o.interval * NSEC_PER_SEC);
	if (o.duration > 0)
		deadline = start + (uint64_t)(o.duration * NSEC_PER_SEC);
	if (o.npids)
		fprintf(stderr,
			"ctxprof-go: sampling %d target%s at %lu Hz on %d CPUs%s; Ctrl-C to stop\n",
			run.ntargets, run.ntargets == 1 ? "" : "s", o.freq, nevents,
			o.traced_only ? ", traced goroutines only" : "");
	else
		fprintf(stderr, "ctxprof-go: recording custom-trace events; Ctrl-C to stop\n");

	while (!exiting && !run.fail) {
		run.read_until_ns = now_ns(CLOCK_MONOTONIC) + READ_BUDGET_NS;
		err = ring_buffer__poll(rb, POLL_MS);
		/* every event before this moment is read below, unless the budget ran out */
		consumed = now_ns(CLOCK_MONOTONIC);
		if (err >= 0)
			err = ring_buffer__consume(rb);
		if (run.fail)
			break;
		if (err == -EAGAIN)
			consumed = 0;
		else if (err < 0 && err != -EINTR) {
			fprintf(stderr, "failed to read the ring buffer: %s\n", strerror(-err));
			goto cleanup;
		}
		err = 0;
		flush_events(&run);
		/* `ctxprof-go ... | head -1`: stop at once, not at the next write */
		if (reader_gone(out) || (o.folded && reader_gone(stdout)))
			run__fail(&run, -EPIPE, "write records to");
		if (run.fail)
			break;
		/* events can come from any process: only sampling ends with its targets */
		if (!reap_targets(&run, skel, rb) && o.npids && !o.pin_dir && !o.nuprobes) {
			fprintf(stderr, "ctxprof-go: every target has exited\n");
			break;
		}
		processes__read(run.procs);
		if (now_ns(CLOCK_MONOTONIC) >= next_flush) {
			ret = aggregate__flush(run.agg, out, lookup_target, &run);
			if (ret < 0) {
				run__fail(&run, ret, "write records to");
				break;
			}
			/* written: the mappings of processes gone before then are no longer needed */
			processes__release(run.procs, consumed);
			next_flush += (uint64_t)(o.interval * NSEC_PER_SEC);
		}
		if (deadline && now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
	}
	/* stop sampling and probing, then read what is already in flight */
	run.rb = NULL;
	for (i = 0; i < ncpus; i++) {
		bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
	for (i = 0; i < o.nuprobes; i++) {
		bpf_link__destroy(uprobe_links[i]);
		uprobe_links[i] = NULL;
	}
	pins__remove(pins);
	pins = NULL;
	/* the probes are gone: what is in the rings is all there is */
	run.read_until_ns = UINT64_MAX;
	if (!run.fail)
		ring_buffer__consume(rb);
	flush_events(&run);
	if (!run.fail && (ret = aggregate__flush(run.agg, out, lookup_target, &run)) < 0)
		run__fail(&run, ret, "write records to");
	print_stats(skel, run.agg, run.ntargets, run.procs);
	if (run.fail) {
		aggregate__stats(run.agg, &st);
		fprintf(stderr, "ctxprof-go: failed to %s %s: %s; %llu records not written\n",
			run.fail_what, run.out_name, strerror(-run.fail),
			(unsigned long long)st.unwritten);
		err = run.fail;
		goto cleanup;
	}
	if (o.folded && (ret = convert__write_folded(conv, stdout, o.folded_trace_root))) {
		fprintf(stderr, "ctxprof-go: failed to write folded stacks to stdout: %s\n",
			strerror(-ret));
		err = ret;
	}
	if (o.pprof) {
		ret = convert__write_pprof(conv, o.pprof);
		if (ret) {
			fprintf(stderr, "ctxprof-go: failed to write the pprof profile %s: %s\n", o.pprof,
				strerror(-ret));
			err = err ?: ret;
		} else {
			fprintf(stderr, "ctxprof-go: wrote the pprof profile %s\n", o.pprof);
		}
	}

cleanup:
	bpf_link__destroy(exec_link);
	for (i = 0; links && i < ncpus; i++)
		bpf_link__destroy(links[i]);
	for (i = 0; i < o.nuprobes; i++)
		bpf_link__destroy(uprobe_links[i]);
	pins__remove(pins);
	free(links);
	ring_buffer__free(rb);
	for (i = 0; ring_fds && i < ncpus; i++) {
		if (ring_fds[i] >= 0)
			close(ring_fds[i]);
	}
	free(ring_fds);
	aggregate__free(run.agg);
	convert__free(conv);
	processes__free(run.procs);
	for (i = 0; i < run.ntargets; i++) {
		binaries__put(run.targets[i].gb);
		if (run.targets[i].pidfd >= 0)
			close(run.targets[i].pidfd);
	}
	free(run.targets);
	free(online);
	ctxprof_bpf__destroy(skel);
	/* the last buffered bytes are written only now, and can fail too */
	if (out && out != stdout && fclose(out) != 0 && !err) {
		err = -errno;
		fprintf(stderr, "ctxprof-go: failed to write records to %s: %s\n", o.output,
			strerror(-err));
	}
	if (fclose(stdout) != 0 && !err) {
		err = -errno;
		fprintf(stderr, "ctxprof-go: failed to write to stdout: %s\n", strerror(-err));
	}
	return err < 0 ? 1 : 0;
}
