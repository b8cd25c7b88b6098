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

// TestChunkRecycleAllocs: a chunk given back and taken again costs no
// allocation (before, putChunk boxed each buffer in a new *[]byte: one
// allocation per chunk recycled, about 4 per 64 KiB event stream and 1 per
// JSON response of 1 KiB or more); what comes back is the buffer given back,
// empty, of its capacity.
func TestChunkRecycleAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops on purpose under the race detector")
	}
	for _, n := range []int{minPooledChunk, 1500, 16 << 10, maxPooledChunk} {
		c := getChunk(n)
		c = append(c, make([]byte, n)...)
		putChunk(c)
		allocs := testing.AllocsPerRun(100, func() {
			c := append(getChunk(n), 'x')
			putChunk(c)
		})
		if allocs != 0 {
			t.Errorf("%d-byte chunk: %.0f allocations per chunk recycled, want 0", n, allocs)
		}
		c = getChunk(n)
		if len(c) != 0 || cap(c) < n || cap(c) >= 2*n {
			t.Errorf("%d-byte chunk: len %d cap %d", n, len(c), cap(c))
		}
		putChunk(c)
	}
}
