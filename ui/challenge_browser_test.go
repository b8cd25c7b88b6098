package ui

import (
	"fmt"
	"net/url"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestAuthChallengeRowsAgreeWithReport: on the page of real OAuth calls'
// records (report/testdata/oauth-challenges.jsonl), the 401 the client
// answered with a token is not a failed row, the 401 it could not answer
// is, and the failed rows are, kind by kind, as many as mcpdiag report's
// failures. Before, the answered challenge was a red row.
func TestAuthChallengeRowsAgreeWithReport(t *testing.T) {
	recs := recordtest.ReadFile(t, "../report/testdata/oauth-challenges.jsonl")
	acc := report.New(report.Options{})
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	s := acc.Summary()
	if s.Exchanges.AuthChallenges == 0 {
		t.Fatal("the report counts no answered challenge: not the file this test is about")
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	browser.WaitFor(t, p, "the rows", fmt.Sprintf(`document.querySelectorAll('#rows tr.row[data-id]').length === %d`, len(recs)))
	fail := browser.Eval[map[string]bool](t, p, `Object.fromEntries([...document.querySelectorAll('#rows tr.row[data-id]')].map((tr) =>
	  [tr.dataset.id, tr.classList.contains('fail')]))`)
	failed := map[record.Kind]int64{}
	for _, r := range recs {
		f, ok := fail[r.ID]
		if !ok {
			t.Fatalf("no row for %s", r.ID)
		}
		if r.ChallengeAnswered() && f {
			t.Errorf("%s %s: the answered challenge is a failed row", r.Outcome, r.ID)
		}
		if f {
			failed[r.Kind]++
		}
	}
	for _, sec := range []*report.Section{s.Calls, s.Exchanges} {
		if k := record.Kind(sec.Kind); failed[k] != sec.Failures {
			t.Errorf("%s: the page %d failed rows, report %d failures", k, failed[k], sec.Failures)
		}
	}
}
