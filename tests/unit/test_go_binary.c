// SPDX-License-Identifier: GPL-2.0
/* test_go_binary.c: go_binary__before on a binary built here, as the leaf repair and the frame table ask it. */
#include <stdlib.h>
#include <string.h>

#include "offsets/buildinfo.h"
#include "offsets/go_binary.h"
#include "tap.h"

static void test_before(void)
{
	const char *bin = getenv("GO_TEST_BINARY"), *arch, *other;
	struct go_binary *gb;
	int major = 0, minor = 0;
	char err[256] = "";
	bool ok;

	if (!bin) {
		skip("releases before a binary's", "GO_TEST_BINARY not set (tests/run.sh sets it)");
		return;
	}
	gb = go_binary__open_symbols(bin, err, sizeof(err));
	arch = gb ? go_binary__arch(gb) : NULL;
	ok = arch && go_binary__version(gb) &&
	     !buildinfo__parse_version(go_binary__version(gb), &major, &minor);
	if (!verdict(ok, "GO_TEST_BINARY's architecture and release", "both",
		     ok ? "both" : gb ? "not both" : err)) {
		go_binary__close(gb);
		return;
	}
	other = strcmp(arch, "arm64") ? "arm64" : "amd64";
	check(!go_binary__before(gb, arch, major, minor), desc("go%d.%d is not before itself", major, minor),
	      "false", "true");
	check(go_binary__before(gb, arch, major, minor + 1),
	      desc("go%d.%d is before go%d.%d", major, minor, major, minor + 1), "true", "false");
	check(go_binary__before(gb, arch, major + 1, 0),
	      desc("go%d.%d is before go%d.0", major, minor, major + 1), "true", "false");
	check(!go_binary__before(gb, arch, major, minor > 0 ? minor - 1 : 0),
	      desc("go%d.%d is not before an earlier release", major, minor), "false", "true");
	check(!go_binary__before(gb, other, major, minor + 1),
	      desc("a binary for %s is before nothing on %s", arch, other), "false", "true");
	go_binary__close(gb);
}

int main(void)
{
	test_before();
	return tap_done();
}
