// SPDX-License-Identifier: GPL-2.0
// otlpsink: an OTLP/HTTP profiles endpoint for ctxprof-go's tests. Each request is
// decoded with the collector's own pdata: its OTLP JSON goes to requests.jsonl, one
// JSON line per sample, its dictionary references resolved, to samples.jsonl, and
// its headers (and the status answered) to headers.jsonl. With -status it answers
// every request with that HTTP status; with -reject N, with a partial success
// that rejects N profiles.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

type sample struct {
	Request    int               `json:"request"`
	Resource   map[string]string `json:"resource"`
	Type       string            `json:"type"`
	Unit       string            `json:"unit"`
	Period     int64             `json:"period"`
	Value      int64             `json:"value"`
	Timestamps int               `json:"timestamps"`
	TimeMin    uint64            `json:"time_min"`
	TimeMax    uint64            `json:"time_max"`
	TraceID    string            `json:"trace_id,omitempty"`
	SpanID     string            `json:"span_id,omitempty"`
	Attributes map[string]string `json:"attributes"`
	Frames     []string          `json:"frames"`
}

var (
	mu       sync.Mutex
	requests int
	reqOut   *bufio.Writer
	smpOut   *bufio.Writer
	hdrOut   *bufio.Writer
	status   int
	reject   int64
)

func str(d pprofile.ProfilesDictionary, i int32) string {
	if i < 0 || int(i) >= d.StringTable().Len() {
		return fmt.Sprintf("(string %d out of range)", i)
	}
	return d.StringTable().At(int(i))
}

func flatten(n int, req pprofileotlp.ExportRequest) []sample {
	var out []sample
	pd := req.Profiles()
	d := pd.Dictionary()
	for i := 0; i < pd.ResourceProfiles().Len(); i++ {
		rp := pd.ResourceProfiles().At(i)
		res := map[string]string{}
		rp.Resource().Attributes().Range(func(k string, v pcommon.Value) bool {
			res[k] = v.AsString()
			return true
		})
		for j := 0; j < rp.ScopeProfiles().Len(); j++ {
			sp := rp.ScopeProfiles().At(j)
			for k := 0; k < sp.Profiles().Len(); k++ {
				p := sp.Profiles().At(k)
				for m := 0; m < p.Samples().Len(); m++ {
					s := p.Samples().At(m)
					f := sample{Request: n, Resource: res, Type: str(d, p.SampleType().TypeStrindex()),
						Unit: str(d, p.SampleType().UnitStrindex()), Period: p.Period(),
						Attributes: map[string]string{}, Frames: []string{}}
					for v := 0; v < s.Values().Len(); v++ {
						f.Value += s.Values().At(v)
					}
					f.Timestamps = s.TimestampsUnixNano().Len()
					for t := 0; t < f.Timestamps; t++ {
						ts := s.TimestampsUnixNano().At(t)
						if f.TimeMin == 0 || ts < f.TimeMin {
							f.TimeMin = ts
						}
						if ts > f.TimeMax {
							f.TimeMax = ts
						}
					}
					if li := s.LinkIndex(); li > 0 && int(li) < d.LinkTable().Len() {
						l := d.LinkTable().At(int(li))
						f.TraceID = l.TraceID().String()
						if !l.SpanID().IsEmpty() {
							f.SpanID = l.SpanID().String()
						}
					}
					for a := 0; a < s.AttributeIndices().Len(); a++ {
						kv := d.AttributeTable().At(int(s.AttributeIndices().At(a)))
						f.Attributes[str(d, kv.KeyStrindex())] = kv.Value().AsString()
					}
					st := d.StackTable().At(int(s.StackIndex()))
					for l := 0; l < st.LocationIndices().Len(); l++ {
						loc := d.LocationTable().At(int(st.LocationIndices().At(l)))
						for x := 0; x < loc.Lines().Len(); x++ {
							ln := loc.Lines().At(x)
							fn := d.FunctionTable().At(int(ln.FunctionIndex()))
							f.Frames = append(f.Frames, fmt.Sprintf("%s %s:%d", str(d, fn.NameStrindex()),
								str(d, fn.FilenameStrindex()), ln.Line()))
						}
					}
					out = append(out, f)
				}
			}
		}
	}
	return out
}

func handle(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, "bad gzip: "+err.Error(), http.StatusBadRequest)
			return
		}
		body = z
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := pprofileotlp.NewExportRequest()
	if err := req.UnmarshalProto(data); err != nil {
		http.Error(w, "pdata: "+err.Error(), http.StatusBadRequest)
		return
	}
	js, err := req.MarshalJSON()
	if err != nil {
		http.Error(w, "pdata json: "+err.Error(), http.StatusInternalServerError)
		return
	}
	mu.Lock()
	defer mu.Unlock()
	hdr := map[string]string{"path": r.URL.Path, "status": fmt.Sprint(status)}
	for k, v := range r.Header {
		hdr[strings.ToLower(k)] = strings.Join(v, ",")
	}
	line, _ := json.Marshal(hdr)
	hdrOut.Write(line)
	hdrOut.WriteByte('\n')
	hdrOut.Flush()
	if status != 0 {
		http.Error(w, "the sink was told to answer so", status)
		return
	}
	requests++
	reqOut.Write(js)
	reqOut.WriteByte('\n')
	for _, s := range flatten(requests, req) {
		line, _ := json.Marshal(s)
		smpOut.Write(line)
		smpOut.WriteByte('\n')
	}
	reqOut.Flush()
	smpOut.Flush()
	r2 := pprofileotlp.NewExportResponse()
	if reject > 0 {
		r2.PartialSuccess().SetRejectedProfiles(reject)
		r2.PartialSuccess().SetErrorMessage("the sink was told to reject some")
	}
	resp, _ := r2.MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(resp)
}

func create(path string) *bufio.Writer {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	return bufio.NewWriter(f)
}

func main() {
	addr := flag.String("listen", "127.0.0.1:0", "address")
	dir := flag.String("out", ".", "directory for requests.jsonl, samples.jsonl, headers.jsonl")
	flag.IntVar(&status, "status", 0, "answer every request with this HTTP status")
	flag.Int64Var(&reject, "reject", 0, "answer every request with a partial success rejecting this many profiles")
	cert := flag.String("cert", "", "TLS certificate")
	key := flag.String("key", "", "TLS key")
	flag.Parse()
	reqOut = create(*dir + "/requests.jsonl")
	smpOut = create(*dir + "/samples.jsonl")
	hdrOut = create(*dir + "/headers.jsonl")
	http.HandleFunc("/", handle)
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", l.Addr())
	os.Stdout.Sync()
	if *cert != "" {
		log.Fatal(http.ServeTLS(l, nil, *cert, *key))
	}
	log.Fatal(http.Serve(l, nil))
}
