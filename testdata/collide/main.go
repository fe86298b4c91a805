// SPDX-License-Identifier: GPL-2.0
// collide: goroutines that call main.collide in a tight loop, each under its own trace ID.
//
// Goroutine i (0 to 7) runs under pprof.Do with labels otel.traceid=trace<i>
// and worker=<i>, in its own function main.work<i>, which calls
// main.collide(ctxBase + i) and then main.spin, over and over. So for a
// uprobe on main.collide, the context names the goroutine, and with it the
// trace ID, the worker label and the caller (main.work<i>) that its event
// must carry; and every CPU sample with main.work<i> on its stack belongs to
// trace<i>. Tests read ctxBase and the trace IDs from this file.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	ctxBase = 7000000
	trace0  = "1a2b3c4d5e6f708192a3b4c5d6e7f801"
	trace1  = "2b3c4d5e6f708192a3b4c5d6e7f80112"
	trace2  = "3c4d5e6f708192a3b4c5d6e7f8011223"
	trace3  = "4d5e6f708192a3b4c5d6e7f801122334"
	trace4  = "5e6f708192a3b4c5d6e7f80112233445"
	trace5  = "6f708192a3b4c5d6e7f8011223344556"
	trace6  = "708192a3b4c5d6e7f801122334455667"
	trace7  = "8192a3b4c5d6e7f80112233445566778"
)

var (
	traces = [...]string{trace0, trace1, trace2, trace3, trace4, trace5, trace6, trace7}
	works  = [...]func(int) uint64{work0, work1, work2, work3, work4, work5, work6, work7}
	stop   int32
	sums   [len(works)]uint64
)

// collide is what the uprobe watches: its argument, in RAX, is the context.
//
//go:noinline
func collide(ctx uint64) uint64 {
	return ctx*0x9e3779b97f4a7c15 ^ ctx>>7
}

// spin is user-space CPU between two calls, for the sampler to find.
//
//go:noinline
func spin(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 17
	}
	return x
}

// One caller per goroutine, so that a stack names the goroutine it was taken on.

//go:noinline
func work0(n int) (s uint64) {
	for atomic.LoadInt32(&stop) == 0 {
		s += collide(ctxBase + 0)
		s += spin(n)
	}
	return s
}

//go:noinline
func work1(n int) (s uint64) {
	for atomic.LoadInt32(&stop) == 0 {
		s += collide(ctxBase + 1)
		s += spin(n)
	}
	return s
}

//go:noinline
func work2(n int) (s uint64) {
	for atomic.LoadInt32(&stop) == 0 {
		s += collide(ctxBase + 2)
		s += spin(n)
	}
	return s
}

//go:noinline
func work3(n int) (s uint64) {
	for atomic.LoadInt32(&stop) == 0 {
		s += collide(ctxBase + 3)
		s += spin(n)
	}
	return s
}

//go:noinline
func work4(n int) (s uint64) {
	for atomic.LoadInt32(&stop) == 0 {
		s += collide(ctxBase + 4)
		s += spin(n)
	}
	return s
}

//go:noinline
func work5(n int) (s uint64) {
	for atomic.LoadInt32(&stop) == 0 {
		s += collide(ctxBase + 5)
		s += spin(n)
	}
	return s
}

//go:noinline
func work6(n int) (s uint64) {
	for atomic.LoadInt32(&stop) == 0 {
		s += collide(ctxBase + 6)
		s += spin(n)
	}
	return s
}

//go:noinline
func work7(n int) (s uint64) {
	for atomic.LoadInt32(&stop) == 0 {
		s += collide(ctxBase + 7)
		s += spin(n)
	}
	return s
}

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	goroutines := flag.Int("g", len(works), "goroutines, at most 8")
	n := flag.Int("spin", 200, "iterations of main.spin between two calls of main.collide")
	flag.Parse()
	if *goroutines < 1 || *goroutines > len(works) {
		fmt.Fprintf(os.Stderr, "collide: -g must be 1 to %d\n", len(works))
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "collide: pid %d, %d goroutines\n", os.Getpid(), *goroutines)

	time.AfterFunc(*dur, func() { atomic.StoreInt32(&stop, 1) })
	var wg sync.WaitGroup
	for i := 0; i < *goroutines; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			labels := pprof.Labels("otel.traceid", traces[i], "worker", strconv.Itoa(i))
			pprof.Do(context.Background(), labels, func(context.Context) {
				sums[i] = works[i](*n)
			})
		}(i)
	}
	wg.Wait()
}
