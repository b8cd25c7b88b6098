package record

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// gatedSink is a slow LineWriter: each WriteLine waits for the gate to open.
type gatedSink struct {
	gate   chan struct{}
	mu     sync.Mutex
	lines  [][]byte
	closed bool
	fail   error
}

func newGatedSink() *gatedSink { return &gatedSink{gate: make(chan struct{})} }

func (s *gatedSink) WriteLine(line []byte) error {
	<-s.gate
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.lines = append(s.lines, bytes.Clone(line))
	return nil
}

func (s *gatedSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func (s *gatedSink) records(t *testing.T) []*Record {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Record
	for _, l := range s.lines {
		r, err := Decode(l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func TestAsyncBlockLosesNothing(t *testing.T) {
	t.Parallel()
	sink := newGatedSink()
	a := NewAsync(sink, AsyncOptions{QueueSize: 4, Policy: QueueBlock})
	const n = 200
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			if err := a.Write(&Record{Kind: KindExchange, Seq: i + 1}); err != nil {
				t.Error(err)
			}
		}
	}()
	select {
	case <-done:
		t.Fatal("200 writes into a queue of 4 did not block on a stalled sink")
	case <-time.After(50 * time.Millisecond):
	}
	close(sink.gate)
	<-done
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	recs := sink.records(t)
	if len(recs) != n || a.Dropped() != 0 {
		t.Fatalf("%d records, %d dropped; want %d, 0", len(recs), a.Dropped(), n)
	}
	for i, r := range recs {
		if r.Seq != i+1 {
			t.Fatalf("record %d has seq %d: order not kept", i, r.Seq)
		}
	}
	if st := a.Stats(); st != (AsyncStats{Written: n}) {
		t.Errorf("stats %+v", st)
	}
	if !sink.closed {
		t.Error("sink not closed")
	}
}

func TestAsyncDropCountsAndReports(t *testing.T) {
	t.Parallel()
	sink := newGatedSink()
	const queue, n = 4, 100
	a := NewAsync(sink, AsyncOptions{QueueSize: queue, Policy: QueueDrop})
	start := time.Now()
	for i := range n {
		if err := a.Write(&Record{Kind: KindExchange, Seq: i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("drop policy blocked for %v", d)
	}
	dropped := a.Dropped()
	// The queue holds 4 and the goroutine may hold one more in WriteLine.
	if dropped < n-queue-1 || dropped > n-queue {
		t.Errorf("dropped %d, want %d or %d", dropped, n-queue-1, n-queue)
	}
	close(sink.gate)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	recs := sink.records(t)
	last := recs[len(recs)-1]
	if last.Kind != KindDropped || last.Dropped != dropped {
		t.Fatalf("last record %+v, want a dropped record with %d", last, dropped)
	}
	if st := a.Stats(); st.Written+st.Dropped != n || int(st.Written) != len(recs)-1 {
		t.Errorf("stats %+v, %d lines: not every record is accounted for", st, len(recs))
	}
}

func TestAsyncSinkError(t *testing.T) {
	t.Parallel()
	sink := newGatedSink()
	boom := errors.New("disk full")
	sink.fail = boom
	close(sink.gate)
	a := NewAsync(sink, AsyncOptions{QueueSize: 1})
	_ = a.Write(&Record{Kind: KindExchange})
	deadline := time.Now().Add(5 * time.Second)
	for a.Stats().Failed == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if err := a.Write(&Record{Kind: KindExchange}); !errors.Is(err, boom) {
		t.Errorf("Write after a sink failure = %v, want %v", err, boom)
	}
	if err := a.Close(); !errors.Is(err, boom) {
		t.Errorf("Close = %v, want %v", err, boom)
	}
	if err := a.Close(); !errors.Is(err, boom) {
		t.Errorf("second Close = %v", err)
	}
	if st := a.Stats(); st.Failed != 2 || st.Written != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestAsyncConcurrentWriteClose races writers against Close: no panic, no
// record accepted after Close, and every accepted record is written.
func TestAsyncConcurrentWriteClose(t *testing.T) {
	t.Parallel()
	for _, policy := range []QueuePolicy{QueueBlock, QueueDrop} {
		t.Run(string(policy), func(t *testing.T) {
			sink := newGatedSink()
			close(sink.gate)
			a := NewAsync(sink, AsyncOptions{QueueSize: 8, Policy: policy})
			var wg sync.WaitGroup
			var mu sync.Mutex
			accepted := 0
			for g := range 8 {
				wg.Go(func() {
					for i := range 200 {
						err := a.Write(&Record{Kind: KindExchange, Note: fmt.Sprint(g, i)})
						if errors.Is(err, ErrClosed) {
							return
						}
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						accepted++
						mu.Unlock()
					}
				})
			}
			time.Sleep(time.Millisecond)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			st := a.Stats()
			if int(st.Written+st.Dropped) != accepted {
				t.Errorf("accepted %d, written %d + dropped %d", accepted, st.Written, st.Dropped)
			}
		})
	}
}

func TestAsyncOverFile(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/rec.jsonl"
	fw, err := OpenFile(path, FileOptions{Sync: SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAsync(fw, AsyncOptions{})
	rec := &Record{Kind: KindExchange, Note: "reused"}
	for i := range 20 {
		rec.Seq = i + 1 // the caller may reuse the record once Write returns
		if err := a.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	recs, lerrs := readAll(t, path)
	if len(recs) != 20 || len(lerrs) != 0 || recs[19].Seq != 20 || recs[0].Seq != 1 {
		t.Errorf("%d records, %d bad lines", len(recs), len(lerrs))
	}
	if err := a.Write(rec); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v", err)
	}
}
