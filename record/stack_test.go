package record

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// nopSink takes lines and keeps none.
type nopSink struct{}

func (nopSink) WriteLine([]byte) error { return nil }
func (nopSink) Close() error           { return nil }

// finishFrames is about the stack the recorder's finishing goroutine has
// used when it calls Async.Write (go build -gcflags=-S: finishers.run,
// Recorder.run, Recorder.finish and Recorder.Write, 1208 bytes).
const finishFrames = 1200

// underFinish calls a.Write(rec) from below a frame of finishFrames bytes.
//
//go:noinline
func underFinish(a *Async, rec *Record) error {
	var pad [finishFrames - 64]byte
	pad[len(pad)-1] = byte(len(rec.ID))
	err := a.Write(rec)
	if pad[len(pad)-1] == 0xff {
		return nil
	}
	return err
}

// TestEncodeStackDepth: writing the record of proxybench's JSON exchange
// (BenchmarkEncodeProxyJSON), also with a session and with an
// Authorization header as MCP clients send them, through Async.Write from
// a new goroutine, below frames as large as the finishing goroutine's,
// grows its stack to 4 KiB at most: the encoder's frames are shallow
// enough that the goroutine finishing an exchange does not copy its stack
// to 8 KiB for the record (runtime.newstack under appendRecordHeaders in
// the proxy's CPU profile). Measured as the goroutines' stack memory
// (StackInuse) with the GC off, so that no stack is shrunk in between.
// 8 KiB per goroutine at the session start (the path from Async.Write
// was ~5.5 KiB deep); 8 KiB with the small writers of
// appendRecordHeaders inlined; 8 KiB with a session while sanitizeInto
// held the rare members' redaction in its own frame (HashSession's
// SHA-256 ran below it).
func TestEncodeStackDepth(t *testing.T) {
	// The goroutines of every case wait until the end, so that no case
	// reuses the stacks of an earlier one.
	stop := make(chan struct{})
	defer close(stop)
	for _, c := range []struct{ session, auth bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		t.Run(fmt.Sprintf("session=%v,auth=%v", c.session, c.auth), func(t *testing.T) { testEncodeStackDepth(t, stop, c.session, c.auth) })
	}
}

func testEncodeStackDepth(t *testing.T, stop chan struct{}, withSession, withAuth bool) {
	if raceEnabled {
		t.Skip("the race detector's frames are larger")
	}
	rec := benchProxyJSONRecord()
	if withSession {
		rec.Session = "0f4c1a9e-6a55-4b5e-9a0e-6a2b1c9d0e11"
	}
	if withAuth {
		rec.RequestHeaders = rec.RequestHeaders.Clone()
		rec.RequestHeaders["Authorization"] = []string{"Bearer abcdefghijklmnopqrstuvwxyz012345"}
	}
	a := NewAsync(nopSink{}, AsyncOptions{Linger: -1, QueueSize: 4096})
	defer a.Close()
	if err := a.Write(rec); err != nil { // the pools and caches, once
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 1000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		go func() {
			if err := underFinish(a, rec); err != nil {
				t.Error(err)
			}
			done.Done()
			<-stop
		}()
	}
	testwait.Wait(t, &done, "the 1000 records to be written")
	runtime.ReadMemStats(&after)
	per := (int64(after.StackInuse) - int64(before.StackInuse)) / n
	t.Logf("%d bytes of stack per goroutine", per)
	if per > 5<<10 {
		t.Errorf("%d bytes of stack per goroutine that wrote a record, want 4 KiB", per)
	}
}
