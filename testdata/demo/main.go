// SPDX-License-Identifier: GPL-2.0
// demo: a small shop service that runs every request under its W3C trace ID as a pprof label.
//
// It serves /checkout and /search on 127.0.0.1. Each request's trace ID comes
// from its traceparent header (or a fresh one), and the handler's work runs
// inside pprof.Do with otel.traceid, span_id and route labels. A checkout
// also waits, as a real one would: for the stock lock that other checkouts
// hold, and for a payment service (a goroutine of its own, which inherits
// the labels). With -load it also sends itself requests, so that `make
// demo` needs nothing else.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"time"
)

var sink float64

// traceparent: version-traceid-spanid-flags, all lowercase hex
func parseTraceparent(h string) (trace, span string, ok bool) {
	parts := strings.Split(h, "-")
	if len(parts) != 4 || len(parts[1]) != 32 || len(parts[2]) != 16 {
		return "", "", false
	}
	if _, err := hex.DecodeString(parts[1] + parts[2]); err != nil {
		return "", "", false
	}
	return strings.ToLower(parts[1]), strings.ToLower(parts[2]), true
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

//go:noinline
func computePrices(items int) float64 {
	total := 0.0
	for i := 0; i < items*20000; i++ {
		total += math.Sqrt(float64(i%977)) * 1.07
	}
	return total
}

//go:noinline
func rankResults(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = (i * 7919) % 10007
	}
	for k := 0; k < 40; k++ {
		sort.Ints(r)
		for i := range r {
			r[i] = (r[i]*31 + k) % 10007
		}
	}
	return r
}

func traced(route string, work func(r *http.Request) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		trace, span, ok := parseTraceparent(r.Header.Get("traceparent"))
		if !ok {
			trace, span = randomHex(16), randomHex(8)
		}
		var body string
		pprof.Do(r.Context(), pprof.Labels("otel.traceid", trace, "span_id", span, "route", route),
			func(context.Context) { body = work(r) })
		fmt.Fprintf(w, "%s trace=%s\n", body, trace)
	}
}

var stock sync.Mutex

// reserveStock holds the stock lock a while: concurrent checkouts wait for it.
//
//go:noinline
func reserveStock() {
	stock.Lock()
	time.Sleep(3 * time.Millisecond)
	stock.Unlock()
}

// chargeCard waits for a payment service, which takes its time.
//
//go:noinline
func chargeCard() string {
	done := make(chan string)
	go func() {
		time.Sleep(20 * time.Millisecond)
		done <- "paid"
	}()
	return <-done
}

func checkout(r *http.Request) string {
	sink += computePrices(40)
	reserveStock()
	return "checkout " + chargeCard()
}

func search(r *http.Request) string {
	res := rankResults(20000)
	return fmt.Sprintf("search ok (%d results)", len(res))
}

// load sends requests to the service itself: a few fixed trace IDs and fresh ones.
func load(addr string, perSecond int) {
	fixed := []string{
		"4bf92f3577b34da6a3ce929d0e0e4736",
		"0af7651916cd43dd8448eb211c80319c",
	}
	client := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	for i := 0; ; i++ {
		<-tick.C
		trace := randomHex(16)
		if i%3 != 2 {
			trace = fixed[i%2]
		}
		route := "/checkout"
		if i%4 == 3 {
			route = "/search"
		}
		go func(route, trace string) {
			req, _ := http.NewRequest("GET", "http://"+addr+route, nil)
			req.Header.Set("traceparent", "00-"+trace+"-"+randomHex(8)+"-01")
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		}(route, trace)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	selfLoad := flag.Int("load", 0, "requests per second to send to itself (0: none)")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	mux := http.NewServeMux()
	mux.HandleFunc("/checkout", traced("/checkout", checkout))
	mux.HandleFunc("/search", traced("/search", search))
	if *selfLoad > 0 {
		go load(ln.Addr().String(), *selfLoad)
	}
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
