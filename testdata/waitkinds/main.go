// SPDX-License-Identifier: GPL-2.0
// waitkinds: one goroutine per kind of wait, each under its own trace ID, alternating CPU with that wait.
//
// Each goroutine burns -cpu of wall time in main.burn, then waits about
// -wait in its own way: time.Sleep, a channel answered late, a contended
// sync.Mutex, a TCP read from a peer that answers late, a blocking read(2)
// on a pipe. It times both phases with the monotonic clock and, at exit,
// prints one JSON line per kind with the share of its time spent in the
// CPU phase: what a wall-clock profile should find running or runnable.
// It runs for -d, or until SIGUSR1.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"
)

var sink uint64

//go:noinline
func burn(d time.Duration) {
	x := sink
	for start := time.Now(); time.Since(start) < d; {
		for i := 0; i < 2000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
}

var waitDur time.Duration

//go:noinline
func waitSleep() { time.Sleep(waitDur) }

var chanReq = make(chan struct{})
var chanReply = make(chan struct{})

//go:noinline
func waitChan() {
	chanReq <- struct{}{}
	<-chanReply
}

var mu sync.Mutex
var holdReq = make(chan struct{})
var held = make(chan struct{})

//go:noinline
func waitMutex() {
	holdReq <- struct{}{}
	<-held
	mu.Lock()
	mu.Unlock()
}

var conn net.Conn

//go:noinline
func waitNet() {
	b := []byte{1}
	if _, err := conn.Write(b); err != nil {
		panic(err)
	}
	if _, err := io.ReadFull(conn, b); err != nil {
		panic(err)
	}
}

var pipe [2]int
// buffered: the peer took the last request before it answered, so the
// send never waits, and the wait is the read(2) alone, however late the
// peer runs on a busy machine
var pipeReq = make(chan struct{}, 1)

//go:noinline
func waitSyscall() {
	b := []byte{0}
	pipeReq <- struct{}{}
	if n, err := syscall.Read(pipe[0], b); n != 1 || err != nil {
		panic(fmt.Sprint("read: ", n, err))
	}
}

// the other side of each wait, with no labels: it answers after waitDur
func peers() {
	go func() {
		for range chanReq {
			time.Sleep(waitDur)
			chanReply <- struct{}{}
		}
	}()
	go func() {
		for range holdReq {
			mu.Lock()
			held <- struct{}{}
			time.Sleep(waitDur)
			mu.Unlock()
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() {
		c, err := ln.Accept()
		if err != nil {
			panic(err)
		}
		b := make([]byte, 1)
		for {
			if _, err := io.ReadFull(c, b); err != nil {
				return
			}
			time.Sleep(waitDur)
			c.Write(b)
		}
	}()
	if conn, err = net.Dial("tcp", ln.Addr().String()); err != nil {
		panic(err)
	}
	// a blocking pipe: read(2) parks the thread, not the goroutine
	if err := syscall.Pipe(pipe[:]); err != nil {
		panic(err)
	}
	go func() {
		for range pipeReq {
			time.Sleep(waitDur)
			syscall.Write(pipe[1], []byte{1})
		}
	}()
}

type kind struct {
	Kind    string  `json:"kind"`
	TraceID string  `json:"trace_id"`
	Wait    string  `json:"wait_func"`
	CPUNs   int64   `json:"cpu_ns"`
	WaitNs  int64   `json:"wait_ns"`
	Share   float64 `json:"cpu_share"`
	Rounds  int     `json:"rounds"`
	fn      func()
}

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	cpu := flag.Duration("cpu", 8*time.Millisecond, "CPU phase of each round")
	flag.DurationVar(&waitDur, "wait", 24*time.Millisecond, "wait phase of each round")
	// more Ps than goroutines that burn: one whose wait ends runs at once
	// rather than queue for a P, time the workload would count as waiting
	procs := flag.Int("procs", 16, "GOMAXPROCS")
	flag.Parse()
	runtime.GOMAXPROCS(*procs)
	// SIGUSR2: exec this same program again, as servers that upgrade in
	// place do (a PIE lands at another address)
	again := make(chan os.Signal, 1)
	signal.Notify(again, syscall.SIGUSR2)
	go func() {
		<-again
		exe, _ := os.Executable()
		syscall.Exec(exe, os.Args, os.Environ())
	}()
	peers()
	kinds := []*kind{
		{Kind: "sleep", TraceID: "5ee9000000000000000000000000a001", Wait: "main.waitSleep", fn: waitSleep},
		{Kind: "chan", TraceID: "c4a0000000000000000000000000a002", Wait: "main.waitChan", fn: waitChan},
		{Kind: "mutex", TraceID: "3075000000000000000000000000a003", Wait: "main.waitMutex", fn: waitMutex},
		{Kind: "net", TraceID: "0e70000000000000000000000000a004", Wait: "main.waitNet", fn: waitNet},
		{Kind: "syscall", TraceID: "5ca1000000000000000000000000a005", Wait: "main.waitSyscall", fn: waitSyscall},
	}
	// -d, or SIGUSR1 when a test says so: its profiler's start-up on a busy
	// machine takes a time no -d can know in advance
	var stop sync.Mutex
	deadline := time.Now().Add(*dur)
	done := func() bool {
		stop.Lock()
		defer stop.Unlock()
		return !time.Now().Before(deadline)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		<-sig
		stop.Lock()
		deadline = time.Now()
		stop.Unlock()
	}()
	var wg sync.WaitGroup
	for _, k := range kinds {
		wg.Add(1)
		go func(k *kind) {
			defer wg.Done()
			labels := pprof.Labels("otel.traceid", k.TraceID, "wait_kind", k.Kind)
			pprof.Do(context.Background(), labels, func(context.Context) {
				for !done() {
					t0 := time.Now()
					burn(*cpu)
					t1 := time.Now()
					k.fn()
					t2 := time.Now()
					k.CPUNs += int64(t1.Sub(t0))
					k.WaitNs += int64(t2.Sub(t1))
					k.Rounds++
				}
			})
		}(k)
	}
	fmt.Fprintf(os.Stderr, "waitkinds: pid %d, %d kinds\n", os.Getpid(), len(kinds))
	wg.Wait()
	enc := json.NewEncoder(os.Stdout)
	for _, k := range kinds {
		k.Share = float64(k.CPUNs) / float64(k.CPUNs+k.WaitNs)
		enc.Encode(k)
	}
}
