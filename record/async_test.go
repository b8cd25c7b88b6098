package record

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
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

// blockedOnSend reports whether a goroutine whose stack holds caller is
// parked on a channel send in fn (both as runtime.Stack names functions).
func blockedOnSend(t *testing.T, fn, caller string) bool {
	t.Helper()
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		if strings.Contains(head, "[chan send") && strings.Contains(g, fn) && strings.Contains(g, caller) {
			return true
		}
	}
	return false
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
	// Blocked is a fact the test sees, not a time it waits: the writing
	// goroutine parked on the full queue's send in Async.enqueue.
	testwait.Until(t, "the writer to block on the full queue of a stalled sink", func() bool {
		select {
		case <-done:
			t.Fatal("200 writes into a queue of 4 did not block on a stalled sink")
		default:
		}
		return blockedOnSend(t, "record.(*Async).enqueue", "record.TestAsyncBlockLosesNothing.func")
	})
	close(sink.gate)
	testwait.Recv(t, done, "the 200 writes to end once the sink took lines")
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
	// The sink stays stalled until the writes are done: a drop policy that
	// blocked would never get there (the wait's bound fails it).
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			if err := a.Write(&Record{Kind: KindExchange, Seq: i + 1}); err != nil {
				t.Error(err)
			}
		}
	}()
	testwait.Recv(t, done, "100 writes with the drop policy to end while the sink is stalled")
	dropped := a.Dropped()
	// The queue holds 4 and the goroutine may hold one more in WriteLine.
	if dropped < n-queue-1 || dropped > n-queue {
		t.Errorf("dropped %d, want %d or %d", dropped, n-queue-1, n-queue)
	}
	close(sink.gate)
	var lost *LostError
	if err := a.Close(); !errors.As(err, &lost) || lost.Stats.Dropped != dropped || lost.First.Reason != LostDropped {
		t.Fatalf("Close = %v, want a *LostError counting %d dropped", err, dropped)
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

// TestAsyncSinkError: a sink that refuses every line loses the records
// that reached it, one by one, each counted and named to OnLoss; the writer
// goes on trying (Write does not fail for a record it queued), and Close
// reports the loss.
func TestAsyncSinkError(t *testing.T) {
	t.Parallel()
	sink := newGatedSink()
	boom := errors.New("disk full")
	sink.fail = boom
	close(sink.gate)
	var mu sync.Mutex
	var losses []Loss
	a := NewAsync(sink, AsyncOptions{QueueSize: 1, OnLoss: func(l Loss) {
		mu.Lock()
		losses = append(losses, l)
		mu.Unlock()
	}})
	for i := range 3 {
		if err := a.Write(&Record{ID: fmt.Sprintf("rec-%d", i), Kind: KindExchange, HTTPMethod: "POST", Method: "tools/call", Tool: "echo"}); err != nil {
			t.Errorf("Write %d = %v: a queued record is not refused", i, err)
		}
	}
	var lost *LostError
	if err := a.Close(); !errors.As(err, &lost) || !errors.Is(err, boom) {
		t.Fatalf("Close = %v, want a *LostError wrapping %v", err, boom)
	}
	if err := a.Close(); !errors.Is(err, boom) {
		t.Errorf("second Close = %v", err)
	}
	if st := a.Stats(); st != (SinkStats{Failed: 3}) || lost.Stats != st {
		t.Errorf("stats %+v, error's %+v; want 3 failed", st, lost.Stats)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(losses) != 3 {
		t.Fatalf("%d losses reported, want 3", len(losses))
	}
	for i, l := range losses {
		want := fmt.Sprintf("record lost: exchange rec-%d (POST tools/call echo) could not be written: disk full", i)
		if l.Reason != LostWrite || l.String() != want {
			t.Errorf("loss %d: %q, want %q", i, l.String(), want)
		}
	}
}

// TestAsyncSinkRecovers: a sink that fails some lines and then works again
// loses only those; every other record is written, in order.
func TestAsyncSinkRecovers(t *testing.T) {
	t.Parallel()
	sink := &flakySink{failFrom: 2, failTo: 5}
	a := NewAsync(sink, AsyncOptions{QueueSize: 2})
	for i := range 8 {
		if err := a.Write(&Record{Kind: KindExchange, Seq: i}); err != nil {
			t.Fatal(err)
		}
	}
	err := a.Close()
	st := a.Stats()
	if st.Written != 5 || st.Failed != 3 || err == nil {
		t.Fatalf("stats %+v, Close %v; want 5 written, 3 failed, an error", st, err)
	}
	var seqs []int
	for _, l := range sink.lines {
		r, derr := Decode(l)
		if derr != nil {
			t.Fatal(derr)
		}
		seqs = append(seqs, r.Seq)
	}
	if fmt.Sprint(seqs) != "[0 1 5 6 7]" {
		t.Errorf("written seqs %v, want [0 1 5 6 7]", seqs)
	}
}

// flakySink fails the lines numbered failFrom up to (not including) failTo.
type flakySink struct {
	n                int
	failFrom, failTo int
	lines            [][]byte
}

func (f *flakySink) WriteLine(line []byte) error {
	defer func() { f.n++ }()
	if f.n >= f.failFrom && f.n < f.failTo {
		return errors.New("no space left on device")
	}
	f.lines = append(f.lines, bytes.Clone(line))
	return nil
}

func (f *flakySink) Close() error { return nil }

// TestAsyncUnencodable: a record the encoder refuses is returned as an
// error to its caller and counted, and Close reports it.
func TestAsyncUnencodable(t *testing.T) {
	t.Parallel()
	sink := newGatedSink()
	close(sink.gate)
	reported := 0
	a := NewAsync(sink, AsyncOptions{Encoder: Encoder{MaxLineSize: 2000}, OnLoss: func(Loss) { reported++ }})
	if err := a.Write(&Record{Kind: KindExchange, Reason: strings.Repeat("x", 4000)}); !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("Write of an oversized record = %v", err)
	}
	if err := a.Write(&Record{Kind: KindExchange}); err != nil {
		t.Fatal(err)
	}
	var lost *LostError
	if err := a.Close(); !errors.As(err, &lost) || lost.First.Reason != LostUnencodable {
		t.Fatalf("Close = %v", err)
	}
	if st := a.Stats(); st != (SinkStats{Written: 1, Unencodable: 1}) || reported != 0 {
		t.Errorf("stats %+v, %d reported to OnLoss (the caller had the error)", st, reported)
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
			var lost *LostError
			if err := a.Close(); err != nil && !errors.As(err, &lost) {
				t.Fatal(err)
			}
			testwait.Wait(t, &wg, "the writers to end after Close")
			st := a.Stats()
			if int(st.Written+st.Dropped) != accepted {
				t.Errorf("accepted %d, written %d + dropped %d", accepted, st.Written, st.Dropped)
			}
			if st.Failed != 0 || st.Unencodable != 0 || st.Closed > 8 {
				t.Errorf("stats %+v: only a refusal after close per writer is expected", st)
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
