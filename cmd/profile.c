// SPDX-License-Identifier: GPL-2.0
/* profile.c: `ctxprof-go --pid`: sample Go processes and print trace-tagged records. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>

#include "cmd/record/session.h"
#include "profile.h"
#include "profile_args.h"

static int verbose;

/* libbpf's own messages, with -v only: its failures reach the user through ours */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return verbose > 1 ? vfprintf(stderr, fmt, args) : 0;
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

/* What the kernel must offer before anything is loaded; false after saying what is missing. */
static bool can_sample(void)
{
	if (check_privileges())
		return false;
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		fprintf(stderr, "kernel BTF not found at /sys/kernel/btf/vmlinux: ctxprof-go needs "
				"a kernel built with CONFIG_DEBUG_INFO_BTF=y\n");
		return false;
	}
	return true;
}

/* -p's processes, each of which must be a target; --all's, those that can be. */
static int add_targets(struct session *s, const struct session_config *o)
{
	int err = session__add_targets(s, o->pids, o->npids);

	if (err)
		return err;
	if (o->all)
		session__discover(s);
	return 0;
}

int profile__main(int argc, char **argv)
{
	struct session_config o = {};
	struct session *s;
	int err;

	err = profile_args__parse(argc, argv, &o);
	/* a usage error said what was wrong: then where the usage is */
	if (err == 2)
		fprintf(stderr, "Try 'ctxprof-go --help'.\n");
	if (err >= 0) {
		profile_args__free(&o);
		return err;
	}
	verbose = o.verbose;
	libbpf_set_print(libbpf_print);
	if (!can_sample()) {
		profile_args__free(&o);
		return 1;
	}

	s = session__new(&o);
	if (!s) {
		profile_args__free(&o);
		return 1;
	}
	err = add_targets(s, &o);
	if (err)
		goto cleanup;
	/* events can come from any process: only sampling alone ends with its targets */
	err = session__run(s, o.npids && !o.pin_dir && !o.nuprobes);

cleanup:
	session__free(s);
	profile_args__free(&o);
	if (fclose(stdout) != 0 && !err) {
		err = -errno;
		fprintf(stderr, "ctxprof-go: failed to write to stdout: %s\n", strerror(-err));
	}
	return err ? 1 : 0;
}
