package record

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

func init() { poisonLines = true }

// keepingSink keeps every line it is given, as a sink must not (so that a
// buffer reused while a sink still holds it shows), and a copy of each.
type keepingSink struct {
	mu     sync.Mutex
	kept   [][]byte
	copies [][]byte
}

func (s *keepingSink) WriteLine(line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kept = append(s.kept, line)
	s.copies = append(s.copies, bytes.Clone(line))
	return nil
}

func (s *keepingSink) Close() error { return nil }

func (s *keepingSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.copies)
}

// TestAsyncReusesLines: the lines Async queued are its own, and their
// buffers are reused for later records once written (a busy proxy encodes
// thousands of ~1 KiB lines a second); every line the sink was given is
// whole. The sink below keeps the lines it was given, which a sink must not
// do, so that a reuse shows as a line whose bytes changed after it was
// written; before the change no buffer was ever reused.
func TestAsyncReusesLines(t *testing.T) {
	sink := &keepingSink{}
	a := NewAsync(sink, AsyncOptions{Linger: -1})
	const n = 50
	for i := range n {
		if err := a.Write(&Record{Kind: KindExchange, Method: "tools/call", ID: "r" + string(rune('a'+i%26)), Reason: "ok"}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(testwait.Bound)
		for sink.count() < i+1 {
			if time.Now().After(deadline) {
				t.Fatal("the record was not written")
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	reused := 0
	for i, line := range sink.kept {
		if !bytes.Equal(line, sink.copies[i]) {
			reused++
		}
		if _, err := Decode(bytes.TrimSpace(sink.copies[i])); err != nil {
			t.Fatalf("line %d as written: %v: %q", i, err, sink.copies[i])
		}
	}
	if reused == 0 && !raceEnabled {
		t.Errorf("none of %d line buffers was reused", n)
	}
}
