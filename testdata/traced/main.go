// SPDX-License-Identifier: GPL-2.0
// traced: burns CPU under known trace IDs, set every way Go programs set pprof labels.
//
// Worker goroutines switch label sets every few milliseconds. Each job burns
// CPU in its own non-inlined function, so a profile can check that every
// sample in burnX carries trace X and nothing else. Tests read the trace IDs
// from this file's constants.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"
)

const (
	// pprof.Do with the OpenTelemetry eBPF convention, plus a span ID
	traceDo = "4bf92f3577b34da6a3ce929d0e0e4736"
	spanDo  = "00f067aa0ba902b7"
	// nested pprof.Do: the outer set holds the trace, the inner adds a label
	traceNested = "5c0a3f4e8d2b4c6e9f1a2b3c4d5e6f70"
	// SetGoroutineLabels with the trace_id/span_id convention
	traceSet = "6d1b4f5e9e3c4d7f8a2b3c4d5e6f7081"
	spanSet  = "a1b2c3d4e5f60718"
	// twelve labels: a Go <= 1.23 label map needs more than one bucket
	traceMany = "7e2c5a6f0f4d5e8a9b3c4d5e6f708192"
	// allocation-heavy work: GC assists run on the system stack
	traceAlloc = "8f3d6b7a1a5e6f9bac4d5e6f70819203"
)

var (
	sink  uint64
	bytes [][]byte
	mu    sync.Mutex
)

// mix is small enough that every toolchain inlines it into spin: tests
// expect most samples to show it as an inlined frame above spin.
func mix(x, mul uint64) uint64 {
	x = x*mul + 1
	x ^= x >> 29
	x *= 0x9e3779b97f4a7c15
	x ^= x >> 31
	return x * mul
}

func spin(d time.Duration, mul uint64) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 20000; i++ {
			sink += mix(uint64(i), mul)
		}
	}
}

//go:noinline
func burnDo(d time.Duration) { spin(d, 3) }

//go:noinline
func burnNested(d time.Duration) { spin(d, 5) }

//go:noinline
func burnSet(d time.Duration) { spin(d, 7) }

//go:noinline
func burnMany(d time.Duration) { spin(d, 11) }

//go:noinline
func burnUnlabeled(d time.Duration) { spin(d, 13) }

//go:noinline
func burnAlloc(d time.Duration) {
	end := time.Now().Add(d)
	var keep [][]byte
	for time.Now().Before(end) {
		for i := 0; i < 64; i++ {
			keep = append(keep, make([]byte, 512+i))
		}
		if len(keep) > 4096 {
			keep = keep[:0]
		}
	}
	mu.Lock()
	bytes = keep
	mu.Unlock()
}

func jobDo(ctx context.Context, d time.Duration) {
	pprof.Do(ctx, pprof.Labels("otel.traceid", traceDo, "span_id", spanDo, "route", "/do"),
		func(context.Context) { burnDo(d) })
}

func jobNested(ctx context.Context, d time.Duration) {
	pprof.Do(ctx, pprof.Labels("otel_traceid", traceNested, "tenant", "acme"), func(ctx context.Context) {
		pprof.Do(ctx, pprof.Labels("route", "/nested"), func(context.Context) { burnNested(d) })
	})
}

func jobSet(ctx context.Context, d time.Duration) {
	prev := ctx
	ctx = pprof.WithLabels(ctx, pprof.Labels("trace_id", traceSet, "span_id", spanSet, "route", "/set"))
	pprof.SetGoroutineLabels(ctx)
	burnSet(d)
	pprof.SetGoroutineLabels(prev)
}

func jobMany(ctx context.Context, d time.Duration) {
	kv := []string{"otel.traceid", traceMany}
	for i := 0; i < 11; i++ {
		kv = append(kv, "k"+strconv.Itoa(i), "value-"+strconv.Itoa(i))
	}
	pprof.Do(ctx, pprof.Labels(kv...), func(context.Context) { burnMany(d) })
}

func jobAlloc(ctx context.Context, d time.Duration) {
	pprof.Do(ctx, pprof.Labels("otel.traceid", traceAlloc, "route", "/alloc"),
		func(context.Context) { burnAlloc(d) })
}

func jobUnlabeled(ctx context.Context, d time.Duration) { burnUnlabeled(d) }

var jobs = []func(context.Context, time.Duration){jobDo, jobNested, jobSet, jobMany, jobAlloc, jobUnlabeled}

// deep calls itself n times, with a frame of over 128 bytes each, before it
// runs the jobs: the goroutine's stack grows, and is moved, on the way down,
// under frames that are still live when the jobs are sampled.
//
//go:noinline
func deep(n int, run func()) {
	var pad [16]uint64
	pad[n%16] = uint64(n)
	if n == 0 {
		run()
	} else {
		deep(n-1, run)
	}
	sink += pad[(n+1)%16]
}

func jobLoop(w int, deadline time.Time, slice time.Duration) {
	ctx := context.Background()
	for i := w; time.Now().Before(deadline); i++ {
		jobs[i%len(jobs)](ctx, slice)
	}
}

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	slice := flag.Duration("slice", 3*time.Millisecond, "how long each job runs before switching labels")
	workers := flag.Int("workers", 4, "worker goroutines")
	execAfter := flag.Duration("exec-after", 0, "then become a shell busy loop (exec), for tests of targets that change")
	depth := flag.Int("depth", 0, "run the jobs under this many frames of main.deep, made as the stack grows")
	flag.Parse()
	becomeShell := func() {
		loop := "i=0; while [ $i -lt 2000000 ]; do i=$((i+1)); done"
		syscall.Exec("/bin/sh", []string{"sh", "-c", loop}, os.Environ())
	}
	if *execAfter > 0 {
		time.AfterFunc(*execAfter, becomeShell)
	}
	// SIGUSR1 ends the program (exit 0) and SIGUSR2 makes it exec the
	// shell, when a test says so: a test that waits for a profiler to
	// start cannot know in advance how long that takes on a busy machine
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		if <-sig == syscall.SIGUSR2 {
			becomeShell()
		}
		os.Exit(0)
	}()
	fmt.Fprintf(os.Stderr, "traced: pid %d, %d bytes of C thread-locals\n", os.Getpid(), cThreadLocals())

	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			if *depth > 0 {
				deep(*depth-1, func() { jobLoop(w, deadline, *slice) })
				return
			}
			ctx := context.Background()
			for i := w; time.Now().Before(deadline); i++ {
				jobs[i%len(jobs)](ctx, *slice)
			}
		}(w)
	}
	wg.Wait()
}
