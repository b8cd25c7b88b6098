package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
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
		fmt.Fprintf(&b, "event off=%d len=%d type=%q id=%q/%v retry=%d/%v data=%q\n", ev.Offset, ev.Length, ev.Type, ev.ID, ev.HasID, ev.Retry, ev.HasRetry, ev.Data)
	}
	fmt.Fprintf(&b, "bytes=%d comments=%d bom=%v\n", rd.Bytes, rd.Comments, rd.BOM)
	return b.String()
}

// TestPooledSSEReaderMatches: a pooled reader returns exactly what a plain
// one returns (events, offsets, errors, counters), on small and large
// events, in whole and one-byte reads, with an event bound and with a
// budget, stream after stream — the pools hand buffers that held other
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
