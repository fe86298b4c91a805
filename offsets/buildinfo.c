// SPDX-License-Identifier: GPL-2.0
/* buildinfo.c: the Go version recorded in a binary's .go.buildinfo blob. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buildinfo.h"
#include "util.h"

/* flags byte at offset 15 of the header */
#define FLAG_BIG_ENDIAN 0x1
#define FLAG_INLINE_STRINGS 0x2

/* Longest version string we accept; real ones are about 10 to 40 bytes. */
#define MAX_VERSION_LEN 128

/* Every parse error is -EINVAL, with the reason in ERR. */
#define fail(err, errlen, ...) (set_err(err, errlen, __VA_ARGS__), -EINVAL)

static uint64_t read_uint(const uint8_t *p, unsigned int size, bool big)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < size; i++)
		v |= (uint64_t)p[big ? size - 1 - i : i] << (8 * i);
	return v;
}

/* Go's unsigned varint; returns bytes consumed, 0 on overflow or truncation. */
static size_t read_uvarint(const uint8_t *p, size_t len, uint64_t *val)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len && i < 10; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			if (i == 9 && p[i] > 1)
				return 0;
			*val = v;
			return i + 1;
		}
	}
	return 0;
}

static bool printable(const uint8_t *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	}
	return true;
}

static int copy_version(const uint8_t *s, size_t len, char *version, size_t versionlen,
			char *err, size_t errlen)
{
	if (len == 0)
		return fail(err, errlen, "empty Go version in .go.buildinfo");
	if (len > MAX_VERSION_LEN || len >= versionlen)
		return fail(err, errlen, "Go version in .go.buildinfo is %zu bytes long", len);
	if (!printable(s, len))
		return fail(err, errlen, "Go version in .go.buildinfo is not printable text");
	memcpy(version, s, len);
	version[len] = '\0';
	return 0;
}

int buildinfo__version(const uint8_t *data, size_t len, buildinfo_read_fn read, void *ctx,
		       char *version, size_t versionlen, char *err, size_t errlen)
{
	unsigned int ptrsize;
	uint64_t strlen_, addr, slen;
	const uint8_t *p;
	size_t n;
	bool big;

	if (len < BUILDINFO_HEADER_LEN)
		return fail(err, errlen, ".go.buildinfo is %zu bytes, shorter than its header", len);
	if (memcmp(data, BUILDINFO_MAGIC, BUILDINFO_MAGIC_LEN) != 0)
		return fail(err, errlen, ".go.buildinfo has no Go build info magic");
	ptrsize = data[14];
	big = data[15] & FLAG_BIG_ENDIAN;

	if (data[15] & FLAG_INLINE_STRINGS) {
		/* Go 1.18+: varint-prefixed strings right after the 32-byte header */
		n = read_uvarint(data + BUILDINFO_HEADER_LEN, len - BUILDINFO_HEADER_LEN, &strlen_);
		if (!n)
			return fail(err, errlen, "bad version length in .go.buildinfo");
		if (strlen_ > len - BUILDINFO_HEADER_LEN - n)
			return fail(err, errlen, "Go version runs past the end of .go.buildinfo");
		return copy_version(data + BUILDINFO_HEADER_LEN + n, strlen_, version, versionlen,
				    err, errlen);
	}

	/* before Go 1.18: a pointer to a Go string header {ptr, len} */
	if (ptrsize != 4 && ptrsize != 8)
		return fail(err, errlen, "bad pointer size %u in .go.buildinfo", ptrsize);
	if (!read)
		return fail(err, errlen, "pointer-format .go.buildinfo needs the binary's segments");
	addr = read_uint(data + 16, ptrsize, big);
	p = read(ctx, addr, 2 * ptrsize);
	if (!p)
		return fail(err, errlen, "Go version string header at 0x%llx is not in the file",
			    (unsigned long long)addr);
	slen = read_uint(p + ptrsize, ptrsize, big);
	addr = read_uint(p, ptrsize, big);
	if (slen == 0 || slen > MAX_VERSION_LEN)
		return fail(err, errlen, "Go version in .go.buildinfo is %llu bytes long",
			    (unsigned long long)slen);
	p = read(ctx, addr, slen);
	if (!p)
		return fail(err, errlen, "Go version string at 0x%llx is not in the file",
			    (unsigned long long)addr);
	return copy_version(p, slen, version, versionlen, err, errlen);
}

/*
 * The varint-prefixed string at *P (Go 1.18+ inline format), advancing *P
 * past it; NULL when it runs past END.
 */
static const uint8_t *next_string(const uint8_t **p, const uint8_t *end, uint64_t *slen)
{
	const uint8_t *s;
	size_t n;

	n = read_uvarint(*p, end - *p, slen);
	if (!n || *slen > (uint64_t)(end - *p) - n)
		return NULL;
	s = *p + n;
	*p = s + *slen;
	return s;
}

/*
 * The module info of the blob (inline strings, Go 1.18+): its lines,
 * "path", "dep", "=>" and "build"; NULL when it has none.
 */
static const uint8_t *module_info(const uint8_t *data, size_t len, uint64_t *ilen)
{
	const uint8_t *p = data + BUILDINFO_HEADER_LEN, *end = data + len;

	if (len < BUILDINFO_HEADER_LEN || !(data[15] & FLAG_INLINE_STRINGS))
		return NULL;
	/* the Go version comes first */
	if (!next_string(&p, end, ilen))
		return NULL;
	return next_string(&p, end, ilen);
}

/* PATH\tVERSION[\tSUM] of a dep or => line, bounded by END, into the slices given. */
static bool split_dep(const uint8_t *line, const uint8_t *end, const uint8_t **path, size_t *plen,
		      const uint8_t **ver, size_t *vlen)
{
	const uint8_t *tab = memchr(line, '\t', end - line), *vend;

	*path = line;
	*plen = (tab ? tab : end) - line;
	if (!tab) {
		*ver = end;
		*vlen = 0;
		return true;
	}
	vend = memchr(tab + 1, '\t', end - tab - 1) ?: end;
	*ver = tab + 1;
	*vlen = vend - tab - 1;
	return printable(*path, *plen) && printable(*ver, *vlen);
}

int buildinfo__package_module(const uint8_t *data, size_t len, const char *pkg, char *module,
			      size_t modulelen, char *version, size_t versionlen)
{
	const uint8_t *info, *line, *nl, *path, *ver;
	size_t pkglen = strlen(pkg), plen, vlen, best = 0;
	bool last = false; /* the dep line just read is the best so far */
	uint64_t ilen;

	version[0] = module[0] = '\0';
	/* "dep\tPATH\tVERSION\tSUM" lines */
	if (!(info = module_info(data, len, &ilen)))
		return -ENOENT;
	for (line = info; line < info + ilen; line = nl + 1) {
		nl = memchr(line, '\n', info + ilen - line) ?: info + ilen;
		if (nl - line > 3 && !memcmp(line, "=>\t", 3)) {
			/* the replacement of the dep before it: its version decides */
			if (last && split_dep(line + 3, nl, &path, &plen, &ver, &vlen)) {
				if (vlen >= versionlen)
					return -EINVAL;
				memcpy(version, ver, vlen);
				version[vlen] = '\0';
			}
			continue;
		}
		last = false;
		if (nl - line < 5 || memcmp(line, "dep\t", 4) ||
		    !split_dep(line + 4, nl, &path, &plen, &ver, &vlen))
			continue;
		/* the module whose path is the longest prefix of the package's holds it */
		if (plen <= best || plen > pkglen || memcmp(path, pkg, plen) ||
		    (plen < pkglen && pkg[plen] != '/'))
			continue;
		if (plen >= modulelen || vlen >= versionlen)
			return -EINVAL;
		memcpy(module, path, plen);
		module[plen] = '\0';
		memcpy(version, ver, vlen);
		version[vlen] = '\0';
		best = plen;
		last = true;
	}
	if (!best)
		return -ENOENT;
	/* replaced by a directory: no version */
	return version[0] ? 0 : -ENOENT;
}

int buildinfo__setting(const uint8_t *data, size_t len, const char *key, char *value, size_t valuelen)
{
	const uint8_t *info, *line, *nl, *v;
	size_t klen = strlen(key);
	uint64_t ilen;

	value[0] = '\0';
	if (!(info = module_info(data, len, &ilen)))
		return -ENOENT;
	/* "build\tKEY=VALUE" lines, one a setting */
	for (line = info; line < info + ilen; line = nl + 1) {
		nl = memchr(line, '\n', info + ilen - line) ?: info + ilen;
		if ((size_t)(nl - line) <= 6 + klen || memcmp(line, "build\t", 6) ||
		    memcmp(line + 6, key, klen) || line[6 + klen] != '=')
			continue;
		v = line + 7 + klen;
		if ((size_t)(nl - v) >= valuelen || !printable(v, nl - v))
			return -EINVAL;
		memcpy(value, v, nl - v);
		value[nl - v] = '\0';
		return 0;
	}
	return -ENOENT;
}

const uint8_t *buildinfo__find(const uint8_t *data, size_t len)
{
	size_t off;

	for (off = 0; off + BUILDINFO_HEADER_LEN <= len; off += 16) {
		if (memcmp(data + off, BUILDINFO_MAGIC, BUILDINFO_MAGIC_LEN) == 0)
			return data + off;
	}
	return NULL;
}

int buildinfo__parse_version(const char *version, int *major, int *minor)
{
	const char *p;
	long v[2];
	char *end;
	int i;

	if (strncmp(version, "go", 2) != 0)
		return -EINVAL;
	p = version + 2;
	for (i = 0; i < 2; i++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v[i] = strtol(p, &end, 10);
		if (errno || v[i] > 1000)
			return -EINVAL;
		p = end;
		if (i == 0 && *p++ != '.')
			return -EINVAL;
	}
	/* after minor: end, ".patch", "rc1", "beta2" or a "-X:..." / " X:..." suffix */
	if (*p && *p != '.' && *p != '-' && *p != ' ' && strncmp(p, "rc", 2) != 0 &&
	    strncmp(p, "beta", 4) != 0)
		return -EINVAL;
	*major = v[0];
	*minor = v[1];
	return 0;
}
