// SPDX-License-Identifier: GPL-2.0
// clocky: reads the clock in tight loops under known trace IDs, so that tests can check who called it.
//
// Go reads the clock through the vDSO, on the g0 stack: main.wallClock
// calls time.Now (clock_gettime twice, through time.now), main.monoClock
// calls time.Since (runtime.nanotime1). Each runs in its own goroutine under
// its own otel.traceid label. main.growStack recurses with a big frame, so
// that its goroutine keeps meeting the stack-growth check.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"
)

const (
	wallTrace = "c10c0000000000000000000000000001"
	monoTrace = "c10c0000000000000000000000000002"
	growTrace = "c10c0000000000000000000000000003"
)

var sink int64

//go:noinline
func wallClock(n int) {
	for i := 0; i < n; i++ {
		sink += time.Now().UnixNano() & 1
	}
}

//go:noinline
func monoClock(start time.Time, n int) {
	for i := 0; i < n; i++ {
		sink += int64(time.Since(start)) & 1
	}
}

// growStack's frame is large enough that a fresh goroutine's stack grows on
// the way down; the goroutine is made anew each round so that it always does.
//
//go:noinline
func growStack(depth int) int64 {
	var pad [512]byte
	pad[depth%512] = byte(depth)
	if depth == 0 {
		return time.Now().UnixNano() & 1
	}
	return growStack(depth-1) + int64(pad[(depth*7)%512])
}

func under(trace string, fn func()) {
	pprof.Do(context.Background(), pprof.Labels("otel.traceid", trace), func(context.Context) { fn() })
}

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	flag.Parse()
	end := time.Now().Add(*dur)
	start := time.Now()
	go under(wallTrace, func() {
		for time.Now().Before(end) {
			wallClock(10000)
		}
	})
	go under(monoTrace, func() {
		for time.Now().Before(end) {
			monoClock(start, 10000)
		}
	})
	go under(growTrace, func() {
		for time.Now().Before(end) {
			done := make(chan int64)
			go func() { done <- growStack(64) }()
			sink += <-done
		}
	})
	fmt.Fprintln(os.Stderr, "clocky: running")
	time.Sleep(time.Until(end))
}
