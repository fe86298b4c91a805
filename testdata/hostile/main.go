// SPDX-License-Identifier: GPL-2.0
// hostile: goroutines whose pprof labels are everything a profiler must survive.
//
// Each goroutine sets one hostile label set and burns CPU in its own
// noinline function, so a test can find its samples: 1,000 labels, a 1 MB
// value, invalid UTF-8, quotes, backslashes, NUL and control characters,
// an empty key, and trace IDs that are not: 33 hex digits, and 32 that are
// not hex.
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
	"time"
)

var sink uint64

func spin(d time.Duration, mul uint64) {
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 20000; i++ {
			sink += uint64(i) * mul
		}
	}
}

//go:noinline
func burnThousand(d time.Duration) { spin(d, 3) }

//go:noinline
func burnHuge(d time.Duration) { spin(d, 5) }

//go:noinline
func burnInvalidUTF8(d time.Duration) { spin(d, 7) }

//go:noinline
func burnQuotes(d time.Duration) { spin(d, 11) }

//go:noinline
func burnEmptyKey(d time.Duration) { spin(d, 13) }

//go:noinline
func burnTrace33(d time.Duration) { spin(d, 17) }

//go:noinline
func burnTraceNotHex(d time.Duration) { spin(d, 19) }

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	flag.Parse()
	fmt.Fprintf(os.Stderr, "hostile: pid %d\n", os.Getpid())

	thousand := []string{"otel.traceid", "0af7651916cd43dd8448eb211c80319c"}
	for i := 0; i < 999; i++ {
		thousand = append(thousand, "key-"+strconv.Itoa(i), "value-"+strconv.Itoa(i))
	}
	jobs := []struct {
		labels []string
		burn   func(time.Duration)
	}{
		{thousand, burnThousand},
		{[]string{"otel.traceid", "1bf7651916cd43dd8448eb211c80319c", "huge", strings.Repeat("x", 1<<20)}, burnHuge},
		{[]string{"otel.traceid", "2cf7651916cd43dd8448eb211c80319c", "bad\xff\xfekey", "val\xc3\x28ue\x80"}, burnInvalidUTF8},
		{[]string{"otel.traceid", "3df7651916cd43dd8448eb211c80319c", "q\"uo\\te", "nul\x00ctl\x01\x1f\"\\\n\t"}, burnQuotes},
		{[]string{"otel.traceid", "4ef7651916cd43dd8448eb211c80319c", "", "empty key"}, burnEmptyKey},
		{[]string{"otel.traceid", "5ff7651916cd43dd8448eb211c80319c0"}, burnTrace33},
		{[]string{"otel.traceid", "6gf7651916cd43dd8448eb211c80319z"}, burnTraceNotHex},
	}
	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func(labels []string, burn func(time.Duration)) {
			defer wg.Done()
			pprof.Do(context.Background(), pprof.Labels(labels...), func(context.Context) {
				for time.Now().Before(deadline) {
					burn(5 * time.Millisecond)
				}
			})
		}(j.labels, j.burn)
	}
	wg.Wait()
}
