package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
)

// legacyFile holds the records of two real clients of server-everything's
// 2024-11-05 HTTP+SSE transport through `mcpdiag proxy --record`: the TS
// SDK's streamableHttpWithSseFallbackClient (its POST initialize answered
// 404, then the legacy GET stream, initialize, tools/list and a tools/call)
// and a TS SDK client (SSEClientTransport, client long-legacy@1.0.0) killed
// (SIGKILL) during trigger-long-running-operation: that POST is
// REQUEST_ACCEPTED with streamAnswer {"seen":false,"notSeen":"stream-ended"}.
// Made with
//
//	PORT=39121 node server-everything/dist/index.js sse &
//	mcpdiag proxy --upstream http://127.0.0.1:39121/ --listen 127.0.0.1:39122 --record legacy-sse.jsonl &
//	node sdk/dist/esm/examples/client/streamableHttpWithSseFallbackClient.js http://127.0.0.1:39122/sse
//	node long.mjs http://127.0.0.1:39122/sse &   # connect, callTool trigger-long-running-operation {duration:30}; kill -9 after 3 s
const legacyFile = "testdata/legacy-sse.jsonl"

// unansweredRecord returns the real record of the killed client's
// trigger-long-running-operation.
func unansweredRecord(t *testing.T) *record.Record {
	t.Helper()
	for _, r := range recordtest.ReadFile(t, legacyFile) {
		if r.Outcome == classify.RequestAccepted {
			if r.Tool != "trigger-long-running-operation" || r.StreamAnswer == nil || r.StreamAnswer.Seen || r.StreamAnswer.NotSeen != record.AnswerStreamEnded {
				t.Fatalf("%s: %s %+v: not the record this test is about", r.ID, r.Tool, r.StreamAnswer)
			}
			return r
		}
	}
	t.Fatalf("%s: no REQUEST_ACCEPTED record", legacyFile)
	return nil
}

// TestUnansweredOnStreamCounted: a 2024-11-05 HTTP+SSE request accepted 202
// whose answer never came on the GET stream is counted failed, for every
// reason the proxy writes but its own shutdown (counted cut by shutdown,
// as other shutdown cuts), in the summary, the text, the JSON and the
// --fail-on gate; the answer that did come, and a REQUEST_ACCEPTED that
// says nothing of its answer, stay what their outcomes say. Before, the
// real record (stream-ended, a killed client) was 0 failed, as every
// reason was.
func TestUnansweredOnStreamCounted(t *testing.T) {
	real := unansweredRecord(t)
	for _, c := range []struct {
		name     string
		change   func(r *record.Record)
		failures int64
		cut      int64
	}{
		{"stream-ended (the real record)", func(*record.Record) {}, 1, 0},
		{"timeout", func(r *record.Record) { r.StreamAnswer.NotSeen = record.AnswerTimeout }, 1, 0},
		{"evicted", func(r *record.Record) { r.StreamAnswer.NotSeen = record.AnswerEvicted }, 1, 0},
		{"ambiguous", func(r *record.Record) { r.StreamAnswer.NotSeen = record.AnswerAmbiguous }, 1, 0},
		{"no reason", func(r *record.Record) { r.StreamAnswer.NotSeen = "" }, 1, 0},
		{"shutdown", func(r *record.Record) { r.StreamAnswer.NotSeen = record.AnswerShutdown }, 0, 1},
		{"the answer came", func(r *record.Record) {
			r.StreamAnswer = &record.StreamAnswer{Seen: true}
			r.Outcome, r.Layer = classify.ToolSuccess, classify.ToolSuccess.Layer()
		}, 0, 0},
		{"seen, outcome left accepted", func(r *record.Record) { r.StreamAnswer = &record.StreamAnswer{Seen: true} }, 0, 0},
		{"no streamAnswer", func(r *record.Record) { r.StreamAnswer = nil }, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := *real
			if x.StreamAnswer != nil {
				sa := *x.StreamAnswer
				x.StreamAnswer = &sa
			}
			c.change(&x)
			// Through the encoder and back, as report reads a file.
			var buf bytes.Buffer
			if err := record.NewStreamWriter(&buf, record.Encoder{}).Write(&x); err != nil {
				t.Fatal(err)
			}
			s, bad := summarize(t, buf.Bytes(), Options{})
			if len(bad) != 0 {
				t.Fatalf("bad lines: %v", bad)
			}
			ex := s.Exchanges
			if ex.Total != 1 || ex.Failures != c.failures || ex.Unanswered != c.failures || ex.CutByShutdown != c.cut || s.CutByShutdown != c.cut {
				t.Fatalf("total %d, failures %d, unanswered %d, cut by shutdown %d (summary %d); want 1, %d, %d, %d",
					ex.Total, ex.Failures, ex.Unanswered, ex.CutByShutdown, s.CutByShutdown, c.failures, c.failures, c.cut)
			}
			oc := ex.Outcome(string(x.Outcome))
			if oc.Count != 1 || oc.Unanswered != c.failures || oc.CutByShutdown != c.cut {
				t.Errorf("%s: count %d, unanswered %d, cut by shutdown %d", x.Outcome, oc.Count, oc.Unanswered, oc.CutByShutdown)
			}
			var offenders int64
			for _, o := range ex.WorstOffenders {
				offenders += o.Count
				if o.Tool != "trigger-long-running-operation" || o.Outcome != string(x.Outcome) || len(o.Examples) != 1 || o.Examples[0] != x.ID {
					t.Errorf("worst offender %+v, want %s %s e.g. %s", o, x.Tool, x.Outcome, x.ID)
				}
			}
			if offenders != c.failures {
				t.Errorf("%d worst offenders, want %d", offenders, c.failures)
			}

			var js bytes.Buffer
			if err := NewJSONReporter(s).Report(&js); err != nil {
				t.Fatal(err)
			}
			var back Summary
			if err := json.Unmarshal(js.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			if back.Exchanges.Failures != c.failures || back.Exchanges.Unanswered != c.failures || back.CutByShutdown != c.cut {
				t.Errorf("--json: failures %d, unanswered %d, cut by shutdown %d", back.Exchanges.Failures, back.Exchanges.Unanswered, back.CutByShutdown)
			}
			var txt bytes.Buffer
			if err := NewTextReporter(s).Report(&txt); err != nil {
				t.Fatal(err)
			}
			wantLine := "exchanges: 1, 0 failed"
			if c.failures == 1 {
				wantLine = "exchanges: 1, 1 failed (100.0%), 1 unanswered on the stream"
			}
			if !strings.Contains(txt.String(), wantLine) {
				t.Errorf("text lacks %q:\n%s", wantLine, txt.String())
			}

			g := &Gates{FailOn: []classify.Outcome{x.Outcome}}
			rep, err := g.Check(s)
			if err != nil {
				t.Fatal(err)
			}
			if c.failures == 1 && rep.Passed {
				t.Errorf("--fail-on %s passed %v with %d failures", x.Outcome, rep.Passed, c.failures)
			}
			if c.cut == 1 && !rep.Passed {
				t.Errorf("--fail-on %s failed on the shutdown's cut: %+v", x.Outcome, rep.Failures)
			}
		})
	}
}
