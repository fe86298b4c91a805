// SPDX-License-Identifier: GPL-2.0
// allocs: allocates at a steady pace under known trace IDs and prints, from its own runtime.MemProfile, what each request allocated.
//
// Flags:
//
//	-rate N      sets runtime.MemProfileRate to N first thing in main
//	             (default -1: leave Go's default, 512 KiB; 0 turns sampling off)
//	-d DURATION  how long the workload runs (default 3s)
//	-mbps N      megabytes (10^6 bytes) per second main.alloc1K allocates
//	             (default 8); the others allocate a multiple of it (below:
//	             7.75 times it in all, 62 MB/s), so that no two allocate alike
//	-start FILE  print "ready" on stdout, then wait until FILE exists
//	             (polled every 10 ms) before starting the workload
//	-out FILE    where the truth JSON goes (default stdout); written to
//	             FILE.tmp and renamed, so FILE appears whole
//	-pprof FILE  also write Go's own allocs profile (runtime/pprof) to
//	             FILE at the end, before the truth
//
// Five goroutines run at once until -d has passed, each calling one
// non-inlined function that allocates and nothing else, paced to its share
// of -mbps (allocSmall 1/4, alloc1K 1, alloc64K 4, allocChild 2,
// allocUntraced 1/2) and
// storing every object into a ring of 64 global slots of its own, so live
// memory stays near 4.5 MB and GC runs as usual:
//
//	main.allocSmall     trace a110c000000000000000000000000001  64-byte structs (new)
//	main.alloc1K        trace a110c000000000000000000000000002  1 KiB byte slices
//	main.alloc64K       trace a110c000000000000000000000000003  64 KiB byte slices
//	main.allocChild     trace a110c000000000000000000000000004  4 KiB byte slices, in
//	                    a goroutine the request starts inside pprof.Do (it
//	                    inherits the labels; the request waits for it)
//	main.allocUntraced  no labels                               2 KiB byte slices
//
// Traced requests run under pprof.Do(ctx, pprof.Labels("otel.traceid", ID), fn).
// Every size is a size class of its own (or whole pages), so the bytes a
// sampled allocation records are exactly the bytes asked for. Besides the
// allocating functions, the traced goroutines allocate only a few small
// objects of setup (the label set, the child's closure and goroutine).
//
// The truth (built without -tags nomemprofile, truth.go): before "ready", the
// program runs runtime.GC() twice and takes runtime.MemProfile(recs, true);
// after the workload has stopped and every goroutine returned, it does so
// again. A record belongs to the allocating function its stack
// (runtime.CallersFrames, inlined frames expanded) contains, so the
// runtime's own allocations inside the function count too, as they do for
// the goroutine's labels: a sudog when an allocation starts a GC cycle, say,
// which at -rate 1 puts raw_objects one or two above made_objects. A
// function may have several records (with Go 1.27 allocSmall's samples
// come with two stacks, one through a size-specialized malloc). Per
// function, raw_objects and raw_bytes are the sums of AllocObjects and
// AllocBytes after minus before; objects and bytes are the same with every
// record scaled first as runtime/pprof's scaleHeapSample does, at the rate
// in effect at the end (runtime.MemProfileRate; <= 1 means no scaling):
// count and size each divided by 1 - exp(-(size/count)/rate). made_objects
// and made_bytes count, with atomic counters, what the function itself
// allocated. One JSON object, on one line (after "ready" when -start is
// given and -out is not):
//
//	{"go":"go1.22.12","rate":524288,"memprofile_rate_at_start":524288,
//	 "memprofile_rate_at_end":524288,"pid":1234,"duration_ns":3000000000,
//	 "functions":{"main.alloc1K":{"trace_id":"a110c000000000000000000000000002",
//	   "objects":N,"bytes":N,"raw_objects":N,"raw_bytes":N,
//	   "made_objects":N,"made_bytes":N},...,
//	   "main.allocUntraced":{"trace_id":null,...}},
//	 "made":{"main.alloc1K":{"trace_id":"...","made_objects":N,"made_bytes":N},...}}
//
// rate is runtime.MemProfileRate as the truth was scaled (read after the
// workload); memprofile_rate_at_start is its value on entering main, before
// -rate. Then the program exits 0 at once.
//
// At the default rate, 16 MB/s gives about 30 samples a second (a 64 KiB
// slice is sampled with chance 1-exp(-1/8), 12%); -rate 65536 gives about
// 240, and -rate 8192 samples nearly every 64 KiB slice. Before
// Go 1.24 a new -rate counts only from each P's next sample, its countdown
// having been drawn at 512 KiB: the first half megabyte or so a P
// allocates is sampled at the default rate (so at -rate 8192 a few 64 KiB
// slices go unsampled). From Go 1.24 a P draws again when the rate changes.
//
// Built with -tags nomemprofile (notruth.go) the program never references
// runtime.MemProfile, so the linker sets runtime.disableMemoryProfiling and
// the runtime sets MemProfileRate to 0 in schedinit:
// memprofile_rate_at_start shows it, and "functions" is null ("made" is
// still there). -rate turns sampling back on, at that rate, with every
// toolchain: before Go 1.24 a P's countdown drawn at rate 0 is 0, so its
// next allocation is sampled and draws a new one (from Go 1.21 the first
// P's countdown is drawn at 512 KiB, before the runtime zeroes the rate);
// from Go 1.24 each P draws again when the rate changes.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
)

const (
	traceSmall = "a110c000000000000000000000000001"
	trace1K    = "a110c000000000000000000000000002"
	trace64K   = "a110c000000000000000000000000003"
	traceChild = "a110c000000000000000000000000004"

	ring = 64                   // sink slots per function
	tick = 2 * time.Millisecond // pause between paced batches
)

type obj64 struct{ w [8]uint64 }

var (
	sinkSmall    [ring]*obj64
	sink1K       [ring][]byte
	sink64K      [ring][]byte
	sinkChild    [ring][]byte
	sinkUntraced [ring][]byte
)

//go:noinline
func allocSmall(i int) {
	p := new(obj64)
	p.w[0] = uint64(i)
	sinkSmall[i%ring] = p
}

//go:noinline
func alloc1K(i int) {
	b := make([]byte, 1<<10)
	b[0] = byte(i)
	sink1K[i%ring] = b
}

//go:noinline
func alloc64K(i int) {
	b := make([]byte, 64<<10)
	b[0] = byte(i)
	sink64K[i%ring] = b
}

//go:noinline
func allocChild(i int) {
	b := make([]byte, 4<<10)
	b[0] = byte(i)
	sinkChild[i%ring] = b
}

//go:noinline
func allocUntraced(i int) {
	b := make([]byte, 2<<10)
	b[0] = byte(i)
	sinkUntraced[i%ring] = b
}

// job is one allocating function, its trace ID ("" for none) and what it made.
type job struct {
	name    string
	trace   string
	size    int64
	alloc   func(int)
	share   float64 // of -mbps: each function's bytes differ, so their order is plain
	objects int64   // atomic
	bytes   int64   // atomic
}

var jobs = []*job{
	{name: "main.allocSmall", trace: traceSmall, size: 64, alloc: allocSmall, share: 0.25},
	{name: "main.alloc1K", trace: trace1K, size: 1 << 10, alloc: alloc1K, share: 1},
	{name: "main.alloc64K", trace: trace64K, size: 64 << 10, alloc: alloc64K, share: 4},
	{name: "main.allocChild", trace: traceChild, size: 4 << 10, alloc: allocChild, share: 2},
	{name: "main.allocUntraced", size: 2 << 10, alloc: allocUntraced, share: 0.5},
}

// run calls j.alloc until end, as often as keeps it at bps bytes a second
// since start.
func run(j *job, bps float64, start, end time.Time) {
	var n int64
	for {
		now := time.Now()
		if !now.Before(end) {
			return
		}
		want := int64(now.Sub(start).Seconds()*bps)/j.size + 1
		k := want - n
		for ; n < want; n++ {
			j.alloc(int(n))
		}
		if k > 0 {
			atomic.AddInt64(&j.objects, k)
			atomic.AddInt64(&j.bytes, k*j.size)
		}
		time.Sleep(tick)
	}
}

type madeOut struct {
	TraceID     *string `json:"trace_id"`
	MadeObjects int64   `json:"made_objects"`
	MadeBytes   int64   `json:"made_bytes"`
}

type funcOut struct {
	TraceID     *string `json:"trace_id"`
	Objects     int64   `json:"objects"`
	Bytes       int64   `json:"bytes"`
	RawObjects  int64   `json:"raw_objects"`
	RawBytes    int64   `json:"raw_bytes"`
	MadeObjects int64   `json:"made_objects"`
	MadeBytes   int64   `json:"made_bytes"`
}

type output struct {
	Go          string              `json:"go"`
	Rate        int                 `json:"rate"`
	RateAtStart int                 `json:"memprofile_rate_at_start"`
	RateAtEnd   int                 `json:"memprofile_rate_at_end"`
	Pid         int                 `json:"pid"`
	DurationNs  int64               `json:"duration_ns"`
	Functions   map[string]*funcOut `json:"functions"`
	Made        map[string]*madeOut `json:"made"`
}

func traceOf(j *job) *string {
	if j.trace == "" {
		return nil
	}
	t := j.trace
	return &t
}

func fail(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "allocs: "+format+"\n", a...)
	os.Exit(2)
}

func main() {
	rateAtStart := runtime.MemProfileRate
	rate := flag.Int("rate", -1, "runtime.MemProfileRate (-1: leave Go's default)")
	dur := flag.Duration("d", 3*time.Second, "how long the workload runs")
	mbps := flag.Float64("mbps", 8, "MB/s main.alloc1K allocates (the others a multiple)")
	startFile := flag.String("start", "", "wait until this file exists before the workload")
	outFile := flag.String("out", "", "where the truth JSON goes (default stdout)")
	profFile := flag.String("pprof", "", "also write Go's own allocs profile here, at the end")
	flag.Parse()
	if *rate >= 0 {
		runtime.MemProfileRate = *rate
	}
	if flag.NArg() > 0 || *mbps <= 0 {
		fail("usage: allocs [-rate N] [-d DURATION] [-mbps N] [-start FILE] [-out FILE]")
	}
	fmt.Fprintf(os.Stderr, "allocs: pid %d\n", os.Getpid())

	before := snapshot()
	if *startFile != "" {
		os.Stdout.WriteString("ready\n")
		for {
			if _, err := os.Stat(*startFile); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	bps := *mbps * 1e6
	start := time.Now()
	end := start.Add(*dur)
	var wg sync.WaitGroup
	for _, j := range jobs {
		j := j
		wg.Add(1)
		switch {
		case j.trace == "":
			go func() {
				defer wg.Done()
				run(j, bps*j.share, start, end)
			}()
		case j.name == "main.allocChild":
			go func() {
				defer wg.Done()
				pprof.Do(context.Background(), pprof.Labels("otel.traceid", j.trace), func(context.Context) {
					var child sync.WaitGroup
					child.Add(1)
					go func() {
						defer child.Done()
						run(j, bps*j.share, start, end)
					}()
					child.Wait()
				})
			}()
		default:
			go func() {
				defer wg.Done()
				pprof.Do(context.Background(), pprof.Labels("otel.traceid", j.trace), func(context.Context) {
					run(j, bps*j.share, start, end)
				})
			}()
		}
	}
	wg.Wait()
	took := time.Since(start)

	out := output{
		Go:          runtime.Version(),
		RateAtStart: rateAtStart,
		Pid:         os.Getpid(),
		DurationNs:  int64(took),
		Made:        map[string]*madeOut{},
	}
	out.Functions, out.Rate = truth(before, jobs)
	for _, j := range jobs {
		o, b := atomic.LoadInt64(&j.objects), atomic.LoadInt64(&j.bytes)
		out.Made[j.name] = &madeOut{TraceID: traceOf(j), MadeObjects: o, MadeBytes: b}
		if f := out.Functions[j.name]; f != nil {
			f.MadeObjects, f.MadeBytes = o, b
		}
	}
	if *profFile != "" {
		if err := writeAllocs(*profFile); err != nil {
			fail("%v", err)
		}
	}
	out.RateAtEnd = runtime.MemProfileRate
	text, err := json.Marshal(&out)
	if err != nil {
		fail("%v", err)
	}
	text = append(text, '\n')
	if *outFile == "" {
		if _, err := os.Stdout.Write(text); err != nil {
			fail("%v", err)
		}
	} else {
		tmp := *outFile + ".tmp"
		if err := os.WriteFile(tmp, text, 0o644); err != nil {
			fail("%v", err)
		}
		if err := os.Rename(tmp, *outFile); err != nil {
			fail("%v", err)
		}
	}
	os.Exit(0)
}
