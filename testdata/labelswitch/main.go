// SPDX-License-Identifier: GPL-2.0
// labelswitch: goroutines that switch between label sets of 1 to 12 labels every few ms, as request handlers do.
//
// Each of -workers goroutines (default GOMAXPROCS) runs requests one after
// another for -d: request number ID gets a fresh trace ID (its last 16 hex
// digits are ID), 1 to 12 labels (the count cycles; label kI is
// "value-I-<ID mod 1000>"), and burns about -slice of CPU under pprof.Do
// in burn0, burn1 or burn2, by ID mod 3. Label sets therefore rarely repeat
// from one sample to the next, which is the costly case for a sampler that
// reads every label; and a sample's trace ID can be checked against the
// function it is in, even as the GC frees old label sets and their memory
// is handed out again (-garbage and a low GOGC make it run often).
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
func burn0(d time.Duration) { burn(d) }

//go:noinline
func burn1(d time.Duration) { burn(d) }

//go:noinline
func burn2(d time.Duration) { burn(d) }

var burners = [3]func(time.Duration){burn0, burn1, burn2}

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

var keep []byte

func request(id uint64, nlabels int, slice time.Duration, garbage int) {
	// heap churn, so that the GC runs often and frees old label sets
	if garbage > 0 {
		keep = make([]byte, garbage)
	}
	kv := []string{"otel.traceid", fmt.Sprintf("%016x%016x", id*0x9e3779b97f4a7c15, id)}
	for i := 1; i < nlabels; i++ {
		kv = append(kv, fmt.Sprintf("k%d", i), fmt.Sprintf("value-%d-%d", i, id%1000))
	}
	pprof.Do(context.Background(), pprof.Labels(kv...), func(context.Context) { burners[id%3](slice) })
}

func main() {
	dur := flag.Duration("d", 60*time.Second, "how long to run")
	slice := flag.Duration("slice", 3*time.Millisecond, "CPU per request")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "goroutines")
	garbage := flag.Int("garbage", 0, "bytes of garbage a request makes (GC churn)")
	flag.Parse()
	fmt.Fprintf(os.Stderr, "labelswitch: pid %d, %d workers, %v a request\n", os.Getpid(), *workers, *slice)
	var next uint64
	for w := 0; w < *workers; w++ {
		go func() {
			for n := 0; ; n++ {
				request(atomic.AddUint64(&next, 1), 1+n%12, *slice, *garbage)
			}
		}()
	}
	time.Sleep(*dur)
}
