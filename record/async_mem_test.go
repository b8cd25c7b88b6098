package record

import (
	"runtime"
	"testing"
)

// discardSink writes nothing and loses nothing.
type discardSink struct{}

func (discardSink) WriteLine([]byte) error { return nil }
func (discardSink) Close() error           { return nil }

// TestAsyncIdleHeap: an Async with the default queue allocates a few KB,
// not a queue of 1024 records of 128 bytes (128 KB live for the Async's
// life, which every garbage collection cycle scanned): the queue holds
// pointers. The fewest bytes of three tries, so that another test's
// allocations in the same moment do not count.
func TestAsyncIdleHeap(t *testing.T) {
	least := ^uint64(0)
	for range 3 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		a := NewAsync(discardSink{}, AsyncOptions{QueueSize: DefaultQueueSize})
		runtime.ReadMemStats(&m1)
		least = min(least, m1.TotalAlloc-m0.TotalAlloc)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if least > 16<<10 {
		t.Errorf("NewAsync allocated %d bytes, want at most 16 KiB", least)
	}
}

// TestAsyncWriteAllocs: once its pool is warm, writing the proxy's JSON
// exchange record through an Async allocates nothing, the writer
// goroutine's share included (AllocsPerRun counts every goroutine's): the
// queued value and its line come back to the pool together. Before, the
// pool of line buffers allocated a slice header on every Put (1 per
// record).
func TestAsyncWriteAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates, and sync.Pool drops values at random under it")
	}
	a := NewAsync(discardSink{}, AsyncOptions{Linger: -1})
	defer a.Close()
	rec := benchProxyJSONRecord()
	// Each record is written before the next Write, so that its queued
	// value is back in the pool.
	write := func() {
		n := a.Stats().Written
		if err := a.Write(rec); err != nil {
			t.Fatal(err)
		}
		for a.Stats().Written == n {
			runtime.Gosched()
		}
	}
	for range 64 {
		write()
	}
	if allocs := testing.AllocsPerRun(500, write); allocs >= 0.5 {
		t.Errorf("%v allocations per record written, want 0", allocs)
	}
}
