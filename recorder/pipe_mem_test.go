package recorder

import (
	"fmt"
	"testing"
)

// TestPipeMemoryBound: while its reader lags, a pipe holds about
// pipeBudget of memory whatever the chunks it is given: write waits once
// what is queued reaches the budget, and a chunk's memory is its buffer's
// capacity and its queue entry, not just its bytes. Counting bytes only, a
// response in 1-byte flushes queued 262,144 chunks (8-byte buffers and
// 32-byte entries, 40 times the budget) before write waited.
func TestPipeMemoryBound(t *testing.T) {
	for _, size := range []int{1, 10, 100, 1000, 4096, 64 << 10} {
		t.Run(fmt.Sprintf("chunks=%d", size), func(t *testing.T) {
			p := newPipe()
			b := make([]byte, size)
			mem := 0
			for {
				p.mu.Lock()
				full := p.full()
				p.mu.Unlock()
				if full {
					break // the next write would wait for the reader
				}
				c := append(getChunk(size), b...)
				mem += cap(c) + 32 // the buffer and its entry in the queue
				p.write(c, 0)
			}
			if mem > 2*pipeBudget+maxPooledChunk {
				t.Errorf("%d chunks of %d bytes queued, %d bytes of memory (%.1fx the budget)", len(p.chunks), size, mem, float64(mem)/pipeBudget)
			}
			p.stop()
		})
	}
}
