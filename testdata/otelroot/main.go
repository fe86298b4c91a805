// SPDX-License-Identifier: GPL-2.0
// otelroot: a job runner that starts its own root spans with the OpenTelemetry Go SDK, and sets no labels.
//
// Each of -spans jobs runs in a root span of its own (always sampled, no
// exporter), -workers at a time, each phase burning -burn of CPU time on the same
// goroutine: main.spanWork in the root span, main.childWork in a child
// span of it, main.parentWork in the root span again once the child ended,
// and main.afterWork after the root span ended, outside any span. Each job
// prints "TRACE ROOT_SPAN CHILD_SPAN" on stdout, so that a test knows what
// was started where. With -signal it waits for SIGUSR1 to start, and with
// -linger too for another once its jobs are done, before it exits.
// Built in GOPATH mode against Debian's golang-opentelemetry-otel-dev.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

var sink uint64

// threadCPU is the CPU time the calling thread has had (RUSAGE_THREAD).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// spin burns d of CPU time, on a thread of its own meanwhile, however busy
// the machine is: the samples a test counts do not thin out when the CPUs
// are shared.
func spin(d time.Duration, mul uint64) uint64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := mul
	for start := threadCPU(); threadCPU()-start < d; {
		for i := 0; i < 100000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	return x
}

//go:noinline
func spanWork(d time.Duration) uint64 { return spin(d, 0x9e3779b97f4a7c15) }

//go:noinline
func childWork(d time.Duration) uint64 { return spin(d, 0x94d049bb133111eb) }

//go:noinline
func parentWork(d time.Duration) uint64 { return spin(d, 0x2545f4914f6cdd1d) }

//go:noinline
func afterWork(d time.Duration) uint64 { return spin(d, 0xbf58476d1ce4e5b9) }

func main() {
	spans := flag.Int("spans", 20, "root spans to start")
	workers := flag.Int("workers", 4, "jobs at a time")
	burn := flag.Duration("burn", 20*time.Millisecond, "CPU time in each phase")
	wait := flag.Bool("signal", false, "start on SIGUSR1 (once a profiler is attached)")
	linger := flag.Bool("linger", false, "with -signal: exit on another SIGUSR1 once the jobs are done")
	flag.Parse()
	sig := make(chan os.Signal, 1)
	if *wait {
		signal.Notify(sig, syscall.SIGUSR1)
		<-sig
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer("otelroot")
	jobs := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				ctx, span := tracer.Start(context.Background(), fmt.Sprintf("job-%d", j))
				x := spanWork(*burn)
				_, child := tracer.Start(ctx, "child")
				x ^= childWork(*burn)
				child.End()
				x ^= parentWork(*burn)
				span.End()
				x ^= afterWork(*burn)
				sc, cc := span.SpanContext(), child.SpanContext()
				mu.Lock()
				fmt.Printf("%s %s %s\n", sc.TraceID(), sc.SpanID(), cc.SpanID())
				sink += x
				mu.Unlock()
			}
		}()
	}
	for j := 0; j < *spans; j++ {
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	if *wait && *linger {
		<-sig
	}
}
