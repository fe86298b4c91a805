/* SPDX-License-Identifier: GPL-2.0 */
/* profile.h: `ctxprof-go --pid`: sample Go processes and print trace-tagged records. */
#ifndef __PROFILE_H
#define __PROFILE_H

/* Exit status: 0 on success (also after SIGINT or when targets exit), 1 on errors. */
int profile__main(int argc, char **argv);

#endif /* __PROFILE_H */
