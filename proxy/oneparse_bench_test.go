package proxy_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// BenchmarkProxiedSmallExchange measures the proxy's own cost of one small
// exchange (docs/benchmarks.md, "Issue 12: parses per exchange"): a ~1 KiB
// tools/call through Proxy.ServeHTTP, a canned ~1 KiB JSON answer from an
// in-memory transport (no sockets, no client, no upstream server, so the
// allocations are the proxy's, the fault layer's and the record's), and the
// record encoded as a record file would get it. Each iteration waits for its
// record, so -benchmem counts the finishing goroutine too. Sub-benchmarks:
// recording only, and recording with a fault selection that decides on
// every request (it matches tool "fail" and never fires here).
//
//	go test ./proxy -run '^$' -bench ProxiedSmallExchange -benchmem -count 5
func BenchmarkProxiedSmallExchange(b *testing.B) {
	for _, mode := range []string{"record", "record+faults"} {
		b.Run(mode, func(b *testing.B) {
			done := make(chan struct{}, 1)
			sink := &encodeSink{done: done}
			opts := proxy.Options{Upstream: &url.URL{Scheme: "http", Host: "127.0.0.1:1", Path: "/mcp"}, Records: sink, Transport: cannedTransport{}}
			if mode == "record+faults" {
				sel, err := faults.Select("errors.http_status_sequence", []byte(`{"statusCodes":[503],"match":{"tool":"fail"}}`))
				if err != nil {
					b.Fatal(err)
				}
				opts.Faults = &proxy.FaultOptions{Selection: sel, Seed: 1}
			}
			p, err := proxy.New(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = p.Close(ctx)
			}()
			body := []byte(smallCall)
			hdr := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
				"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}}
			before, beforeBytes := parseCount(), parsedBytes()
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9/mcp", bytes.NewReader(body))
				req.Header = hdr.Clone()
				w := httptest.NewRecorder()
				p.ServeHTTP(w, req)
				<-done
				if w.Code != 200 {
					b.Fatalf("status %d", w.Code)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(parseCount()-before)/float64(b.N), "parses/op")
			if beforeBytes >= 0 {
				b.ReportMetric(float64(parsedBytes()-beforeBytes)/float64(b.N), "parsedB/op")
			}
		})
	}
}

// smallCall is a ~1 KiB 2026-07-28 tools/call.
var smallCall = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("y", 820) + `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`

// smallResult is a ~1 KiB tool result.
var smallResult = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 960) + `"}],"resultType":"complete"}}`

// cannedTransport reads the request and answers smallResult. Like
// net/http's transport, it tells the request's ClientTrace that the request
// was written (the proxy's Up.Sent, after which the recorder may reuse the
// body's buffer).
type cannedTransport struct{}

func (cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	if trace := httptrace.ContextClientTrace(r.Context()); trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: r,
		Header:        http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(smallResult))}},
		ContentLength: int64(len(smallResult)), Body: io.NopCloser(strings.NewReader(smallResult)),
	}, nil
}

// encodeSink encodes each record as a record file would and signals done.
type encodeSink struct {
	enc  record.Encoder
	done chan struct{}
}

// KeepsNoRecord: as a record file's sink, Write keeps nothing of the record.
func (s *encodeSink) KeepsNoRecord() {}

func (s *encodeSink) Write(rec *record.Record) error {
	_, err := s.enc.Encode(rec)
	s.done <- struct{}{}
	return err
}
