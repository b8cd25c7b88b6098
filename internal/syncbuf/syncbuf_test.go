package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/syncbuf"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestBufferConcurrent: writes from many goroutines, read while they
// write, are all kept whole (run with -race to check the locking).
func TestBufferConcurrent(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("ab\n"))
				_ = b.String()
			}
		}()
	}
	testwait.Wait(t, &wg, "the concurrent writers")
	if got := b.String(); len(got) != 8*100*3 || strings.Count(got, "ab\n") != 800 {
		t.Fatalf("%d bytes, %d whole writes", len(got), strings.Count(got, "ab\n"))
	}
}
