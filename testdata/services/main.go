// SPDX-License-Identifier: GPL-2.0
// services: two services, checkout and inventory, where one request crosses both, and the client that sends them.
//
// Run with -role checkout, inventory or client. A checkout request takes
// its trace ID from its W3C traceparent header, runs its work under it as a
// pprof label (unless -labels=false: then only the header says it), burns
// -burn of CPU in main.priceCart, asks inventory (-inventory) over HTTP through one
// http.Client (a pool of kept-alive connections, whose reader and writer
// goroutines the request that dialled starts) with the trace in its own
// traceparent, and burns -burn/2 in main.packOrder. Inventory labels its
// work the same way, burns -burn in main.countStock and waits -wait in
// main.holdStock. Handlers leave garbage behind, so that the collector's
// workers run. With -audit D, each checkout starts main.auditOrder and
// does not wait for it: it burns CPU until D after the request ended.
// With -nest D, each checkout burns D in main.nestedWork under another
// trace (its trace ID's halves swapped), in a pprof.Do inside the request's,
// while main.keepOrder, which the request started just before, burns too.
// With -log FILE, checkout writes "TRACE START END" a line, each request's
// times in microseconds of the Unix clock, when its labels were set and
// left. The client sends -n requests (0: until killed) to -target, one at
// a time, -every apart (0: back to back): with -first ID, one under ID
// first (it dials), then under the -traces trace IDs in turn.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

var (
	sink    uint64
	garbage [][]byte
	gmu     sync.Mutex
)

// threadCPU is the CPU time the calling thread has had, to the nanosecond
// (CLOCK_THREAD_CPUTIME_ID): RUSAGE_THREAD's moves a tick at a time, too
// coarse for the bench's requests of 50 us.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// spin burns d of CPU time on a thread of its own, however busy the machine is.
func spin(d time.Duration, mul uint64) uint64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := mul
	for start := threadCPU(); threadCPU()-start < d; {
		for i := 0; i < 20000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	return x
}

//go:noinline
func priceCart(d time.Duration) { sink += spin(d, 0x9e3779b97f4a7c15) }

//go:noinline
func packOrder(d time.Duration) { sink += spin(d, 0xbf58476d1ce4e5b9) }

//go:noinline
func countStock(d time.Duration) { sink += spin(d, 0x94d049bb133111eb) }

//go:noinline
func holdStock(d time.Duration) { time.Sleep(d) }

// auditOrder burns CPU until D after the request that started it ended.
//
//go:noinline
func auditOrder(ended <-chan time.Time, d time.Duration) {
	var end time.Time
	for end.IsZero() || time.Since(end) < d {
		sink += spin(time.Millisecond, 0xd6e8feb86659fd93)
		select {
		case end = <-ended:
		default:
		}
	}
}

// nestedWork runs under a trace of its own, in a pprof.Do inside the request's.
//
//go:noinline
func nestedWork(d time.Duration) { sink += spin(d, 0x2545f4914f6cdd1d) }

// keepOrder burns CPU under the request's labels until done is closed.
//
//go:noinline
func keepOrder(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		default:
			sink += spin(time.Millisecond, 0x9fb21c651e98df25)
		}
	}
}

// nested runs nestedWork for d under another trace (trace's halves swapped),
// while a goroutine the request started before it keeps burning.
func nested(ctx context.Context, trace string, d time.Duration) {
	done := make(chan struct{})
	go keepOrder(done)
	pprof.Do(ctx, pprof.Labels("otel.traceid", trace[16:]+trace[:16]), func(context.Context) {
		nestedWork(d)
	})
	close(done)
}

// litter leaves garbage behind, so that the collector runs every few requests.
func litter() {
	gmu.Lock()
	garbage = append(garbage, make([]byte, 512<<10))
	if len(garbage) > 8 {
		garbage = garbage[1:]
	}
	gmu.Unlock()
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// traceOf is the trace and span ID of a version-00 traceparent, or "".
func traceOf(h string) (string, string) {
	p := strings.Split(h, "-")
	if len(p) != 4 || len(p[1]) != 32 || len(p[2]) != 16 {
		return "", ""
	}
	return p[1], p[2]
}

// traced runs work under the request's trace ID, as a label unless -labels=false.
func traced(labels bool, r *http.Request, work func(ctx context.Context)) {
	trace, span := traceOf(r.Header.Get("traceparent"))
	if !labels || trace == "" {
		work(r.Context())
		return
	}
	pprof.Do(r.Context(), pprof.Labels("otel.traceid", trace, "span_id", span), work)
}

type checkout struct {
	client    *http.Client
	inventory string
	labels    bool
	litter    bool
	burn      time.Duration
	audit     time.Duration
	nest      time.Duration
	log       io.Writer
	logmu     sync.Mutex
}

func (c *checkout) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var start, end time.Time
	var ended chan time.Time
	trace, _ := traceOf(r.Header.Get("traceparent"))
	traced(c.labels, r, func(ctx context.Context) {
		start = time.Now()
		priceCart(c.burn)
		if c.audit > 0 {
			ended = make(chan time.Time, 1)
			go auditOrder(ended, c.audit)
		}
		if c.nest > 0 && len(trace) == 32 {
			nested(ctx, trace, c.nest)
		}
		if c.inventory != "" {
			req, _ := http.NewRequestWithContext(ctx, "GET", c.inventory+"/stock", nil)
			req.Header.Set("traceparent", "00-"+trace+"-"+randomHex(8)+"-01")
			if resp, err := c.client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
		packOrder(c.burn / 2)
		if c.litter {
			litter()
		}
		end = time.Now()
	})
	if ended != nil {
		ended <- time.Now()
	}
	if c.log != nil {
		c.logmu.Lock()
		fmt.Fprintf(c.log, "%s %d %d\n", trace, start.UnixMicro(), end.UnixMicro())
		c.logmu.Unlock()
	}
	fmt.Fprintln(w, "ordered")
}

type inventory struct {
	labels     bool
	burn, wait time.Duration
}

func (v *inventory) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	traced(v.labels, r, func(context.Context) {
		countStock(v.burn)
		holdStock(v.wait)
		litter()
	})
	fmt.Fprintln(w, "in stock")
}

func serve(h http.Handler, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "services:", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s\n", ln.Addr())
	if err := http.Serve(ln, h); err != nil {
		fmt.Fprintln(os.Stderr, "services:", err)
		os.Exit(1)
	}
}

// client sends n requests (0: until killed) to target, one at a time,
// every apart: the first under first, unless "", then under traces in turn.
func client(target, first string, traces []string, n int, every time.Duration) {
	c := &http.Client{Timeout: 10 * time.Second}
	for i, turn := 0, 0; n == 0 || i < n; i++ {
		if i > 0 {
			time.Sleep(every)
		}
		trace := first
		if i > 0 || first == "" {
			trace = traces[turn%len(traces)]
			turn++
		}
		req, _ := http.NewRequest("GET", target+"/checkout", nil)
		req.Header.Set("traceparent", "00-"+trace+"-"+randomHex(8)+"-01")
		resp, err := c.Do(req)
		if err != nil {
			fmt.Fprintln(os.Stderr, "services: client:", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func main() {
	role := flag.String("role", "", "checkout, inventory or client")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	inv := flag.String("inventory", "", "checkout: inventory's base URL (none: it asks no other service)")
	garbage := flag.Bool("litter", true, "leave garbage behind in each request (the collector runs)")
	target := flag.String("target", "", "client: checkout's base URL")
	traces := flag.String("traces", "", "client: trace IDs, comma-separated, taken in turn")
	n := flag.Int("n", 0, "client: requests to send (0: until killed)")
	every := flag.Duration("every", 0, "client: from one request's end to the next one's start")
	first := flag.String("first", "", "client: the first request's trace ID (it dials)")
	labels := flag.Bool("labels", true, "run each request's work under its trace ID as a pprof label")
	burn := flag.Duration("burn", 4*time.Millisecond, "CPU a request burns in each service")
	wait := flag.Duration("wait", 8*time.Millisecond, "inventory: how long a request waits")
	audit := flag.Duration("audit", 0, "checkout: a goroutine each request leaves running this long after it")
	nest := flag.Duration("nest", 0, "checkout: burn this long under another trace, in a pprof.Do inside the request's")
	logf := flag.String("log", "", "checkout: a file for each request's trace and times")
	flag.Parse()

	switch *role {
	case "checkout":
		c := &checkout{client: &http.Client{}, inventory: *inv, labels: *labels, burn: *burn,
			audit: *audit, nest: *nest, litter: *garbage}
		if *logf != "" {
			f, err := os.Create(*logf)
			if err != nil {
				fmt.Fprintln(os.Stderr, "services:", err)
				os.Exit(1)
			}
			c.log = f
		}
		serve(c, *addr)
	case "inventory":
		serve(&inventory{labels: *labels, burn: *burn, wait: *wait}, *addr)
	case "client":
		client(*target, *first, strings.Split(*traces, ","), *n, *every)
	default:
		fmt.Fprintln(os.Stderr, "services: -role checkout, inventory or client")
		os.Exit(2)
	}
}
