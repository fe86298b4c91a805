// SPDX-License-Identifier: GPL-2.0
// cpubench: a fixed amount of labeled CPU work, timed, for measuring a profiler's overhead.
//
// It waits -delay (so a profiler can attach), then runs -iters iterations of a
// hashing loop on each of GOMAXPROCS goroutines under pprof.Do trace labels
// that change every iteration, and prints the elapsed seconds on stdout.
package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

var sink uint64

//go:noinline
func work(n int) uint64 {
	h := uint64(1469598103934665603)
	for i := 0; i < n; i++ {
		h ^= uint64(i)
		h *= 1099511628211
	}
	return h
}

func main() {
	iters := flag.Int("iters", 400, "iterations per goroutine")
	delay := flag.Duration("delay", time.Second, "wait before starting")
	flag.Parse()
	traces := []string{"4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c"}
	time.Sleep(*delay)
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for g := 0; g < runtime.GOMAXPROCS(0); g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < *iters; i++ {
				pprof.Do(context.Background(), pprof.Labels("otel.traceid", traces[(g+i)%2]),
					func(context.Context) {
						h := work(2000000)
						mu.Lock()
						sink += h
						mu.Unlock()
					})
			}
		}(g)
	}
	wg.Wait()
	fmt.Printf("%.3f\n", time.Since(start).Seconds())
}
