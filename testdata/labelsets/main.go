// SPDX-License-Identifier: GPL-2.0
// labelsets: goroutines that hold label sets of every shape Go's maps and lists give them, running and waiting by turns.
//
// One goroutine per size N in -sizes holds, under pprof.Do, the labels
// otel.traceid = 32 hex digits of N and sN.kII = "vN.II" for II from 01
// to N-1, and alternates -cpu of CPU in main.hold with -wait of sleep,
// until -d has passed. Before Go 1.24 a label set is a map, filled one
// label at a time: 1 to 8 labels fill one bucket, 9 and 13 two, 16 and 17
// four, and the 27th label starts a grow to eight buckets that evacuates
// two of the four old ones, so the map is left halfway, with evacuated
// slots in its old buckets. From Go 1.24 it is a list sorted by key. Every
// key names its set, so a label read from another set, or read twice,
// shows.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var sink uint64

//go:noinline
func hold(cpu, wait time.Duration, end time.Time) {
	h := uint64(1469598103934665603)
	for time.Now().Before(end) {
		for until := time.Now().Add(cpu); time.Now().Before(until); {
			for i := 0; i < 1000; i++ {
				h ^= uint64(i)
				h *= 1099511628211
			}
		}
		time.Sleep(wait)
	}
	atomic.AddUint64(&sink, h)
}

func main() {
	dur := flag.Duration("d", 60*time.Second, "how long to run")
	cpu := flag.Duration("cpu", 3*time.Millisecond, "CPU per turn")
	wait := flag.Duration("wait", 3*time.Millisecond, "sleep per turn")
	sizes := flag.String("sizes", "1,2,7,8,9,13,16,17,27", "label set sizes")
	flag.Parse()
	end := time.Now().Add(*dur)
	var wg sync.WaitGroup
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "labelsets: bad size %q\n", s)
			os.Exit(2)
		}
		kv := []string{"otel.traceid", fmt.Sprintf("%032x", n)}
		for i := 1; i < n; i++ {
			kv = append(kv, fmt.Sprintf("s%d.k%02d", n, i), fmt.Sprintf("v%d.%02d", n, i))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pprof.Do(context.Background(), pprof.Labels(kv...), func(context.Context) { hold(*cpu, *wait, end) })
		}()
	}
	fmt.Fprintf(os.Stderr, "labelsets: pid %d\n", os.Getpid())
	wg.Wait()
}
