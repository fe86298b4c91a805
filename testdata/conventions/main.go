// SPDX-License-Identifier: GPL-2.0
// conventions: burns CPU under the trace-ID label conventions of four tracers, each job in its own function.
//
// Each job sets its labels as that tracer's helper does, with pprof.Do, and
// burns a few milliseconds in a function of its own. Tests read the IDs
// from the constants below: the trace ID, and the span ID as ctxprof-go
// must print it (16 hex digits), from its label as the tracer writes it.
package main

import (
	"context"
	"flag"
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"
)

const (
	// dd-trace-go: "trace id" (32 hex), "span id" and "local root span id" (decimal u64)
	traceDatadog   = "1f2e3d4c5b6a79880f1e2d3c4b5a6978"
	spanDatadog    = uint64(1311768467294899695) // 0x1234567890abcdef
	spanDatadogHex = "1234567890abcdef"
	rootDatadog    = uint64(7)
	// Grafana's otel-profiling-go: "trace_id", "span_id" (16 hex), "span_name"
	traceGrafana = "2a3b4c5d6e7f80911a2b3c4d5e6f7081"
	spanGrafana  = "0a1b2c3d4e5f6071"
	// Polar Signals' eBPF trace-ID approach: "otel.traceid", with the span in "otel.spanid"
	tracePolar = "3b4c5d6e7f8091a22b3c4d5e6f708192"
	spanPolar  = "1b2c3d4e5f607182"
	// the later helper's "otel_traceid" (no dot), with "span_id"
	traceUnderscore = "4c5d6e7f8091a2b33c4d5e6f708192a3"
	spanUnderscore  = "2c3d4e5f60718293"
)

var sink uint64

func spin(d time.Duration, mul uint64) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := uint64(0); i < 20000; i++ {
			sink += (i*mul + 1) ^ (i >> 3)
		}
	}
}

//go:noinline
func burnDatadog(d time.Duration) { spin(d, 3) }

//go:noinline
func burnGrafana(d time.Duration) { spin(d, 5) }

//go:noinline
func burnPolar(d time.Duration) { spin(d, 7) }

//go:noinline
func burnUnderscore(d time.Duration) { spin(d, 11) }

func jobDatadog(ctx context.Context, d time.Duration) {
	pprof.Do(ctx, pprof.Labels("trace id", traceDatadog,
		"span id", strconv.FormatUint(spanDatadog, 10),
		"local root span id", strconv.FormatUint(rootDatadog, 10)),
		func(context.Context) { burnDatadog(d) })
}

func jobGrafana(ctx context.Context, d time.Duration) {
	pprof.Do(ctx, pprof.Labels("trace_id", traceGrafana, "span_id", spanGrafana, "span_name", "GET /grafana"),
		func(context.Context) { burnGrafana(d) })
}

func jobPolar(ctx context.Context, d time.Duration) {
	pprof.Do(ctx, pprof.Labels("otel.traceid", tracePolar, "otel.spanid", spanPolar),
		func(context.Context) { burnPolar(d) })
}

func jobUnderscore(ctx context.Context, d time.Duration) {
	pprof.Do(ctx, pprof.Labels("otel_traceid", traceUnderscore, "span_id", spanUnderscore),
		func(context.Context) { burnUnderscore(d) })
}

var jobs = []func(context.Context, time.Duration){jobDatadog, jobGrafana, jobPolar, jobUnderscore}

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	slice := flag.Duration("slice", 3*time.Millisecond, "how long each job runs before switching labels")
	workers := flag.Int("workers", 4, "worker goroutines")
	flag.Parse()
	os.Stderr.WriteString("conventions: pid " + strconv.Itoa(os.Getpid()) + "\n")
	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; time.Now().Before(deadline); i++ {
				jobs[i%len(jobs)](context.Background(), *slice)
			}
		}(w)
	}
	wg.Wait()
}
