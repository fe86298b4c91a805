// SPDX-License-Identifier: GPL-2.0
// unprofiled: a program that never references runtime.MemProfile, so it samples no allocation.
//
// The linker sets runtime.disableMemoryProfiling, and the runtime sets
// MemProfileRate to 0 as it starts. The program prints where
// runtime.MemProfileRate is and what it holds at run time (0), for
// tests/alloc-probe.sh to compare with what `ctxprof-go check` found in
// the file.
package main

import (
	"fmt"
	"runtime"
)

var sink []byte

func main() {
	for i := 0; i < 64; i++ {
		sink = make([]byte, 64<<10)
	}
	fmt.Printf("%#x %d\n", &runtime.MemProfileRate, runtime.MemProfileRate)
}
