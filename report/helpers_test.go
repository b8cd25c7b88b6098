package report

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
)

// recFile builds a record file the way producers do: record.Call links the
// exchanges and record.StreamWriter encodes the lines, so the schema is the
// real one.
type recFile struct {
	t   testing.TB
	buf bytes.Buffer
	w   *record.StreamWriter
	now time.Time
	n   int
}

func newRecFile(t testing.TB) *recFile {
	f := &recFile{t: t, now: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)}
	f.w = record.NewStreamWriter(&f.buf, record.Encoder{})
	return f
}

// ex describes one exchange of a call.
type ex struct {
	outcome classify.Outcome
	ms      float64 // timings.totalMs; 0 = not measured
	status  int
	origin  record.RetryOrigin
}

// call writes the exchanges of one call of tool (method tools/call, or
// method when tool is empty), then the call line unless orphan is set. It
// returns the call id and the exchange ids.
func (f *recFile) call(method, tool string, orphan bool, exs ...ex) (string, []string) {
	f.t.Helper()
	f.n++
	c := record.NewCall(record.Record{ID: fmt.Sprintf("CALL%04d", f.n), Client: "test@1", ProtocolVersion: "2026-07-28"})
	var ids []string
	for i, e := range exs {
		r := &record.Record{
			Kind: record.KindExchange, ID: fmt.Sprintf("EX%04d-%d", f.n, i+1), Time: f.now,
			Method: method, Tool: tool, HTTPMethod: http.MethodPost, URL: "http://127.0.0.1:8080/mcp?x=1",
			Status: e.status, Outcome: e.outcome, Layer: e.outcome.Layer(), Reason: "because " + string(e.outcome),
			RetryOrigin: e.origin, ContentType: "application/json", RequestBytes: 97, ResponseBytes: 42,
			RequestHeaders:  http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer abcdefgh12345"}},
			ResponseHeaders: http.Header{"Content-Type": {"application/json"}},
			Timings:         record.Timings{Total: record.Duration(e.ms * float64(time.Millisecond)), Headers: record.Duration(e.ms / 2 * float64(time.Millisecond))},
		}
		if e.outcome == classify.NetworkError {
			r.Status, r.Network = 0, &record.Network{Error: "connection reset by peer", Phase: "body", RequestSent: true}
		}
		f.now = f.now.Add(time.Duration(e.ms*float64(time.Millisecond)) + time.Millisecond)
		c.Add(r)
		f.write(r)
		ids = append(ids, r.ID)
	}
	if !orphan {
		f.write(c.Summary())
	}
	return c.ID(), ids
}

func (f *recFile) write(r *record.Record) {
	f.t.Helper()
	if err := f.w.Write(r); err != nil {
		f.t.Fatal(err)
	}
}

// raw appends a line as is (it gets its "\n").
func (f *recFile) raw(line string) { f.buf.WriteString(line + "\n") }

func (f *recFile) bytes() []byte { return f.buf.Bytes() }

// summarize reads data into a fresh accumulator and returns its summary.
func summarize(t testing.TB, data []byte, opts Options) (*Summary, []BadLine) {
	t.Helper()
	acc := New(opts)
	var bad []BadLine
	if _, err := Read(bytes.NewReader(data), "test.jsonl", func(b BadLine) { bad = append(bad, b) }, acc); err != nil {
		t.Fatal(err)
	}
	acc.Close()
	return acc.Summary(), bad
}

func ok(o classify.Outcome, ms float64) ex { return ex{outcome: o, ms: ms, status: 200} }
