package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// The benchmarks compare, side by side against the same upstream on
// loopback: the upstream directly, a plain httputil.ReverseProxy with
// FlushInterval -1, and mcpdiag's proxy with recording on (a record file,
// default body mode). See docs/proxy.md, "Performance".
//
//	go test ./proxy/ -run '^$' -bench . -benchtime 3s

// benchResult is a ~1 KiB tool result.
var benchResult = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 960) + `"}],"resultType":"complete"}}`

// benchRequest is a ~1 KiB tools/call.
var benchRequest = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("y", 820) + `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`

func benchUpstream(b *testing.B) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: "+benchResult+"\n\n")
			w.(http.Flusher).Flush()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, benchResult)
	}))
	b.Cleanup(ts.Close)
	return ts
}

// targets starts the three ways to reach up and returns their base URLs.
func targets(b *testing.B, up string) map[string]string {
	u, _ := url.Parse(up)
	plain := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.Host = "" },
		FlushInterval: -1,
		Transport:     &http.Transport{MaxIdleConnsPerHost: 256},
	})
	b.Cleanup(plain.Close)

	file, err := record.OpenFile(filepath.Join(b.TempDir(), "bench.jsonl"), record.FileOptions{Sync: record.SyncNever})
	if err != nil {
		b.Fatal(err)
	}
	async := record.NewAsync(file, record.AsyncOptions{})
	p, err := proxy.New(proxy.Options{Upstream: u, Records: async})
	if err != nil {
		b.Fatal(err)
	}
	ours := httptest.NewServer(p)
	b.Cleanup(func() {
		ours.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Close(ctx)
		async.Close()
	})
	return map[string]string{"direct": up, "reverseproxy": plain.URL, "mcpdiag": ours.URL}
}

var benchOrder = []string{"direct", "reverseproxy", "mcpdiag"}

// BenchmarkToolCallJSON: 1 KiB JSON tool calls from 64 concurrent clients;
// reports throughput (ns/op over all clients) and the p50/p99 latency of
// one call.
func BenchmarkToolCallJSON(b *testing.B) {
	up := benchUpstream(b)
	ts := targets(b, up.URL)
	for _, name := range benchOrder {
		b.Run(name, func(b *testing.B) {
			target := ts[name] + "/mcp"
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 0}}
			defer hc.CloseIdleConnections()
			var mu sync.Mutex
			var lat []time.Duration
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.SetBytes(int64(len(benchRequest) + len(benchResult)))
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				local := make([]time.Duration, 0, 1024)
				for pb.Next() {
					start := time.Now()
					resp, err := hc.Post(target, "application/json", strings.NewReader(benchRequest))
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					local = append(local, time.Since(start))
				}
				mu.Lock()
				lat = append(lat, local...)
				mu.Unlock()
			})
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

// BenchmarkTimeToFirstEvent: one client at a time, the time from sending a
// tools/call to reading the first SSE event.
func BenchmarkTimeToFirstEvent(b *testing.B) {
	up := benchUpstream(b)
	ts := targets(b, up.URL)
	for _, name := range benchOrder {
		b.Run(name, func(b *testing.B) {
			target := ts[name] + "/sse"
			hc := &http.Client{Transport: &http.Transport{}}
			defer hc.CloseIdleConnections()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				resp, err := hc.Post(target, "application/json", strings.NewReader(benchRequest))
				if err != nil {
					b.Fatal(err)
				}
				br := bufio.NewReader(resp.Body)
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						b.Fatal(err)
					}
					if len(line) == 1 {
						break
					}
				}
				lat = append(lat, time.Since(start))
				io.Copy(io.Discard, br)
				resp.Body.Close()
			}
			b.StopTimer()
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds())
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// TestIdleStreamMemory measures the memory of idle SSE streams held open
// through the proxy (each has sent one event and waits). It is opt-in:
// MCPDIAG_IDLE_STREAMS=N runs it with N streams and logs the heap and RSS
// per stream; MCPDIAG_IDLE_VIA=direct or reverseproxy measures the same
// streams without the proxy, or through a plain httputil.ReverseProxy.
func TestIdleStreamMemory(t *testing.T) {
	n := 0
	fmt.Sscan(os.Getenv("MCPDIAG_IDLE_STREAMS"), &n)
	if n == 0 {
		t.Skip("set MCPDIAG_IDLE_STREAMS=N to measure N idle SSE streams")
	}
	release := make(chan struct{})
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": priming\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	up.Start()
	defer up.Close()
	u, _ := url.Parse(up.URL + "/mcp")
	file, _ := record.OpenFile(filepath.Join(t.TempDir(), "idle.jsonl"), record.FileOptions{Sync: record.SyncNever})
	async := record.NewAsync(file, record.AsyncOptions{})
	p, _ := proxy.New(proxy.Options{Upstream: u, Records: async})
	ps := httptest.NewServer(p)
	defer ps.Close()
	target := ps.URL + "/mcp"
	via := "through the proxy (client, proxy and upstream in this process)"
	switch os.Getenv("MCPDIAG_IDLE_VIA") {
	case "direct":
		target, via = up.URL+"/mcp", "directly (client and upstream in this process)"
	case "reverseproxy":
		plain := httptest.NewServer(&httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.Host = "" },
			FlushInterval: -1,
		})
		defer plain.Close()
		target, via = plain.URL+"/mcp", "through httputil.ReverseProxy (client, proxy and upstream in this process)"
	}

	before := memNow()
	tr := &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}
	var bodies []io.ReadCloser
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{}}`, i+1)
		req, _ := http.NewRequest(http.MethodPost, target, bytes.NewReader([]byte(body)))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		br := bufio.NewReader(resp.Body)
		for blank := 0; blank < 2; {
			line, err := br.ReadSlice('\n')
			if err != nil {
				t.Fatal(err)
			}
			if len(line) == 1 {
				blank++
			}
		}
		bodies = append(bodies, resp.Body)
	}
	time.Sleep(200 * time.Millisecond)
	after := memNow()
	t.Logf("%d idle SSE streams %s: heap +%.1f MiB (%.1f KiB/stream), RSS +%.1f MiB (%.1f KiB/stream), goroutines %d",
		n, via, mib(after.heap-before.heap), kib(after.heap-before.heap)/float64(n), mib(after.rss-before.rss), kib(after.rss-before.rss)/float64(n), runtime.NumGoroutine())
	close(release)
	for _, b := range bodies {
		b.Close()
	}
	tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ps.Close()
	p.Close(ctx)
	async.Close()
}

type mem struct{ heap, rss uint64 }

func memNow() mem {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := mem{heap: ms.HeapInuse + ms.StackInuse}
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		var size, res uint64
		fmt.Sscan(string(b), &size, &res)
		m.rss = res * uint64(os.Getpagesize())
	}
	return m
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
func kib(b uint64) float64 { return float64(b) / (1 << 10) }

// TestIdleStreamMemoryProcess measures the RSS of `mcpdiag proxy` as its
// own process (built from ./cmd/mcpdiag) holding N idle SSE streams, with
// recording on. Opt-in: MCPDIAG_IDLE_PROCESS=N (N below half the fd limit).
func TestIdleStreamMemoryProcess(t *testing.T) {
	n := 0
	fmt.Sscan(os.Getenv("MCPDIAG_IDLE_PROCESS"), &n)
	if n == 0 {
		t.Skip("set MCPDIAG_IDLE_PROCESS=N to measure the proxy process with N idle SSE streams")
	}
	bin := filepath.Join(t.TempDir(), "mcpdiag")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/mcpdiag").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, ": priming\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer up.Close()
	defer close(release)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "proxy", "--upstream", up.URL+"/mcp", "--listen", addr, "--record", filepath.Join(t.TempDir(), "r.jsonl"), "--shutdown-timeout", "1s")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	rss := func() float64 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
				var kb float64
				fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
				return kb / 1024
			}
		}
		return 0
	}
	before := rss()
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	defer tr.CloseIdleConnections()
	var bodies []io.ReadCloser
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{}}`, i+1)
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		br := bufio.NewReader(resp.Body)
		for blank := 0; blank < 2; {
			line, err := br.ReadSlice('\n')
			if err != nil {
				t.Fatal(err)
			}
			if len(line) == 1 {
				blank++
			}
		}
		bodies = append(bodies, resp.Body)
	}
	time.Sleep(time.Second)
	after := rss()
	t.Logf("mcpdiag proxy process: RSS %.1f MiB idle, %.1f MiB with %d idle SSE streams (%.1f KiB/stream; %.0f MiB for 10,000 at that rate)",
		before, after, n, (after-before)*1024/float64(n), before+(after-before)*10000/float64(n))
	for _, b := range bodies {
		b.Close()
	}
}
