package recorder

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

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
	flushed := make(chan struct{}, 4) // a stream's finisher started
	fs := newFinisherServer(t, rc, flushed)
	// Four streams open at once: four finishers, each idle once its
	// stream's record is written.
	const streams = 4
	var resps []*http.Response
	for range streams {
		resps = append(resps, fs.post(t, "/stream"))
	}
	for range streams {
		testwait.Recv(t, flushed, "the streams' flush")
	}
	fs.release()
	for _, resp := range resps {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	testwait.Until(t, "the streams' finishers not idle", func() bool { return f.n.Load() == streams && rc.Stats().InFlight == 0 })
	const n = 20
	for range n {
		resp := fs.post(t, "/json")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		testwait.Until(t, "the finisher not idle again", func() bool { return f.n.Load() == streams && rc.Stats().InFlight == 0 })
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
