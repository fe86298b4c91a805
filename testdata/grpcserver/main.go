// SPDX-License-Identifier: GPL-2.0
// grpcserver: a grpc-go server with no tracing library and no labels that burns CPU per RPC, and its client.
//
// The service is written by hand (a grpc.ServiceDesc and a codec of raw
// bytes), so that no generated code is needed. The handler burns -burn of CPU time in
// main.rpcBurn, then as long again in main.rpcChild on a goroutine it
// starts and waits for, and replies with the traceparent it saw in the
// incoming metadata. -client ADDR makes N calls, C at a time, each with
// the traceparent given on a line of stdin, and prints each reply. Built
// in GOPATH mode against Debian's golang-google-grpc-dev.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// rawCodec sends []byte as it is: no protobuf needed.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "raw" }

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
func rpcBurn(d time.Duration) uint64 { return spin(d, 0x9e3779b97f4a7c15) }

//go:noinline
func rpcChild(d time.Duration) uint64 { return spin(d, 0xbf58476d1ce4e5b9) }

type burner struct{ burn time.Duration }

func (b *burner) work(ctx context.Context, dec func(any) error) ([]byte, error) {
	var in []byte
	if err := dec(&in); err != nil {
		return nil, err
	}
	x := rpcBurn(b.burn)
	done := make(chan uint64)
	go func() { done <- rpcChild(b.burn) }()
	x ^= <-done
	sink += x
	md, _ := metadata.FromIncomingContext(ctx)
	return []byte(fmt.Sprint(md.Get("traceparent"))), nil
}

var desc = grpc.ServiceDesc{
	ServiceName: "ctxprof.Burn",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Work",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			out, err := srv.(*burner).work(ctx, dec)
			return &out, err
		},
	}},
}

func client(addr string, conc int) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		return err
	}
	defer conn.Close()
	lines := make(chan string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for c := 0; c < conc; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tp := range lines {
				ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", tp)
				in, out := []byte("x"), []byte(nil)
				err := conn.Invoke(ctx, "/ctxprof.Burn/Work", &in, &out)
				mu.Lock()
				if err != nil {
					failed = err
				} else {
					fmt.Printf("%s\n", out)
				}
				mu.Unlock()
			}
		}()
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		lines <- sc.Text()
	}
	close(lines)
	wg.Wait()
	return failed
}

func main() {
	burn := flag.Duration("burn", 20*time.Millisecond, "CPU time per RPC, in the handler and again in its goroutine")
	addr := flag.String("client", "", "call the server at this address, one RPC per traceparent on stdin")
	conc := flag.Int("c", 4, "client: calls at a time")
	flag.Parse()
	if *addr != "" {
		if err := client(*addr, *conc); err != nil {
			fmt.Fprintln(os.Stderr, "grpcserver client:", err)
			os.Exit(1)
		}
		return
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpcserver:", err)
		os.Exit(1)
	}
	s := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}))
	s.RegisterService(&desc, &burner{burn: *burn})
	fmt.Printf("grpc %s\n", lis.Addr())
	if err := s.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "grpcserver:", err)
		os.Exit(1)
	}
}
