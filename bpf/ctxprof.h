/* SPDX-License-Identifier: GPL-2.0 */
/* ctxprof.h: structures shared byte for byte between the BPF programs and user space. */
#ifndef __CTXPROF_H
#define __CTXPROF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* How runtime/pprof stores a goroutine's labels behind g.labels. */
#define GO_LABELS_MAP 1 /* Go <= 1.23: *labelMap -> *hmap with string buckets */
#define GO_LABELS_SLICE 2 /* Go >= 1.24: labelMap{ list []label } */

/*
 * Everything the sampler needs to walk fsbase -> g -> m -> curg -> labels in
 * one target process. Offsets are in bytes. tls_g_offset is the signed offset
 * of the g pointer from fsbase, stored as two's complement so that unsigned
 * addition in BPF gives the right address.
 */
struct go_layout {
	__u64 tls_g_offset;
	__u32 labels_layout; /* GO_LABELS_MAP or GO_LABELS_SLICE */
	__u32 g_m;
	__u32 m_curg;
	__u32 g_labels;
	__u32 g_goid;
	/* GO_LABELS_MAP: runtime.hmap and bucket<string,string> */
	__u32 hmap_count;
	__u32 hmap_b;
	__u32 hmap_buckets;
	__u32 bucket_size;
	__u32 bucket_tophash;
	__u32 bucket_keys;
	__u32 bucket_values;
	__u32 bucket_overflow;
	/* GO_LABELS_SLICE: labelMap.list and its {key, value string} element */
	__u32 label_list;
	__u32 label_size;
	__u32 label_key;
	__u32 label_value;
	__u32 __pad;
};

#endif /* __CTXPROF_H */
