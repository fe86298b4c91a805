/* SPDX-License-Identifier: GPL-2.0 */
/* otlp_split.h: an encoded OTLP profiles request cut in two, each half with the dictionary entries it uses. */
#ifndef __OTLP_SPLIT_H
#define __OTLP_SPLIT_H

#include <stddef.h>
#include <stdint.h>

struct otlp_part {
	uint8_t *buf; /* malloc'd */
	size_t len;
	uint64_t samples; /* the samples the half stands for */
};

/*
 * Cuts the ExportProfilesServiceRequest BUF (LEN bytes, SAMPLES samples)
 * into OUT[0] and OUT[1]: the first and the second half of its samples,
 * in the order they come (an alloc_space sample goes with its twin of the
 * alloc_objects profile before it, the same allocations), each half with
 * its own dictionary holding only what its samples and profiles refer to.
 * OUT's samples add up to SAMPLES.
 * -E2BIG when it holds fewer than two samples, -EINVAL when it does not
 * decode or refers outside its dictionary, -ENOMEM.
 */
int otlp_split(const uint8_t *buf, size_t len, uint64_t samples, struct otlp_part out[2]);

#endif /* __OTLP_SPLIT_H */
