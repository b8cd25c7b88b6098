package recorder

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// panickyWriter is a server's ResponseWriter whose Write panics.
type panickyWriter struct{ *httptest.ResponseRecorder }

func (panickyWriter) Write([]byte) (int, error) { panic(http.ErrAbortHandler) }

// TestWritePanicUnlocks: a panic out of the server's Write, under the
// writer's Write (which holds its mutex without a defer, to keep its
// frame small: docs/benchmarks.md, record3), still ends the exchange: the
// panic reaches the server and the exchange is recorded once (without
// served's unlock, the handler's end waits for the mutex forever).
func TestWritePanicUnlocks(t *testing.T) {
	for _, front := range []bool{false, true} {
		sink := &countSink{}
		rc, err := New(Options{Records: sink, Sync: true})
		if err != nil {
			t.Fatal(err)
		}
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
		})
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			w := panickyWriter{httptest.NewRecorder()}
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			if front {
				rc.Handler(next).ServeHTTP(w, r)
			} else {
				rc.Serve(w, r, next)
			}
		}()
		select {
		case v := <-done:
			if v != http.ErrAbortHandler {
				t.Fatalf("front=%v: the handler ended with %v, want the server's Write's panic", front, v)
			}
		case <-time.After(testwait.Bound):
			t.Fatalf("front=%v: the exchange did not end after the server's Write panicked", front)
		}
		if n := sink.n(); n != 1 {
			t.Fatalf("front=%v: %d records, want 1", front, n)
		}
	}
}

// panicOnceWriter is a server's ResponseWriter whose first Write panics.
type panicOnceWriter struct {
	*httptest.ResponseRecorder
	n int
}

func (p *panicOnceWriter) Write(b []byte) (int, error) {
	p.n++
	if p.n == 1 {
		panic("the server's Write failed")
	}
	return p.ResponseRecorder.Write(b)
}

// TestWritePanicRecovered: a handler that recovers a panic out of the
// server's Write (a recovering middleware behind the recorder) and carries
// on (writes again, or returns) still ends its exchange, recorded once
// with the bytes it wrote afterwards: Write, which keeps mu without a
// defer, must not leave it locked for the handler's next call (before: the
// handler's next Write, or its end, waited for mu forever).
func TestWritePanicRecovered(t *testing.T) {
	for _, again := range []bool{true, false} {
		sink := &countSink{}
		rc, err := New(Options{Records: sink, Sync: true})
		if err != nil {
			t.Fatal(err)
		}
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			func() {
				defer func() { _ = recover() }()
				w.Write([]byte(`{"jsonrpc":"2.0",`))
			}()
			if again {
				w.Write([]byte(`"id":1,"result":{}}`))
			}
		})
		w := &panicOnceWriter{ResponseRecorder: httptest.NewRecorder()}
		done := make(chan any, 1)
		go func() {
			defer func() { done <- recover() }()
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			rc.Serve(w, r, next)
		}()
		select {
		case v := <-done:
			if v != nil {
				t.Fatalf("again=%v: the handler ended with %v", again, v)
			}
		case <-time.After(testwait.Bound):
			t.Fatalf("again=%v: the exchange did not end after a handler recovered the server's Write's panic", again)
		}
		if n := sink.n(); n != 1 {
			t.Fatalf("again=%v: %d records, want 1", again, n)
		}
		if want := map[bool]string{true: `"id":1,"result":{}}`, false: ""}[again]; w.Body.String() != want {
			t.Errorf("again=%v: the client got %q, want %q", again, w.Body.String(), want)
		}
	}
}
