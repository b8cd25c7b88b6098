package ui

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestUnansweredRowsAgreeWithReport: on the page of real proxy records of
// server-everything's 2024-11-05 HTTP+SSE transport
// (report/testdata/legacy-sse.jsonl: a client killed during
// trigger-long-running-operation, its POST REQUEST_ACCEPTED with the
// answer not seen, stream-ended), and of that record with each other
// reason the proxy writes (and the answer seen), a request whose answer
// never came is a failed row, one the proxy's shutdown cut is not (cut by
// shutdown, on the count line), and the failed rows are as many as
// mcpdiag report's failures. Before, the page showed no unanswered row
// failed, as report counted none.
func TestUnansweredRowsAgreeWithReport(t *testing.T) {
	recs := recordtest.ReadFile(t, "../report/testdata/legacy-sse.jsonl")
	var base *record.Record
	for _, r := range recs {
		if r.UnansweredOnStream() == record.AnswerStreamEnded {
			base = r
		}
	}
	if base == nil {
		t.Fatal("no unanswered record: not the file this test is about")
	}
	for i, why := range []string{record.AnswerTimeout, record.AnswerEvicted, record.AnswerAmbiguous, "", record.AnswerShutdown, "seen"} {
		x := *base
		x.ID = fmt.Sprintf("%s-%d", base.ID, i)
		x.StreamAnswer = &record.StreamAnswer{NotSeen: why}
		if why == "seen" {
			x.StreamAnswer = &record.StreamAnswer{Seen: true}
			x.Outcome, x.Layer = classify.ToolSuccess, classify.ToolSuccess.Layer()
		}
		recs = append(recs, &x)
	}
	acc := report.New(report.Options{})
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	s := acc.Summary()
	if s.Exchanges.Unanswered != 5 || s.Exchanges.CutByShutdown != 1 {
		t.Fatalf("the report counts %d unanswered and %d cut by shutdown, want 5 and 1", s.Exchanges.Unanswered, s.Exchanges.CutByShutdown)
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	browser.WaitFor(t, p, "the rows", fmt.Sprintf(`document.querySelectorAll('#rows tr.row[data-id]').length === %d`, len(recs)))
	fail := browser.Eval[map[string]bool](t, p, `Object.fromEntries([...document.querySelectorAll('#rows tr.row[data-id]')].map((tr) =>
	  [tr.dataset.id, tr.classList.contains('fail')]))`)
	var failed int64
	for _, r := range recs {
		f, ok := fail[r.ID]
		if !ok {
			t.Fatalf("no row for %s", r.ID)
		}
		why := r.UnansweredOnStream()
		if want := why != "" && why != record.AnswerShutdown; want != f && why != "" {
			t.Errorf("%s (not seen: %q): failed row %v, want %v", r.ID, why, f, want)
		}
		if f {
			failed++
		}
	}
	if failed != s.Exchanges.Failures {
		t.Errorf("the page %d failed rows, report %d failures", failed, s.Exchanges.Failures)
	}
	if got := browser.Eval[string](t, p, `document.getElementById('count').textContent`); !strings.Contains(got, "1 cut by shutdown") {
		t.Errorf("count line %q lacks the shutdown's cut", got)
	}
}
