// SPDX-License-Identifier: GPL-2.0
// httpload: keeps an HTTP/1.1 server saturated (or at a set rate) for a while, each request with a traceparent of its own, and prints the rate.
//
// -c connections (keep-alive) send GET -url back to back for -d, or with
// -rate R, R requests a second in all, each connection at its share; with
// -headers N, each request carries N more headers, which the server parses
// on the connection's goroutine before the request's handler runs. Prints
// "requests N seconds S rps R" on stdout; any failed request is an error
// (exit 1): a rate that counts failures would flatter the server.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "", "the URL to GET")
	conns := flag.Int("c", 8, "connections, each with one request in flight")
	dur := flag.Duration("d", 5*time.Second, "how long to send")
	rate := flag.Float64("rate", 0, "requests a second in all (0: as fast as answered)")
	extra := flag.Int("headers", 0, "more headers in each request")
	flag.Parse()
	if *url == "" {
		fmt.Fprintln(os.Stderr, "httpload: -url is required")
		os.Exit(2)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns}
	client := &http.Client{Transport: tr}
	var total, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(*dur)
	for c := 0; c < *conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			var gap time.Duration
			if *rate > 0 {
				gap = time.Duration(float64(*conns) / *rate * float64(time.Second))
			}
			next := start
			for i := 0; time.Now().Before(end); i++ {
				if gap > 0 {
					// a schedule, not a pause after each: a slow answer is caught up
					next = next.Add(gap)
					time.Sleep(time.Until(next))
				}
				req, _ := http.NewRequest("GET", *url, nil)
				req.Header.Set("traceparent", fmt.Sprintf("00-%016x%016x-%016x-01", c+1, i+1, i+1))
				for h := 0; h < *extra; h++ {
					req.Header.Set(fmt.Sprintf("X-Pad-%d", h), "padding")
				}
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Add(1)
					continue
				}
				total.Add(1)
			}
		}(c)
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	fmt.Printf("requests %d seconds %.3f rps %.1f\n", total.Load(), secs, float64(total.Load())/secs)
	if failed.Load() > 0 {
		fmt.Fprintf(os.Stderr, "httpload: %d requests failed\n", failed.Load())
		os.Exit(1)
	}
}
