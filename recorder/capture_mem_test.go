package recorder

import (
	"fmt"
	"io"
	"testing"
)

// retained is the memory the capture keeps alive: the backing arrays of
// its pieces (from each piece's start to its chunk's capacity), the pieces'
// slice headers and its own copy.
func (c *capture) retained() int {
	n := cap(c.pieces)*24 + cap(c.own)
	for _, p := range c.pieces {
		n += cap(p)
	}
	return n
}

// TestCaptureMemoryBound: whatever the sizes of the chunks a response
// arrives in, the capture of its first limit bytes keeps at most about
// twice limit bytes alive (a pooled chunk's buffer is at most twice its
// bytes). A response that trickles in 1-byte flushes (keep-alives, a slow
// upstream) was held as one reference per byte: an 8-byte allocation and a
// 24-byte slice header for each byte, 32 times the limit (32 MiB per
// exchange with the default 1 MiB limit, for every exchange in the default
// errors mode until its record is made).
func TestCaptureMemoryBound(t *testing.T) {
	const limit = 64 << 10
	for _, size := range []int{1, 7, 100, 1000, 1023, 1024, 1025, 5000, 40 << 10} {
		for _, chunked := range []bool{true, false} {
			t.Run(fmt.Sprintf("chunks=%d/chunked=%v", size, chunked), func(t *testing.T) {
				p := newPipe()
				c := &capture{limit: limit}
				p.keep(c)
				go func() {
					b := make([]byte, size)
					for j := range b {
						b[j] = 'a' + byte(j%26)
					}
					for n := 0; n < limit+2*size; n += size {
						p.write(append(getChunk(size), b...), 0)
					}
					p.closeWithError(nil)
				}()
				buf := make([]byte, 3000)
				for {
					var err error
					if chunked {
						_, err = p.NextChunk()
					} else {
						_, err = p.Read(buf)
					}
					if err == io.EOF {
						break
					}
				}
				p.stop()
				if c.n != limit || !c.more {
					t.Fatalf("kept %d bytes (more %v), want %d and more", c.n, c.more, limit)
				}
				if got := c.retained(); got > 2*limit+limit/8 {
					t.Errorf("the capture of %d bytes keeps %d bytes alive (%.1fx) in %d pieces", limit, got, float64(got)/limit, len(c.pieces))
				}
				c.release()
			})
		}
	}
}
