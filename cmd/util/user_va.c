// SPDX-License-Identifier: GPL-2.0
/* user_va.c: the width of user addresses, read from the mappings of a process. */
#include <inttypes.h>
#include <string.h>

#include "user_va.h"

uint64_t user_va__mask_from_maps(FILE *maps)
{
	char line[4096], name[64];
	uint64_t start, end, top = 0;
	int bits = 0;

	while (fgets(line, sizeof(line), maps)) {
		name[0] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %*s %*s %63s", &start, &end,
			   name) < 2)
			continue;
		if (!strcmp(name, "[vsyscall]"))
			continue;
		if (end > top)
			top = end;
	}
	if (!top)
		return ~0ULL;
	/* bits of the highest address in use, top - 1 */
	for (top--; top; top >>= 1)
		bits++;
	return bits >= 64 ? ~0ULL : (1ULL << bits) - 1;
}

uint64_t user_va__mask(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	uint64_t mask;

	if (!f)
		return ~0ULL;
	mask = user_va__mask_from_maps(f);
	fclose(f);
	return mask;
}
