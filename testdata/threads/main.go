// SPDX-License-Identifier: GPL-2.0
// threads: makes its OS threads late and then execs itself, so that tests can check that per-thread sampling follows both.
//
// It idles for -wait, then starts four goroutines, each locked to a new
// OS thread and burning -burn of that thread's CPU time under a trace ID of
// its own, one after the other; with -exec it then runs its own executable again, whose main
// burns under the last trace ID.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"
)

var traces = []string{
	"7e4d0000000000000000000000000001",
	"7e4d0000000000000000000000000002",
	"7e4d0000000000000000000000000003",
	"7e4d0000000000000000000000000004",
}

const execTrace = "7e4d00000000000000000000000000e0"

var sink uint64

// threadCPU is the CPU time of the calling thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// burnThread burns D of its thread's CPU time, however busy the machine.
//
//go:noinline
func burnThread(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for start := threadCPU(); threadCPU()-start < d; {
		for i := 0; i < 100000; i++ {
			sink += uint64(i) ^ sink>>3
		}
	}
}

func under(trace string, fn func()) {
	pprof.Do(context.Background(), pprof.Labels("otel.traceid", trace), func(context.Context) { fn() })
}

func main() {
	wait := flag.Duration("wait", 2*time.Second, "idle this long first")
	burn := flag.Duration("burn", 1500*time.Millisecond, "CPU each thread burns")
	again := flag.Bool("exec", false, "run the executable again afterwards")
	after := flag.Bool("after-exec", false, "(set by -exec) burn under the exec's trace ID")
	flag.Parse()
	if *after {
		under(execTrace, func() { burnThread(*burn) })
		return
	}
	fmt.Fprintln(os.Stderr, "threads: waiting")
	time.Sleep(*wait)
	var wg sync.WaitGroup
	for _, t := range traces {
		wg.Add(1)
		go func(t string) {
			defer wg.Done()
			// the goroutine keeps the thread: the runtime makes a new one
			runtime.LockOSThread()
			under(t, func() { burnThread(*burn) })
		}(t)
		time.Sleep(50 * time.Millisecond)
	}
	wg.Wait()
	if *again {
		exe, err := os.Executable()
		if err == nil {
			err = syscall.Exec(exe, []string{os.Args[0], "-after-exec", "-burn", burn.String()}, os.Environ())
		}
		fmt.Fprintln(os.Stderr, "threads: exec:", err)
		os.Exit(1)
	}
}
