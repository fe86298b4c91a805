// SPDX-License-Identifier: GPL-2.0
// labelswitch: goroutines that switch between label sets of 1 to 12 labels every few ms, as request handlers do.
//
// Each of -workers goroutines (default GOMAXPROCS) runs requests one after
// another for -d: a request gets a fresh trace ID and 1 to 12 labels (the
// count cycles), and burns about -slice of CPU under pprof.Do. Label sets
// therefore rarely repeat from one sample to the next, which is the costly
// case for a sampler that reads every label.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"time"
)

var sink uint64

//go:noinline
func burn(d time.Duration) {
	h := uint64(1469598103934665603)
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 1000; i++ {
			h ^= uint64(i)
			h *= 1099511628211
		}
	}
	atomic.AddUint64(&sink, h)
}

func request(id uint64, nlabels int, slice time.Duration) {
	kv := []string{"otel.traceid", fmt.Sprintf("%016x%016x", id*0x9e3779b97f4a7c15, id)}
	for i := 1; i < nlabels; i++ {
		kv = append(kv, fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d-%d", i, id%1000))
	}
	pprof.Do(context.Background(), pprof.Labels(kv...), func(context.Context) { burn(slice) })
}

func main() {
	dur := flag.Duration("d", 60*time.Second, "how long to run")
	slice := flag.Duration("slice", 3*time.Millisecond, "CPU per request")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines")
	flag.Parse()
	fmt.Fprintf(os.Stderr, "labelswitch: pid %d, %d workers, %v a request\n", os.Getpid(), *workers, *slice)
	var next uint64
	for w := 0; w < *workers; w++ {
		go func() {
			for n := 0; ; n++ {
				request(atomic.AddUint64(&next, 1), 1+n%12, *slice)
			}
		}()
	}
	time.Sleep(*dur)
}
