// SPDX-License-Identifier: GPL-2.0
/* test_buildinfo.c: buildinfo__version, __find and __parse_version on blobs built here. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "offsets/buildinfo.h"
#include "tap.h"

/* header byte 15, as Go's linker writes it */
#define FLAG_BIG_ENDIAN 0x1
#define FLAG_INLINE_STRINGS 0x2

#define BLOB_MAX 512
#define MODINFO "path\tgithub.com/example/traced\n"

/* Where the fake address space of the pointer format starts. */
#define FAKE_BASE 0x4a0000ULL
/* The version string sits this far into it, after the {ptr, len} header. */
#define FAKE_STR_OFF 16

static void put_uint(uint8_t *p, uint64_t v, unsigned int size, bool big)
{
	unsigned int i;

	for (i = 0; i < size; i++)
		p[big ? size - 1 - i : i] = v >> (8 * i);
}

static size_t put_uvarint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = v | 0x80;
		v >>= 7;
	}
	p[n++] = v;
	return n;
}

static size_t put_header(uint8_t *b, unsigned int ptrsize, uint8_t flags)
{
	memset(b, 0, BUILDINFO_HEADER_LEN);
	memcpy(b, BUILDINFO_MAGIC, BUILDINFO_MAGIC_LEN);
	b[14] = ptrsize;
	b[15] = flags;
	return BUILDINFO_HEADER_LEN;
}

/* Go 1.18+: the header, then varint-prefixed version and modinfo strings. */
static size_t inline_blob(uint8_t *b, const char *version)
{
	size_t n = put_header(b, 8, FLAG_INLINE_STRINGS);

	n += put_uvarint(b + n, strlen(version));
	memcpy(b + n, version, strlen(version));
	n += strlen(version);
	n += put_uvarint(b + n, strlen(MODINFO));
	memcpy(b + n, MODINFO, strlen(MODINFO));
	return n + strlen(MODINFO);
}

/* Before Go 1.18: the header holds a pointer to the version's string header. */
static size_t pointer_blob(uint8_t *b, unsigned int ptrsize, bool big, uint64_t addr)
{
	size_t n = put_header(b, ptrsize, big ? FLAG_BIG_ENDIAN : 0);

	put_uint(b + 16, addr, ptrsize, big);
	return n;
}

/* A few bytes of a binary's address space, starting at FAKE_BASE. */
struct fake_mem {
	uint8_t *bytes;
	size_t size;
};

/* A Go string header {STR_ADDR, STR_LEN} at FAKE_BASE, then TEXT at FAKE_STR_OFF. */
static void fake_mem_init(struct fake_mem *m, unsigned int ptrsize, bool big, uint64_t str_addr,
			  uint64_t str_len, const char *text)
{
	uint8_t b[BLOB_MAX] = { 0 };

	put_uint(b, str_addr, ptrsize, big);
	put_uint(b + ptrsize, str_len, ptrsize, big);
	memcpy(b + FAKE_STR_OFF, text, strlen(text));
	m->size = FAKE_STR_OFF + strlen(text);
	m->bytes = dup_exact(b, m->size);
}

static const uint8_t *fake_read(void *ctx, uint64_t vaddr, size_t len)
{
	struct fake_mem *m = ctx;

	if (vaddr < FAKE_BASE || vaddr - FAKE_BASE > m->size ||
	    len > m->size - (vaddr - FAKE_BASE))
		return NULL;
	return m->bytes + (vaddr - FAKE_BASE);
}

/* buildinfo__version on an exact-size copy of BLOB[0..LEN). */
static int version_of(const uint8_t *blob, size_t len, struct fake_mem *m, char *version,
		      size_t versionlen, char *err, size_t errlen)
{
	uint8_t *copy = dup_exact(blob, len);
	int rc;

	rc = buildinfo__version(copy, len, m ? fake_read : NULL, m, version, versionlen, err,
				errlen);
	free(copy);
	return rc;
}

static void expect_version(const char *what, const uint8_t *blob, size_t len,
			   struct fake_mem *m, const char *expected)
{
	char version[160] = "", err[128] = "", want[160], got[300];
	int rc;

	rc = version_of(blob, len, m, version, sizeof(version), err, sizeof(err));
	if (rc)
		snprintf(got, sizeof(got), "%d (%s)", rc, err);
	else
		snprintf(got, sizeof(got), "\"%s\"", version);
	verdict(rc == 0 && strcmp(version, expected) == 0, what,
		quote(want, sizeof(want), expected), got);
}

static void expect_einval(const char *what, const uint8_t *blob, size_t len, struct fake_mem *m)
{
	char version[160] = "", err[128] = "", got[300];
	int rc;

	rc = version_of(blob, len, m, version, sizeof(version), err, sizeof(err));
	snprintf(got, sizeof(got), "%d (%s)", rc, err[0] ? err : "no reason given");
	verdict(rc == -EINVAL && err[0], what, "-EINVAL with a reason", got);
}

static void test_inline(void)
{
	static const char *const versions[] = {
		"go1.21.13", "go1.24rc1", "go1.26.0-X:nocoverageredesign",
	};
	uint8_t b[BLOB_MAX];
	size_t i, n;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		n = inline_blob(b, versions[i]);
		expect_version(desc("inline format, %s", versions[i]), b, n, NULL, versions[i]);
	}

	/* Go's uvarint also accepts a non-minimal length: 0x89 0x00 is 9 */
	n = put_header(b, 8, FLAG_INLINE_STRINGS);
	b[n++] = 0x89;
	b[n++] = 0x00;
	memcpy(b + n, "go1.19.13", 9);
	expect_version("inline format, two-byte length", b, n + 9, NULL, "go1.19.13");
}

static void test_pointer(void)
{
	static const struct {
		unsigned int ptrsize;
		bool big;
		const char *version;
	} cases[] = {
		{ 8, false, "go1.17.13" },
		{ 4, false, "go1.16.15" },
		{ 8, true, "go1.17.2" },
		{ 4, true, "go1.16" },
	};
	struct fake_mem m;
	uint8_t b[BLOB_MAX];
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fake_mem_init(&m, cases[i].ptrsize, cases[i].big, FAKE_BASE + FAKE_STR_OFF,
			      strlen(cases[i].version), cases[i].version);
		n = pointer_blob(b, cases[i].ptrsize, cases[i].big, FAKE_BASE);
		expect_version(desc("pointer format, %u-byte %s-endian, %s", cases[i].ptrsize,
				    cases[i].big ? "big" : "little", cases[i].version),
			       b, n, &m, cases[i].version);
		free(m.bytes);
	}
}

static void test_bad_inline(void)
{
	char version[160];
	uint8_t b[BLOB_MAX];
	size_t i, n, full;

	full = inline_blob(b, "go1.21.13");
	expect_einval("empty blob", b, 0, NULL);
	expect_einval("header cut at 31 bytes", b, BUILDINFO_HEADER_LEN - 1, NULL);
	expect_einval("header only, no version length", b, BUILDINFO_HEADER_LEN, NULL);
	expect_einval("version cut after 4 of 9 bytes", b, BUILDINFO_HEADER_LEN + 1 + 4, NULL);

	b[1] = 'g';
	expect_einval("wrong magic", b, full, NULL);

	n = put_header(b, 8, FLAG_INLINE_STRINGS);
	b[n++] = 0x20;
	memcpy(b + n, "go1.21", 6);
	expect_einval("length 32 with 6 bytes left", b, n + 6, NULL);

	n = put_header(b, 8, FLAG_INLINE_STRINGS);
	b[n++] = 0x80;
	expect_einval("length varint cut after a continuation byte", b, n, NULL);

	n = put_header(b, 8, FLAG_INLINE_STRINGS);
	for (i = 0; i < 11; i++)
		b[n++] = 0x80;
	memcpy(b + n, "go1.21.13", 9);
	expect_einval("overlong length varint (11 bytes of 0x80)", b, n + 9, NULL);

	n = put_header(b, 8, FLAG_INLINE_STRINGS);
	for (i = 0; i < 9; i++)
		b[n++] = 0xff;
	b[n++] = 0x02;
	expect_einval("length varint beyond 64 bits", b, n, NULL);

	n = inline_blob(b, "");
	expect_einval("zero-length version", b, n, NULL);

	n = inline_blob(b, "go1.21\n");
	expect_einval("control character in version", b, n, NULL);

	n = inline_blob(b, "go1.21\xc3\xa9");
	expect_einval("non-ASCII bytes in version", b, n, NULL);

	/* err may be NULL when the caller does not want the reason */
	n = inline_blob(b, "go1.21.13");
	b[1] = 'g';
	check_int("wrong magic with no error buffer", -EINVAL,
		  buildinfo__version(b, n, NULL, NULL, version, sizeof(version), NULL, 0));
}

/*
 * "go1.21.13" and its NUL need 10 bytes: they fit in exactly 10, and in 9 the
 * call fails. The buffers are exact heap blocks, so ASan sees a write past them.
 */
static void test_small_buffer(void)
{
	static const struct {
		size_t size;
		int rc;
	} cases[] = { { 10, 0 }, { 9, -EINVAL }, { 4, -EINVAL } };
	uint8_t b[BLOB_MAX], *copy;
	char *version, err[128], got[160];
	size_t i, n;
	int rc;

	n = inline_blob(b, "go1.21.13");
	copy = dup_exact(b, n);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		version = malloc(cases[i].size);
		if (!version) {
			perror("malloc");
			exit(2);
		}
		err[0] = '\0';
		rc = buildinfo__version(copy, n, NULL, NULL, version, cases[i].size, err,
					sizeof(err));
		if (rc)
			snprintf(got, sizeof(got), "%d (%s)", rc, err);
		else
			snprintf(got, sizeof(got), "\"%s\"", version);
		verdict(rc == cases[i].rc && (rc || strcmp(version, "go1.21.13") == 0),
			desc("go1.21.13 into a %zu-byte buffer", cases[i].size),
			cases[i].rc ? "-EINVAL" : "\"go1.21.13\"", got);
		free(version);
	}
	free(copy);
}

static void test_bad_pointer(void)
{
	struct fake_mem m;
	uint8_t b[BLOB_MAX];
	size_t n;

	fake_mem_init(&m, 8, false, FAKE_BASE + FAKE_STR_OFF, 9, "go1.17.13");

	n = pointer_blob(b, 8, false, 0x900000);
	expect_einval("pointer to a string header outside the file", b, n, &m);

	n = pointer_blob(b, 8, false, FAKE_BASE + m.size - 8);
	expect_einval("string header running past the end of the file", b, n, &m);

	n = pointer_blob(b, 8, false, FAKE_BASE);
	expect_einval("pointer format with no read callback", b, n, NULL);

	n = pointer_blob(b, 2, false, FAKE_BASE);
	expect_einval("pointer format with 2-byte pointers", b, n, &m);

	n = pointer_blob(b, 8, true, FAKE_BASE);
	expect_einval("little-endian data read as big-endian", b, n, &m);
	free(m.bytes);

	n = pointer_blob(b, 8, false, FAKE_BASE);
	fake_mem_init(&m, 8, false, 0x900000, 9, "go1.17.13");
	expect_einval("string pointer outside the file", b, n, &m);
	free(m.bytes);

	fake_mem_init(&m, 8, false, FAKE_BASE + FAKE_STR_OFF, 40, "go1.17.13");
	expect_einval("string length running past the end of the file", b, n, &m);
	free(m.bytes);

	fake_mem_init(&m, 8, false, FAKE_BASE + FAKE_STR_OFF, 1ULL << 40, "go1.17.13");
	expect_einval("string length 2^40", b, n, &m);
	free(m.bytes);

	fake_mem_init(&m, 8, false, FAKE_BASE + FAKE_STR_OFF, 0, "go1.17.13");
	expect_einval("zero string length", b, n, &m);
	free(m.bytes);

	fake_mem_init(&m, 8, false, FAKE_BASE + FAKE_STR_OFF, 9, "go1.17\x01\x02\x03");
	expect_einval("non-printable string", b, n, &m);
	free(m.bytes);
}

/* Where buildinfo__find puts the magic in a zeroed buffer of LEN bytes, or -1. */
static long find_in(size_t len, const long *magic_at, size_t nmagic)
{
	uint8_t b[BLOB_MAX] = { 0 }, *copy;
	const uint8_t *p;
	long off;
	size_t i;

	for (i = 0; i < nmagic; i++)
		put_header(b + magic_at[i], 8, FLAG_INLINE_STRINGS);
	copy = dup_exact(b, len);
	p = buildinfo__find(copy, len);
	off = p ? p - copy : -1;
	free(copy);
	return off;
}

static void test_find(void)
{
	static const struct {
		const char *what;
		size_t len;
		long magic_at[2];
		size_t nmagic;
		long expected;
	} cases[] = {
		{ "magic at offset 0", 64, { 0 }, 1, 0 },
		{ "magic at aligned offset 48", 160, { 48 }, 1, 48 },
		{ "magic at unaligned offset 40", 160, { 40 }, 1, -1 },
		{ "magic at unaligned 40 and aligned 96", 160, { 40, 96 }, 2, 96 },
		{ "magic ending the buffer, aligned 128", 160, { 128 }, 1, 128 },
		{ "no magic in 100 bytes", 100, { 0 }, 0, -1 },
		{ "buffer shorter than a header", 20, { 0 }, 0, -1 },
		{ "empty buffer", 0, { 0 }, 0, -1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_int(desc("buildinfo__find, %s", cases[i].what), cases[i].expected,
			  find_in(cases[i].len, cases[i].magic_at, cases[i].nmagic));
}

static void test_parse_version(void)
{
	static const struct {
		const char *version;
		int rc, major, minor;
	} cases[] = {
		{ "go1.21.13", 0, 1, 21 },
		{ "go1.24rc1", 0, 1, 24 },
		{ "go1.26.0-X:nocoverageredesign", 0, 1, 26 },
		{ "go1.9", 0, 1, 9 },
		{ "go1.18beta2", 0, 1, 18 },
		{ "devel go1.25-abc", -EINVAL },
		{ "go", -EINVAL },
		{ "go1", -EINVAL },
		{ "go1.", -EINVAL },
		{ "gox.y", -EINVAL },
		{ "1.21", -EINVAL },
		{ "", -EINVAL },
	};
	char expected[32], got[32];
	int rc, major, minor;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		major = minor = -1;
		rc = buildinfo__parse_version(cases[i].version, &major, &minor);
		if (cases[i].rc)
			snprintf(expected, sizeof(expected), "%d", cases[i].rc);
		else
			snprintf(expected, sizeof(expected), "%d.%d", cases[i].major,
				 cases[i].minor);
		if (rc)
			snprintf(got, sizeof(got), "%d", rc);
		else
			snprintf(got, sizeof(got), "%d.%d", major, minor);
		verdict(strcmp(expected, got) == 0,
			desc("buildinfo__parse_version(\"%s\")", cases[i].version), expected, got);
	}
}

/* A Go 1.18+ blob whose module info is INFO. */
static size_t modinfo_blob(uint8_t *b, const char *info)
{
	size_t n = put_header(b, 8, FLAG_INLINE_STRINGS);

	n += put_uvarint(b + n, 8);
	memcpy(b + n, "go1.27.3", 8);
	n += 8;
	n += put_uvarint(b + n, strlen(info));
	memcpy(b + n, info, strlen(info));
	return n + strlen(info);
}

static void expect_module(const char *what, const char *info, const char *pkg, int want_ret,
			  const char *want_mod, const char *want_ver)
{
	static uint8_t b[BLOB_MAX * 2];
	char mod[128], ver[64];
	size_t n = modinfo_blob(b, info);
	int ret = buildinfo__package_module(b, n, pkg, mod, sizeof(mod), ver, sizeof(ver));

	check_int(desc("%s: result", what), want_ret, ret);
	if (!want_ret) {
		check_str(desc("%s: module", what), want_mod, mod);
		check_str(desc("%s: version", what), want_ver, ver);
	}
}

static void test_modules(void)
{
	const char *deps = "path\tctxprof.test/x\nmod\tctxprof.test/x\t(devel)\t\n"
			   "dep\tgo.opentelemetry.io/otel\tv1.31.0\th1:a\n"
			   "dep\tgo.opentelemetry.io/otel/sdk\tv1.30.0\th1:b\n"
			   "dep\tgolang.org/x/net\tv0.7.0\th1:c\n"
			   "=>\tgolang.org/x/net\tv0.8.0\th1:d\n"
			   "dep\tgoogle.golang.org/grpc\tv1.64.0\th1:e\n"
			   "=>\t../grpc\t\n"
			   "build\t-compiler=gc\n";

	expect_module("the longest module prefix holds the package", deps,
		      "go.opentelemetry.io/otel/sdk/trace", 0, "go.opentelemetry.io/otel/sdk", "v1.30.0");
	expect_module("a package of the shorter module", deps, "go.opentelemetry.io/otel/trace", 0,
		      "go.opentelemetry.io/otel", "v1.31.0");
	expect_module("a prefix that is no path element is no module", deps,
		      "go.opentelemetry.io/otelx/trace", -ENOENT, NULL, NULL);
	expect_module("a replacement's version decides", deps, "golang.org/x/net/http2", 0,
		      "golang.org/x/net", "v0.8.0");
	expect_module("a replacement by a directory has no version", deps,
		      "google.golang.org/grpc/internal/transport", -ENOENT, NULL, NULL);
	expect_module("a GOPATH build records no modules", "path\tcommand-line-arguments\n",
		      "golang.org/x/net/http2", -ENOENT, NULL, NULL);
}

/* Build settings: GOARCH of "build\tGOARCH=amd64", and none where the info has none. */
static void test_settings(void)
{
	static uint8_t b[BLOB_MAX * 2];
	const char *info = "path\tctxprof.test/x\nbuild\t-compiler=gc\nbuild\tCGO_ENABLED=0\n"
			   "build\tGOARCH=amd64\nbuild\tGOOS=linux\nbuild\tGOAMD64=v1\n";
	char v[16];
	size_t n = modinfo_blob(b, info);

	check_int("GOARCH is there", 0, buildinfo__setting(b, n, "GOARCH", v, sizeof(v)));
	check_str("... and is amd64, not GOAMD64's v1", "amd64", v);
	check_int("GOOS", 0, buildinfo__setting(b, n, "GOOS", v, sizeof(v)));
	check_str("... is linux", "linux", v);
	check_int("no such setting", -ENOENT, buildinfo__setting(b, n, "GOARM", v, sizeof(v)));
	check_int("a value that does not fit", -EINVAL, buildinfo__setting(b, n, "GOARCH", v, 4));
	n = modinfo_blob(b, "path\tcommand-line-arguments\n");
	check_int("a build that records no settings", -ENOENT, buildinfo__setting(b, n, "GOARCH", v, sizeof(v)));
}

int main(void)
{
	test_settings();
	test_inline();
	test_pointer();
	test_bad_inline();
	test_modules();
	test_small_buffer();
	test_bad_pointer();
	test_find();
	test_parse_version();
	return tap_done();
}
