package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/bench/proxybench/internal/floor"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// jsonUpstream answers every request with proxybench's 1 KiB tool result,
// in memory, as net/http's transport would hand it over (the request's
// body read and closed, WroteRequest told, the headers of proxybench's
// upstream: a Go server's Content-Type, Content-Length and Date).
type jsonUpstream struct{ body []byte }

func (u jsonUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	if trace := httptrace.ContextClientTrace(r.Context()); trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: r,
		Header: http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(u.body))},
			"Date": {"Mon, 07 Dec 2026 19:00:00 GMT"}},
		ContentLength: int64(len(u.body)), Body: io.NopCloser(bytes.NewReader(u.body)),
	}, nil
}

// processCPU returns the process's user and system time so far, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkJSONExchangeSideBySide serves proxybench's JSON exchange (its
// 1 KiB tools/call and 1 KiB result, the Go client's headers, on a
// loopback listener's request) through the floor proxy and through
// mcpdiag's proxy as the CLI builds it (records to a file through
// record.Async), in one process with no sockets: the two proxies' own
// work per exchange, side by side. Run it with -cpuprofile and compare
// the two subtrees (floor.(*Proxy).ServeHTTP and the floor's record
// goroutines against recorder.(*Front).ServeHTTP and the recorder's
// finishers); -benchmem counts each one's allocations. Every record is
// written before a sub-benchmark ends.
//
//	go test ./bench/proxybench -run '^$' -bench JSONExchangeSideBySide -benchmem -count 5
func BenchmarkJSONExchangeSideBySide(b *testing.B) {
	req := toolsCall()
	up := jsonUpstream{body: toolResult(jsonSize)}
	u, _ := url.Parse("http://127.0.0.1:9/mcp")
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	hdr := http.Header{"User-Agent": {"Go-http-client/1.1"}, "Content-Length": {strconv.Itoa(len(req))},
		"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}, "Accept-Encoding": {"gzip"}}
	serve := func(b *testing.B, h http.Handler) {
		ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, local)
		cpu0 := processCPU()
		defer func() { b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for b.Loop() {
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:8080/mcp", bytes.NewReader(req))
			r.Header = hdr.Clone()
			r.RemoteAddr = "127.0.0.1:40000"
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != 200 || w.Body.Len() != len(up.body) {
				b.Fatalf("status %d, %d bytes", w.Code, w.Body.Len())
			}
		}
	}
	b.Run("floor", func(b *testing.B) {
		p, closeFloor, err := floor.Open(u, up, filepath.Join(b.TempDir(), "floor.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		serve(b, p)
		if err := closeFloor(); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("mcpdiag", func(b *testing.B) {
		enc := record.Encoder{BodyLimit: proxy.DefaultBodyLimit}
		fw, err := record.OpenFile(filepath.Join(b.TempDir(), "mcpdiag.jsonl"), record.FileOptions{Sync: record.SyncClose, Encoder: enc})
		if err != nil {
			b.Fatal(err)
		}
		sink := record.NewAsync(fw, record.AsyncOptions{QueueSize: record.DefaultQueueSize, Policy: record.QueueBlock, Encoder: enc})
		p, err := proxy.New(proxy.Options{Upstream: u, Records: sink, Bodies: proxy.BodiesErrors, Transport: up})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		serve(b, p)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			b.Fatal(err)
		}
		if err := sink.Close(); err != nil {
			b.Fatal(err)
		}
	})
}
