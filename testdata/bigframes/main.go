// SPDX-License-Identifier: GPL-2.0
// bigframes: burns CPU under deep large frames, in Duff's device, in write system calls and in stack growth, each under its own trace ID.
//
// main.deep recurses deepLevels times with a 2 KiB frame and spins at the
// bottom, so its stack from leaf to root spans far more than the sampler's
// first windows of stack. main.copyLoop copies and clears 512-byte arrays,
// which the amd64 compiler does in runtime.duffcopy and runtime.duffzero
// (assembly without a frame) where its release still has them.
// main.writeLoop writes 64 KiB at a time to an unlinked temporary file, so
// most of its samples land inside the write system call. Goroutines
// started one after another call main.growCaller, which calls
// main.growFrame, whose frame is larger than their stack:
// runtime.morestack grows it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"time"
)

const (
	deepTrace  = "b16f0000000000000000000000000001"
	duffTrace  = "b16f0000000000000000000000000002"
	writeTrace = "b16f0000000000000000000000000003"
	growTrace  = "b16f0000000000000000000000000004"
	deepLevels = 16
	// goroutines that wait all run long: their small stacks keep the
	// average that Go >= 1.19 starts a goroutine's stack at small
	idlers = 1000
)

type chunk [512]byte

var (
	sink     uint64
	src, dst [8]chunk
)

//go:noinline
func spin(end time.Time) uint64 {
	x := uint64(1)
	for time.Now().Before(end) {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
			x ^= x >> 17
		}
	}
	return x
}

//go:noinline
func deep(n int, end time.Time) uint64 {
	var pad [2048]byte
	pad[n%2048] = byte(n)
	if n == 0 {
		return spin(end) + uint64(pad[0])
	}
	return deep(n-1, end) + uint64(pad[(n*7)%2048])
}

//go:noinline
func copyLoop(n int) {
	for i := 0; i < n; i++ {
		dst[i%8] = src[(i+3)%8]
		src[(i+5)%8] = chunk{}
		src[i%8][i%512]++
	}
}

//go:noinline
func writeLoop(f *os.File, buf []byte, n int) error {
	for i := 0; i < n; i++ {
		if _, err := f.WriteAt(buf, 0); err != nil {
			return err
		}
	}
	return nil
}

// growFrame's frame is larger than any new goroutine's stack: its stack
// check calls runtime.morestack, which moves the stack before the
// function makes its frame.
//
//go:noinline
func growFrame(n int) uint64 {
	var a [8192]uint64
	a[n&8191] = uint64(n)
	return a[(n*7)&8191]
}

//go:noinline
func growCaller(n int) uint64 {
	return growFrame(n) + 1
}

func under(trace string, fn func()) {
	pprof.Do(context.Background(), pprof.Labels("otel.traceid", trace), func(context.Context) { fn() })
}

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	flag.Parse()
	end := time.Now().Add(*dur)
	f, err := os.CreateTemp("", "bigframes-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bigframes:", err)
		os.Exit(1)
	}
	// unlinked at once: a killed run leaves nothing behind
	os.Remove(f.Name())
	go under(deepTrace, func() {
		for time.Now().Before(end) {
			sink += deep(deepLevels, time.Now().Add(10*time.Millisecond))
		}
	})
	go under(duffTrace, func() {
		for time.Now().Before(end) {
			copyLoop(100000)
		}
	})
	go under(writeTrace, func() {
		buf := make([]byte, 64<<10)
		for time.Now().Before(end) {
			if err := writeLoop(f, buf, 100); err != nil {
				fmt.Fprintln(os.Stderr, "bigframes:", err)
				os.Exit(1)
			}
		}
	})
	idle := make(chan struct{})
	for i := 0; i < idlers; i++ {
		go func() { <-idle }()
	}
	go under(growTrace, func() {
		done := make(chan uint64)
		for i := 0; time.Now().Before(end); i++ {
			go func(i int) { done <- growCaller(i) }(i)
			sink += <-done
		}
	})
	fmt.Fprintln(os.Stderr, "bigframes: running")
	time.Sleep(time.Until(end))
}
