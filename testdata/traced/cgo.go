// SPDX-License-Identifier: GPL-2.0
// cgo.go: C thread-locals that move Go's g slot away from fs-8 in cgo builds.
//go:build cgo

package main

/*
// 232 bytes of thread-local storage ahead of runtime.tlsg in PT_TLS.
__thread char ctxprof_tls_pad[200];
__thread long ctxprof_tls_words[4];

static int touch_tls(void)
{
	ctxprof_tls_pad[0] = 1;
	ctxprof_tls_words[3] = 2;
	return (int)sizeof(ctxprof_tls_pad) + (int)sizeof(ctxprof_tls_words);
}
*/
import "C"

func cThreadLocals() int { return int(C.touch_tls()) }
