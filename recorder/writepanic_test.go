package recorder

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
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
		case <-time.After(10 * time.Second):
			t.Fatalf("front=%v: the exchange did not end after the server's Write panicked", front)
		}
		if n := sink.n(); n != 1 {
			t.Fatalf("front=%v: %d records, want 1", front, n)
		}
	}
}
