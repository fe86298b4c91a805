/* SPDX-License-Identifier: GPL-2.0 */
/* duration.h: -d and -i's values: plain seconds, or durations as Go writes them. */
#ifndef __DURATION_H
#define __DURATION_H

/* Plain seconds, or a Go duration (500ms, 10s, 2m, 1m30s) into *OUT: 0, or -1 unless more than 0 and at most 1e7 s. */
int duration__seconds(const char *s, double *out);

#endif /* __DURATION_H */
