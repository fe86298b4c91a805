// SPDX-License-Identifier: GPL-2.0
// httpserver: a plain net/http server, with no tracing library and no labels, that burns CPU per request.
//
// One port serves HTTP/1.1 and h2c (golang.org/x/net/http2/h2c, prior
// knowledge or Upgrade), another HTTP/1.1 and HTTP/2 over TLS with a
// self-signed certificate made at start. /work burns -burn of CPU time in
// main.handleBurn, then as long again in main.childBurn, on a goroutine the
// handler starts and waits for. The reply names the protocol and the
// traceparent header the handler saw, so that a test knows what was sent
// where. /wait?ms=N sleeps N ms in main.handleWait (for --wall). For make
// bench, /small only says ok, and /spawn?n=N starts N goroutines and
// replies with the nanoseconds until all were done. /fan starts goroutines
// that start goroutines, each burning CPU (a request's fan-out).
// /alloc?kb=K&n=N allocates N slices of K KiB in main.handleAlloc, then as
// many in main.childAlloc on a goroutine it starts and waits for (--alloc);
// -memrate R sets runtime.MemProfileRate, which a program that never
// references runtime.MemProfile, as this one, otherwise has at 0. Built in
// GOPATH mode against Debian's golang-golang-x-net-dev.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
)

var sink uint64

// threadCPU is the CPU time the calling thread has had (RUSAGE_THREAD).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// spin burns d of CPU time, on a thread of its own meanwhile, however busy
// the machine is: the samples a test counts do not thin out when the CPUs
// are shared.
func spin(d time.Duration, mul uint64) uint64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := mul
	for start := threadCPU(); threadCPU()-start < d; {
		for i := 0; i < 100000; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	return x
}

//go:noinline
func handleBurn(d time.Duration) uint64 { return spin(d, 0x9e3779b97f4a7c15) }

//go:noinline
func childBurn(d time.Duration) uint64 { return spin(d, 0xbf58476d1ce4e5b9) }

func work(burn time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		x := handleBurn(burn)
		done := make(chan uint64)
		go func() { done <- childBurn(burn) }()
		x ^= <-done
		sink += x
		fmt.Fprintf(w, "%s %s\n", r.Proto, r.Header.Get("traceparent"))
	}
}

// xorshift runs n rounds of a xorshift generator: work of a known size,
// with no system call, for a rate that the machine's load sets.
func xorshift(n int, x uint64) uint64 {
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// fanWork burns d of CPU, or when d is 0, runs loops rounds of xorshift.
func fanWork(d time.Duration, loops int, mul uint64) uint64 {
	if d > 0 {
		return spin(d, mul)
	}
	return xorshift(loops, mul)
}

//go:noinline
func fanChildBurn(d time.Duration, loops int) uint64 {
	return fanWork(d, loops, 0x94d049bb133111eb)
}

//go:noinline
func fanGrandchildBurn(d time.Duration, loops int) uint64 {
	return fanWork(d, loops, 0x2545f4914f6cdd1d)
}

// fanOut runs each of n goroutines in fn and waits for them all, as an
// errgroup or a metrics registry's collectors do.
func fanOut(n int, fn func() uint64) uint64 {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var x uint64
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer wg.Done()
			v := fn()
			mu.Lock()
			x ^= v
			mu.Unlock()
		}()
	}
	wg.Wait()
	return x
}

// fan starts ?kids=N goroutines, each working in main.fanChildBurn and
// then starting ?grandkids=M goroutines that work as much in
// main.fanGrandchildBurn; it answers when all are done. The work is
// ?ms=D ms of CPU time each, or ?loops=L rounds of xorshift (make bench:
// goroutines that start fast, with work of their own).
func fan(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	num := func(k string) float64 {
		v, err := strconv.ParseFloat(q.Get(k), 64)
		if err != nil || v < 0 {
			return -1
		}
		return v
	}
	if q.Get("ms") == "" {
		q.Set("ms", "0")
	}
	if q.Get("loops") == "" {
		q.Set("loops", "0")
	}
	kids, grandkids, ms, loops := num("kids"), num("grandkids"), num("ms"), num("loops")
	if kids < 1 || grandkids < 0 || ms < 0 || loops < 0 {
		http.Error(w, "kids (at least 1), grandkids, ms and loops must be numbers", http.StatusBadRequest)
		return
	}
	d, n := time.Duration(ms*float64(time.Millisecond)), int(loops)
	sink += fanOut(int(kids), func() uint64 {
		return fanChildBurn(d, n) ^ fanOut(int(grandkids), func() uint64 { return fanGrandchildBurn(d, n) })
	})
	fmt.Fprintf(w, "%s %s\n", r.Proto, r.Header.Get("traceparent"))
}

//go:noinline
func handleWait(d time.Duration) { time.Sleep(d) }

var allocSink [][]byte

//go:noinline
func handleAlloc(kb, n int) int { return allocSlices(kb, n) }

//go:noinline
func childAlloc(kb, n int) int { return allocSlices(kb, n) }

// allocSlices allocates n slices of kb KiB, keeping only the last: GC takes the rest.
func allocSlices(kb, n int) int {
	total := 0
	for i := 0; i < n; i++ {
		b := make([]byte, kb<<10)
		b[0] = byte(i)
		total += len(b)
		allocSink = [][]byte{b}
	}
	return total
}

// alloc allocates ?n=N slices of ?kb=K KiB in main.handleAlloc, then as many in main.childAlloc on a goroutine it starts.
func alloc(w http.ResponseWriter, r *http.Request) {
	kb, err1 := strconv.Atoi(r.URL.Query().Get("kb"))
	n, err2 := strconv.Atoi(r.URL.Query().Get("n"))
	if err1 != nil || err2 != nil || kb <= 0 || n <= 0 {
		http.Error(w, "kb and n must be positive integers", http.StatusBadRequest)
		return
	}
	total := handleAlloc(kb, n)
	done := make(chan int)
	go func() { done <- childAlloc(kb, n) }()
	total += <-done
	fmt.Fprintf(w, "%s %s %d\n", r.Proto, r.Header.Get("traceparent"), total)
}

// wait sleeps ?ms=N milliseconds in main.handleWait: a request that waits, for --wall.
func wait(w http.ResponseWriter, r *http.Request) {
	ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
	if err != nil || ms <= 0 {
		http.Error(w, "ms must be a positive integer", http.StatusBadRequest)
		return
	}
	handleWait(time.Duration(ms) * time.Millisecond)
	fmt.Fprintf(w, "%s %s\n", r.Proto, r.Header.Get("traceparent"))
}

// small is the cheapest handler: what a probe per request costs shows in its rate.
func small(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok\n")) }

// spawn starts n goroutines that do nothing and replies with the nanoseconds that took, all of them done.
func spawn(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.URL.Query().Get("n"))
	if err != nil || n <= 0 {
		http.Error(w, "n must be a positive integer", http.StatusBadRequest)
		return
	}
	var wg sync.WaitGroup
	start := time.Now()
	wg.Add(n)
	for i := 0; i < n; i++ {
		go wg.Done()
	}
	wg.Wait()
	fmt.Fprintf(w, "%d\n", time.Since(start).Nanoseconds())
}

// selfSigned makes a certificate for 127.0.0.1 that lives as long as the process.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "httpserver"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func main() {
	life := flag.Duration("d", 0, "exit after this long (0: run until killed)")
	burn := flag.Duration("burn", 20*time.Millisecond, "CPU time per request, in the handler and again in its goroutine")
	memrate := flag.Int("memrate", -1, "runtime.MemProfileRate (-1: leave it)")
	flag.Parse()
	if *memrate >= 0 {
		runtime.MemProfileRate = *memrate
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/work", work(*burn))
	mux.HandleFunc("/small", small)
	mux.HandleFunc("/spawn", spawn)
	mux.HandleFunc("/fan", fan)
	mux.HandleFunc("/wait", wait)
	mux.HandleFunc("/alloc", alloc)

	plain, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpserver:", err)
		os.Exit(1)
	}
	secure, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpserver:", err)
		os.Exit(1)
	}
	cert, err := selfSigned()
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpserver: certificate:", err)
		os.Exit(1)
	}
	h1 := &http.Server{Handler: h2c.NewHandler(mux, &http2.Server{})}
	h2 := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	// ServeTLS offers h2 by ALPN, through net/http's own HTTP/2 server
	go func() { fmt.Fprintln(os.Stderr, "httpserver:", h1.Serve(plain)) }()
	go func() { fmt.Fprintln(os.Stderr, "httpserver:", h2.ServeTLS(secure, "", "")) }()
	fmt.Printf("http %s\nhttps %s\n", plain.Addr(), secure.Addr())
	if *life > 0 {
		time.Sleep(*life)
		return
	}
	select {}
}
