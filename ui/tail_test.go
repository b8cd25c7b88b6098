package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
)

func line(t *testing.T, id string) string {
	t.Helper()
	b, err := (&record.Encoder{}).Encode(&record.Record{Kind: record.KindExchange, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitFor polls cond (bounded) and fails saying what it waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
	}
}

func (s *Server) notesText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.notes, "\n")
}

// Tail reads whole lines only, says so when it skips a malformed line, and
// reads a truncated or a replaced file again from its start.
func TestTailTruncatedReplacedMalformed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(path, []byte(line(t, "A")+"{oops\n"+line(t, "B")[:10]), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := NewServer(ServerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Tail(ctx, path, 5*time.Millisecond) }()
	defer func() {
		cancel()
		if err := testwait.Recv(t, done, "Tail to end after its context was cancelled"); err != context.Canceled {
			t.Errorf("Tail: %v", err)
		}
	}()
	waitFor(t, "A and the malformed line's note", func() bool {
		return s.Records() == 1 && strings.Contains(s.notesText(), path+":2: skipped malformed line")
	})
	// The rest of B's line arrives.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line(t, "B")[10:])
	f.Close()
	waitFor(t, "B, whole", func() bool { return s.Records() == 2 })

	// Truncated and rewritten shorter: read again from the start.
	if err := os.WriteFile(path, []byte(line(t, "C")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "C after the truncation", func() bool {
		return s.Records() == 3 && strings.Contains(s.notesText(), "was truncated")
	})
	// Replaced by another file (rotation).
	tmp := filepath.Join(dir, "new.jsonl")
	if err := os.WriteFile(tmp, []byte(line(t, "D")+line(t, "E")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "D and E from the new file", func() bool {
		return s.Records() == 5 && strings.Contains(s.notesText(), "was replaced")
	})
	s.mu.Lock()
	var ids []string
	for _, e := range s.recs {
		r, err := record.Decode(e.data)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	s.mu.Unlock()
	if got := strings.Join(ids, ","); got != "A,B,C,D,E" {
		t.Errorf("published %s, want A,B,C,D,E", got)
	}
}
