package recorder

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// finisherServer is rc in front of a handler that answers /json with a
// JSON response and any other path with an event stream that is past
// lazyStart (its finisher starts while it is open) and stays open until
// release: the set-up of the finishers' tests that hold a stream open.
type finisherServer struct {
	srv  *httptest.Server
	once sync.Once
	stop chan struct{}
}

// newFinisherServer starts it; flushed, when not nil, hears of each
// stream's first flush. The streams are released and the server closed at
// the test's end.
func newFinisherServer(t *testing.T, rc *Recorder, flushed chan<- struct{}) *finisherServer {
	t.Helper()
	fs := &finisherServer{stop: make(chan struct{})}
	fs.srv = httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(": " + strings.Repeat("x", lazyStart) + "\n\n"))
		w.(http.Flusher).Flush() // (which starts the stream's finisher)
		if flushed != nil {
			flushed <- struct{}{}
		}
		<-fs.stop
	})))
	t.Cleanup(fs.srv.Close)
	t.Cleanup(fs.release) // (before srv.Close, which waits for the handlers)
	return fs
}

// release ends the open streams (once).
func (fs *finisherServer) release() { fs.once.Do(func() { close(fs.stop) }) }

// post sends a ping to path.
func (fs *finisherServer) post(t *testing.T, path string) *http.Response {
	t.Helper()
	resp, err := http.Post(fs.srv.URL+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
