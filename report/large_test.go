package report

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
)

// Placeholders in the template lines; each has a fixed length so that a
// generated line is the template with values of the same length put in.
const (
	phExchange = "EXEXEXEXEXEXEXEXEXEXEXEXEX"
	phCall     = "CACACACACACACACACACACACACA"
	phTool     = "tool@@"
	phMs       = "777.777"
)

// genReader streams a large record file without holding it: for each call,
// an exchange line and a call line made from templates encoded by the
// record writer (so the schema is real), with fresh ids, one of 50 tools,
// a latency from 0.001 to 999.999 ms, every 10th call a TOOL_ERROR, and
// every 997th line malformed.
type genReader struct {
	calls, i int
	line     int
	ok, fail [2][]byte // exchange and call templates
	buf      bytes.Buffer
}

func newGenReader(t testing.TB, calls int) *genReader {
	g := &genReader{calls: calls}
	for j, o := range []classify.Outcome{classify.ToolSuccess, classify.ToolError} {
		var b bytes.Buffer
		w := record.NewStreamWriter(&b, record.Encoder{})
		c := record.NewCall(record.Record{ID: phCall, Client: "load@1", ProtocolVersion: "2026-07-28"})
		ms, _ := strconv.ParseFloat(phMs, 64)
		e := &record.Record{Kind: record.KindExchange, ID: phExchange, Time: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC), Method: "tools/call", Tool: phTool,
			HTTPMethod: "POST", URL: "http://127.0.0.1/mcp", Status: 200, Outcome: o, Layer: o.Layer(), Reason: "r",
			Timings: record.Timings{Total: record.Duration(ms * float64(time.Millisecond))}}
		c.Add(e)
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
		sum := c.Summary()
		sum.Timings.Total = e.Timings.Total
		if err := w.Write(sum); err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(b.Bytes(), []byte("\n"))
		if j == 0 {
			g.ok = [2][]byte{lines[0], lines[1]}
		} else {
			g.fail = [2][]byte{lines[0], lines[1]}
		}
	}
	return g
}

func (g *genReader) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && g.i < g.calls {
		g.i++
		tpl := g.ok
		if g.i%10 == 0 {
			tpl = g.fail
		}
		id := fmt.Sprintf("%026d", g.i)
		for _, l := range tpl {
			g.line++
			if g.line%997 == 0 {
				g.buf.WriteString("{broken\n")
			}
			l = bytes.Replace(l, []byte(phExchange), []byte("E"+id[1:]), 1)
			l = bytes.Replace(l, []byte(phCall), []byte("C"+id[1:]), 1)
			l = bytes.Replace(l, []byte(phTool), fmt.Appendf(nil, "tool%02d", g.i%50), 1)
			l = bytes.Replace(l, []byte(phMs), fmt.Appendf(nil, "%d.%03d", g.i%1000, g.i%997+1), 1)
			g.buf.Write(l)
		}
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

// heapProbe is a Report that measures the live heap every `every` records.
type heapProbe struct {
	every, n int
	samples  []uint64
}

func (h *heapProbe) Add(*record.Record) {
	h.n++
	if h.n%h.every == 0 {
		h.samples = append(h.samples, liveHeap())
	}
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestLargeFileBoundedMemory streams 200,000 records (100,000 calls) with
// the HAR export on: the live heap must stay flat, whatever the number of
// records.
func TestLargeFileBoundedMemory(t *testing.T) {
	calls := 100_000
	if testing.Short() {
		calls = 20_000
	}
	start := liveHeap()
	acc := New(Options{})
	har := NewHARWriter(io.Discard, HAROptions{})
	probe := &heapProbe{every: calls / 5}
	var bad int
	n, err := Read(newGenReader(t, calls), "big.jsonl", func(BadLine) { bad++ }, acc, har, probe)
	if err != nil {
		t.Fatal(err)
	}
	acc.Close()
	if err := har.Close(); err != nil {
		t.Fatal(err)
	}
	s := acc.Summary()
	if n != int64(2*calls) || s.Calls.Total != int64(calls) || s.Exchanges.Total != int64(calls) || s.Calls.Orphans != 0 || har.Entries() != int64(calls) {
		t.Fatalf("read %d records: %d calls (%d orphans), %d exchanges, %d HAR entries", n, s.Calls.Total, s.Calls.Orphans, s.Exchanges.Total, har.Entries())
	}
	if want := 2 * calls / 996; bad < want-1 || bad > want+1 || s.Malformed.Lines != int64(bad) {
		t.Errorf("%d malformed lines reported, %d counted, want about %d", bad, s.Malformed.Lines, want)
	}
	if c := s.Calls.Outcome("TOOL_ERROR"); c.Count != int64(calls/10) {
		t.Errorf("TOOL_ERROR %d, want %d", c.Count, calls/10)
	}
	if len(s.Calls.ByTool) != 50 || s.Calls.Latency.Method != MethodSketch {
		t.Errorf("%d tools, latency method %q", len(s.Calls.ByTool), s.Calls.Latency.Method)
	}
	// The latencies are about uniform on (0, 1000) ms.
	if l := s.Exchanges.Latency; l.P50Ms < 480 || l.P50Ms > 520 || l.P99Ms < 970 || l.MaxMs > 1000 {
		t.Errorf("latency %+v", l)
	}
	end := liveHeap()
	t.Logf("live heap: start %d KiB, samples %v KiB, end %d KiB", start>>10, kib(probe.samples), end>>10)
	// Flat: the last sample is within 2 MiB of the first, and nothing ever
	// takes more than 16 MiB (the accumulator itself is well under 1 MiB).
	first, peak := probe.samples[0], uint64(0)
	for _, v := range probe.samples {
		peak = max(peak, v)
	}
	if last := probe.samples[len(probe.samples)-1]; last > first+2<<20 {
		t.Errorf("live heap grew from %d KiB to %d KiB over the file", first>>10, last>>10)
	}
	if peak > start+16<<20 {
		t.Errorf("live heap peaked at %d KiB, %d KiB over the start", peak>>10, (peak-start)>>10)
	}
}

func kib(v []uint64) []uint64 {
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = x >> 10
	}
	return out
}

// TestAddAllocations: in steady state Add allocates only for a call it has
// to hold open until its call line arrives.
func TestAddAllocations(t *testing.T) {
	rd := record.NewReader(newGenReader(t, 2000))
	var recs []*record.Record
	for r, err := range rd.All() {
		if err == nil {
			recs = append(recs, r)
		}
	}
	acc := New(Options{})
	for _, r := range recs {
		acc.Add(r) // warm up: tools, outcomes, examples
	}
	i := 0
	allocs := testing.AllocsPerRun(len(recs), func() {
		acc.Add(recs[i%len(recs)])
		i++
	})
	// One open call per exchange: its struct, its list element, and map
	// growth now and then.
	if allocs > 2.5 {
		t.Errorf("Add allocates %.2f times per record", allocs)
	}
	t.Logf("%.2f allocations per Add", allocs)
}
