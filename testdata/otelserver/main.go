// SPDX-License-Identifier: GPL-2.0
// otelserver: an HTTP server traced by the OpenTelemetry Go SDK that burns CPU under each request's trace ID.
//
// otelhttp.NewHandler extracts the W3C traceparent header and starts a server
// span; the handler copies that span's trace and span IDs into pprof labels
// with pprof.Do and burns about 20 ms in handleWork, so a profile can check
// that every sample in main.handleWork carries the trace ID the client sent.
// Built in GOPATH mode against Debian's golang-opentelemetry-*-dev sources.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

var sink uint64

// handleWork burns CPU for about d; the arithmetic between clock reads keeps
// nearly every sample in this function rather than in time.Now.
//
//go:noinline
func handleWork(d time.Duration) uint64 {
	x := uint64(0x9e3779b97f4a7c15)
	for start := time.Now(); time.Since(start) < d; {
		for i := 0; i < 100000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	return x
}

func work(w http.ResponseWriter, r *http.Request) {
	sc := trace.SpanContextFromContext(r.Context())
	labels := pprof.Labels("otel.traceid", sc.TraceID().String(),
		"span_id", sc.SpanID().String(), "route", r.URL.Path)
	var x uint64
	pprof.Do(r.Context(), labels, func(context.Context) {
		x = handleWork(20 * time.Millisecond)
	})
	sink += x
	fmt.Fprintf(w, "%s %s\n", sc.TraceID(), sc.SpanID())
}

func main() {
	port := flag.Int("port", 0, "TCP port on 127.0.0.1 (0: pick one and print it)")
	life := flag.Duration("d", 0, "exit after this long (0: run until killed)")
	flag.Parse()

	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})

	mux := http.NewServeMux()
	mux.HandleFunc("/work", work)
	handler := otelhttp.NewHandler(mux, "otelserver",
		otelhttp.WithTracerProvider(tp),
		otelhttp.WithPropagators(propagation.TraceContext{}))

	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "otelserver: listen on 127.0.0.1:%d: %v\n", *port, err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	if *life > 0 {
		time.AfterFunc(*life, func() { os.Exit(0) })
	}
	if err := http.Serve(ln, handler); err != nil {
		fmt.Fprintf(os.Stderr, "otelserver: %v\n", err)
		os.Exit(1)
	}
}
