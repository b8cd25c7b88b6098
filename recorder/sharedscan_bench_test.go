//go:build unix

package recorder

import (
	"bytes"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// BenchmarkSharedScan64KiB measures, in one run over proxybench's 64 KiB
// stream (watchBenchStream), what a scan shared by the request watch and
// the classifier could save (docs/benchmarks.md, sse16): the whole watch as
// the writer feeds it the proxy's writes ("watch"); the watch's scan alone,
// wire's SSEScanner over the same writes with every token taken ("watch-scan",
// the most a shared scan can take off the watch); the classifier's whole
// reading of the stream ("classify", a pooled event reader over 32 KiB
// reads, as the pipe hands it SSEReadSize pieces); and its scan alone over
// those pieces ("classify-scan", the most a shared scan can take off the
// classifier). "hot" reuses one copy of the stream (in cache); "cold"
// rotates over 256 copies (16 MiB), so that each pass reads bytes no
// recent pass touched, as the classifier's goroutine reads bytes the
// forwarding goroutine wrote on the other core. cpu-ns/op is the process's
// user and system time per pass (getrusage; run it with -cpu 1), which
// other load on the machine moves less than the wall time.
func BenchmarkSharedScan64KiB(b *testing.B) {
	poison := poisonRecycled
	poisonRecycled = false
	defer func() { poisonRecycled = poison }()
	whole := bytes.Join(watchBenchStream(), nil)
	for _, temp := range []struct {
		name   string
		copies int
	}{{"hot", 1}, {"cold", 256}} {
		streams := make([][]byte, temp.copies)
		for i := range streams {
			streams[i] = append([]byte(nil), whole...)
		}
		// The proxy's writes of each event (its first 4 KiB, the rest) and
		// the classifier's 32 KiB pieces, per copy.
		writes := make([][][]byte, len(streams))
		pieces := make([][][]byte, len(streams))
		for i, s := range streams {
			for off := 0; off < len(s); off += 16 << 10 {
				ev := s[off : off+16<<10]
				writes[i] = append(writes[i], ev[:4<<10], ev[4<<10:])
			}
			for off := 0; off < len(s); off += wire.SSEReadSize {
				pieces[i] = append(pieces[i], s[off:min(off+wire.SSEReadSize, len(s))])
			}
		}
		scan := func(ps [][]byte) int {
			var sc wire.SSEScanner
			n := 0
			for _, p := range ps {
				sc.Feed(p)
				for t := sc.Next(); t != nil; t = sc.Next() {
					if t.Kind == wire.SSEEnd {
						n++
					}
				}
			}
			return n
		}
		b.Run("watch/"+temp.name, func(b *testing.B) {
			var s serverRequests
			b.SetBytes(int64(len(whole)))
			i := 0
			defer reportCPU(b, cpuNow(b))
			for b.Loop() {
				w := newRequestWatch()
				for _, p := range writes[i%len(writes)] {
					w.feed(p, &s, "s")
				}
				w.release()
				i++
			}
			if len(s.order) != 0 {
				b.Fatalf("noted %q in a stream of no server request", s.order)
			}
		})
		b.Run("watch-scan/"+temp.name, func(b *testing.B) {
			b.SetBytes(int64(len(whole)))
			i := 0
			defer reportCPU(b, cpuNow(b))
			for b.Loop() {
				if n := scan(writes[i%len(writes)]); n != 4 {
					b.Fatalf("%d events", n)
				}
				i++
			}
		})
		b.Run("classify/"+temp.name, func(b *testing.B) {
			b.SetBytes(int64(len(whole)))
			rd := bytes.NewReader(nil)
			ex := &classify.Exchange{Method: "tools/call", Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: rd, ID: wire.IntID(1)}
			c := &classify.Classifier{}
			i := 0
			defer reportCPU(b, cpuNow(b))
			for b.Loop() {
				rd.Reset(streams[i%len(streams)])
				r, err := c.Classify(ex)
				if err != nil || r.Outcome != classify.ToolSuccess {
					b.Fatalf("outcome %s (%s), err %v", r.Outcome, r.Reason, err)
				}
				i++
			}
		})
		b.Run("classify-scan/"+temp.name, func(b *testing.B) {
			b.SetBytes(int64(len(whole)))
			i := 0
			defer reportCPU(b, cpuNow(b))
			for b.Loop() {
				if n := scan(pieces[i%len(pieces)]); n != 4 {
					b.Fatalf("%d events", n)
				}
				i++
			}
		})
	}
}

// cpuNow is the process's user and system time so far.
func cpuNow(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time since start per iteration.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuNow(b)-start)/float64(b.N), "cpu-ns/op")
}
