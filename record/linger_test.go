package record

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"
)

// batchSink is a LineWriter that also writes several lines at once, as a
// FileWriter does; it counts its writes.
type batchSink struct {
	mu     sync.Mutex
	writes int
	lines  [][]byte
	closed bool
}

func (s *batchSink) WriteLine(line []byte) error {
	_, err := s.writeLines([][]byte{line})
	return err
}

func (s *batchSink) writeLines(lines [][]byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	for _, l := range lines {
		s.lines = append(s.lines, bytes.Clone(l))
	}
	return len(lines), nil
}

func (s *batchSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// TestAsyncLingerGroupsRecords: the records given to Write while the writer
// lingers (it took the first one, then waits) go to the sink together with
// that first one, in one write, and Close ends the linger
// at once with every record written, in order (an hour's linger: a Close
// that waited for it would hang the test).
func TestAsyncLingerGroupsRecords(t *testing.T) {
	t.Parallel()
	sink := &batchSink{}
	a := NewAsync(sink, AsyncOptions{Linger: time.Hour})
	for i := range 10 {
		if err := a.Write(&Record{Kind: KindExchange, Seq: i + 1}); err != nil {
			t.Fatal(err)
		}
		for i == 0 && len(a.queue) > 0 {
			runtime.Gosched() // until the writer took the first record
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if sink.writes != 1 || len(sink.lines) != 10 || !sink.closed {
		t.Fatalf("%d writes of %d lines (closed %v), want 1 write of 10 lines, then closed", sink.writes, len(sink.lines), sink.closed)
	}
	for i, l := range sink.lines {
		r, err := Decode(l)
		if err != nil || r.Seq != i+1 {
			t.Errorf("line %d: seq %v (%v), want %d", i, r, err, i+1)
		}
	}
	if st := a.Stats(); st.Written != 10 || st.Lost() != 0 {
		t.Errorf("stats %+v, want 10 written, none lost", st)
	}
}

// TestAsyncNoLinger: a negative Linger writes a record as soon as the
// writer takes it, before Close.
func TestAsyncNoLinger(t *testing.T) {
	t.Parallel()
	sink := &batchSink{}
	a := NewAsync(sink, AsyncOptions{Linger: -1})
	if err := a.Write(&Record{Kind: KindExchange, Seq: 1}); err != nil {
		t.Fatal(err)
	}
	for {
		sink.mu.Lock()
		n := len(sink.lines)
		sink.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond) // until the writer wrote it, without Close
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}
