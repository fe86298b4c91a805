// SPDX-License-Identifier: GPL-2.0
/* cpus.c: which of this machine's CPUs are online. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "cpus.h"

int cpus__online(bool **online, int *n)
{
	int ncpus = libbpf_num_possible_cpus(), a, b, i, err;
	char buf[1024], *tok, *save = NULL, *end;
	FILE *f;

	*online = NULL;
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	*online = calloc(ncpus, sizeof(bool));
	if (!*online)
		return -ENOMEM;
	*n = ncpus;
	f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		err = f ? -EIO : -errno;
		if (f)
			fclose(f);
		for (i = 0; i < ncpus; i++)
			(*online)[i] = true;
		return err;
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
