// SPDX-License-Identifier: GPL-2.0
// procctx: a service that publishes its resource as OTEP 4719's process context, as an SDK would, and burns CPU under a trace ID.
//
// The context is a memfd mapping (an anonymous one with -anon) named
// OTEL_CTX by prctl, kept from children by MADV_DONTFORK: its 32-byte header
// (signature, version 2, payload size, publication time, payload address)
// written with the publication time last, the payload a protobuf
// ProcessContext encoded here by hand. Its service is named in code, never
// in the environment. -hostile makes it publish what no reader may take.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const (
	traceWork = "0af7651916cd43dd8448eb211c80319c"
	// OTEP 4719's names; prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, ...)
	prSetVMA         = 0x53564d41
	prSetVMAAnonName = 0
	clockBoottime    = 7
	mfdCloexec       = 1
	madvDontfork     = 10
)

type header struct {
	signature   [8]byte
	version     uint32
	payloadSize uint32
	publishedAt uint64
	payload     uint64
}

var (
	sink uint64
	hdr  *header
	// payloads stay referenced: the reader follows the address in the header
	payloads [][]byte
	mapping  []byte
)

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendField(b []byte, field int, data []byte) []byte {
	b = appendVarint(b, uint64(field)<<3|2)
	b = appendVarint(b, uint64(len(data)))
	return append(b, data...)
}

// a KeyValue of a string; of an int, bool or double when v is one
func keyValue(k string, v interface{}) []byte {
	var any []byte
	switch x := v.(type) {
	case string:
		any = appendField(nil, 1, []byte(x))
	case bool:
		n := uint64(0)
		if x {
			n = 1
		}
		any = appendVarint(appendVarint(nil, 2<<3), n)
	case int64:
		any = appendVarint(appendVarint(nil, 3<<3), uint64(x))
	case float64:
		any = appendVarint(nil, 4<<3|1)
		bits := *(*uint64)(unsafe.Pointer(&x))
		for i := 0; i < 8; i++ {
			any = append(any, byte(bits>>(8*i)))
		}
	case []byte: // an AnyValue already encoded
		any = x
	}
	return appendField(appendField(nil, 1, []byte(k)), 2, any)
}

type attr struct {
	k string
	v interface{}
}

// ProcessContext{resource: Resource{attributes: ...}}
func processContext(attrs []attr) []byte {
	var res []byte
	for _, a := range attrs {
		res = appendField(res, 1, keyValue(a.k, a.v))
	}
	return appendField(nil, 1, res)
}

// values nested in lists DEPTH deep: a reader that recursed as deep would crash
func nested(depth int) []byte {
	v := appendField(nil, 1, []byte("leaf"))
	for i := 0; i < depth; i++ {
		kvlist := appendField(nil, 1, appendField(appendField(nil, 1, []byte("k")), 2, v))
		v = appendField(nil, 6, kvlist)
	}
	return v
}

func boottime() uint64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockBoottime, uintptr(unsafe.Pointer(&ts)), 0)
	return uint64(ts.Sec)*1e9 + uint64(ts.Nsec)
}

func mapContext(anon bool) error {
	size := os.Getpagesize()
	var err error
	if anon {
		mapping, err = syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE,
			syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	} else {
		name := []byte("OTEL_CTX\x00")
		fd, _, errno := syscall.Syscall(sysMemfdCreate, uintptr(unsafe.Pointer(&name[0])), mfdCloexec, 0)
		if errno != 0 {
			return fmt.Errorf("memfd_create: %v", errno)
		}
		if err = syscall.Ftruncate(int(fd), int64(size)); err == nil {
			mapping, err = syscall.Mmap(int(fd), 0, size, syscall.PROT_READ|syscall.PROT_WRITE,
				syscall.MAP_PRIVATE)
		}
		syscall.Close(int(fd))
	}
	if err != nil {
		return err
	}
	if err = syscall.Madvise(mapping, madvDontfork); err != nil {
		return fmt.Errorf("madvise: %v", err)
	}
	hdr = (*header)(unsafe.Pointer(&mapping[0]))
	return nil
}

// names the mapping; a kernel without CONFIG_ANON_VMA_NAME leaves the memfd's name
func nameContext() {
	name := []byte("OTEL_CTX\x00")
	syscall.Syscall6(syscall.SYS_PRCTL, prSetVMA, prSetVMAAnonName, uintptr(unsafe.Pointer(&mapping[0])),
		uintptr(len(mapping)), uintptr(unsafe.Pointer(&name[0])), 0)
}

// a first publication: every field, then the time last
func publish(payload []byte, mode string) {
	payloads = append(payloads, payload)
	copy(hdr.signature[:], "OTEL_CTX")
	hdr.version = 2
	hdr.payloadSize = uint32(len(payload))
	hdr.payload = uint64(uintptr(unsafe.Pointer(&payload[0])))
	switch mode {
	case "signature":
		copy(hdr.signature[:], "OTEL_CTY")
	case "version":
		hdr.version = 3
	case "size":
		hdr.payloadSize = 0xfffffff0
	case "pointer":
		hdr.payload = 0x10
	case "inprogress":
		nameContext()
		return
	}
	atomic.StoreUint64(&hdr.publishedAt, boottime())
	nameContext()
}

// an update: the time 0, the new payload, then a new, later time
func update(payload []byte) {
	payloads = append(payloads, payload)
	old := atomic.LoadUint64(&hdr.publishedAt)
	atomic.StoreUint64(&hdr.publishedAt, 0)
	hdr.payloadSize = uint32(len(payload))
	atomic.StoreUint64(&hdr.payload, uint64(uintptr(unsafe.Pointer(&payload[0]))))
	now := boottime()
	if now <= old {
		now = old + 1
	}
	atomic.StoreUint64(&hdr.publishedAt, now)
	nameContext()
}

// every millisecond the one payload rewritten in place, slowly (for 0.7
// ms), service.name and service.version changing together: a reader that
// took a torn copy would read a name or version of both letters, or pair
// them wrong
func churn(stop <-chan struct{}) {
	as, bs := strings.Repeat("a", 24), strings.Repeat("b", 24)
	a := processContext([]attr{{"service.name", "churn-" + as}, {"service.version", as}})
	b := processContext([]attr{{"service.name", "churn-" + bs}, {"service.version", bs}})
	buf := make([]byte, len(a))
	copy(buf, a)
	publish(buf, "")
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(time.Millisecond):
		}
		old := atomic.LoadUint64(&hdr.publishedAt)
		atomic.StoreUint64(&hdr.publishedAt, 0)
		next := a
		if i%2 == 0 {
			next = b
		}
		// byte by byte, slowly: a reader that copies meanwhile gets a mix
		for j := range buf {
			buf[j] = next[j]
			for t := time.Now(); time.Since(t) < 10*time.Microsecond; {
			}
		}
		now := boottime()
		if now <= old {
			now = old + 1
		}
		atomic.StoreUint64(&hdr.publishedAt, now)
	}
}

//go:noinline
func burnWork(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(1)
	for time.Now().Before(end) {
		for i := 0; i < 20000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink += x
}

func main() {
	dur := flag.Duration("d", 10*time.Second, "how long to run")
	service := flag.String("service", "checkout", "service.name")
	version := flag.String("version", "1.2.3", "service.version")
	instance := flag.String("instance", "6f1c2d3e-4b5a-4697-8879-0a1b2c3d4e5f", "service.instance.id")
	noPublish := flag.Bool("no-publish", false, "publish no context")
	publishAfter := flag.Duration("publish-after", 0, "publish this long after the start")
	updateAfter := flag.Duration("update-after", 0, "publish an update this long after the first (0: none)")
	updateService := flag.String("update-service", "checkout-2", "service.name of the update")
	updateVersion := flag.String("update-version", "1.2.4", "service.version of the update")
	anon := flag.Bool("anon", false, "an anonymous mapping rather than a memfd")
	hostile := flag.String("hostile", "", "signature, version, size, pointer, inprogress, garbage, deep, utf8 or churn")
	flag.Parse()

	attrs := func(name, ver string) []attr {
		return []attr{
			{"service.name", name},
			{"service.version", ver},
			{"service.instance.id", *instance},
			{"deployment.environment.name", "test"},
			{"telemetry.sdk.language", "go"},
			{"ctxprof.test.int", int64(42)},
			{"ctxprof.test.bool", true},
			{"ctxprof.test.double", 1.5},
			// an array: no scalar, left out by readers that carry scalars only
			{"ctxprof.test.array", appendField(nil, 5, appendField(nil, 1, appendField(nil, 1, []byte("x"))))},
		}
	}
	stop := make(chan struct{})
	go func() {
		if *noPublish {
			return
		}
		time.Sleep(*publishAfter)
		if err := mapContext(*anon); err != nil {
			fmt.Fprintln(os.Stderr, "procctx:", err)
			os.Exit(1)
		}
		switch *hostile {
		case "churn":
			churn(stop)
			return
		case "garbage":
			publish([]byte("\xff\xff\xff\xff not protobuf \xff\xff"), "")
		case "deep":
			publish(processContext([]attr{{"service.name", "deep"}, {"nested", nested(2000)}}), "")
		case "utf8":
			publish(processContext([]attr{{"service.name", "bad\xff\xfename"}, {"service.version", "9"}}), "")
		default:
			publish(processContext(attrs(*service, *version)), *hostile)
		}
		fmt.Printf("published %d\n", time.Now().UnixNano())
		if *updateAfter > 0 && *hostile == "" {
			time.Sleep(*updateAfter)
			update(processContext(attrs(*updateService, *updateVersion)))
			fmt.Printf("updated %d\n", time.Now().UnixNano())
		}
	}()
	end := time.Now().Add(*dur)
	pprof.Do(context.Background(), pprof.Labels("otel.traceid", traceWork), func(context.Context) {
		for time.Now().Before(end) {
			burnWork(10 * time.Millisecond)
		}
	})
	close(stop)
}
