// SPDX-License-Identifier: GPL-2.0
// truth.go: what runtime.MemProfile says each allocating function allocated.
//go:build !nomemprofile

package main

import (
	"math"
	"os"
	"runtime"
	"runtime/pprof"
)

// memProfile runs GC twice, so every allocation made so far is published,
// and returns every record of runtime.MemProfile.
func memProfile() []runtime.MemProfileRecord {
	runtime.GC()
	runtime.GC()
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs := make([]runtime.MemProfileRecord, n+64)
		m, ok := runtime.MemProfile(recs, true)
		if ok {
			return recs[:m]
		}
		n = m
	}
}

type memSnapshot []runtime.MemProfileRecord

func snapshot() interface{} { return memSnapshot(memProfile()) }

// scaleHeapSample is runtime/pprof's: a record of count sampled
// allocations of size bytes in all, sampled at rate, stands for count and
// size divided by the chance 1-exp(-avg/rate) that one such allocation was
// sampled. Go 1.27's takes the object size rather than the total; the
// results agree, a record's objects being all of one size.
func scaleHeapSample(count, size, rate int64) (int64, int64) {
	if count == 0 || size == 0 {
		return 0, 0
	}
	if rate <= 1 {
		return count, size
	}
	avgSize := float64(size) / float64(count)
	scale := 1 / (1 - math.Exp(-avgSize/float64(rate)))
	return int64(float64(count) * scale), int64(float64(size) * scale)
}

// owner names the allocating function in a record's stack, or "".
func owner(r *runtime.MemProfileRecord, names map[string]bool) string {
	frames := runtime.CallersFrames(r.Stack())
	for {
		f, more := frames.Next()
		if names[f.Function] {
			return f.Function
		}
		if !more {
			return ""
		}
	}
}

// add sums the records' raw and scaled allocations per function, times sign.
func add(out map[string]*funcOut, recs []runtime.MemProfileRecord, names map[string]bool, rate, sign int64) {
	for i := range recs {
		r := &recs[i]
		name := owner(r, names)
		if name == "" {
			continue
		}
		f := out[name]
		objects, bytes := scaleHeapSample(r.AllocObjects, r.AllocBytes, rate)
		f.Objects += sign * objects
		f.Bytes += sign * bytes
		f.RawObjects += sign * r.AllocObjects
		f.RawBytes += sign * r.AllocBytes
	}
}

// truth is, per allocating function, its allocations in the records after
// the workload less those before it (records are scaled one by one, as
// runtime/pprof does, then summed), and the rate they were scaled at.
func truth(before interface{}, js []*job) (map[string]*funcOut, int) {
	after := memProfile()
	rate := runtime.MemProfileRate
	out := map[string]*funcOut{}
	names := map[string]bool{}
	for _, j := range js {
		out[j.name] = &funcOut{TraceID: traceOf(j)}
		names[j.name] = true
	}
	add(out, after, names, int64(rate), 1)
	add(out, before.(memSnapshot), names, int64(rate), -1)
	return out, rate
}

// writeAllocs writes Go's own allocs profile, as go tool pprof reads it, to path.
func writeAllocs(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
