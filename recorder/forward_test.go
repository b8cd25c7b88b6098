package recorder

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// forwardBody copies src to the client as the proxy's forwarding body
// does (proxy's upstreamBody.Read): 16 KiB chunks through ForwardChunk.
// It returns io.EOF at the end of src.
func forwardBody(ex *Exchange, src io.Reader) error {
	c := Chunk(16 << 10)
	for {
		if c == nil {
			c = Chunk(16 << 10)
		}
		n, rerr := src.Read(c)
		var werr error
		if n > 0 {
			c, werr = ex.ForwardChunk(c, n)
		}
		if rerr != nil || werr != nil {
			PutChunk(c)
			if werr != nil {
				return werr
			}
			return rerr
		}
	}
}

// pieceReader returns its pieces one per Read.
type pieceReader struct{ pieces [][]byte }

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.pieces[0])
	r.pieces[0] = r.pieces[0][n:]
	if len(r.pieces[0]) == 0 {
		r.pieces = r.pieces[1:]
	}
	return n, nil
}

// TestForwardBodyKeepsChunks: ForwardChunk hands the buffers the body was
// read into to the classifier and the record as they are, without the copy
// Write makes, when a read fills more than half of its buffer; a smaller
// piece is copied into a buffer of its size, as Write does. Whichever way,
// the client gets the bytes and the record (every body kept, its recycled
// chunks poisoned) is the one Write gives. An event stream of four 16 KiB
// events copied 64 KiB before; through ForwardChunk it copies none.
func TestForwardBodyKeepsChunks(t *testing.T) {
	countCopies.Store(true)
	t.Cleanup(func() { countCopies.Store(false) })
	event := func(size int) []byte {
		head := `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"message":"`
		tail := "\"}}\n\n"
		return []byte(head + strings.Repeat("m", size-len(head)-len(tail)) + tail)
	}
	final := func(size int) []byte {
		head := `data: {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`
		tail := "\"}]}}\n\n"
		return []byte(head + strings.Repeat("r", size-len(head)-len(tail)) + tail)
	}
	stream := func(n, size int) [][]byte {
		var ps [][]byte
		for range n - 1 {
			ps = append(ps, event(size))
		}
		return append(ps, final(size))
	}
	for _, tc := range []struct {
		name       string
		pieces     [][]byte
		forward    bool
		wantCopied func(total int) int
	}{
		{"16 KiB events, forwarded", stream(4, 16<<10), true, func(int) int { return 0 }},
		{"16 KiB events, written", stream(4, 16<<10), false, func(total int) int { return total }},
		{"9000-byte events, forwarded", stream(6, 9000), true, func(int) int { return 0 }},
		// (A forwarded event stream is classified on the forwarding
		// goroutine, each piece once it was written: no piece is copied
		// for the classifier, small or large; the capture copies a small
		// one for the record, as before.)
		{"8000-byte events, forwarded", stream(6, 8000), true, func(int) int { return 0 }},
		{"200-byte events, forwarded", stream(50, 200), true, func(int) int { return 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := bytes.Join(tc.pieces, nil)
			s := &lastSink{}
			rc, err := New(Options{Records: s, Bodies: BodiesAll})
			if err != nil {
				t.Fatal(err)
			}
			copied := make(chan int64, 1)
			srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				ex := From(r.Context())
				src := &pieceReader{pieces: tc.pieces}
				if tc.forward {
					if err := forwardBody(ex, src); err != io.EOF {
						t.Errorf("forwardBody: %v, want io.EOF", err)
					}
				} else {
					buf := make([]byte, 16<<10)
					for {
						n, err := src.Read(buf)
						w.Write(buf[:n])
						w.(http.Flusher).Flush()
						if err != nil {
							break
						}
					}
				}
				ex.rw.mu.Lock()
				var n int64
				if ex.rare != nil {
					n = ex.rare.copied
				}
				copied <- n
				ex.rw.mu.Unlock()
			})))
			defer srv.Close()
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("the client got %d bytes (%v), want the %d sent", len(got), err, len(want))
			}
			if c, w := testwait.Recv(t, copied, "the classifier's copy count"), tc.wantCopied(len(want)); c != int64(w) {
				t.Errorf("%d of %d bytes copied for the classifier, want %d", c, len(want), w)
			}
			if err := rc.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
			r := s.last()
			if r == nil || r.Outcome != classify.ToolSuccess || r.ResponseBytes != int64(len(want)) ||
				r.ResponseBody == nil || r.ResponseBody.Text != string(want) {
				t.Errorf("recorded %s", fmt.Sprint(r))
			}
		})
	}
}

// collectWriter is a ResponseWriter that keeps the body written to it.
type collectWriter struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (w *collectWriter) Header() http.Header         { return w.h }
func (w *collectWriter) WriteHeader(code int)        { w.code = code }
func (w *collectWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *collectWriter) Flush()                      {}

// FuzzForwardBodySSE: an event stream read in pieces of any sizes reaches
// the client through ForwardChunk byte for byte, and its record (verdict,
// reason, size, events, the body it keeps, its recycled chunks poisoned)
// is the one the same stream gets written by a handler in one piece.
func FuzzForwardBodySSE(f *testing.F) {
	f.Add([]byte{3, 200, 17, 90, 1, 255, 40})
	f.Add([]byte{})
	f.Add([]byte{169, 169, 169, 169})
	f.Add([]byte{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	progress := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1,\"message\":\"" + strings.Repeat("m", 20000) + "\"}}\n\n"
	small := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n"
	final := "id: 3\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + strings.Repeat("f", 9000) + "\"}],\"isError\":true}}\n\n"
	stream := []byte(": hi\n\n" + progress + small + small + progress + final)
	sink := &lastSink{}
	rc, err := New(Options{Records: sink, Sync: true, Bodies: BodiesAll})
	if err != nil {
		f.Fatal(err)
	}
	serve := func(handler func(w http.ResponseWriter, ex *Exchange)) (string, []byte) {
		w := &collectWriter{h: http.Header{}}
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`))
		rc.Serve(w, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			handler(w, From(r.Context()))
		}))
		rec := sink.last()
		events := 0
		if rec.SSE != nil {
			events = rec.SSE.Events
		}
		var body string
		if rec.ResponseBody != nil {
			body = rec.ResponseBody.Text
		}
		return fmt.Sprintf("%s %s (%s layer), %d bytes, %d events, body %v", rec.Outcome, rec.Reason, rec.Layer,
			rec.ResponseBytes, events, body == string(stream)), w.body.Bytes()
	}
	whole, _ := serve(func(w http.ResponseWriter, _ *Exchange) {
		w.Write(stream)
		w.(http.Flusher).Flush()
	})
	f.Fuzz(func(t *testing.T, cuts []byte) {
		var pieces [][]byte
		rest := stream
		for _, c := range cuts {
			n := min(int(c)*97+1, len(rest))
			pieces, rest = append(pieces, rest[:n]), rest[n:]
		}
		pieces = append(pieces, rest)
		got, out := serve(func(_ http.ResponseWriter, ex *Exchange) {
			if err := forwardBody(ex, &pieceReader{pieces: pieces}); err != io.EOF {
				t.Errorf("forwardBody: %v, want io.EOF", err)
			}
		})
		if !bytes.Equal(out, stream) {
			t.Fatalf("the client got %d bytes that differ from the %d read", len(out), len(stream))
		}
		if got != whole {
			t.Errorf("in %d pieces: recorded %s; written whole: %s", len(pieces), got, whole)
		}
	})
}

// blockingWriter is a server's ResponseWriter whose first Write tells
// entered, waits for release and panics; it counts the Flushes that came
// while that Write was in progress.
type blockingWriter struct {
	collectWriter
	entered, release chan struct{}
	mu               sync.Mutex
	inWrite          bool
	flushesInWrite   int
}

func (w *blockingWriter) Write([]byte) (int, error) {
	w.mu.Lock()
	w.inWrite = true
	w.mu.Unlock()
	close(w.entered)
	<-w.release
	panic(http.ErrAbortHandler)
}

func (w *blockingWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inWrite {
		w.flushesInWrite++
	}
}

// TestFlushDuringWriteDoesNotWait: a flush from another goroutine while
// Write or ForwardChunk is in the server's Write (ReverseProxy's delayed
// flush, which holds its own writer's lock meanwhile) returns at once
// without calling the server's Flush, and a panic out of that Write ends
// the exchange, with one record. When the writer's mutex was held across
// the server's Write (Write on main until now; forward in f7910c4), the
// flush waited for it, and with the panic, for ever: ReverseProxy's
// deferred stop then waited for the flush (a108c9f;
// TestForwardLoopPanickingClientWrite hung in both its cases).
func TestFlushDuringWriteDoesNotWait(t *testing.T) {
	for _, forward := range []bool{true, false} {
		sink := &countSink{}
		rc, err := New(Options{Records: sink, Sync: true})
		if err != nil {
			t.Fatal(err)
		}
		w := &blockingWriter{collectWriter: collectWriter{h: http.Header{}}, entered: make(chan struct{}), release: make(chan struct{})}
		rws := make(chan http.ResponseWriter, 1)
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`))
			rc.Serve(w, r, http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				rw.Header().Set("Content-Type", "text/event-stream")
				rw.WriteHeader(http.StatusOK)
				rws <- rw
				if forward {
					forwardBody(From(r.Context()), strings.NewReader("data: {}\n\n"))
				} else {
					rw.Write([]byte("data: {}\n\n"))
				}
			}))
		}()
		rw := testwait.Recv(t, rws, "the server's handler to start")
		testwait.Recv(t, w.entered, "the server's Write to start")
		flushed := make(chan error, 1)
		go func() { flushed <- http.NewResponseController(rw).Flush() }()
		select {
		case err := <-flushed:
			if err != nil {
				t.Errorf("forward=%v: the flush during the write: %v", forward, err)
			}
		case <-time.After(testwait.Bound):
			t.Fatalf("forward=%v: a flush waited for the server's Write", forward)
		}
		close(w.release)
		select {
		case v := <-done:
			if v != http.ErrAbortHandler {
				t.Fatalf("forward=%v: the handler ended with %v, want the server's Write's panic", forward, v)
			}
		case <-time.After(testwait.Bound):
			t.Fatalf("forward=%v: the exchange did not end after the server's Write panicked", forward)
		}
		if w.flushesInWrite != 0 {
			t.Errorf("forward=%v: the server's Flush was called %d times during its Write", forward, w.flushesInWrite)
		}
		if n := sink.n(); n != 1 {
			t.Errorf("forward=%v: %d records, want 1", forward, n)
		}
	}
}
