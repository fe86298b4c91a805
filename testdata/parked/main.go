// SPDX-License-Identifier: GPL-2.0
// parked: thousands of parked goroutines, each with a trace ID label, beside a worker whose rate is measured.
//
// -parked N goroutines wait in select on channels that never fire, a
// third each under a label set of their own, as a server's idle
// connections and queued requests would. One worker goroutine computes
// in rounds of fixed work; every -report it prints the rounds per second
// of the last period on stdout. A wall-clock profiler reading all of them
// must not slow the worker down.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"
)

var sink uint64

//go:noinline
func round() {
	x := sink
	for i := 0; i < 200000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

func park(i int, never chan struct{}, tick <-chan time.Time) {
	select {
	case <-never:
	case <-tick:
	}
}

func main() {
	n := flag.Int("parked", 10000, "parked goroutines")
	report := flag.Duration("report", time.Second, "how often to print the worker's rate")
	dur := flag.Duration("d", 30*time.Second, "how long to run")
	flag.Parse()
	never := make(chan struct{})
	for i := 0; i < *n; i++ {
		go func(i int) {
			if i%3 != 0 {
				park(i, never, nil)
				return
			}
			id := fmt.Sprintf("%032x", i+1)
			pprof.Do(context.Background(), pprof.Labels("otel.traceid", id), func(context.Context) {
				park(i, never, nil)
			})
		}(i)
	}
	fmt.Fprintf(os.Stderr, "parked: pid %d, %d goroutines parked\n", os.Getpid(), *n)
	end := time.Now().Add(*dur)
	next := time.Now().Add(*report)
	rounds := 0
	start := time.Now()
	for time.Now().Before(end) {
		round()
		rounds++
		if now := time.Now(); now.After(next) {
			fmt.Printf("%.1f\n", float64(rounds)/now.Sub(start).Seconds())
			rounds = 0
			start = now
			next = now.Add(*report)
		}
	}
}
