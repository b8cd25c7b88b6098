package wire

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// eventSource is what SSEReader and the oracle have in common.
type eventSource interface {
	Next() (Event, error)
}

// trace reads src to its end, past skipped events, and describes every
// event, skipped event and the end, with spans and counters.
func trace(src eventSource, counters func() string) string {
	var b strings.Builder
	for range 1 << 16 {
		ev, err := src.Next()
		var sk *SkippedEventError
		var ue *UnterminatedEventError
		switch {
		case errors.As(err, &sk):
			fmt.Fprintf(&b, "skipped %v @%d+%d limit %d head %q; ", sk.Cause, sk.Offset, sk.Length, sk.Limit, sk.Head)
			continue
		case errors.As(err, &ue):
			fmt.Fprintf(&b, "unterminated @%d skipped=%v data %q; ", ue.Offset, ue.Skipped, ue.Data)
		case err == io.EOF:
			b.WriteString("EOF; ")
		case err != nil:
			fmt.Fprintf(&b, "err %v; ", err)
		default:
			fmt.Fprintf(&b, "event %q %q id=%q/%v retry=%d/%v @%d+%d; ", ev.Type, ev.Data, ev.ID, ev.HasID, ev.Retry, ev.HasRetry, ev.Offset, ev.Length)
			continue
		}
		// A second call after the end says the same, or EOF.
		_, err2 := src.Next()
		fmt.Fprintf(&b, "then %v; ", err2 == io.EOF)
		break
	}
	b.WriteString(counters())
	return b.String()
}

func newTrace(r io.Reader, max int) string {
	rd := NewSSEReader(r, max)
	return trace(rd, func() string { return fmt.Sprintf("comments=%d bytes=%d bom=%v", rd.Comments, rd.Bytes, rd.BOM) })
}

func oracleTrace(r io.Reader, max int) string {
	rd := newOracleReader(r, max)
	return trace(rd, func() string { return fmt.Sprintf("comments=%d bytes=%d bom=%v", rd.Comments, rd.Bytes, rd.BOM) })
}

// diffCorpus holds the cases the differential fuzz target starts from: the
// WHATWG edge cases, split CRLFs, BOMs, oversized events and lines, and
// streams cut at every kind of place.
var diffCorpus = []string{
	"", "data: a\n\n", "data: a\r\n\r\n", "data: a\r\rdata: b\r\r", "data: a\r\n\ndata: b\r\r\n",
	"\xef\xbb\xbfdata: a\n\n", "\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n", "\xef\xbb", "\xef\xbb\n", "\xef\xbbdata:x\n\n", "\xef\n\ndata:y\n\n",
	"data:x\n\n", "data:  x\n\n", "data\n\n", "data:\n\n", "data: a\ndata: b\ndata:\n\n", ": keep-alive\ndata: a\n: x\n\n",
	"id: 1\n: c\n\n", "event: ping\ndata: a\n\n", "id: 7\ndata: a\n\n", "id: a\x00b\ndata: a\n\n", "id: 1\nid: a\x00b\ndata: a\n\n",
	"retry: 1500\ndata: a\n\n", "retry: 15x\ndata: a\n\nretry:\ndata: b\n\n", "retry: 99999999999999999999999999\ndata: a\n\n",
	"foo: bar\ndata: a\n\n", "event: x\n\ndata: a\n\n", "\n\n\r\ndata: a\n\n", "data: a\n\ndata: b\n", "data: a\n\ndata: b", ": ping",
	"data: a\n\n: ping", "data", "data:", "id: 5", ": " + strings.Repeat("c", 300), "data: " + strings.Repeat("x", 300),
	"data: " + strings.Repeat("x", 300) + "\n\ndata: b\n\n", ": " + strings.Repeat("c", 300) + "\r\n\r\ndata: b\r\n\r\n",
	"data: a\n" + strings.Repeat("data: 0123456789\n", 30) + "\nid: 2\ndata: z\n\n", "id: " + strings.Repeat("i", 300) + "\n\ndata: b\n\n",
	"data:" + strings.Repeat("y", 250) + "\r\n\r\n", "data:" + strings.Repeat("y", 249) + "\n\n", "data:" + strings.Repeat("y", 250) + "\n\n",
	"datax: 1\ndata\n\n", "dat\ndata :x\n\n", "\rdata: a\r\r\n\n",
}

// FuzzSSEReaderOracle: the reader rebuilt on SSEScanner reports what the
// reader it replaced (the oracle, sse_oracle_test.go) reported, on any
// input, read whole or in any chunking, with a small bound and the default.
func FuzzSSEReaderOracle(f *testing.F) {
	for _, s := range diffCorpus {
		f.Add(s, uint64(3))
	}
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		for _, max := range []int{0, 256} {
			for name, mk := range chunkings(seed) {
				got, want := newTrace(mk(s), max), oracleTrace(mk(s), max)
				if got != want {
					t.Fatalf("%s reads, bound %d, on %q:\n got %s\nwant %s", name, max, s, got, want)
				}
			}
		}
	})
}

// TestSSEReaderOracleCorpus runs the differential cases in every test run,
// with and without a fuzzing engine.
func TestSSEReaderOracleCorpus(t *testing.T) {
	for i, s := range diffCorpus {
		for _, max := range []int{0, 64, 256} {
			for name, mk := range chunkings(uint64(i)) {
				if got, want := newTrace(mk(s), max), oracleTrace(mk(s), max); got != want {
					t.Errorf("%s reads, bound %d, on %q:\n got %s\nwant %s", name, max, s, got, want)
				}
			}
		}
	}
}
