package recorder

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestFinishersLastIdleFirst: with several finishers idle, exchanges one
// after another are all finished by the one that became idle last, whose
// stack is still grown from its last exchange, not handed to each idle one
// in turn (each of whose stacks a collection had halved while it waited).
// Before, the 20 exchanges went round the 4 idle finishers: 4 goroutines.
func TestFinishersLastIdleFirst(t *testing.T) {
	var mu sync.Mutex
	ids := map[int64]int{}
	sink := &countSink{}
	rc, err := New(Options{Records: sink, Finish: func(f *Finished) []*record.Record {
		if f.Exchange.Request().URL.Path == "/json" {
			mu.Lock()
			ids[goroutineID()]++
			mu.Unlock()
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	f := rc.fin
	release := make(chan struct{})
	flushed := make(chan struct{}, 4) // a stream's finisher started
	srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			return
		}
		// Past lazyStart: the stream's finisher starts while it is open.
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(": " + strings.Repeat("x", lazyStart) + "\n\n"))
		w.(http.Flusher).Flush() // (which starts the stream's finisher)
		flushed <- struct{}{}
		<-release
	})))
	defer srv.Close()
	var once sync.Once
	done := func() { once.Do(func() { close(release) }) }
	defer done()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(testwait.Bound)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
			time.Sleep(time.Millisecond)
		}
	}
	post := func(path string) *http.Response {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Four streams open at once: four finishers, each idle once its
	// stream's record is written.
	const streams = 4
	var resps []*http.Response
	for range streams {
		resps = append(resps, post("/stream"))
	}
	for range streams {
		select {
		case <-flushed:
		case <-time.After(testwait.Bound):
			t.Fatal("the streams were not flushed")
		}
	}
	done()
	for _, resp := range resps {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	waitFor("the streams' finishers not idle", func() bool { return f.n.Load() == streams && rc.Stats().InFlight == 0 })
	const n = 20
	for range n {
		resp := post("/json")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		waitFor("the finisher not idle again", func() bool { return f.n.Load() == streams && rc.Stats().InFlight == 0 })
	}
	if err := rc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sink.n(); got != streams+n {
		t.Fatalf("%d records for %d exchanges", got, streams+n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 1 {
		t.Errorf("%d exchanges one after another were finished on %d goroutines with %d idle, want the one idle last: %v", n, len(ids), streams, ids)
	}
}
