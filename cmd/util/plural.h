/* SPDX-License-Identifier: GPL-2.0 */
/* plural.h: a noun's ending for a count, in the lines people read. */
#ifndef __PLURAL_H
#define __PLURAL_H

/* "s" for any count but 1: "1 sample", "2 samples" */
static inline const char *plural(unsigned long long n)
{
	return n == 1 ? "" : "s";
}

#endif /* __PLURAL_H */
