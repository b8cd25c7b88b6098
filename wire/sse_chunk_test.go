package wire

import (
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcpdiag/mcpdiag/internal/ssetest"
)

// cut splits s into chunks: whole (size 0), of size bytes, or of random
// sizes up to SSEReadSize.
func cut(s []byte, size int, rng *rand.Rand) [][]byte {
	var out [][]byte
	for len(s) > 0 {
		n := size
		switch {
		case size == 0:
			n = SSEReadSize
		case size < 0:
			n = 1 + rng.IntN(min(-size, SSEReadSize))
		}
		n = min(n, len(s))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// scannedEnds is what an SSEScanner of its own finds: the End of every
// SSEEnd with data, fed the same chunks.
func scannedEnds(chunks [][]byte) []int64 {
	var sc SSEScanner
	var ends []int64
	for _, c := range chunks {
		sc.Feed(c)
		for t := sc.Next(); t != nil; t = sc.Next() {
			if t.Kind == SSEEnd && t.HasData {
				ends = append(ends, t.End)
			}
		}
	}
	return ends
}

// TestChunkReaderMatchesReader: a reader over a chunk source returns what a
// pooled reader over the same bytes read in the same pieces returns
// (events, offsets, errors, counters; with an event bound, with a budget
// tight enough to refuse events), stream after stream, and tells the source
// the same event ends a scanner of its own finds, Drain included.
func TestChunkReaderMatchesReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	big := strings.Repeat("x", 200<<10)
	streams := []string{
		"data: a\n\n",
		": c\n\nid: 1\nevent: message\ndata: {\"a\":1}\ndata: more\n\n",
		"data: " + big + "\n\ndata: short\n\n",
		"data: " + big[:70<<10] + "\ndata: " + big[:1000] + "\n\ndata: z\n\n",
		"\ufeffdata: bom\r\n\r\ndata: cut",
		"data: " + big[:50<<10] + "\n", // unterminated large event
		"retry: 10\nid: x\x00y\ndata: q\r\rdata: r\r\n\r\n",
		"data: tail\n\ndata: " + big[:40<<10],
		strings.Repeat("data: "+big[:3000]+"\n\n: keep-alive\n\n", 40),
	}
	for round := range 2 {
		for i, st := range streams {
			for _, size := range []int{0, 1, 7, -5000, -(64 << 10)} {
				if size == 1 && len(st) > 20<<10 {
					continue
				}
				for _, bound := range []int{0, 100 << 10} {
					for _, budget := range []int64{0, 5000, 150 << 10} {
						for _, cutErr := range []error{nil, io.ErrUnexpectedEOF} {
							chunks := cut([]byte(st), size, rng)
							pull := NewPooledSSEReader(&ssetest.Pieces{Chunks: slices.Clone(chunks), Err: cutErr}, bound)
							src := &ssetest.Source{Chunks: slices.Clone(chunks), Err: cutErr}
							push := NewPooledSSEChunkReader(src, bound)
							if budget > 0 {
								pull.SetBudget(NewBudget(budget))
								push.SetBudget(NewBudget(budget))
							}
							want, got := readAllEvents(pull), readAllEvents(push)
							pull.Recycle()
							push.Drain()
							push.Recycle()
							if got != want {
								t.Fatalf("round %d stream %d (chunks %d, bound %d, budget %d, end %v): chunk reader differs:\n%.600s\nwant\n%.600s", round, i, size, bound, budget, cutErr, got, want)
							}
							if wantEnds := scannedEnds(chunks); !slices.Equal(src.Ends, wantEnds) {
								t.Fatalf("round %d stream %d (chunks %d): event ends %v, want %v", round, i, size, src.Ends, wantEnds)
							}
						}
					}
				}
			}
		}
	}
}

// TestChunkReaderDrain: a caller that stops after the first event and
// drains leaves the source read to its end and told of every event end,
// and the reader's counters as they were when it stopped.
func TestChunkReaderDrain(t *testing.T) {
	stream := []byte("data: one\n\n: c\n\ndata: two\n\nid: 3\ndata: three\n\ndata: cut")
	src := &ssetest.Source{Chunks: cut(stream, 5, nil)}
	rd := NewPooledSSEChunkReader(src, 0)
	ev, err := rd.Next()
	if err != nil || string(ev.Data) != "one" {
		t.Fatalf("first event %q, %v", ev.Data, err)
	}
	bytesBefore, commentsBefore := rd.Bytes, rd.Comments
	rd.Drain()
	if len(src.Chunks) != 0 {
		t.Fatalf("%d chunks left after Drain", len(src.Chunks))
	}
	if want := scannedEnds(cut(stream, 5, nil)); !slices.Equal(src.Ends, want) || len(want) != 3 {
		t.Fatalf("ends %v, want %v (3 events)", src.Ends, want)
	}
	if rd.Bytes != bytesBefore || rd.Comments != commentsBefore {
		t.Fatalf("Drain changed the counters: bytes %d → %d, comments %d → %d", bytesBefore, rd.Bytes, commentsBefore, rd.Comments)
	}
	rd.Recycle()
}

// FuzzChunkReader: on any stream in any chunking up to SSEReadSize, with
// or without a small bound and a tight budget, the chunk reader returns
// what the pooled reader returns over the same pieces, and reports the
// event ends a scanner finds.
func FuzzChunkReader(f *testing.F) {
	f.Add([]byte("data: a\n\nid: 1\ndata: b\r\n\r\n: c\n\ndata: cut"), uint8(0), uint64(1))
	f.Add([]byte("\ufeffevent: x\ndata: "+strings.Repeat("y", 3000)+"\n\n"), uint8(3), uint64(7))
	f.Fuzz(func(t *testing.T, stream []byte, mode uint8, seed uint64) {
		bound := 0
		if mode&1 != 0 {
			bound = 700
		}
		size := -(1 + int(seed%64))
		chunks := cut(stream, size, rand.New(rand.NewPCG(seed, 0)))
		pull := NewPooledSSEReader(&ssetest.Pieces{Chunks: slices.Clone(chunks)}, bound)
		src := &ssetest.Source{Chunks: slices.Clone(chunks)}
		push := NewPooledSSEChunkReader(src, bound)
		if mode&2 != 0 {
			pull.SetBudget(NewBudget(1500))
			push.SetBudget(NewBudget(1500))
		}
		want, got := readAllEvents(pull), readAllEvents(push)
		pull.Recycle()
		push.Drain()
		push.Recycle()
		if got != want {
			t.Fatalf("chunk reader differs on %q (mode %d):\n%s\nwant\n%s", stream, mode, got, want)
		}
		if wantEnds := scannedEnds(chunks); !slices.Equal(src.Ends, wantEnds) {
			t.Fatalf("event ends %v, want %v", src.Ends, wantEnds)
		}
	})
}

// TestChunkReaderLendsOneLineEvents: the data of an event of one data line
// that lies whole in the chunk the scanner holds is that chunk's bytes,
// not a copy, while the reader holds and reserves after every event what
// the pooled reader over the same pieces does; an event of two data lines,
// or whose blank line is in the next chunk, is assembled as before (the
// source poisons a chunk once the next is asked for).
func TestChunkReaderLendsOneLineEvents(t *testing.T) {
	big := strings.Repeat("x", 16<<10)
	stream := []byte("data: {\"a\":\"" + big + "\"}\n\ndata: one\ndata: two\n\ndata: split\n")
	chunks := [][]byte{stream[:len(big)+16], stream[len(big)+16 : len(stream)-1], stream[len(stream)-1:], []byte("\ndata: " + big + "\n\n")}
	src := &ssetest.Source{Chunks: slices.Clone(chunks)}
	push := NewPooledSSEChunkReader(src, 0)
	pull := NewPooledSSEReader(&ssetest.Pieces{Chunks: slices.Clone(chunks)}, 0)
	b1, b2 := NewBudget(1<<20), NewBudget(1<<20)
	push.SetBudget(b1)
	pull.SetBudget(b2)
	for i, want := range []string{"{\"a\":\"" + big + "\"}", "one\ntwo", "split", big} {
		got, err := push.Next()
		ref, rerr := pull.Next()
		if err != nil || rerr != nil || string(got.Data) != want || string(ref.Data) != want {
			t.Fatalf("event %d: %.40q (%v), pooled reader %.40q (%v), want %.40q", i, got.Data, err, ref.Data, rerr, want)
		}
		if push.Held() != pull.Held() || b1.InUse() != b2.InUse() {
			t.Fatalf("event %d: the chunk reader holds %d (budget %d), the pooled reader %d (budget %d)", i, push.Held(), b1.InUse(), pull.Held(), b2.InUse())
		}
		lent := within(got.Data, src.Lent())
		if wantLent := i == 0 || i == 3; lent != wantLent {
			t.Fatalf("event %d: data lent from the chunk %v, want %v", i, lent, wantLent)
		}
		if cap(got.Data) != len(got.Data) && lent {
			t.Fatalf("event %d: lent data has room past it (cap %d, len %d): an append would write into the chunk", i, cap(got.Data), len(got.Data))
		}
	}
	push.Recycle()
	pull.Recycle()
	if b1.InUse() != 0 {
		t.Fatalf("%d bytes still reserved after Recycle", b1.InUse())
	}
}

// within reports whether b's bytes lie in chunk's.
func within(b, chunk []byte) bool {
	if len(b) == 0 || len(chunk) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&chunk[0]))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(chunk))
}
