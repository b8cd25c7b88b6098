package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcpdiag/mcpdiag/internal/ssetest"
)

// readAllEvents reads every event of rd, one line per event or error, with
// the data copied out as the contract asks (it is only valid until Next).
func readAllEvents(rd *SSEReader) string {
	var b strings.Builder
	for range 10000 {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		var ue *UnterminatedEventError
		var se *SkippedEventError
		switch {
		case errors.As(err, &ue):
			fmt.Fprintf(&b, "unterminated off=%d skipped=%v data=%q\n", ue.Offset, ue.Skipped, ue.Data)
			continue
		case errors.As(err, &se):
			fmt.Fprintf(&b, "skipped off=%d len=%d head=%q cause=%v\n", se.Offset, se.Length, se.Head, se.Cause)
			continue
		case err != nil:
			fmt.Fprintf(&b, "error %v\n", err)
			return b.String()
		}
		fmt.Fprintf(&b, "event off=%d len=%d type=%q id=%q/%v retry=%d/%v data=%q last=%q\n", ev.Offset, ev.Length, ev.Type, ev.ID, ev.HasID, ev.Retry, ev.HasRetry, ev.Data, lastID(rd))
	}
	last, hasLast := rd.LastEventID()
	retry, hasRetry := rd.Retry()
	fmt.Fprintf(&b, "bytes=%d comments=%d bom=%v last=%q/%v retry=%d/%v\n", rd.Bytes, rd.Comments, rd.BOM, last, hasLast, retry, hasRetry)
	return b.String()
}

// TestPooledSSEReaderMatches: a pooled reader returns exactly what a plain
// one returns (events, offsets, errors, counters), on small and large
// events, in whole and one-byte reads, with an event bound and with a
// budget that has room for both or for neither, stream after stream — the pools hand buffers that held other
// streams' bytes to the next reader, which must not show through.
func TestPooledSSEReaderMatches(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	huge := strings.Repeat("y", 3<<20)
	streams := []string{
		"data: a\n\n",
		": c\n\nid: 1\nevent: message\ndata: {\"a\":1}\ndata: more\n\n",
		"data: " + big + "\n\ndata: short\n\n",
		"data: " + big[:70<<10] + "\ndata: " + big[:1000] + "\n\ndata: z\n\n",
		"data: " + huge + "\n\ndata: after\n\n",
		"\ufeffdata: bom\r\n\r\ndata: cut",
		"data: " + big + "\n", // unterminated large event
		"retry: 10\nid: x\x00y\ndata: q\n\n",
		"data: tail\n\ndata: " + big[:40<<10],
	}
	for round := range 3 {
		for i, st := range streams {
			for _, oneByte := range []bool{false, true} {
				if oneByte && len(st) > 100<<10 {
					continue
				}
				for _, bound := range []int{0, 100 << 10} {
					for _, budget := range []int64{0, 150 << 10} {
						src := func() io.Reader {
							if oneByte {
								return iotest.OneByteReader(strings.NewReader(st))
							}
							// A reader of unknown length: the pooled 32 KiB
							// read buffer.
							return io.MultiReader(bytes.NewReader([]byte(st)))
						}
						plain, pooled := NewSSEReader(src(), bound), NewPooledSSEReader(src(), bound)
						if budget > 0 {
							plain.SetBudget(NewBudget(budget))
							pooled.SetBudget(NewBudget(budget))
						}
						want, got := readAllEvents(plain), readAllEvents(pooled)
						pooled.Recycle()
						if got != want {
							t.Fatalf("round %d stream %d (1-byte %v, bound %d, budget %d): pooled reader differs:\n%.600s\nwant\n%.600s", round, i, oneByte, bound, budget, got, want)
						}
					}
				}
			}
		}
	}
}

// FuzzPooledSSEReader: on any stream, read whole or in 1-byte reads, with
// or without a small event bound, the pooled reader returns what the plain
// one returns — also after the pools held other streams' bytes. (Not with
// a tight budget: there the pooled reader, which reserves its rounded
// buffers, may skip an event the plain one keeps; see NewPooledSSEReader.)
func FuzzPooledSSEReader(f *testing.F) {
	f.Add([]byte("data: a\n\nid: 1\ndata: b\r\n\r\n: c\n\ndata: cut"), uint8(0))
	f.Add([]byte("\ufeffevent: x\ndata: "+strings.Repeat("y", 3000)+"\n\n"), uint8(3))
	f.Fuzz(func(t *testing.T, stream []byte, mode uint8) {
		bound := 0
		if mode&1 != 0 {
			bound = 700
		}
		src := func() io.Reader {
			if mode&4 != 0 {
				return iotest.OneByteReader(bytes.NewReader(stream))
			}
			return io.MultiReader(bytes.NewReader(stream))
		}
		for range 2 {
			plain, pooled := NewSSEReader(src(), bound), NewPooledSSEReader(src(), bound)
			want, got := readAllEvents(plain), readAllEvents(pooled)
			pooled.Recycle()
			if got != want {
				t.Fatalf("pooled reader differs on %q (mode %d):\n%s\nwant\n%s", stream, mode, got, want)
			}
		}
	})
}

// TestPooledSSEReaderBudgetEdge pins the one difference: a pooled reader
// reserves the power-of-two buffer it holds, so a budget that fits a plain
// reader's exact buffer may refuse the pooled one's, and the event is then
// read through and reported, never delivered cut.
func TestPooledSSEReaderBudgetEdge(t *testing.T) {
	stream := "data: " + strings.Repeat("x", 1400) + "\n\ndata: next\n\n"
	plain, pooled := NewSSEReader(strings.NewReader(stream), 0), NewPooledSSEReader(io.MultiReader(strings.NewReader(stream)), 0)
	plain.SetBudget(NewBudget(1500))
	pooled.SetBudget(NewBudget(1500))
	if ev, err := plain.Next(); err != nil || len(ev.Data) != 1400 {
		t.Fatalf("plain reader: %d bytes, %v", len(ev.Data), err)
	}
	_, err := pooled.Next()
	var se *SkippedEventError
	if !errors.As(err, &se) || !errors.Is(se.Cause, ErrBudgetExhausted) {
		t.Fatalf("pooled reader: %v, want the event skipped for the budget", err)
	}
	if ev, err := pooled.Next(); err != nil || string(ev.Data) != "next" {
		t.Fatalf("pooled reader after the skip: %q, %v", ev.Data, err)
	}
	pooled.Recycle()
}

// sliceSource is an SSEChunkSource over fixed chunks that allocates
// nothing itself, so that a test can count the reader's own allocations.
type sliceSource struct {
	chunks [][]byte
}

func (s *sliceSource) NextChunk() ([]byte, error) {
	if len(s.chunks) == 0 {
		return nil, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}

func (s *sliceSource) EventEnd(int64) {}

// TestPooledReaderRecyclesItsDataAtTheEnd: a pooled reader that read its
// stream to the end gives its event data buffer back to the pool with
// Recycle, so that stream after stream of 16 KiB events allocates no new
// 16 KiB buffer (the end of the stream dropped the buffer instead: every
// stream allocated its own, the garbage the proxy's SSE profile showed).
// The garbage collector is off during the count, so that it does not
// empty the pools.
func TestPooledReaderRecyclesItsDataAtTheEnd(t *testing.T) {
	if raceEnabled {
		t.Skip("with the race detector, sync.Pool drops a share of its buffers on purpose")
	}
	data := strings.Repeat("d", 16<<10-100)
	stream := []byte("id: 1\ndata: " + data + "\n\nid: 2\ndata: " + data + "\n\n")
	chunks := [][]byte{stream[:10000], stream[10000:20000], stream[20000:]}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for _, tc := range []struct {
		name string
		open func() *SSEReader
	}{
		{"chunks", func() *SSEReader { return NewPooledSSEChunkReader(&sliceSource{chunks: chunks}, 0) }},
		{"reads", func() *SSEReader { return NewPooledSSEReader(&ssetest.Pieces{Chunks: chunks}, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := func() {
				rd := tc.open()
				n := 0
				for {
					ev, err := rd.Next()
					if err == io.EOF {
						break
					}
					if err != nil || len(ev.Data) != len(data) {
						t.Fatalf("event %d: %d bytes, %v", n, len(ev.Data), err)
					}
					n++
				}
				if n != 2 {
					t.Fatalf("%d events, want 2", n)
				}
				rd.Recycle()
			}
			read() // fills the pools
			const runs = 100
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				read()
			}
			runtime.ReadMemStats(&after)
			if per := (after.TotalAlloc - before.TotalAlloc) / runs; per >= 8<<10 {
				t.Fatalf("%d bytes allocated per stream: the 16 KiB data buffer was not recycled", per)
			}
		})
	}
}

// TestPooledChunkReaderAllocs: a pooled chunk reader, read to the end and
// recycled, costs one allocation per stream (its id field's few bytes):
// Recycle gives the reader itself back (about 500 bytes, which
// NewPooledSSEChunkReader allocated for every event stream the recorder
// classified), and the pool holds its data buffer without a new *[]byte
// (3 allocations per stream before). The garbage collector is off during the count, so
// that it does not empty the pools.
func TestPooledChunkReaderAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("with the race detector, sync.Pool drops a share of its buffers on purpose")
	}
	data := strings.Repeat("d", 16<<10-100)
	stream := []byte("id: 1\ndata: " + data + "\n\nid: 2\ndata: " + data + "\n\n")
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	src := &sliceSource{}
	chunks := [][]byte{stream[:10000], stream[10000:20000], stream[20000:]}
	read := func() {
		src.chunks = chunks
		rd := NewPooledSSEChunkReader(src, 0)
		n := 0
		for {
			ev, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil || len(ev.Data) != len(data) || ev.ID != strconv.Itoa(n+1) {
				t.Fatalf("event %d: %d bytes, id %q, %v", n, len(ev.Data), ev.ID, err)
			}
			n++
		}
		if n != 2 {
			t.Fatalf("%d events, want 2", n)
		}
		rd.Recycle()
	}
	read() // fills the pools
	if allocs := testing.AllocsPerRun(100, read); allocs > 1 {
		t.Errorf("%.0f allocations per stream, want 1 (the id field)", allocs)
	}
}

// TestLentEventsHoldNoDataBuffer: a chunk reader whose events are each one
// data line lying whole in its chunk lends every line and never copies
// one, so it holds no data buffer, while it reserves from its budget what
// the buffer would have been (the same as a reader that copies: what
// --classify-memory counts is unchanged). Before, the buffer was taken (a
// 16 KiB one from the pools here) at the first event and held to the
// end: 16 KiB of live heap per stream being classified, for nothing.
// A line that must be copied after all (a second data line, the next
// chunk asked for before the event's end) still gets it.
func TestLentEventsHoldNoDataBuffer(t *testing.T) {
	data := strings.Repeat("d", 16<<10-100)
	ev := "id: 1\ndata: " + data + "\n\n"
	for _, tc := range []struct {
		name   string
		chunks []string
		buffer bool // the reader needs its data buffer
	}{
		{"one event per chunk", []string{ev, ev, ev, ev}, false},
		{"two lines", []string{"data: a\ndata: " + data + "\n\n"}, true},
		{"the event's end in the next chunk", []string{ev[:len(ev)-1], ev[len(ev)-1:]}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &sliceSource{}
			for _, c := range tc.chunks {
				src.chunks = append(src.chunks, []byte(c))
			}
			b := NewBudget(1 << 20)
			rd := NewPooledSSEChunkReader(src, 0)
			rd.SetBudget(b)
			events := 0
			for {
				_, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				events++
				if tc.buffer != (cap(rd.data) > 0) {
					t.Errorf("event %d: a data buffer of %d bytes (want a buffer: %v)", events, cap(rd.data), tc.buffer)
				}
				if rd.Held() < 16<<10 || b.InUse() != rd.Held() {
					t.Errorf("event %d: %d bytes held, %d reserved: want the buffer's 16 KiB and more, all reserved", events, rd.Held(), b.InUse())
				}
			}
			if events == 0 {
				t.Fatal("no events")
			}
			rd.Recycle()
			if b.InUse() != 0 {
				t.Errorf("%d bytes still reserved after Recycle", b.InUse())
			}
		})
	}
}
