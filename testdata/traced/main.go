// SPDX-License-Identifier: GPL-2.0
// traced: burns CPU under known trace IDs set with pprof.Do, for profiling tests.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"time"
)

// Trace IDs that tests look for; each is burned in its own function.
const (
	traceAlpha = "4bf92f3577b34da6a3ce929d0e0e4736"
	traceBeta  = "00f067aa0ba902b7a3ce929d0e0e4736"
)

var sink uint64

//go:noinline
func burnAlpha(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 100000; i++ {
			sink += uint64(i) * 7
		}
	}
}

//go:noinline
func burnBeta(d time.Duration) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 100000; i++ {
			sink ^= uint64(i) * 13
		}
	}
}

func traced(ctx context.Context, id string, route string, fn func()) {
	pprof.Do(ctx, pprof.Labels("otel.traceid", id, "route", route), func(context.Context) {
		fn()
	})
}

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to burn")
	flag.Parse()
	fmt.Fprintf(os.Stderr, "traced: pid %d tls %d\n", os.Getpid(), cThreadLocals())
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		traced(ctx, traceAlpha, "/alpha", func() { burnAlpha(*dur) })
	}()
	go func() {
		defer wg.Done()
		traced(ctx, traceBeta, "/beta", func() { burnBeta(*dur) })
	}()
	wg.Wait()
}
