// SPDX-License-Identifier: GPL-2.0
/* parts.c: the parts every target has, by enum part_id, as part.h lists them. */
#include "part.h"

const struct part_ops *const target_parts[PART_COUNT] = {
#define PART_ENTRY(id, ops) [id] = &ops,
	TARGET_PARTS(PART_ENTRY)
#undef PART_ENTRY
};
