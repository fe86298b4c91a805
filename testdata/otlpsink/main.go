// SPDX-License-Identifier: GPL-2.0
// otlpsink: an OTLP/HTTP profiles endpoint for ctxprof-go's tests. Each request is
// decoded with the collector's own pdata: its OTLP JSON goes to requests.jsonl, one
// JSON line per sample, its dictionary references resolved, to samples.jsonl, and
// its headers (and the status answered) to headers.jsonl. With -status it answers
// every request with that HTTP status (with -body FILE, and that file as an HTML
// page, as a proxy in front of a collector may); with -reject N, with a partial
// success that rejects N profiles; with -busy D, 429 and "Retry-After: 1" to every
// request for D from the first, as the Collector's memory limiter answers.
//
// Each sample is also read as Grafana Pyroscope's OTLP ingest reads it, from
// its documented behaviour: the profile's name and type ID (samples/count with
// period cpu/nanoseconds is process_cpu, each sample the period times its
// count; otherwise the period type names it), the nanoseconds it stores, and
// the labels of the series it lands in (__name__, __delta__, __otel__,
// service_name, the resource's attributes, then the sample's, where span_id
// and trace_id stay on the sample). A request that breaks the profiles format
// (values and timestamps of different lengths) or that Pyroscope refuses (more
// than 30 label names in a series, a name over 1024 or a value over 2048 bytes,
// more than one value a sample, a sample of no value, no period) is answered
// 400 with the reason, which also goes to refusals.jsonl.
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
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
)

type sample struct {
	Request    int               `json:"request"`
	Resource   map[string]string `json:"resource"`
	Type       string            `json:"type"`
	Unit       string            `json:"unit"`
	PeriodType string            `json:"period_type"`
	Period     int64             `json:"period"`
	Value      int64             `json:"value"`
	Values     int               `json:"values"`
	Timestamps int               `json:"timestamps"`
	// as Pyroscope stores it
	Profile      string `json:"profile"`
	ProfileType  string `json:"profile_type"`
	Ns           int64  `json:"ns"`
	Series       string `json:"series"`
	SeriesLabels int    `json:"series_labels"`
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
	refOut   *bufio.Writer
	status   int
	reject   int64
	busy     time.Duration
	first    time.Time
	page     []byte
)

func str(d pprofile.ProfilesDictionary, i int32) string {
	if i < 0 || int(i) >= d.StringTable().Len() {
		return fmt.Sprintf("(string %d out of range)", i)
	}
	return d.StringTable().At(int(i))
}

// pyroscopeName is the name and type ID Pyroscope gives a profile of these
// types, and whether it multiplies each sample's count by the period.
func pyroscopeName(typ, unit, ptyp, punit string, period int64) (string, string, bool) {
	if period == 0 {
		ptyp, punit = "", ""
	}
	id := typ + ":" + unit + ":" + ptyp + ":" + punit
	switch {
	case id == "samples:count:cpu:nanoseconds":
		return "process_cpu", "process_cpu:cpu:nanoseconds:cpu:nanoseconds", true
	case id == "off_cpu:nanoseconds::":
		return "off_cpu", "off_cpu:" + id, false
	default:
		return ptyp, ptyp + ":" + id, false
	}
}

// series is the label set of the series a sample lands in, as Pyroscope
// builds it: the first of a name wins, empty values are none, and span_id,
// trace_id and profile_id stay on the sample.
func series(name string, res pcommon.Map, attrs map[string]string) map[string]string {
	ls := map[string]string{"__name__": name, "__delta__": "false", "__otel__": "true"}
	svc, exe := "", ""
	res.Range(func(k string, v pcommon.Value) bool {
		if _, dup := ls[k]; !dup && v.AsString() != "" {
			ls[k] = v.AsString()
		}
		switch k {
		case "service.name":
			svc = v.AsString()
		case "process.executable.name":
			exe = v.AsString()
		}
		return true
	})
	if svc == "" {
		svc = "unknown_service"
		if exe != "" {
			svc += ":" + exe
		}
	}
	ls["service_name"] = svc
	for k, v := range attrs {
		if _, dup := ls[k]; dup || v == "" || k == "span_id" || k == "trace_id" || k == "profile_id" {
			continue
		}
		ls[k] = v
	}
	return ls
}

// refusal says why Pyroscope, or the format itself, would not take this sample; "" when it would.
func refusal(s pprofile.Sample, period int64, ls map[string]string) string {
	nv, nt := s.Values().Len(), s.TimestampsUnixNano().Len()
	switch {
	case nv == 0 && nt == 0:
		return "a sample with neither values nor timestamps"
	case nv > 0 && nt > 0 && nv != nt:
		return fmt.Sprintf("%d values beside %d timestamps: the format pairs them one to one", nv, nt)
	case period != 0 && nv > 1:
		return fmt.Sprintf("%d values in a sample: Pyroscope takes one", nv)
	case period == 0:
		return "no period: Pyroscope names the profile by its period type"
	case len(ls) > 30:
		return fmt.Sprintf("%d label names in a series: Pyroscope's limit is 30", len(ls))
	}
	for k, v := range ls {
		if len(k) > 1024 || len(v) > 2048 {
			return fmt.Sprintf("label %.40q: longer than Pyroscope takes", k)
		}
	}
	for v := 0; v < nv; v++ {
		if s.Values().At(v) <= 0 {
			return "a value of 0 or less: Pyroscope drops the sample"
		}
	}
	return ""
}

func canonical(ls map[string]string) string {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q,", k, ls[k])
	}
	return b.String()
}

func flatten(n int, req pprofileotlp.ExportRequest) ([]sample, []string) {
	var out []sample
	var refused []string
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
				typ, unit := str(d, p.SampleType().TypeStrindex()), str(d, p.SampleType().UnitStrindex())
				ptyp, punit := str(d, p.PeriodType().TypeStrindex()), str(d, p.PeriodType().UnitStrindex())
				name, id, perPeriod := pyroscopeName(typ, unit, ptyp, punit, p.Period())
				for m := 0; m < p.Samples().Len(); m++ {
					s := p.Samples().At(m)
					f := sample{Request: n, Resource: res, Type: typ, Unit: unit, PeriodType: ptyp,
						Period: p.Period(), Profile: name, ProfileType: id,
						Attributes: map[string]string{}, Frames: []string{}}
					for v := 0; v < s.Values().Len(); v++ {
						f.Value += s.Values().At(v)
					}
					f.Values = s.Values().Len()
					f.Timestamps = s.TimestampsUnixNano().Len()
					// the format: timestamps alone are one each
					if f.Values == 0 {
						f.Value = int64(f.Timestamps)
					}
					f.Ns = f.Value
					if perPeriod {
						f.Ns = f.Value * p.Period()
					}
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
					ls := series(name, rp.Resource().Attributes(), f.Attributes)
					f.Series, f.SeriesLabels = canonical(ls), len(ls)
					if why := refusal(s, p.Period(), ls); why != "" {
						refused = append(refused, fmt.Sprintf("pid %s, %s profile: %s", res["process.pid"], name, why))
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
	return out, refused
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
	answer := status
	if first.IsZero() {
		first = time.Now()
	}
	if answer == 0 && time.Since(first) < busy {
		answer = http.StatusTooManyRequests
		w.Header().Set("Retry-After", "1")
	}
	hdr := map[string]string{"path": r.URL.Path, "status": fmt.Sprint(answer)}
	for k, v := range r.Header {
		hdr[strings.ToLower(k)] = strings.Join(v, ",")
	}
	line, _ := json.Marshal(hdr)
	hdrOut.Write(line)
	hdrOut.WriteByte('\n')
	hdrOut.Flush()
	if answer != 0 && page != nil {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(answer)
		w.Write(page)
		return
	}
	if answer != 0 {
		http.Error(w, "the sink was told to answer so", answer)
		return
	}
	samples, refused := flatten(requests+1, req)
	if len(refused) > 0 {
		for _, why := range refused {
			line, _ := json.Marshal(map[string]string{"refusal": why})
			refOut.Write(line)
			refOut.WriteByte('\n')
		}
		refOut.Flush()
		http.Error(w, "refused: "+refused[0], http.StatusBadRequest)
		return
	}
	requests++
	reqOut.Write(js)
	reqOut.WriteByte('\n')
	for _, s := range samples {
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
	dir := flag.String("out", ".", "directory for requests.jsonl, samples.jsonl, headers.jsonl, refusals.jsonl")
	flag.IntVar(&status, "status", 0, "answer every request with this HTTP status")
	flag.Int64Var(&reject, "reject", 0, "answer every request with a partial success rejecting this many profiles")
	flag.DurationVar(&busy, "busy", 0, "answer 429 with Retry-After: 1 for this long from the first request")
	cert := flag.String("cert", "", "TLS certificate")
	key := flag.String("key", "", "TLS key")
	body := flag.String("body", "", "with -status, answer with this file as an HTML page")
	flag.Parse()
	if *body != "" {
		b, err := os.ReadFile(*body)
		if err != nil {
			log.Fatal(err)
		}
		page = b
	}
	reqOut = create(*dir + "/requests.jsonl")
	smpOut = create(*dir + "/samples.jsonl")
	hdrOut = create(*dir + "/headers.jsonl")
	refOut = create(*dir + "/refusals.jsonl")
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
