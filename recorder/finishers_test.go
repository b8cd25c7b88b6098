package recorder

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
)

// goroutineID is the id of the calling goroutine, from its stack's first
// line ("goroutine 123 [running]:").
func goroutineID() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseInt(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// TestFinishersReused: exchanges whose response was delivered whole before
// their handler returned are finished by the recorder's long-lived
// finishing goroutines, not by a new goroutine each (which cost its
// creation and a stack grown anew on every exchange); each record is still
// written once. Before, 40 exchanges were finished on 40 goroutines.
func TestFinishersReused(t *testing.T) {
	const n = 40
	ids := finishingGoroutines(t, n, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	// A finisher says the record is written (InFlight) just before it
	// waits for the next exchange: on a loaded machine the next one may
	// end first and get a goroutine of its own, which then stays. Half is
	// far from one goroutine per exchange, and from a flaky bound.
	if len(ids) > n/2 {
		t.Errorf("%d exchanges were finished on %d goroutines, want a few long-lived ones: %v", n, len(ids), ids)
	}
}

// finishingGoroutines posts body n times, one after the other, to a
// recorder in front of h, and returns the goroutines its Finish hook ran
// on (by id, with their counts), after checking that each exchange has its
// record.
func finishingGoroutines(t *testing.T, n int, body string, h http.Handler) map[int64]int {
	t.Helper()
	var mu sync.Mutex
	ids := map[int64]int{}
	sink := &countSink{}
	rc, err := New(Options{Records: sink, Finish: func(*Finished) []*record.Record {
		mu.Lock()
		ids[goroutineID()]++
		mu.Unlock()
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rc.Handler(h))
	defer srv.Close()
	for range n {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// The next request once this record is written: one finisher
		// is idle again.
		deadline := time.Now().Add(testwait.Bound)
		for rc.Stats().InFlight != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
	if err := rc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sink.n(); got != n {
		t.Fatalf("%d records for %d exchanges", got, n)
	}
	mu.Lock()
	defer mu.Unlock()
	return ids
}

// TestFinishersEnd: the finishing goroutines exit when the recorder's
// owner waits for it (its server stopped), and when the recorder is no
// longer reachable without a Wait; exchanges after a Wait are still
// recorded.
func TestFinishersEnd(t *testing.T) {
	serveOne := func(rc *Recorder) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		rc.Serve(w, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
		}))
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(testwait.Bound)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
			runtime.GC()
			time.Sleep(5 * time.Millisecond)
		}
	}

	sink := &countSink{}
	rc, err := New(Options{Records: sink})
	if err != nil {
		t.Fatal(err)
	}
	f := rc.fin
	serveOne(rc)
	waitFor("no finisher after an exchange", func() bool { return f.n.Load() == 1 })
	if err := rc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor("a finisher outlived Wait", func() bool { return f.n.Load() == 0 })
	serveOne(rc)
	if err := rc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sink.n(); got != 2 {
		t.Fatalf("%d records for 2 exchanges", got)
	}

	rc, err = New(Options{Records: sink})
	if err != nil {
		t.Fatal(err)
	}
	f = rc.fin
	serveOne(rc)
	waitFor("no finisher after an exchange", func() bool { return f.n.Load() == 1 })
	runtime.KeepAlive(rc) // (else it is unreachable already: waitFor collects)
	rc = nil
	waitFor("a finisher outlived its unreachable recorder", func() bool { return f.n.Load() == 0 })
}

type countSink struct {
	mu   sync.Mutex
	recs int
}

func (s *countSink) Write(*record.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs++
	return nil
}

func (s *countSink) n() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recs
}

// TestFinishersFinishStreams: an exchange whose response streams past
// lazyStart, so that its finishing goroutine starts while the handler still
// writes (startEarly), is finished by an idle finisher too, and so are the
// exchanges after it. Before, each streamed exchange got a new goroutine,
// whose stack grew again in the record's encoding (20 of 20).
func TestFinishersFinishStreams(t *testing.T) {
	event := []byte("data: " + `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("x", 8<<10) + `"}}` + "\n\n")
	last := []byte("data: " + `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` + "\n\n")
	const n = 20
	ids := finishingGoroutines(t, n, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}`, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for range 4 {
			w.Write(event)
			w.(http.Flusher).Flush()
		}
		w.Write(last)
	}))
	if len(ids) > n/2 {
		t.Errorf("%d streamed exchanges were finished on %d goroutines, want a few long-lived ones: %v", n, len(ids), ids)
	}
}

// TestFinishersCountIdleOnly: a finisher working on a stream does not
// count against the finishers' bound while it works (a long stream would
// otherwise keep the exchanges after it from the finishers for as long as
// it lasts); it is idle again, and counted, once the stream's record is
// written. Before, n stayed 1 while the stream was open.
func TestFinishersCountIdleOnly(t *testing.T) {
	sink := &countSink{}
	rc, err := New(Options{Records: sink})
	if err != nil {
		t.Fatal(err)
	}
	f := rc.fin
	fs := newFinisherServer(t, rc, nil)
	resp := fs.post(t, "/json")
	resp.Body.Close()
	testwait.Until(t, "no idle finisher after an exchange", func() bool { return f.n.Load() == 1 })
	resp = fs.post(t, "/stream")
	testwait.Until(t, "the stream's finisher still counted while it works", func() bool { return f.n.Load() == 0 && rc.Stats().InFlight == 1 })
	fs.release()
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	testwait.Until(t, "the stream's finisher not idle after its record", func() bool { return f.n.Load() == 1 && rc.Stats().InFlight == 0 })
	if err := rc.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sink.n(); got != 2 {
		t.Fatalf("%d records for 2 exchanges", got)
	}
}
