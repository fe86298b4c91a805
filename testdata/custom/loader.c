// SPDX-License-Identifier: GPL-2.0
/* loader.c: loads example_tailcall.bpf.o, joins it to ctxprof-go's pins, and attaches it to report_trace. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	done = 1;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = "report_trace");
	struct bpf_object *obj = NULL;
	struct bpf_link *link = NULL;
	struct bpf_program *prog;
	struct bpf_map *ctx_map;
	char path[4096];
	int err = 0, map_fd = -1, prog_fd = -1, jump_fd;
	__u32 zero = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: %s PIN_DIR OBJECT.bpf.o BINARY\n"
				"  joins ctxprof-go --pin PIN_DIR and calls it from every\n"
				"  report_trace() in BINARY, with the argument as context\n",
			argv[0]);
		return 2;
	}
	/* 1. ctxprof-go's map and program, from their pins */
	snprintf(path, sizeof(path), "%s/custom_context_map", argv[1]);
	map_fd = bpf_obj_get(path);
	if (map_fd < 0) {
		err = -errno;
		fprintf(stderr, "failed to open %s: %s (is ctxprof-go --pin %s running?)\n", path,
			strerror(-err), argv[1]);
		goto cleanup;
	}
	snprintf(path, sizeof(path), "%s/custom__generic", argv[1]);
	prog_fd = bpf_obj_get(path);
	if (prog_fd < 0) {
		err = -errno;
		fprintf(stderr, "failed to open %s: %s\n", path, strerror(-err));
		goto cleanup;
	}
	/* 2. our object, with its custom_context_map replaced by ctxprof-go's */
	obj = bpf_object__open_file(argv[2], NULL);
	if (!obj) {
		err = -errno;
		fprintf(stderr, "failed to open %s: %s\n", argv[2], strerror(-err));
		goto cleanup;
	}
	ctx_map = bpf_object__find_map_by_name(obj, "custom_context_map");
	if (!ctx_map || (err = bpf_map__reuse_fd(ctx_map, map_fd))) {
		err = err ?: -ENOENT;
		fprintf(stderr, "failed to reuse custom_context_map: %s\n", strerror(-err));
		goto cleanup;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "failed to load %s: %s\n", argv[2], strerror(-err));
		goto cleanup;
	}
	/* 3. custom__generic at index 0 of our jump table */
	jump_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "ctxprof_jump"));
	if (bpf_map_update_elem(jump_fd, &zero, &prog_fd, BPF_ANY)) {
		err = -errno;
		fprintf(stderr, "failed to put custom__generic in the jump table: %s\n",
			strerror(-err));
		goto cleanup;
	}
	/* 4. our uprobe on report_trace, in every process that runs BINARY */
	prog = bpf_object__find_program_by_name(obj, "report");
	link = bpf_program__attach_uprobe_opts(prog, -1, argv[3], 0, &opts);
	if (!link) {
		err = -errno;
		fprintf(stderr, "failed to attach to %s:report_trace: %s\n", argv[3], strerror(-err));
		goto cleanup;
	}
	printf("ready\n");
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!done)
		pause();
cleanup:
	bpf_link__destroy(link);
	bpf_object__close(obj);
	if (prog_fd >= 0)
		close(prog_fd);
	if (map_fd >= 0)
		close(map_fd);
	return err ? 1 : 0;
}
