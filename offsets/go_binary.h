/* SPDX-License-Identifier: GPL-2.0 */
/* go_binary.h: what ctxprof-go needs to know about one Go executable, and whether it can profile it. */
#ifndef __GO_BINARY_H
#define __GO_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/ctxprof.h"
#include "go_wall.h"

struct go_binary;

/* Where the struct offsets came from. */
enum go_layout_source {
	GO_SOURCE_NONE,
	GO_SOURCE_DWARF, /* the binary's own DWARF */
	GO_SOURCE_TABLE, /* the golayout/ row for its Go version */
};

/* Where a sample's trace ID can come from; records name it as trace_source. */
enum trace_source {
	TRACE_SOURCE_LABEL, /* a goroutine label: pprof.Do and every tracer's conventions */
	TRACE_SOURCE_TRACEPARENT, /* the W3C traceparent of the request being served */
	TRACE_SOURCE_OTEL_SDK, /* a span the OpenTelemetry Go SDK started in the process */
	TRACE_SOURCE_OBI, /* OBI's trace for the sampled thread: nothing of the binary's */
	TRACE_SOURCE_COUNT,
};

/* A function entry the traceparent source probes: file offset, and the cookie (*_PROBE_*) */
struct go_trace_probe {
	uint64_t offset;
	uint64_t cookie;
	const char *func;
	enum trace_source source; /* --trace-sources turns it off; COUNT: on with any other */
};

#define MAX_TRACE_PROBES 8

/* A member of a Go module's type that a layout came from: for check, and the module table. */
struct go_module_member {
	const char *pkg; /* "google.golang.org/grpc/internal/transport" */
	char module[128]; /* the module that holds it, "google.golang.org/grpc", or "" */
	char version[64]; /* as .go.buildinfo names it, or "" (a GOPATH build) */
	const char *member; /* "transport.Stream.id" */
	uint32_t offset;
};

#define MAX_MODULE_MEMBERS 16

/* How the g slot in TLS was found. */
enum go_tls_source {
	GO_TLS_NONE,
	GO_TLS_NO_PT_TLS, /* no TLS segment: Go's fixed slot at fs-8 */
	GO_TLS_TLSG, /* runtime.tlsg symbol and the PT_TLS block size */
	GO_TLS_STACKCHECK, /* decoded from runtime.stackcheck's first instruction */
	GO_TLS_REGISTER, /* arm64 without cgo: g only in R28 (tls_g_offset 0) */
	GO_TLS_LOAD_G, /* arm64: decoded from runtime.load_g */
};

/*
 * Reads PATH. Returns NULL with errno set only when the file cannot be read
 * at all (missing, a directory, permissions), with a message in ERR. Any
 * file that can be read gives a go_binary, supported or not; unsupported
 * ones say why through go_binary__problem().
 */
struct go_binary *go_binary__open(const char *path, char *err, size_t errlen);
/*
 * Like go_binary__open, for naming addresses only: the version and the
 * function table with its inlining trees, none of the layout. The result is
 * never supported for profiling.
 */
struct go_binary *go_binary__open_symbols(const char *path, char *err, size_t errlen);
void go_binary__close(struct go_binary *gb);

bool go_binary__supported(const struct go_binary *gb);
/* Is the file an ELF file whose every header lies inside it? If not, problem 0 says why. */
bool go_binary__is_elf(const struct go_binary *gb);
const char *go_binary__path(const struct go_binary *gb);
/* The ELF entry point as linked: a PIE's load bias is AT_ENTRY minus this. */
uint64_t go_binary__entry(const struct go_binary *gb);
/* Where .rodata is linked, Go's string constants among its data: 0, or -ENOENT. */
int go_binary__rodata(const struct go_binary *gb, uint64_t *addr, uint64_t *len);
const char *go_binary__version(const struct go_binary *gb); /* "go1.24.4", or NULL */
const char *go_binary__arch(const struct go_binary *gb); /* "amd64", "arm64", ... or NULL */
/* Built for ARCH by a Go release before MAJOR.MINOR */
bool go_binary__before(const struct go_binary *gb, const char *arch, int major, int minor);
/* the register g's TLS slot is relative to: "fs" (amd64) or "tpidr_el0" (arm64) */
const char *go_binary__thread_pointer(const struct go_binary *gb);
bool go_binary__pie(const struct go_binary *gb);
bool go_binary__cgo(const struct go_binary *gb);
bool go_binary__has_dwarf(const struct go_binary *gb);
bool go_binary__has_symtab(const struct go_binary *gb);
bool go_binary__sets_labels(const struct go_binary *gb);
enum go_layout_source go_binary__source(const struct go_binary *gb);
enum go_tls_source go_binary__tls_source(const struct go_binary *gb);

/* Offset of gofunc in its runtime.moduledata (Go 1.18+), from DWARF or the table; 0 if unknown. */
uint32_t go_binary__md_gofunc(const struct go_binary *gb);

/* Its function table, or NULL when it has none that we can read; lives as long as GB. */
const struct gopclntab *go_binary__pclntab(const struct go_binary *gb);

/* The layout for the sampler; -EINVAL when the binary is not supported. */
int go_binary__layout(const struct go_binary *gb, struct go_layout *out);

/* links net/http's or grpc-go's server */
bool go_binary__serves_requests(const struct go_binary *gb);
/* The servers whose requests the traceparent source reads: "net/http grpc-go", or "" */
const char *go_binary__trace_servers(const struct go_binary *gb);
/* The probes the traceparent source needs in GB; 0 when it cannot be used. */
size_t go_binary__trace_probes(const struct go_binary *gb, const struct go_trace_probe **probes);
/*
 * Where a goroutine's labels are set (runtime/pprof's runtime_setProfLabel),
 * as a file offset to probe; -1 when the binary sets none, or has no such
 * function in its table.
 */
long go_binary__label_probe(const struct go_binary *gb);
/*
 * pprof.Do's call that makes its set current, as a file offset to probe
 * in place of go_binary__label_probe() when only sets matter, not their
 * ends; -1 when the program sets labels in another way too.
 */
long go_binary__do_probe(const struct go_binary *gb);
/* Whether a probe gives the goroutines a goroutine starts its context (Go before 1.21). */
bool go_binary__spawn_probe(const struct go_binary *gb);
/* The module members GB's grpc-go and otel-sdk layouts came from (DWARF or the table). */
size_t go_binary__module_members(const struct go_binary *gb,
				  const struct go_module_member **members);
/* NULL when GB can give trace IDs from SRC, else why not. */
const char *go_binary__trace_source_problem(const struct go_binary *gb, enum trace_source src);
const char *trace_source__name(enum trace_source src);

/* Where --alloc found runtime.MemProfileRate. */
enum go_alloc_rate_source {
	GO_ALLOC_RATE_NONE, /* not found: never guessed */
	GO_ALLOC_RATE_SYMTAB, /* .symtab's runtime.MemProfileRate */
	GO_ALLOC_RATE_CODE, /* decoded from runtime.profilealloc's load of it */
};

/*
 * --alloc: every allocation the Go runtime samples, about one each
 * runtime.MemProfileRate bytes, calls runtime.mProf_Malloc, which no
 * release inlines; the rate, an int, is read from the process to unbias
 * the counts (0: it samples nothing).
 */
struct go_alloc_probe {
	/* file offset to probe runtime.mProf_Malloc at; -1 when not found */
	long offset;
	/*
	 * the probe is on the branch of its stack check: a call whose stack
	 * must grow first, which comes back through the probe, is told
	 * there and counted once; else (false) the probe is at the entry
	 */
	bool at_check;
	/* the Go register argument, from 1, with the size: 2, 3 from Go 1.23; 0 unknown */
	unsigned int size_arg;
	/* link-time address of runtime.MemProfileRate (a PIE adds its load bias); 0 unknown */
	uint64_t rate_addr;
	enum go_alloc_rate_source rate_source;
	/* runtime.disableMemoryProfiling as linked: 1, 0, or -1 unknown (no symbol table) */
	int memprof_disabled;
};

/*
 * --alloc's probe and sampling rate in GB: 0; -ENOENT when it has no
 * runtime.mProf_Malloc, -EOPNOTSUPP when the arguments of its Go release's
 * are not known, and go_binary__alloc_problem says why. OUT gets what is
 * known either way.
 */
int go_binary__alloc_probe(const struct go_binary *gb, struct go_alloc_probe *out);
const char *go_binary__alloc_problem(const struct go_binary *gb); /* NULL when there is none */
/* NULL when rate_addr is known, else why not */
const char *go_binary__alloc_rate_problem(const struct go_binary *gb);
/* "symtab", "code" or NULL */
const char *go_alloc_rate_source__name(enum go_alloc_rate_source src);

/*
 * --wall: where the goroutine list and each g's scheduling state are, and
 * Go's names of wait reasons; NULL when GB cannot give them, and then
 * go_binary__wall_problem says why (NULL when it can).
 */
const struct go_wall_layout *go_binary__wall(const struct go_binary *gb);
const char *go_binary__wall_problem(const struct go_binary *gb); /* "label", "traceparent", "otel-sdk" */

/* Reasons it is not supported, and things the user should know when it is. */
size_t go_binary__nproblems(const struct go_binary *gb);
const char *go_binary__problem(const struct go_binary *gb, size_t idx);
size_t go_binary__nwarnings(const struct go_binary *gb);
const char *go_binary__warning(const struct go_binary *gb, size_t idx);
/*
 * A recording says some things once per file, whichever process runs it:
 * marks thing BIT (0 to 31) said, and tells whether it was already.
 */
bool go_binary__said(struct go_binary *gb, unsigned int bit);

const char *go_layout_source__name(enum go_layout_source src); /* "dwarf", "table" or NULL */
const char *go_tls_source__name(enum go_tls_source src);
const char *go_labels_layout__name(__u32 layout); /* "map", "slice" or NULL */

#endif /* __GO_BINARY_H */
