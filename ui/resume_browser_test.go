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

// TestResumedRowsAgreeWithReport: on the page of the TypeScript SDK's SSE
// polling example through the proxy (report/testdata/sse-polling.jsonl),
// the tools/call whose stream the server closed before the response,
// resumed by the client's GET, is not a failed row (report counts it by
// the response there: TOOL_SUCCESS), and without that GET it is; the
// failed rows are, kind by kind, as many as mcpdiag report's failures.
// Before, the resumed request was a red row while report counted no
// failure.
func TestResumedRowsAgreeWithReport(t *testing.T) {
	all := recordtest.ReadFile(t, "../report/testdata/sse-polling.jsonl")
	var post *record.Record
	var get string
	for _, r := range all {
		switch {
		case r.Resume != nil && r.Resume.Resumable:
			post = r
		case r.Resume != nil && len(r.Resume.Responses) > 0:
			get = r.ID
		}
	}
	if post == nil || get == "" {
		t.Fatal("no resumable request and GET: not the file this test is about")
	}
	without := []*record.Record{}
	for _, r := range all {
		if r.ID != get {
			without = append(without, r)
		}
	}
	for _, c := range []struct {
		name     string
		recs     []*record.Record
		postFail bool
	}{
		{"resumed", all, false},
		{"never resumed", without, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			acc := report.New(report.Options{})
			for _, r := range c.recs {
				acc.Add(r)
			}
			acc.Close()
			s := acc.Summary()
			p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, c.recs)}).String())
			browser.WaitFor(t, p, "the rows", fmt.Sprintf(`document.querySelectorAll('#rows tr.row[data-id]').length === %d`, len(c.recs)))
			fail := browser.Eval[map[string]bool](t, p, `Object.fromEntries([...document.querySelectorAll('#rows tr.row[data-id]')].map((tr) =>
			  [tr.dataset.id, tr.classList.contains('fail')]))`)
			failed := map[record.Kind]int64{}
			for _, r := range c.recs {
				f, ok := fail[r.ID]
				if !ok {
					t.Fatalf("no row for %s", r.ID)
				}
				if r.ID == post.ID && f != c.postFail {
					t.Errorf("the resumable tools/call %s: failed row %v, want %v", r.ID, f, c.postFail)
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
		})
	}
}
