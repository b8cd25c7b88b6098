package recorder

import (
	"bytes"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/mcpdiag/mcpdiag/wire"
)

func init() { poisonRecycled = true }

// SetPoisonRecycled turns the poisoning of recycled chunks on or off (the
// benchmarks turn it off).
func SetPoisonRecycled(on bool) { poisonRecycled = on }

// TestCaptureKeepsTheFirstBytes: whatever the chunks written into the pipe
// and the sizes the classifier reads, the capture holds the first limit
// bytes of the body, says whether more were read, and copies at most limit
// bytes of its own (the chunk that crosses the limit), holding the others
// by reference. Recycled chunks are poisoned (0xff), so a chunk recycled
// while the pipe or the capture still used it shows in the bytes. Every
// other case reads by chunks (NextChunk, as the event reader does), whose
// bytes must stay unchanged until the next chunk is taken.
func TestCaptureKeepsTheFirstBytes(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 2))
	for i := 0; i < 3000; i++ {
		big := i%3 == 0 // chunks in the pooled sizes
		size := rnd.IntN(5000)
		if big {
			size = rnd.IntN(300 << 10)
		}
		if i%7 == 0 {
			size = 0
		}
		body := make([]byte, size)
		for j := range body {
			body[j] = byte('a' + rnd.IntN(26))
		}
		limit := 1 + rnd.IntN(4000)
		maxChunk := 1 + rnd.IntN(2000)
		maxRead := 1 + rnd.IntN(3000)
		if big {
			limit = 1 + rnd.IntN(200<<10)
			maxChunk = 1 + rnd.IntN(70<<10)
			maxRead = 1 + rnd.IntN(40<<10)
		}

		p := newPipe()
		c := &capture{limit: limit}
		p.keep(c)
		var sizes []int
		for rest := len(body); rest > 0; {
			n := min(rest, 1+rnd.IntN(maxChunk))
			sizes = append(sizes, n)
			rest -= n
		}
		go func() { // the pipe waits for its reader past pipeBudget
			rest := body
			for _, n := range sizes {
				p.write(append(getChunk(n), rest[:n]...), 0) // the pipe owns what it is given
				rest = rest[n:]
			}
			p.closeWithError(nil)
		}()
		var got bytes.Buffer
		buf := make([]byte, maxRead)
		chunked := i%2 == 1
		var last []byte // the chunk handed out last, and a copy of it
		var lastCopy []byte
		for {
			var n int
			var err error
			if chunked {
				if !bytes.Equal(last, lastCopy) {
					t.Fatalf("case %d: a chunk changed before the next one was taken", i)
				}
				if rnd.IntN(2) == 0 {
					runtime.Gosched() // let the writer go on meanwhile
				}
				var b []byte
				b, err = p.NextChunk()
				if len(b) > wire.SSEReadSize {
					t.Fatalf("case %d: a chunk of %d bytes, over wire.SSEReadSize", i, len(b))
				}
				last, lastCopy = b, append(lastCopy[:0], b...)
				n = len(b)
				got.Write(b)
			} else {
				n, err = p.Read(buf[:1+rnd.IntN(maxRead)])
				got.Write(buf[:n])
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		p.stop()
		if !bytes.Equal(got.Bytes(), body) {
			t.Fatalf("case %d: the reader got %d bytes, want the body's %d", i, got.Len(), len(body))
		}
		want := body[:min(len(body), limit)]
		if txt := c.text(); txt != string(want) || c.n != len(want) {
			t.Fatalf("case %d (body %d, limit %d, chunks ≤%d, reads ≤%d): kept %d bytes %q…, want %d", i, size, limit, maxChunk, maxRead, c.n, txt[:min(len(txt), 20)], len(want))
		}
		c.release()
		if c.more != (len(body) > limit) {
			t.Fatalf("case %d: more = %v with a body of %d and a limit of %d", i, c.more, len(body), limit)
		}
		if cap(c.own) > limit {
			t.Fatalf("case %d: the capture copied %d bytes, more than its limit %d", i, cap(c.own), limit)
		}
		held := len(c.own)
		for _, pc := range c.pieces {
			held += len(pc)
		}
		if held != c.n {
			t.Fatalf("case %d: pieces hold %d bytes, the count says %d", i, held, c.n)
		}
	}
}
