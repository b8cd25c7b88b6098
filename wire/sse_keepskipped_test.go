package wire

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/ssetest"
)

// keptEvent is what KeepSkipped handed on for a skipped event, or, for an
// unbounded reader's event, what it would have handed on.
type keptEvent struct {
	Offset     int64
	Type, Data string
}

// readKeepSkipped reads chunks with a chunk reader of the given bound and
// budget that keeps skipped events of up to keep data bytes, parked and
// resumed at every pause between events when park is set (as the
// recorder's classifier is). It returns what readAllEvents prints and the
// events handed to KeepSkipped's function, each checked to come before
// Next returns its *SkippedEventError.
func readKeepSkipped(t *testing.T, chunks [][]byte, bound int, budget int64, keep int, park bool) (string, []keptEvent) {
	t.Helper()
	src := &pausedSource{Source: ssetest.Source{Chunks: slices.Clone(chunks)}}
	var b *Budget
	if budget > 0 {
		b = NewBudget(budget)
	}
	var kept []keptEvent
	pending := false
	f := func(typ string, data []byte) {
		if pending {
			t.Fatalf("KeepSkipped's function called twice for one skipped event")
		}
		pending = true
		kept = append(kept, keptEvent{Type: typ, Data: string(data)})
	}
	start := func(rd *SSEReader) *SSEReader {
		if b != nil {
			rd.SetBudget(b)
		}
		rd.KeepSkipped(keep, f)
		return rd
	}
	rd := start(NewPooledSSEChunkReader(src, bound))
	var out strings.Builder
	for range 1 << 20 {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		var ue *UnterminatedEventError
		var se *SkippedEventError
		switch {
		case err == ErrSSEPaused:
			if park {
				if p, ok := rd.Park(); ok {
					rd = start(ResumeSSEChunkReader(src, bound, p))
				}
			}
			continue
		case errors.As(err, &ue):
			fmt.Fprintf(&out, "unterminated off=%d skipped=%v data=%q\n", ue.Offset, ue.Skipped, ue.Data)
			continue
		case errors.As(err, &se):
			fmt.Fprintf(&out, "skipped off=%d len=%d head=%q cause=%v\n", se.Offset, se.Length, se.Head, se.Cause)
			if pending {
				kept[len(kept)-1].Offset = se.Offset
				pending = false
			}
			continue
		case err != nil:
			t.Fatalf("Next: %v", err)
		}
		if pending {
			t.Fatalf("KeepSkipped's function called, then Next returned an event, not the skipped one")
		}
		fmt.Fprintf(&out, "event off=%d len=%d type=%q id=%q/%v retry=%d/%v data=%q last=%q\n", ev.Offset, ev.Length, ev.Type, ev.ID, ev.HasID, ev.Retry, ev.HasRetry, ev.Data, lastID(rd))
	}
	if pending {
		t.Fatalf("KeepSkipped's function called for an event Next did not return as skipped")
	}
	last, hasLast := rd.LastEventID()
	retry, hasRetry := rd.Retry()
	fmt.Fprintf(&out, "bytes=%d comments=%d bom=%v last=%q/%v retry=%d/%v\n", rd.Bytes, rd.Comments, rd.BOM, last, hasLast, retry, hasRetry)
	rd.Recycle()
	return out.String(), kept
}

// checkKeepSkipped: a reader told KeepSkipped returns what one without it
// returns, and hands on, for each event it skips, the type and data an
// unbounded reader returns for the event at that offset exactly when that
// data is at most keep bytes and that type at most maxSkippedType, and
// nothing otherwise. It returns how many events were handed on.
func checkKeepSkipped(t *testing.T, stream []byte, chunks [][]byte, bound int, budget int64, keep int) int {
	t.Helper()
	plain := NewPooledSSEReader(&ssetest.Pieces{Chunks: slices.Clone(chunks)}, bound)
	if budget > 0 {
		plain.SetBudget(NewBudget(budget))
	}
	want := readAllEvents(plain)
	plain.Recycle()
	// The unbounded reader's events, by offset.
	whole := map[int64]Event{}
	all := NewSSEReader(strings.NewReader(string(stream)), len(stream)+1)
	for range 1 << 20 {
		ev, err := all.Next()
		if err != nil {
			break
		}
		ev.Data = slices.Clone(ev.Data)
		whole[ev.Offset] = ev
	}
	handed := 0
	for _, park := range []bool{false, true} {
		got, kept := readKeepSkipped(t, chunks, bound, budget, keep, park)
		if got != want {
			t.Fatalf("KeepSkipped changed what the reader returns (park %v) on %.300q:\n%.600s\nwant\n%.600s", park, stream, got, want)
		}
		byOff := map[int64]keptEvent{}
		for _, k := range kept {
			byOff[k.Offset] = k
		}
		for _, line := range strings.Split(got, "\n") {
			var off int64
			if _, err := fmt.Sscanf(line, "skipped off=%d", &off); err != nil {
				continue
			}
			ev, ok := whole[off]
			if !ok {
				t.Fatalf("skipped event at %d is no event of the unbounded reader (%.300q)", off, stream)
			}
			k, handedOn := byOff[off]
			if wantOn := len(ev.Data) <= keep && len(ev.Type) <= maxSkippedType; handedOn != wantOn {
				t.Fatalf("skipped event at %d (type %d bytes, data %d, keep %d): handed on %v, want %v (%.300q)", off, len(ev.Type), len(ev.Data), keep, handedOn, wantOn, stream)
			}
			if handedOn && (k.Type != ev.Type || k.Data != string(ev.Data)) {
				t.Fatalf("skipped event at %d handed on as type %q data %.200q, want %q %.200q", off, k.Type, k.Data, ev.Type, ev.Data)
			}
			delete(byOff, off)
		}
		if len(byOff) != 0 {
			t.Fatalf("handed on %d events Next did not return as skipped", len(byOff))
		}
		handed += len(kept)
	}
	return handed
}

// TestKeepSkipped: events over the bound or the budget, in whole,
// one-byte and random pieces, are handed on whole with their type when
// their data fits keep (one data line or many; the type before or after
// the data, or cut at the skip; CRLF), and not when it or the type does
// not; what Next returns does not change.
func TestKeepSkipped(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	x := strings.Repeat("x", 1500)
	req := `{"jsonrpc":"2.0","id":"e1","method":"elicitation/create","params":{"message":"` + x + `"}}`
	streams := []string{
		"event: message\ndata: " + req + "\n\n",
		"data: " + req + "\n\ndata: short\n\n",
		"data: a\ndata: " + x + "\ndata: b\n\n",
		"data: " + x[:600] + "\ndata: " + x[:600] + "\r\nevent: message\r\n\r\n",
		"event: " + strings.Repeat("t", 700) + "\ndata: " + x + "\n\n",
		"event: " + strings.Repeat("t", 70) + "\nevent: message\ndata: " + x + "\n\n",
		"event: message\nevent: " + strings.Repeat("t", 70) + "\ndata: " + x + "\n\n",
		"data: " + strings.Repeat("y", 5000) + "\n\n",
		"data: " + strings.Repeat("y", 4095) + "\n\ndata: " + strings.Repeat("y", 4096) + "\n\ndata: " + strings.Repeat("y", 4097) + "\n\n",
		": " + x + "\n\ndata: after a long comment\n\n",
		"id: 1\nretry: 5\n: c\ndata:" + x + "\n\ndata: cut " + x,
	}
	handed := 0
	for _, st := range streams {
		for _, size := range []int{0, 1, -300} {
			for _, bound := range []int{0, 1000} {
				for _, budget := range []int64{0, 1200} {
					for _, keep := range []int{0, 1000, 4096, 64 << 10} {
						handed += checkKeepSkipped(t, []byte(st), cut([]byte(st), size, rng), bound, budget, keep)
					}
				}
			}
		}
	}
	if handed == 0 {
		t.Fatal("no skipped event handed on")
	}
}

// FuzzKeepSkipped: on any stream in any chunking, with a small bound or
// budget, what KeepSkipped hands on is the unbounded reader's type and
// data for the skipped event when they fit, nothing otherwise, and Next
// returns what it returns without it.
func FuzzKeepSkipped(f *testing.F) {
	f.Add([]byte("event: message\ndata: "+strings.Repeat("q", 900)+"\n\ndata: b\n\n"), uint8(1), uint16(2000), uint64(1))
	f.Add([]byte("data: a\r\ndata: "+strings.Repeat("q", 900)+"\r\n\r\nevent: x\r\n\r\n"), uint8(2), uint16(300), uint64(7))
	f.Add([]byte("event: "+strings.Repeat("e", 100)+"\ndata: "+strings.Repeat("q", 900)+"\n\n"), uint8(3), uint16(4000), uint64(0))
	f.Fuzz(func(t *testing.T, stream []byte, mode uint8, keep uint16, seed uint64) {
		bound := 0
		if mode&1 != 0 {
			bound = 700
		}
		var budget int64
		if mode&2 != 0 {
			budget = 1500
		}
		size := -(1 + int(seed%64))
		checkKeepSkipped(t, stream, cut(stream, size, rand.New(rand.NewPCG(seed, 0))), bound, budget, int(keep))
	})
}
