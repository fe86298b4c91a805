// SPDX-License-Identifier: GPL-2.0
/* version.c: the build's version, from the generated version string the Makefile rewrites when it changes. */
#include "cmd/util/version.h"
#include "version_string.h"

const char ctxprof_version[] = CTXPROF_VERSION;
const char ctxprof_generator[] = "ctxprof-go " CTXPROF_VERSION;
