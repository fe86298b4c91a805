// SPDX-License-Identifier: GPL-2.0
// leafy: burns CPU in functions without a stack frame, so that tests can check who called them.
//
// main.spinLeaf is a noinline leaf that needs no stack frame, and only
// main.workKilo calls it. main.clearBig makes large byte slices, whose
// zeroing runs in runtime.memclrNoHeapPointers, assembly without a frame.
// main.framedTick and main.framedWide, which only main.workTicks calls,
// have a frame, but spend a good share of their time making and unmaking it. A frame-pointer walk
// from any of them can skip its caller. With -cpuprofile,
// runtime/pprof profiles the same run from the inside, for comparison.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"
)

var (
	sink uint64
	keep [][]byte
	mu   sync.Mutex
)

//go:noinline
func spinLeaf(n int) uint64 {
	x := uint64(n)
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 17
	}
	return x
}

//go:noinline
func workKilo() {
	for i := 0; i < 2000; i++ {
		sink += spinLeaf(1000)
	}
}

// framedTick needs a frame (its array is indexed by a variable, so it
// lives in memory), and does so little else that a good share of its
// samples land in its prologue or epilogue. Go before 1.21 moves SP there
// while BP is still main.workTicks' own.
//
//go:noinline
func framedTick(n int) uint64 {
	var a [4]uint64
	a[n&3] = uint64(n)
	a[(n+1)&3] = uint64(n) >> 3
	return a[(n+2)&3] ^ a[n&3]
}

// framedWide is framedTick with a frame of 128 bytes, which Go before 1.21
// unmakes with SUBQ $-128, SP: +128 needs more than a byte.
//
//go:noinline
func framedWide(n int) uint64 {
	var a [15]uint64
	a[n&7] = uint64(n)
	a[(n+1)&7] = uint64(n) >> 3
	return a[(n+2)&7] ^ a[n&7]
}

//go:noinline
func workTicks() {
	for i := 0; i < 500000; i++ {
		sink += framedTick(i)
		sink += framedWide(i)
	}
}

//go:noinline
func clearBig(w int) {
	b := make([]byte, 4<<20)
	b[len(b)-1] = 1
	mu.Lock()
	keep[w] = b
	mu.Unlock()
}

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	workers := flag.Int("workers", 2, "worker goroutines")
	profile := flag.String("cpuprofile", "", "also write runtime/pprof's CPU profile here")
	rate := flag.Int("rate", 1000, "runtime/pprof's sampling rate, Hz")
	rounds := flag.Int("rounds", 0, "stop after this many rounds of work per worker, whatever -d says")
	wait := flag.Bool("wait-usr1", false, "wait for SIGUSR1 before working (for a profiler to attach)")
	ticks := flag.Bool("ticks", true, "call main.workTicks too")
	flag.Parse()
	fmt.Fprintf(os.Stderr, "leafy: pid %d\n", os.Getpid())

	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		// above the default 100 Hz, so that the comparison has enough
		// samples; StartCPUProfile then warns that the rate is already set
		runtime.SetCPUProfileRate(*rate)
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "leafy:", err)
			os.Exit(1)
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	// fewer collections: each stops the frameless loop with an asynchronous
	// preemption, which shows up as runtime.asyncPreempt samples
	debug.SetGCPercent(1000)
	keep = make([][]byte, *workers)
	if *wait {
		usr1 := make(chan os.Signal, 1)
		signal.Notify(usr1, syscall.SIGUSR1)
		<-usr1
	}
	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for n := 0; time.Now().Before(deadline) && (*rounds == 0 || n < *rounds); n++ {
				workKilo()
				if *ticks {
					workTicks()
				}
				clearBig(w)
				// a goroutine that runs 10 ms without a safe point gets an
				// asynchronous preemption from sysmon; runtime/pprof's own
				// signal then tends to land in runtime.asyncPreempt
				runtime.Gosched()
			}
		}(w)
	}
	wg.Wait()
}
