package recorder

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestPipeWakesReaderByBatch: a stream flushed in small pieces wakes the
// reader, waiting for bytes, once per wakeAt bytes and at the end, not once
// per piece; the reader gets every byte, in order, with each piece's flush
// time. Each piece is written only once the reader waits again, as when the
// classifier is faster than the network (one client): before, every piece
// woke it (101, 65 and 5 wake-ups here), and at one client each wake-up was a
// thread's.
func TestPipeWakesReaderByBatch(t *testing.T) {
	for _, tc := range []struct {
		pieces, size, maxWakes int
	}{
		{100, 100, 1},                    // 10,000 bytes: only the end wakes it
		{64, 1 << 10, 64<<10/wakeAt + 1}, // 64 KiB in 1 KiB flushes: every wakeAt bytes, and the end
		{4, wakeAt, 5},                   // pieces of wakeAt each wake it, as before
	} {
		t.Run(fmt.Sprintf("%dx%d", tc.pieces, tc.size), func(t *testing.T) {
			p := newPipe()
			var want bytes.Buffer
			got := make(chan []byte)
			go func() {
				var b bytes.Buffer
				var last time.Duration
				for {
					c, err := p.NextChunk()
					if err != nil {
						break
					}
					if p.at < last {
						t.Errorf("flush times out of order: %v after %v", p.at, last)
					}
					last = p.at
					b.Write(c)
				}
				got <- b.Bytes()
			}()
			for i := range tc.pieces {
				waitAsleep(t, p)
				c := getChunk(tc.size)
				for j := range tc.size {
					c = append(c, byte(i+j))
				}
				want.Write(c)
				p.write(c, time.Duration(i+1))
			}
			waitAsleep(t, p)
			p.closeWithError(io.EOF)
			if b := testwait.Recv(t, got, "the pipe's reader to reach the end"); !bytes.Equal(b, want.Bytes()) {
				t.Errorf("reader got %d bytes, not the %d written", len(b), want.Len())
			}
			if p.wakes > tc.maxWakes {
				t.Errorf("%d pieces of %d bytes woke the reader %d times, want at most %d", tc.pieces, tc.size, p.wakes, tc.maxWakes)
			}
			p.stop()
		})
	}
}

// waitAsleep waits until p's reader has read everything queued and waits
// for more, or is asleep with bytes queued below wakeAt.
func waitAsleep(t *testing.T, p *pipe) {
	t.Helper()
	deadline := time.Now().Add(testwait.Bound)
	for {
		p.mu.Lock()
		asleep := p.asleep
		p.mu.Unlock()
		if asleep {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader never waited for bytes")
		}
		time.Sleep(50 * time.Microsecond)
	}
}
