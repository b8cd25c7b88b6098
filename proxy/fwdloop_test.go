package proxy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// forwardCases are upstream responses the proxy must pass on exactly as a
// plain httputil.ReverseProxy does: each path of forwardUpstream.
var forwardCases = []struct {
	name, method, path string
}{
	{"json", http.MethodPost, "/json"},
	{"json error", http.MethodPost, "/json-error"},
	{"big json, chunked", http.MethodPost, "/json-big"},
	{"sse of 16 KiB events", http.MethodPost, "/sse"},
	{"sse of small events with flushes", http.MethodPost, "/sse-small"},
	{"sse error result", http.MethodPost, "/sse-error"},
	{"chunked in pieces", http.MethodPost, "/chunked"},
	{"declared trailers", http.MethodPost, "/trailers"},
	{"undeclared trailers", http.MethodPost, "/trailers-undeclared"},
	{"cut mid-body, content-length", http.MethodPost, "/cut-length"},
	{"cut mid-body, chunked", http.MethodPost, "/cut-chunked"},
	{"cut mid-event, sse", http.MethodPost, "/cut-sse"},
	{"103 early hints", http.MethodPost, "/early-hints"},
	{"HEAD", http.MethodHead, "/json"},
	{"204", http.MethodPost, "/204"},
	{"304", http.MethodPost, "/304"},
	{"503 with a body", http.MethodPost, "/503"},
	{"big body with content-length", http.MethodPost, "/big-length"},
}

// forwardUpstream serves forwardCases' paths with exact bytes.
func forwardUpstream() http.Handler {
	mux := http.NewServeMux()
	result := func(text string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + strconvQuote(text) + `}]}}`
	}
	event := func(data string) string { return "event: message\ndata: " + data + "\n\n" }
	sse := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
	}
	flush := func(w http.ResponseWriter) { w.(http.Flusher).Flush() }
	progress := func(i, pad int) string {
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":` + fmt.Sprint(i) + `,"message":"` + strings.Repeat("p", pad) + `"}}`
	}
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "a")
		w.Header().Add("X-Upstream", "b")
		io.WriteString(w, result(strings.Repeat("x", 900)))
	})
	mux.HandleFunc("/json-error", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad arguments"}}`)
	})
	mux.HandleFunc("/json-big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, result(strings.Repeat("y", 200<<10)))
	})
	mux.HandleFunc("/big-length", func(w http.ResponseWriter, r *http.Request) {
		body := result(strings.Repeat("z", 300<<10))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		io.WriteString(w, body)
	})
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		sse(w)
		for i := range 3 {
			io.WriteString(w, event(progress(i, 16<<10-150)))
			flush(w)
		}
		io.WriteString(w, event(result(strings.Repeat("r", 16<<10-150))))
		flush(w)
	})
	mux.HandleFunc("/sse-small", func(w http.ResponseWriter, r *http.Request) {
		sse(w)
		for i := range 40 {
			io.WriteString(w, event(progress(i, i*37)))
			flush(w)
		}
		io.WriteString(w, ": a comment\n\nid: 7\nevent: message\ndata: "+result("done")+"\n\n")
		flush(w)
	})
	mux.HandleFunc("/sse-error", func(w http.ResponseWriter, r *http.Request) {
		sse(w)
		io.WriteString(w, event(progress(1, 12<<10)))
		flush(w)
		io.WriteString(w, event(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"it failed"}],"isError":true}}`))
		flush(w)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		body := result(strings.Repeat("c", 40<<10))
		for len(body) > 0 {
			n := min(len(body), 9000)
			io.WriteString(w, body[:n])
			flush(w)
			body = body[n:]
		}
	})
	mux.HandleFunc("/trailers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Trailer", "X-Checksum, X-Count")
		io.WriteString(w, result(strings.Repeat("t", 20<<10)))
		w.Header().Set("X-Checksum", "abc")
		w.Header().Set("X-Count", "1")
	})
	mux.HandleFunc("/trailers-undeclared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, result("u"))
		flush(w)
		w.Header().Set(http.TrailerPrefix+"X-Late", "late")
	})
	mux.HandleFunc("/cut-length", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "40000")
		io.WriteString(w, strings.Repeat(" ", 20000))
		flush(w)
		panic(http.ErrAbortHandler)
	})
	mux.HandleFunc("/cut-chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+strings.Repeat("k", 20000))
		flush(w)
		panic(http.ErrAbortHandler)
	})
	mux.HandleFunc("/cut-sse", func(w http.ResponseWriter, r *http.Request) {
		sse(w)
		io.WriteString(w, event(progress(1, 17<<10)))
		flush(w)
		io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,")
		flush(w)
		panic(http.ErrAbortHandler)
	})
	mux.HandleFunc("/early-hints", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, result("after hints"))
	})
	mux.HandleFunc("/204", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Empty", "yes")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/304", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Etag", `"v1"`)
		w.WriteHeader(http.StatusNotModified)
	})
	mux.HandleFunc("/503", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	})
	return mux
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// clientView is what a client saw of one response, read off the wire: the 1xx
// responses before it, the status line, the header (Date left out: it is
// the clock's), the framing, the body, the trailer, and how the connection
// ended (the body's read error, and the bytes after the response on a
// connection the request asked to close).
type clientView struct {
	interim  []string
	status   string
	proto    string
	header   http.Header
	framing  string
	body     []byte
	bodyErr  string
	trailer  http.Header
	leftover string
}

func (s clientView) String() string {
	return fmt.Sprintf("interim %q\nstatus %q %s\nheader %v\nframing %s\nbody %d bytes (sha %x…), error %q\ntrailer %v\nafter %q",
		s.interim, s.status, s.proto, s.header, s.framing, len(s.body), sum8(s.body), s.bodyErr, s.trailer, s.leftover)
}

func sum8(b []byte) []byte {
	var h [8]byte
	for i, c := range b {
		h[i%8] = h[i%8]*31 + c
	}
	return h[:]
}

// wireExchange sends one request on a new connection to base (the
// request asks to close the connection after it) and reads the response
// as it comes off the wire.
func wireExchange(t *testing.T, base, method, path, body string) clientView {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, path, u.Host)
	fmt.Fprintf(&req, "Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-06-18\r\n")
	if body != "" {
		fmt.Fprintf(&req, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	fmt.Fprintf(&req, "\r\n%s", body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	var s clientView
	for {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("reading the response: %v", err)
		}
		h := comparableHeader(resp.Header)
		if resp.StatusCode >= 100 && resp.StatusCode <= 199 {
			s.interim = append(s.interim, fmt.Sprintf("%s %v", resp.Status, h))
			continue
		}
		s.status, s.proto, s.header = resp.Status, resp.Proto, h
		s.framing = fmt.Sprintf("te %v, length %d, close %v", resp.TransferEncoding, resp.ContentLength, resp.Close)
		s.body, err = io.ReadAll(resp.Body)
		if err != nil {
			s.bodyErr = err.Error()
		}
		s.trailer = resp.Trailer
		break
	}
	rest, err := io.ReadAll(br)
	s.leftover = string(rest)
	if err != nil {
		s.leftover += " (" + err.Error() + ")"
	}
	return s
}

// comparableHeader is h without Date (the clock's) and with the names a
// Trailer field announces sorted (ReverseProxy joins them in map order).
func comparableHeader(h http.Header) http.Header {
	h = h.Clone()
	delete(h, "Date")
	if v, ok := h["Trailer"]; ok {
		var names []string
		for _, f := range v {
			for _, n := range strings.Split(f, ",") {
				names = append(names, strings.TrimSpace(n))
			}
		}
		slices.Sort(names)
		h["Trailer"] = []string{strings.Join(names, ", ")}
	}
	return h
}

// plainReverseProxy is httputil.ReverseProxy as mcpdiag's is tuned
// (transport, FlushInterval -1, copy buffers of proxy.CopyBufferSize), with
// nothing else: what a client sees through it is the reference.
func plainReverseProxy(t *testing.T, upstream string) string {
	t.Helper()
	u, _ := url.Parse(upstream)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost, tr.MaxIdleConns, tr.DisableCompression = 256, 1024, true
	t.Cleanup(tr.CloseIdleConnections)
	rp := &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.Host = ""; pr.Out.URL.Path = pr.In.URL.Path },
		FlushInterval: -1, Transport: tr, BufferPool: copyPool{},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	ts := httptest.NewServer(rp)
	t.Cleanup(ts.Close)
	return ts.URL
}

// passThrough is a middleware that changes nothing: with it, the proxy
// copies the response through ReverseProxy's own loop, not its forwarding
// one.
func passThrough(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) })
}

// recordView is what the differential test compares of two records of the
// same exchange: the verdict and what the record says of the response
// (not its times).
func recordView(r *record.Record) string {
	var sse any
	if r.SSE != nil {
		c := *r.SSE
		sse = map[string]any{"events": c.Events}
	}
	body, _ := json.Marshal(r.ResponseBody)
	b, _ := json.Marshal(map[string]any{
		"outcome": r.Outcome, "layer": r.Layer, "reason": r.Reason, "status": r.Status, "flags": r.Flags,
		"bytes": r.ResponseBytes, "body": fmt.Sprintf("%d bytes, %x", len(body), sum8(body)), "isError": r.IsError,
		"warnings": r.Warnings, "contentType": r.ContentType, "headers": comparableHeader(r.ResponseHeaders), "sse": sse,
		"errorMessage": r.ErrorMessage,
	})
	return string(b)
}

// TestForwardLoopDifferential: every response of forwardCases reaches the
// client through mcpdiag's proxy exactly as through a plain
// httputil.ReverseProxy (status, 1xx, headers but Date, framing, body,
// trailers, how the connection ends), both through the proxy's own
// forwarding loop (no middleware: the response bodies forward themselves
// into the recorder's chunks) and through ReverseProxy's copy (a
// middleware in front of it), and the two give the same record.
func TestForwardLoopDifferential(t *testing.T) {
	up := serve(t, forwardUpstream())
	plain := plainReverseProxy(t, up)
	forwarding, _, fwdSink, _ := startProxy(t, up+"/", proxy.Options{Bodies: proxy.BodiesAll})
	copying, _, copySink, _ := startProxy(t, up+"/", proxy.Options{Bodies: proxy.BodiesAll, Middleware: passThrough})
	call := callBody(1, "echo", `{"text":"hi"}`)
	for i, tc := range forwardCases {
		t.Run(tc.name, func(t *testing.T) {
			body := call
			if tc.method == http.MethodHead {
				body = ""
			}
			want := wireExchange(t, plain, tc.method, tc.path, body)
			for _, via := range []struct {
				name, base string
				sink       *memSink
			}{{"forwarding", forwarding, fwdSink}, {"copying", copying, copySink}} {
				got := wireExchange(t, strings.TrimSuffix(via.base, "/"), tc.method, tc.path, body)
				if got.String() != want.String() || !bytes.Equal(got.body, want.body) {
					t.Errorf("%s: the client saw\n%v\nthrough the plain reverse proxy\n%v", via.name, got, want)
				}
				waitRecords(t, via.sink, i+1)
			}
			f, c := fwdSink.exchanges(t)[i], copySink.exchanges(t)[i]
			if recordView(f) != recordView(c) {
				t.Errorf("the records differ:\nforwarding %s\ncopying    %s", recordView(f), recordView(c))
			}
		})
	}
}

// waitRecordsFor bounds waitRecords: long enough for a machine at load 22
// (where 10 s once fell short of 192 records), short of the test timeout.
const waitRecordsFor = testwait.Bound

// waitRecords waits until sink holds n exchange records; its failure
// names the count it judged (a count read again after the deadline could
// already be n: "192 records after 10 s, want 192").
func waitRecords(t *testing.T, sink *memSink, n int) {
	t.Helper()
	deadline := time.Now().Add(waitRecordsFor)
	for {
		got := len(sink.exchanges(t))
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records after %s, want %d", got, waitRecordsFor, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// bufferSpy is a transport whose response bodies note the buffers they
// are read into.
type bufferSpy struct {
	rt   http.RoundTripper
	mu   sync.Mutex
	bufs []uintptr
}

func (s *bufferSpy) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(r)
	if err == nil {
		resp.Body = &spiedBody{ReadCloser: resp.Body, spy: s}
	}
	return resp, err
}

type spiedBody struct {
	io.ReadCloser
	spy *bufferSpy
}

func (b *spiedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.spy.mu.Lock()
		b.spy.bufs = append(b.spy.bufs, uintptr(unsafe.Pointer(unsafe.SliceData(p))))
		b.spy.mu.Unlock()
	}
	return n, err
}

// TestForwardLoopFreshBuffers: without a middleware, the proxy reads each
// piece of a response body into a buffer of its own, which the recorder
// keeps for the record without copying it; ReverseProxy's copy reads every
// piece into its one buffer, which the recorder has to copy. An event
// stream of four 16 KiB events, each flushed as one chunk, is read in at
// least four pieces: through the forwarding loop they land in as many
// buffers (the record holds them all until it is written), through a
// middleware in one.
func TestForwardLoopFreshBuffers(t *testing.T) {
	up := serve(t, forwardUpstream())
	for _, tc := range []struct {
		name       string
		middleware func(http.Handler) http.Handler
		distinct   func(n, pieces int) bool
	}{
		{"forwarding", nil, func(n, pieces int) bool { return n == pieces }},
		{"copying", passThrough, func(n, pieces int) bool { return n == 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spy := &bufferSpy{rt: http.DefaultTransport.(*http.Transport).Clone()}
			base, _, sink, _ := startProxy(t, up+"/sse", proxy.Options{Transport: spy, Middleware: tc.middleware})
			got := wireExchange(t, strings.TrimSuffix(base, "/sse"), http.MethodPost, "/sse", callBody(1, "echo", `{}`))
			if got.status != "200 OK" || len(got.body) < 64<<10-600 || got.bodyErr != "" {
				t.Fatalf("the client saw %v", got)
			}
			waitRecords(t, sink, 1)
			spy.mu.Lock()
			defer spy.mu.Unlock()
			if len(spy.bufs) < 4 {
				t.Fatalf("the body came in %d reads, want at least 4", len(spy.bufs))
			}
			distinct := len(slices.Compact(slices.Sorted(slices.Values(spy.bufs))))
			if !tc.distinct(distinct, len(spy.bufs)) {
				t.Errorf("%d reads into %d distinct buffers", len(spy.bufs), distinct)
			}
			if r := sink.exchanges(t)[0]; string(r.Outcome) != "TOOL_SUCCESS" {
				t.Errorf("recorded %s: %s", r.Outcome, r.Reason)
			}
		})
	}
}
