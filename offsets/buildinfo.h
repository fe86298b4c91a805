/* SPDX-License-Identifier: GPL-2.0 */
/* buildinfo.h: the Go version recorded in a binary's .go.buildinfo blob. */
#ifndef __BUILDINFO_H
#define __BUILDINFO_H

#include <stddef.h>
#include <stdint.h>

#define BUILDINFO_MAGIC "\xff Go buildinf:"
#define BUILDINFO_MAGIC_LEN 14
#define BUILDINFO_HEADER_LEN 32

/*
 * Reads LEN bytes at virtual address VADDR of the binary; returns NULL when
 * they are not in the file. The pointer format (before Go 1.18) needs it.
 */
typedef const uint8_t *(*buildinfo_read_fn)(void *ctx, uint64_t vaddr, size_t len);

/*
 * Parses the .go.buildinfo blob DATA[0..LEN) and copies the version string
 * ("go1.21.13") into VERSION. Returns 0, or -EINVAL with a reason in ERR.
 */
int buildinfo__version(const uint8_t *data, size_t len, buildinfo_read_fn read, void *ctx,
		       char *version, size_t versionlen, char *err, size_t errlen);

/*
 * The module that holds package PKG (the dependency whose path is its
 * longest prefix) and the version .go.buildinfo records for it, or for its
 * replacement, into MODULE and VERSION. -ENOENT when it records none: a
 * package of no dependency, a build in GOPATH mode (no module information
 * at all), a replacement by a directory, or the format before Go 1.18.
 */
int buildinfo__package_module(const uint8_t *data, size_t len, const char *pkg, char *module,
			      size_t modulelen, char *version, size_t versionlen);

/*
 * A build setting the module info records ("build\tGOARCH=amd64", Go 1.18
 * and later): KEY's value into VALUE. -ENOENT when there is none, -EINVAL
 * when it does not fit or is not printable.
 */
int buildinfo__setting(const uint8_t *data, size_t len, const char *key, char *value, size_t valuelen);

/* Finds the 16-byte aligned magic in DATA, for binaries whose section headers are gone. */
const uint8_t *buildinfo__find(const uint8_t *data, size_t len);

/*
 * Splits "go1.21.13", "go1.24rc1" or "go1.26.0-X:nocoverageredesign" into
 * major and minor. Returns -EINVAL for anything else (devel builds).
 */
int buildinfo__parse_version(const char *version, int *major, int *minor);

#endif /* __BUILDINFO_H */
