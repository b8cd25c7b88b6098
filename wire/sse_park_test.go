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

// pausedSource hands its chunks with a pause (ErrSSEPaused) after each, as
// the recorder's forwarding goroutine does: at a pause the chunk lent last
// is poisoned, as the forwarding loop reads its next piece into it.
type pausedSource struct {
	ssetest.Source
	pause bool
}

func (s *pausedSource) NextChunk() ([]byte, error) {
	if s.pause {
		s.pause = false
		for i := range s.Lent() {
			s.Lent()[i] = 0xff
		}
		return nil, ErrSSEPaused
	}
	s.pause = true
	return s.Source.NextChunk()
}

// readPaused reads the events of a paused source as readAllEvents does,
// and at each pause parks the reader and resumes it when park is set and
// Park allows it. It returns what readAllEvents prints and the parks.
func readPaused(src *pausedSource, bound int, budget int64, park bool) (string, int) {
	rd := NewPooledSSEChunkReader(src, bound)
	var b *Budget
	if budget > 0 {
		b = NewBudget(budget)
		rd.SetBudget(b)
	}
	var out strings.Builder
	parks := 0
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
					parks++
					rd = ResumeSSEChunkReader(src, bound, p)
					if b != nil {
						rd.SetBudget(b)
					}
				}
			}
			continue
		case errors.As(err, &ue):
			fmt.Fprintf(&out, "unterminated off=%d skipped=%v data=%q\n", ue.Offset, ue.Skipped, ue.Data)
			continue
		case errors.As(err, &se):
			fmt.Fprintf(&out, "skipped off=%d len=%d head=%q cause=%v\n", se.Offset, se.Length, se.Head, se.Cause)
			continue
		case err != nil:
			fmt.Fprintf(&out, "error %v\n", err)
			return out.String(), parks
		}
		fmt.Fprintf(&out, "event off=%d len=%d type=%q id=%q/%v retry=%d/%v data=%q last=%q\n", ev.Offset, ev.Length, ev.Type, ev.ID, ev.HasID, ev.Retry, ev.HasRetry, ev.Data, lastID(rd))
	}
	last, hasLast := rd.LastEventID()
	retry, hasRetry := rd.Retry()
	fmt.Fprintf(&out, "bytes=%d comments=%d bom=%v last=%q/%v retry=%d/%v\n", rd.Bytes, rd.Comments, rd.BOM, last, hasLast, retry, hasRetry)
	rd.Drain() // (the stream was read to its end: the source has no more)
	rd.Recycle()
	return out.String(), parks
}

// checkPaused: a chunk reader whose source pauses after every chunk (its
// chunk poisoned at the pause), parked and resumed at every pause between
// events or not, returns what the pooled reader returns over the same
// pieces and tells the source the event ends a scanner finds.
func checkPaused(t *testing.T, stream []byte, chunks [][]byte, bound int, budget int64, cutErr error) int {
	t.Helper()
	pull := NewPooledSSEReader(&ssetest.Pieces{Chunks: slices.Clone(chunks), Err: cutErr}, bound)
	if budget > 0 {
		pull.SetBudget(NewBudget(budget))
	}
	want := readAllEvents(pull)
	pull.Recycle()
	parked := 0
	for _, park := range []bool{false, true} {
		src := &pausedSource{Source: ssetest.Source{Chunks: slices.Clone(chunks), Err: cutErr}}
		got, parks := readPaused(src, bound, budget, park)
		if got != want {
			t.Fatalf("paused reader (park %v) differs on %.300q:\n%.600s\nwant\n%.600s", park, stream, got, want)
		}
		if wantEnds := scannedEnds(chunks); !slices.Equal(src.Ends, wantEnds) {
			t.Fatalf("paused reader (park %v): event ends %v, want %v", park, src.Ends, wantEnds)
		}
		parked += parks
	}
	return parked
}

// TestPausedReaderParks: the streams of TestChunkReaderMatchesReader, in
// whole, one-byte and random pieces, with and without a bound and a
// budget, cut or not, read through pauses; and a reader parks between
// events (a stream of small events in one-byte pieces parks often).
func TestPausedReaderParks(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	big := strings.Repeat("x", 200<<10)
	streams := []string{
		"data: a\n\n",
		": c\n\nid: 1\nevent: message\ndata: {\"a\":1}\ndata: more\n\n",
		"data: " + big + "\n\ndata: short\n\n",
		"\ufeffdata: bom\r\n\r\ndata: cut",
		"\ufeff",
		"\xef\xbb",
		"retry: 10\nid: x\x00y\ndata: q\r\rdata: r\r\n\r\n",
		"data: a\r\r\ndata: b\r\n\r\n\r\ndata: c\r\r",
		"data: tail\n\ndata: " + big[:40<<10],
		strings.Repeat("data: "+big[:3000]+"\n\n: keep-alive\n\n", 10),
	}
	parks := 0
	for i, st := range streams {
		for _, size := range []int{0, 1, 7, -5000} {
			if size == 1 && len(st) > 20<<10 {
				continue
			}
			for _, bound := range []int{0, 100 << 10} {
				for _, budget := range []int64{0, 5000} {
					for _, cutErr := range []error{nil, io.ErrUnexpectedEOF} {
						_ = i
						parks += checkPaused(t, []byte(st), cut([]byte(st), size, rng), bound, budget, cutErr)
					}
				}
			}
		}
	}
	if parks == 0 {
		t.Fatal("no reader parked")
	}
}

// FuzzPausedReader: on any stream in any chunking, a chunk reader read
// through pauses, parked and resumed between events, returns what the
// pooled reader returns and reports the event ends a scanner finds.
func FuzzPausedReader(f *testing.F) {
	f.Add([]byte("data: a\n\nid: 1\ndata: b\r\n\r\n: c\n\ndata: cut"), uint8(0), uint64(1))
	f.Add([]byte("\ufeffevent: x\ndata: "+strings.Repeat("y", 3000)+"\n\n"), uint8(3), uint64(7))
	f.Add([]byte("data: a\r\r\ndata: b\r\n\r\n"), uint8(0), uint64(0))
	f.Fuzz(func(t *testing.T, stream []byte, mode uint8, seed uint64) {
		bound := 0
		if mode&1 != 0 {
			bound = 700
		}
		var budget int64
		if mode&2 != 0 {
			budget = 1500
		}
		size := -(1 + int(seed%64))
		checkPaused(t, stream, cut(stream, size, rand.New(rand.NewPCG(seed, 0))), bound, budget, nil)
	})
}

// lastID is rd's last event id and retry as a test prints them after an
// event.
func lastID(rd *SSEReader) string {
	id, ok := rd.LastEventID()
	ms, rok := rd.Retry()
	return fmt.Sprintf("%s/%v retry %d/%v", id, ok, ms, rok)
}
