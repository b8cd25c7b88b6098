package recorder

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// TestCaptureKeepsTheFirstBytes: whatever the chunks written into the pipe
// and the sizes the classifier reads, the capture holds the first limit
// bytes of the body, says whether more were read, and copies at most limit
// bytes of its own (the chunk that crosses the limit), holding the others
// by reference.
func TestCaptureKeepsTheFirstBytes(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 2))
	for i := 0; i < 3000; i++ {
		size := rnd.IntN(5000)
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

		p := newPipe()
		c := &capture{limit: limit}
		p.keep(c)
		for rest := body; len(rest) > 0; {
			n := min(len(rest), 1+rnd.IntN(maxChunk))
			p.write(bytes.Clone(rest[:n])) // the pipe owns what it is given
			rest = rest[n:]
		}
		p.closeWithError(nil)
		var got bytes.Buffer
		buf := make([]byte, maxRead)
		for {
			n, err := p.Read(buf[:1+rnd.IntN(maxRead)])
			got.Write(buf[:n])
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got.Bytes(), body) {
			t.Fatalf("case %d: the reader got %d bytes, want the body's %d", i, got.Len(), len(body))
		}
		want := body[:min(len(body), limit)]
		if txt := c.text(); txt != string(want) || c.n != len(want) {
			t.Fatalf("case %d (body %d, limit %d, chunks ≤%d, reads ≤%d): kept %d bytes %q…, want %d", i, size, limit, maxChunk, maxRead, c.n, txt[:min(len(txt), 20)], len(want))
		}
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
