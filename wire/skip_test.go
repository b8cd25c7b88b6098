package wire

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// seededChunks returns at most a random 1..maxChunk bytes per Read, from a
// seeded source, so a failure replays.
type seededChunks struct {
	s   string
	rng *rand.Rand
	max int
}

func (c *seededChunks) Read(p []byte) (int, error) {
	if len(c.s) == 0 {
		return 0, io.EOF
	}
	k := min(1+c.rng.IntN(c.max), len(c.s), len(p))
	copy(p, c.s[:k])
	c.s = c.s[k:]
	return k, nil
}

// chunkings are the ways the same bytes arrive in the tests: in one read,
// one byte at a time, in 3-byte reads and in seeded random chunks.
func chunkings(seed uint64) map[string]func(string) io.Reader {
	return map[string]func(string) io.Reader{
		"whole":   func(s string) io.Reader { return strings.NewReader(s) },
		"bytes":   func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"chunk-3": func(s string) io.Reader { return &chunkReader{s: s, n: 3} },
		"random":  func(s string) io.Reader { return &seededChunks{s: s, rng: rand.New(rand.NewPCG(seed, 1)), max: 97} },
	}
}

var crlfSpan = regexp.MustCompile(`@(\d+)\+\d+`)

// TestSSEReaderSkipsOversizedEvent: an event over the bound is read through
// to its end and reported with its exact span and the start of its data,
// and the reader goes on with the next event; a block without data (a
// huge comment) is not an event; a stream cut inside an oversized event is
// an unterminated event. The same whatever the chunking.
func TestSSEReaderSkipsOversizedEvent(t *testing.T) {
	x := strings.Repeat("x", 100)
	skipped := func(off, n int, head string) string {
		return fmt.Sprintf("skipped %v @%d+%d head %q", ErrEventTooLarge, off, n, head)
	}
	tests := []struct {
		name, in string
		want     []string
		end      string
		comments int
	}{
		{"one big event between two", "data: ok\n\ndata: " + x + "\n\ndata: after\n\n",
			[]string{"event {Type: Data:ok ID: HasID:false Retry:0 HasRetry:false} @0+10",
				skipped(10, 108, x),
				"event {Type: Data:after ID: HasID:false Retry:0 HasRetry:false} @118+13"}, "", 0},
		{"big multi-line event with fields", "data: a\ndata:" + x + "\nid: 9\n: c\nevent: e\n\ndata: b\n\n",
			[]string{skipped(0, 134, "a\n"+x),
				"event {Type: Data:b ID: HasID:false Retry:0 HasRetry:false} @134+9"}, "", 1},
		{"CRLF", "data: " + x + "\r\n\r\ndata: b\r\n\r\n",
			[]string{skipped(0, 110, x),
				"event {Type: Data:b ID: HasID:false Retry:0 HasRetry:false} @110+11"}, "", 0},
		{"bare CR", "data: " + x + "\r\rdata: b\r\r",
			[]string{skipped(0, 108, x),
				"event {Type: Data:b ID: HasID:false Retry:0 HasRetry:false} @108+9"}, "", 0},
		{"many small lines add up", strings.Repeat("data: 0123456789\n", 8) + "\ndata: z\n\n",
			[]string{skipped(0, 137, strings.TrimSuffix(strings.Repeat("0123456789\n", 8), "\n")),
				"event {Type: Data:z ID: HasID:false Retry:0 HasRetry:false} @137+9"}, "", 0},
		{"huge comment is no event", ": " + x + "\n\ndata: b\n\n",
			[]string{"event {Type: Data:b ID: HasID:false Retry:0 HasRetry:false} @104+9"}, "", 1},
		{"huge id without data is no event", "id: " + x + "\n\ndata: b\n\n",
			[]string{"event {Type: Data:b ID: HasID:false Retry:0 HasRetry:false} @106+9"}, "", 0},
		{"cut inside a big event", "data: ok\n\ndata: " + x,
			[]string{"event {Type: Data:ok ID: HasID:false Retry:0 HasRetry:false} @0+10"}, `unterminated @10 skipped=true data ""`, 0},
		{"big event without its blank line", "data: " + x + "\n",
			nil, `unterminated @0 skipped=true data ""`, 0},
		{"the head is capped", "data: " + strings.Repeat("y", 10000) + "\n\n",
			[]string{skipped(0, 10008, strings.Repeat("y", skippedHead))}, "", 0},
	}
	for _, tt := range tests {
		for rname, mk := range chunkings(7) {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				items, comments, err := readThrough(mk(tt.in), 64, nil)
				want := tt.want
				if strings.Contains(tt.in, "\r\n") && rname != "whole" {
					// A span whose CRLF's LF has not arrived yet stops at
					// the CR (Event.Length): compare the rest.
					for i := range items {
						items[i] = crlfSpan.ReplaceAllString(items[i], "@$1")
					}
					want = slices.Clone(want)
					for i := range want {
						want[i] = crlfSpan.ReplaceAllString(want[i], "@$1")
					}
				}
				end := ""
				if err != nil {
					end = err.Error()
				}
				if fmt.Sprintf("%q", items) != fmt.Sprintf("%q", want) || end != tt.end || comments != tt.comments {
					t.Fatalf("got %q end %q comments %d\nwant %q end %q comments %d", items, end, comments, want, tt.end, tt.comments)
				}
			})
		}
	}
}

// TestSSEReaderBudget: readers that share a budget reserve what they hold;
// an event the budget refuses is read through (and named as refused, with
// the budget's size and use), and once the other reader releases, the next
// event fits again. Nothing stays reserved after Release.
func TestSSEReaderBudget(t *testing.T) {
	b := NewBudget(2000)
	ev := "data: " + strings.Repeat("a", 1200) + "\n\n"
	ra := NewSSEReader(strings.NewReader(ev), 0)
	ra.SetBudget(b)
	if _, err := ra.Next(); err != nil {
		t.Fatal(err)
	}
	if ra.Held() < 1200 || b.InUse() != ra.Held() {
		t.Fatalf("reader A holds %d, budget in use %d", ra.Held(), b.InUse())
	}
	rb := NewSSEReader(strings.NewReader(ev+ev), 0)
	rb.SetBudget(b)
	_, err := rb.Next()
	var sk *SkippedEventError
	if !errors.As(err, &sk) || !errors.Is(err, ErrBudgetExhausted) || errors.Is(err, ErrEventTooLarge) ||
		sk.Limit != 2000 || sk.InUse < ra.Held() || sk.Length != int64(len(ev)) {
		t.Fatalf("reader B: %v (%+v), want the event refused by the budget, read through", err, sk)
	}
	ra.Release()
	if e, err := rb.Next(); err != nil || len(e.Data) != 1200 {
		t.Fatalf("after A released: %d bytes, %v", len(e.Data), err)
	}
	rb.Release()
	if b.InUse() != 0 || b.Peak() > b.Limit() || b.Refused() == 0 {
		t.Fatalf("in use %d, peak %d of %d, refused %d", b.InUse(), b.Peak(), b.Limit(), b.Refused())
	}
}

// TestSSEReaderHeldCoversBuffers: what the reader reserves covers every
// buffer it holds, at every event, and the heap allocated while reading a
// stream of large events is bounded by what it reserved (a bound on
// allocations, not a measure of the process).
func TestSSEReaderHeldCoversBuffers(t *testing.T) {
	var sb strings.Builder
	for i := range 6 {
		fmt.Fprintf(&sb, "id: %d\nevent: message\ndata: %s\ndata: %s\n\n", i, strings.Repeat("p", 300<<10*(i%3+1)), strings.Repeat("q", 1000))
		sb.WriteString(": keep-alive\n\ndata: {}\n\n")
	}
	in := sb.String()
	for rname, mk := range chunkings(11) {
		b := NewBudget(1 << 40)
		rd := NewSSEReader(mk(in), 0)
		rd.SetBudget(b)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n := 0
		for {
			_, err := rd.Next()
			if err != nil {
				if err != io.EOF {
					t.Fatalf("%s: %v", rname, err)
				}
				break
			}
			n++
			if have := int64(cap(rd.data) + cap(rd.evType) + cap(rd.evID)); have > rd.Held() {
				t.Fatalf("%s: event %d: buffers of %d bytes, %d reserved", rname, n, have, rd.Held())
			}
		}
		runtime.ReadMemStats(&after)
		rd.Release()
		// The read buffer (32 KiB, and its doubling for tiny reads) and the
		// test's own small allocations are outside the budget.
		alloc := int64(after.TotalAlloc - before.TotalAlloc)
		// Each growth doubles, so what a reader allocates over its life is
		// at most twice what it reserved.
		if slack := int64(256 << 10); alloc > 2*b.total.Load()+slack {
			t.Errorf("%s: %d bytes allocated, %d reserved in total", rname, alloc, b.total.Load())
		}
		if n != 12 || b.InUse() != 0 {
			t.Fatalf("%s: %d events, %d bytes still reserved", rname, n, b.InUse())
		}
	}
}
