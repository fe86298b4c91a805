/* SPDX-License-Identifier: GPL-2.0 */
/* part_labels.h: who sets a target's label sets, so that a request counts only while it lives. */
#ifndef __PART_LABELS_H
#define __PART_LABELS_H

#include <stddef.h>

#include "part.h"

struct owners;

/* Its entries of label_owners whose setter exited or left unseen, by COPY: deleted; how many. */
size_t labels_part__sweep(struct part_ctx *c, struct owners *copy);

#endif /* __PART_LABELS_H */
