// SPDX-License-Identifier: GPL-2.0
// lockedthreads: two goroutines each locked to an OS thread, one with a trace ID label and one without, burning CPU; their thread IDs printed.
//
// For tests/profile-obi.sh: OBI keys its traces by thread, so a test that
// fills OBI's map as OBI does needs to know which thread runs what.
package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"
)

const traceLabel = "1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f"

var sink uint64

func spin(end time.Time, mul uint64) {
	x := uint64(1)
	for time.Now().Before(end) {
		for i := 0; i < 20000; i++ {
			x = x*mul + 1442695040888963407
		}
	}
	sink += x
}

//go:noinline
func burnUnlabeled(end time.Time) { spin(end, 3) }

//go:noinline
func burnLabeled(end time.Time) { spin(end, 5) }

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	flag.Parse()
	end := time.Now().Add(*dur)
	var wg, started sync.WaitGroup
	tids := make([]int, 2)
	started.Add(2)
	wg.Add(2)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		tids[0] = syscall.Gettid()
		started.Done()
		burnUnlabeled(end)
	}()
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		tids[1] = syscall.Gettid()
		started.Done()
		pprof.Do(context.Background(), pprof.Labels("otel.traceid", traceLabel), func(context.Context) {
			burnLabeled(end)
		})
	}()
	started.Wait()
	fmt.Printf("unlabeled %d\nlabeled %d\n", tids[0], tids[1])
	wg.Wait()
}
