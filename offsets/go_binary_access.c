// SPDX-License-Identifier: GPL-2.0
/* go_binary_access.c: what go_binary__open found, handed out as go_binary.h declares it. */
#include <errno.h>
#include <string.h>

#include "elf_image.h"
#include "go_binary_priv.h"

bool go_binary__supported(const struct go_binary *gb)
{
	return gb->problems.n == 0 && gb->tls_known && gb->source != GO_SOURCE_NONE;
}

bool go_binary__is_elf(const struct go_binary *gb)
{
	return gb->img != NULL;
}

int go_binary__rodata(const struct go_binary *gb, uint64_t *addr, uint64_t *len)
{
	return elf_image__section_range(gb->img, ".rodata", addr, len);
}

uint64_t go_binary__entry(const struct go_binary *gb)
{
	const GElf_Ehdr *eh = gb->img ? elf_image__ehdr(gb->img) : NULL;

	return eh ? eh->e_entry : 0;
}

const char *go_binary__path(const struct go_binary *gb)
{
	return gb->path;
}

const char *go_binary__version(const struct go_binary *gb)
{
	return gb->version[0] ? gb->version : NULL;
}

const char *go_binary__arch(const struct go_binary *gb)
{
	return gb->arch;
}

bool go_binary__before(const struct go_binary *gb, const char *arch, int major, int minor)
{
	/* a release not parsed is 0.0: before nothing, as it is not supported either */
	return gb->arch && !strcmp(gb->arch, arch) && gb->major > 0 &&
	       (gb->major < major || (gb->major == major && gb->minor < minor));
}

bool go_binary__pie(const struct go_binary *gb)
{
	return gb->pie;
}

bool go_binary__cgo(const struct go_binary *gb)
{
	return gb->cgo;
}

bool go_binary__has_dwarf(const struct go_binary *gb)
{
	return gb->dwarf;
}

bool go_binary__has_symtab(const struct go_binary *gb)
{
	return gb->symtab;
}

bool go_binary__sets_labels(const struct go_binary *gb)
{
	return gb->sets_labels;
}

enum go_layout_source go_binary__source(const struct go_binary *gb)
{
	return gb->source;
}

enum go_tls_source go_binary__tls_source(const struct go_binary *gb)
{
	return gb->tls_source;
}

uint32_t go_binary__md_gofunc(const struct go_binary *gb)
{
	return gb->md_gofunc;
}

const struct gopclntab *go_binary__pclntab(const struct go_binary *gb)
{
	return gb->pcln;
}

int go_binary__layout(const struct go_binary *gb, struct go_layout *out)
{
	if (!go_binary__supported(gb))
		return -EINVAL;
	*out = gb->layout;
	/* Go 1.21 saves BP first (PUSHQ BP), so BP is never the caller's once SP has moved */
	out->late_bp = go_binary__before(gb, "amd64", 1, 21);
	return 0;
}

size_t go_binary__nproblems(const struct go_binary *gb)
{
	return gb->problems.n;
}

const char *go_binary__problem(const struct go_binary *gb, size_t idx)
{
	return idx < gb->problems.n ? gb->problems.text[idx] : NULL;
}

size_t go_binary__nwarnings(const struct go_binary *gb)
{
	return gb->warnings.n;
}

const char *go_binary__warning(const struct go_binary *gb, size_t idx)
{
	return idx < gb->warnings.n ? gb->warnings.text[idx] : NULL;
}

bool go_binary__said(struct go_binary *gb, unsigned int bit)
{
	uint32_t m = 1U << (bit & 31);
	bool was = gb->said & m;

	gb->said |= m;
	return was;
}

const char *go_layout_source__name(enum go_layout_source src)
{
	switch (src) {
	case GO_SOURCE_DWARF:
		return "dwarf";
	case GO_SOURCE_TABLE:
		return "table";
	default:
		return NULL;
	}
}

const char *go_tls_source__name(enum go_tls_source src)
{
	switch (src) {
	case GO_TLS_NO_PT_TLS:
		return "no-pt-tls";
	case GO_TLS_TLSG:
		return "tlsg";
	case GO_TLS_STACKCHECK:
		return "stackcheck";
	case GO_TLS_REGISTER:
		return "register";
	case GO_TLS_LOAD_G:
		return "load_g";
	default:
		return NULL;
	}
}

bool go_binary__serves_requests(const struct go_binary *gb)
{
	return gb->serves_http || gb->serves_grpc;
}

const char *go_binary__trace_servers(const struct go_binary *gb)
{
	static const char *const names[4] = { "", "net/http", "grpc-go", "net/http grpc-go" };
	int i = (gb->layout.hdr.map ? 1 : 0) | (gb->layout.grpc.ok ? 2 : 0);

	return go_binary__supported(gb) ? names[i] : "";
}

size_t go_binary__module_members(const struct go_binary *gb,
				  const struct go_module_member **members)
{
	*members = gb->members;
	return gb->nmembers;
}

long go_binary__label_probe(const struct go_binary *gb)
{
	return go_binary__supported(gb) && gb->label_probe >= 0 ? gb->label_probe : -1;
}

long go_binary__do_probe(const struct go_binary *gb)
{
	return go_binary__label_probe(gb) >= 0 ? gb->do_probe : -1;
}

bool go_binary__spawn_probe(const struct go_binary *gb)
{
	return gb->spawn_probe;
}

size_t go_binary__trace_probes(const struct go_binary *gb, const struct go_trace_probe **probes)
{
	*probes = gb->probes;
	return go_binary__supported(gb) ? gb->nprobes : 0;
}

const char *go_binary__trace_source_problem(const struct go_binary *gb, enum trace_source src)
{
	if (src >= TRACE_SOURCE_COUNT)
		return "unknown source";
	if (!go_binary__supported(gb))
		return "the binary is not supported";
	return gb->source_problem[src][0] ? gb->source_problem[src] : NULL;
}

const struct go_wall_layout *go_binary__wall(const struct go_binary *gb)
{
	return go_binary__supported(gb) && !gb->wall_problem[0] ? &gb->wall : NULL;
}

const char *go_binary__wall_problem(const struct go_binary *gb)
{
	if (!go_binary__supported(gb))
		return "the binary is not supported";
	return gb->wall_problem[0] ? gb->wall_problem : NULL;
}

const char *trace_source__name(enum trace_source src)
{
	static const char *const names[TRACE_SOURCE_COUNT] = {
		[TRACE_SOURCE_LABEL] = "label",
		[TRACE_SOURCE_TRACEPARENT] = "traceparent",
		[TRACE_SOURCE_OTEL_SDK] = "otel-sdk",
		[TRACE_SOURCE_OBI] = "obi",
	};

	return src < TRACE_SOURCE_COUNT ? names[src] : NULL;
}

const char *go_labels_layout__name(__u32 layout)
{
	switch (layout) {
	case GO_LABELS_MAP:
		return "map";
	case GO_LABELS_SLICE:
		return "slice";
	default:
		return NULL;
	}
}

int go_binary__alloc_probe(const struct go_binary *gb, struct go_alloc_probe *out)
{
	*out = gb->alloc;
	return gb->alloc_err;
}

const char *go_binary__alloc_problem(const struct go_binary *gb)
{
	if (!gb->alloc_err)
		return NULL;
	if (gb->alloc_problem[0])
		return gb->alloc_problem;
	/* never looked for: the binary stopped being read before */
	return gb->problems.n ? gb->problems.text[0] : "the binary was not read";
}

const char *go_binary__alloc_rate_problem(const struct go_binary *gb)
{
	if (gb->alloc.rate_source != GO_ALLOC_RATE_NONE)
		return NULL;
	if (gb->alloc_rate_problem[0])
		return gb->alloc_rate_problem;
	return go_binary__alloc_problem(gb) ?: "not found";
}

const char *go_alloc_rate_source__name(enum go_alloc_rate_source src)
{
	switch (src) {
	case GO_ALLOC_RATE_SYMTAB:
		return "symtab";
	case GO_ALLOC_RATE_CODE:
		return "code";
	default:
		return NULL;
	}
}
