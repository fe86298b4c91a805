// SPDX-License-Identifier: GPL-2.0
// profiled: a program that references runtime.MemProfile, so its allocations are sampled.
//
// The linker leaves runtime.disableMemoryProfiling false when
// runtime.MemProfile is reachable: the runtime keeps MemProfileRate at
// its default. The program prints where runtime.MemProfileRate is and
// what it holds at run time, for tests/alloc-probe.sh to compare with
// what `ctxprof-go check` found in the file.
package main

import (
	"fmt"
	"os"
	"runtime"
)

var sink []byte

func main() {
	for i := 0; i < 64; i++ {
		sink = make([]byte, 64<<10)
	}
	// only with an argument, but reachable all the same
	if len(os.Args) > 1 {
		n, _ := runtime.MemProfile(nil, false)
		fmt.Println("records", n)
	}
	fmt.Printf("%#x %d\n", &runtime.MemProfileRate, runtime.MemProfileRate)
}
