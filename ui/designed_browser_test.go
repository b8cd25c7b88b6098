package ui

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestDesignedAnswerRowsAgreeWithReport: on the page of real proxy records
// (report/testdata/designed-answers.jsonl: a GET and a DELETE answered
// 405, an OAuth authorize endpoint's 302), the designed answers are not
// failed rows, the failed rows are as many as mcpdiag report's failures,
// the page's designedAnswer agrees with record.Record.DesignedAnswer
// on the real records and on near misses (a POST answered 405, a GET
// with an id, a GET answered 404, a DELETE answered 302: failures in
// both), and the count line says how many designed answers
// report counts. Before, the three were red rows (4 failed, report 1). The
// file's proxy 401, which the client answered with its new token, is an
// answered challenge in both (TestProxyChallengeRowsAgreeWithReport).
func TestDesignedAnswerRowsAgreeWithReport(t *testing.T) {
	recs := recordtest.ReadFile(t, "../report/testdata/designed-answers.jsonl")
	// And near misses made of the real GET 405, failures both in report
	// and on the page: a POST (a JSON-RPC message, with its method and
	// id), a GET with an id, a GET answered 404, a DELETE answered 302.
	var near []*record.Record
	for _, r := range recs {
		if r.DesignedAnswer() != record.DesignedNoStream {
			continue
		}
		for i, f := range []func(*record.Record){
			func(x *record.Record) { x.HTTPMethod, x.Method, x.JSONRPC.ID = "POST", "tools/list", wire.IntID(1) },
			func(x *record.Record) { x.JSONRPC.ID = wire.StringID("1") },
			func(x *record.Record) { x.Status = 404 },
			func(x *record.Record) { x.HTTPMethod, x.Status = "DELETE", 302 },
		} {
			x := *r
			x.ID = fmt.Sprintf("%s-near%d", r.ID, i)
			f(&x)
			if x.DesignedAnswer() != "" {
				t.Fatalf("near miss %d is designed: not what this test is about", i)
			}
			near = append(near, &x)
		}
	}
	if len(near) != 4 {
		t.Fatalf("%d near misses, want 4", len(near))
	}
	recs = append(recs, near...)
	acc := report.New(report.Options{})
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	s := acc.Summary()
	if s.Exchanges.DesignedAnswers != 3 || s.Exchanges.Failures != 4 || s.Exchanges.ChallengesLinked != 1 {
		t.Fatalf("the report counts %d designed answers, %d failures and %d linked challenges: not the file this test is about", s.Exchanges.DesignedAnswers, s.Exchanges.Failures, s.Exchanges.ChallengesLinked)
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
		if r.DesignedAnswer() != "" && f {
			t.Errorf("%s %s %d %s: the designed answer is a failed row", r.HTTPMethod, r.Outcome, r.Status, r.ID)
		}
		if f {
			failed++
		}
	}
	if failed != s.Exchanges.Failures {
		t.Errorf("the page %d failed rows, report %d failures", failed, s.Exchanges.Failures)
	}
	want := fmt.Sprintf("%d of %d records · 1 auth challenge answered (401/403 the client answered with a new token; not failures) · %d designed answers (405 to a GET or DELETE, 3xx to a GET; not failures)", len(recs), len(recs), s.Exchanges.DesignedAnswers)
	if got := browser.Eval[string](t, p, `document.getElementById('count').textContent`); got != want {
		t.Errorf("count line %q, want %q", got, want)
	}
}
