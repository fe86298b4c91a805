// SPDX-License-Identifier: GPL-2.0
// conventions: burns CPU under the trace-ID label conventions of four tracers, each job in its own function.
//
// Each job sets its labels as that tracer's helper does, with pprof.Do, and
// burns a few milliseconds in a function of its own. Tests read the IDs
// from the constants below: the trace ID, and the span ID as ctxprof-go
// must print it (16 hex digits), from its label as the tracer writes it.
//
// With -requests it serves requests instead, as a service under those
// tracers does: each line N on stdin starts N requests, on -workers
// goroutines, each with a trace and span ID of its own (and Datadog's local
// root span ID) under the four conventions in turn, a route label (/checkout
// or /cart every other four) and -burn of CPU time in main.handle. Each
// request's convention, IDs as ctxprof-go prints them, and labels are one
// JSON line on stdout, and {"done": N} follows the last of a batch.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
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

// threadCPU is the CPU time the calling thread has had (RUSAGE_THREAD).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// handle burns d of CPU time, on a thread of its own meanwhile, so that a
// request gets its samples however busy the machine is.
//
//go:noinline
func handle(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for start := threadCPU(); threadCPU()-start < d; {
		spin(time.Millisecond, 13)
	}
}

type request struct {
	Convention string            `json:"convention"`
	TraceID    string            `json:"trace_id"`
	SpanID     string            `json:"span_id"`
	Labels     map[string]string `json:"labels"`
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// newRequest gives request i its IDs, as the tracer of its convention labels them.
func newRequest(i int) request {
	route := []string{"/checkout", "/cart"}[i/4%2]
	trace, span := randomHex(16), randomHex(8)
	r := request{TraceID: trace, SpanID: span, Labels: map[string]string{"route": route}}
	switch i % 4 {
	case 0:
		spanNum, _ := strconv.ParseUint(span, 16, 64)
		var root [8]byte
		rand.Read(root[:])
		r.Convention = "datadog"
		r.Labels["trace id"] = trace
		r.Labels["span id"] = strconv.FormatUint(spanNum, 10)
		r.Labels["local root span id"] = strconv.FormatUint(binary.LittleEndian.Uint64(root[:]), 10)
	case 1:
		r.Convention = "grafana"
		r.Labels["trace_id"] = trace
		r.Labels["span_id"] = span
		r.Labels["span_name"] = "GET " + route
	case 2:
		r.Convention = "polar"
		r.Labels["otel.traceid"] = trace
		r.Labels["otel.spanid"] = span
	default:
		r.Convention = "underscore"
		r.Labels["otel_traceid"] = trace
		r.Labels["span_id"] = span
	}
	return r
}

// serve runs the batches that stdin asks for, each request under its labels.
func serve(workers int, burn time.Duration) {
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	next := 0
	for in.Scan() {
		n, err := strconv.Atoi(in.Text())
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "conventions: %q is not a number of requests\n", in.Text())
			os.Exit(2)
		}
		reqs := make(chan request, n)
		for i := 0; i < n; i++ {
			r := newRequest(next + i)
			reqs <- r
			if err := out.Encode(r); err != nil {
				os.Exit(1)
			}
		}
		next += n
		close(reqs)
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range reqs {
					var kv []string
					for k, v := range r.Labels {
						kv = append(kv, k, v)
					}
					pprof.Do(context.Background(), pprof.Labels(kv...),
						func(context.Context) { handle(burn) })
				}
			}()
		}
		wg.Wait()
		if err := out.Encode(map[string]int{"done": n}); err != nil {
			os.Exit(1)
		}
	}
}

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	slice := flag.Duration("slice", 3*time.Millisecond, "how long each job runs before switching labels")
	workers := flag.Int("workers", 4, "worker goroutines")
	requests := flag.Bool("requests", false, "serve the requests stdin asks for (see above)")
	burn := flag.Duration("burn", 20*time.Millisecond, "CPU time of one request, with -requests")
	flag.Parse()
	os.Stderr.WriteString("conventions: pid " + strconv.Itoa(os.Getpid()) + "\n")
	if *requests {
		serve(*workers, *burn)
		return
	}
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
