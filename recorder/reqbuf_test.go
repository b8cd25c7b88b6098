package recorder

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// collectSink keeps every record written.
type collectSink struct {
	mu   sync.Mutex
	recs []*record.Record
}

func (s *collectSink) Write(r *record.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, r)
	return nil
}

// sentReverseProxy forwards to upstream as mcpdiag's proxy does: the body
// the recorder holds whole goes out as the in-memory reader
// (Exchange.InMemoryBody), and the transport's WroteRequest sets Up.Sent
// (proxy/upstream.go).
func sentReverseProxy(upstream *url.URL) http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			pr.Out.Host = ""
			ex := From(pr.In.Context())
			if body, ok := ex.InMemoryBody(pr.In.Body); ok {
				pr.Out.Body = body
			}
			trace := &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) { ex.Up.Sent.Store(i.Err == nil) }}
			pr.Out = pr.Out.WithContext(httptrace.WithClientTrace(pr.Out.Context(), trace))
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
	}
}

// TestReusedRequestBufferNoLeak: request bodies read into pooled buffers
// that releaseBody gives back, and records that finish reuses (the
// package's tests poison what is given back), never show in another
// exchange: through the recorder and a reverse proxy on real sockets, 8
// clients send 400 tools/calls of 0.5 to 12 KiB of their own bytes (a
// quarter under 1 KiB, in 1 KiB chunks), and the upstream gets each body
// as its client sent it, and each record carries
// its own request body, tool, id, arguments hash and response header (the
// header copy is reused with the record). Records kept by the
// sink (not reused), and records encoded by a record.Async with a Finish
// hook that releases them (reused). Run under -race too: the release
// happens after every read of the buffer and of the record.
func TestReusedRequestBufferNoLeak(t *testing.T) {
	t.Run("records kept", func(t *testing.T) {
		sink := &collectSink{}
		testNoLeak(t, sink, nil, func() []*record.Record { return sink.recs })
	})
	t.Run("records reused", func(t *testing.T) {
		lines := &recordtest.Lines{}
		sink := record.NewAsync(lines, record.AsyncOptions{Policy: record.QueueBlock})
		var reused atomic.Int64
		finish := func(f *Finished) []*record.Record {
			f.ReleaseRecord = true
			return nil
		}
		countReused = &reused
		defer func() { countReused = nil }()
		testNoLeak(t, sink, finish, func() []*record.Record {
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
			var recs []*record.Record
			for _, l := range lines.All() {
				r := new(record.Record)
				if err := json.Unmarshal(l, r); err != nil {
					t.Fatalf("%v: %s", err, l)
				}
				recs = append(recs, r)
			}
			return recs
		})
		if reused.Load() < 200 {
			t.Errorf("%d of 400 records given back", reused.Load())
		}
	})
}

func testNoLeak(t *testing.T, sink Sink, finish func(*Finished) []*record.Record, recorded func() []*record.Record) {
	var released atomic.Int64
	releasedBodies = &released
	defer func() { releasedBodies = nil }()

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		sum := sha256.Sum256(b)
		if err != nil || hex.EncodeToString(sum[:]) != r.Header.Get("X-Body-Sum") {
			http.Error(w, "the body is not the client's", http.StatusTeapot)
			return
		}
		id, _ := wire.Field(b, "id")
		w.Header().Set("Content-Type", "application/json")
		idText, _ := wire.StringValue(id)
		w.Header().Set("X-Id", idText)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, id)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	rc, err := New(Options{Records: sink, Bodies: BodiesAll, Upstream: up.URL, Finish: finish})
	if err != nil {
		t.Fatal(err)
	}
	fwd := sentReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rc.Serve(w, r, fwd) }))
	defer srv.Close()

	const clients, each = 8, 50
	sent := make(map[string]string) // id -> body
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for c := range clients {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(c), 7))
			for i := range each {
				id := fmt.Sprintf("%d-%d", c, i)
				size := 1024 + rnd.IntN(11*1024)
				if i%4 == 0 {
					size = 420 + rnd.IntN(500) // a body of 0.5 to 1 KiB: a 1 KiB chunk
				}
				fill := strings.Repeat(string(rune('a'+rnd.IntN(26))), size)
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"tool-%s","arguments":{"text":%q}}}`, id, id, fill)
				mu.Lock()
				sent[id] = body
				mu.Unlock()
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				sum := sha256.Sum256([]byte(body))
				req.Header.Set("X-Body-Sum", hex.EncodeToString(sum[:]))
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					errs <- err
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("%s: status %d (the upstream got another body)", id, resp.StatusCode)
				}
			}
		})
	}
	testwait.Wait(t, &wg, "the clients' calls through the recorder")
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rc.Wait(t.Context())
	recs := recorded()
	if len(recs) != clients*each {
		t.Fatalf("%d records for %d exchanges", len(recs), clients*each)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		id, _ := wire.StringValue(r.JSONRPC.ID.Raw())
		body, ok := sent[id]
		if !ok || seen[id] {
			t.Fatalf("a record of id %s (%q), which no client sent, or twice", r.JSONRPC.ID, r.Tool)
		}
		seen[id] = true
		var want record.Record
		want.SetMessage(new(wire.ParseMessage([]byte(body))))
		if r.RequestBody == nil || r.RequestBody.Text != body || r.Tool != "tool-"+id || r.ArgsHash != want.ArgsHash ||
			r.RequestBytes != int64(len(body)) || r.Outcome != "TOOL_SUCCESS" || r.Method != "tools/call" || r.URL != "/mcp" ||
			r.ResponseHeaders.Get("Content-Type") != "application/json" || r.ResponseHeaders.Get("X-Id") != id {
			t.Fatalf("record of %s: %s %s %s, tool %q, args hash %s (want %s), %d bytes, response header %v, body not the client's: %v", id, r.Method, r.URL, r.Outcome, r.Tool, r.ArgsHash, want.ArgsHash, r.RequestBytes, r.ResponseHeaders, r.RequestBody == nil || r.RequestBody.Text != body)
		}
	}
	// The test means something only if buffers were given back and reused.
	if released.Load() < clients*each/2 {
		t.Errorf("%d of %d request buffers given back", released.Load(), clients*each)
	}
	t.Logf("%d of %d request buffers given back", released.Load(), clients*each)
}

// TestRequestBufferReleasedOnlyWhenSent: the buffer goes back to the pools
// only when the handler reported the body written in full (Up.Sent), and
// never once Body handed it out.
func TestRequestBufferReleasedOnlyWhenSent(t *testing.T) {
	var released atomic.Int64
	releasedBodies = &released
	defer func() { releasedBodies = nil }()
	rc, err := New(Options{Records: &lastSink{}, Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("y", 2000) + `"}}}`
	for _, tc := range []struct {
		name       string
		sent, body bool
		want       int64
	}{{"sent", true, false, 1}, {"not sent", false, false, 0}, {"sent, Body called", true, true, 0}} {
		released.Store(0)
		var got []byte
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		rc.Serve(&discardWriter{h: http.Header{}}, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ex := From(r.Context())
			io.Copy(io.Discard, r.Body)
			if tc.body {
				got, _ = ex.Body()
			}
			ex.Up.Sent.Store(tc.sent)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)
		}))
		if released.Load() != tc.want {
			t.Errorf("%s: %d buffers given back, want %d", tc.name, released.Load(), tc.want)
		}
		if tc.body && string(got) != body {
			t.Errorf("%s: Body's bytes changed after the exchange", tc.name)
		}
	}
}

// TestReadPrefixPooled pins the allocation the pooled request buffer
// removes: reading a body of a declared length of 1 to 64 KiB and giving
// the buffer back allocates nothing once the pool holds one (before: a
// zeroed buffer of length+1 bytes for every request, 1152 bytes for a 1 KiB
// body). A reader that returns EOF only after the last bytes (not net/http's)
// is met by the probe byte, not by growing the buffer.
func TestReadPrefixPooled(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops on purpose under the race detector")
	}
	var probe [1]byte
	// 1 KiB (proxybench's tools/call) and 989 bytes (a shorter one: a
	// body of 512 B to 1 KiB takes a 1 KiB chunk; it allocated before).
	for _, tc := range []struct {
		name string
		n    int
		r    func(body []byte) io.Reader
	}{
		{"EOF with the last bytes", 1024, func(body []byte) io.Reader { return &eofWithLast{b: body} }},
		{"EOF after", 1024, func(body []byte) io.Reader { return bytes.NewReader(body) }},
		{"989 bytes, EOF with the last bytes", 989, func(body []byte) io.Reader { return &eofWithLast{b: body} }},
		{"989 bytes, EOF after", 989, func(body []byte) io.Reader { return bytes.NewReader(body) }},
		{"512 bytes, EOF after", 512, func(body []byte) io.Reader { return bytes.NewReader(body) }},
	} {
		body := bytes.Repeat([]byte("z"), tc.n)
		r := tc.r(body)
		allocs := testing.AllocsPerRun(100, func() {
			buf, complete, err := readPrefix(r, int64(len(body)), DefaultMaxRequestParse, probe[:])
			if !complete || err != nil || !bytes.Equal(buf, body) || cap(buf) != max(len(body), minPooledChunk) {
				t.Fatalf("%s: complete %v, err %v, %d bytes of cap %d", tc.name, complete, err, len(buf), cap(buf))
			}
			putChunk(buf)
			switch r := r.(type) {
			case *eofWithLast:
				r.off = 0
			case *bytes.Reader:
				r.Reset(body)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %.1f allocations per body read, want 0", tc.name, allocs)
		}
	}
	// A body longer than it declared is read whole all the same.
	buf, complete, err := readPrefix(strings.NewReader("abcdef"), 4, DefaultMaxRequestParse, probe[:])
	if string(buf) != "abcdef" || !complete || err != nil {
		t.Errorf("a body longer than declared: %q, %v, %v", buf, complete, err)
	}
	// Under 512 bytes a body has a buffer of its own, not a 1 KiB chunk
	// (an open stream holds it).
	small := bytes.Repeat([]byte("s"), 300)
	buf, complete, err = readPrefix(bytes.NewReader(small), int64(len(small)), DefaultMaxRequestParse, probe[:])
	if !bytes.Equal(buf, small) || !complete || err != nil || cap(buf) >= minPooledChunk {
		t.Errorf("a 300-byte body: %d bytes of cap %d, %v, %v", len(buf), cap(buf), complete, err)
	}
	// A body longer than the 1 KiB chunk it declared fits is read whole.
	long := bytes.Repeat([]byte("l"), 1500)
	buf, complete, err = readPrefix(bytes.NewReader(long), 600, DefaultMaxRequestParse, probe[:])
	if !bytes.Equal(buf, long) || !complete || err != nil {
		t.Errorf("a body of 1500 bytes declared 600: %d bytes, %v, %v", len(buf), complete, err)
	}
}

// eofWithLast returns io.EOF with the last bytes, as net/http's server body
// of a declared length does.
type eofWithLast struct {
	b   []byte
	off int
}

func (r *eofWithLast) Read(p []byte) (int, error) {
	n := copy(p, r.b[r.off:])
	r.off += n
	if r.off == len(r.b) {
		return n, io.EOF
	}
	return n, nil
}

// discardLines is a LineWriter that drops every line.
type discardLines struct{}

func (discardLines) WriteLine([]byte) error { return nil }
func (discardLines) Close() error           { return nil }

// TestRecordReusedAllocs pins the allocations the reused record and its
// response header copy remove: an exchange whose Finish hook releases its
// record, written by a record.Async (which keeps nothing of it), allocates
// at least three objects less than the same exchange whose hook keeps it
// (the record, about 900 bytes; the header's map and array of values).
func TestRecordReusedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops on purpose under the race detector")
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	perExchange := func(release bool) float64 {
		sink := record.NewAsync(discardLines{}, record.AsyncOptions{Policy: record.QueueBlock})
		defer sink.Close()
		rc, err := New(Options{Records: sink, Sync: true, Finish: func(f *Finished) []*record.Record {
			f.ReleaseRecord = release
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		w := &discardWriter{h: http.Header{}}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)
		})
		return testing.AllocsPerRun(200, func() {
			r.Body = io.NopCloser(strings.NewReader(body))
			rc.Serve(w, r, h)
		})
	}
	kept, released := perExchange(false), perExchange(true)
	t.Logf("allocations per exchange: record kept %.1f, released %.1f", kept, released)
	if released > kept-3 {
		t.Errorf("allocations per exchange: record kept %.1f, released %.1f: want at least three less", kept, released)
	}
}

// TestCaptureReusedAllocs pins the allocations the pooled capture removes:
// recording an exchange with its response captured for the record
// (BodiesErrors, the default) allocates no more than without a capture
// (BodiesNone): the capture and the array of its pieces come back from
// captures (before, one allocation more per exchange, and more as the
// pieces grew).
func TestCaptureReusedAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops on purpose under the race detector")
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	answer := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 3000) + `"}]}}`
	perExchange := func(mode BodyMode) float64 {
		sink := record.NewAsync(discardLines{}, record.AsyncOptions{Policy: record.QueueBlock})
		defer sink.Close()
		rc, err := New(Options{Records: sink, Sync: true, Bodies: mode})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		w := &discardWriter{h: http.Header{}}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, answer)
		})
		return mallocsPerRun(2000, func() {
			r.Body = io.NopCloser(strings.NewReader(body))
			rc.Serve(w, r, h)
		})
	}
	none, errs := perExchange(BodiesNone), perExchange(BodiesErrors)
	t.Logf("allocations per exchange: bodies none %.2f, errors %.2f", none, errs)
	if errs > none+1 { // (without the pool: 2 more, the capture and its pieces)
		t.Errorf("allocations per exchange: bodies none %.1f, errors %.1f: the capture allocates", none, errs)
	}
}

// mallocsPerRun is testing.AllocsPerRun without its rounding down to a
// whole number: the mean allocations of f over runs, after one warm-up run.
func mallocsPerRun(runs int, f func()) float64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(runs)
}
