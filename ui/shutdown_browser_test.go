package ui

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestShutdownCutRowsAgreeWithReport: on the page of real records that the
// proxy's and serve's own shutdown cut (report/testdata/shutdown-cut.jsonl,
// exchanges flagged SD), the cut rows are not failed rows, as many as
// mcpdiag report counts cut by shutdown, the failed rows are as many as its
// failures, the latency chart leaves the cut ones out as its percentiles
// do, and the count line says how many were cut. Before, the cut
// NETWORK_ERROR exchanges were red rows.
func TestShutdownCutRowsAgreeWithReport(t *testing.T) {
	recs := recordtest.ReadFile(t, "../report/testdata/shutdown-cut.jsonl")
	// And an SD exchange with what the server said before the stop, a 500
	// (review18's hang after a 500's head): the server's own failure, a
	// failed row as report counts it, not a cut one.
	for _, r := range recs {
		if r.CutByShutdown() {
			r500 := *r
			r500.ID, r500.Outcome, r500.Status = r.ID+"-500", classify.HTTPError, 500
			if r500.CutByShutdown() {
				t.Fatal("an SD record with the server's 500 is cut by shutdown: not what this test is about")
			}
			recs = append(recs, &r500)
			break
		}
	}
	acc := report.New(report.Options{})
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	s := acc.Summary()
	if s.CutByShutdown == 0 {
		t.Fatal("the report counts no record cut by shutdown: not the file this test is about")
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	browser.WaitFor(t, p, "the rows", fmt.Sprintf(`document.querySelectorAll('#rows tr.row[data-id]').length === %d`, len(recs)))
	type rowState struct {
		Fail bool `json:"fail"`
	}
	rows := browser.Eval[map[string]rowState](t, p, `Object.fromEntries([...document.querySelectorAll('#rows tr.row[data-id]')].map((tr) =>
	  [tr.dataset.id, {fail: tr.classList.contains('fail')}]))`)
	var failed, cut int64
	for _, r := range recs {
		st, ok := rows[r.ID]
		if !ok {
			t.Fatalf("no row for %s", r.ID)
		}
		if r.CutByShutdown() {
			cut++
			if st.Fail {
				t.Errorf("%s %s: a row cut by the shutdown (flags %v) is a failed row", r.Outcome, r.ID, r.Flags)
			}
		}
		if st.Fail {
			failed++
		}
	}
	if sec := s.Exchanges; failed != sec.Failures || cut != sec.CutByShutdown {
		t.Errorf("the page %d failed, %d cut; report %d failures, %d cut by shutdown", failed, cut, sec.Failures, sec.CutByShutdown)
	}
	browser.WaitFor(t, p, "the latency chart", `document.querySelector('#chart-latency svg') !== null`)
	labels := browser.Eval[[]string](t, p, `[...document.querySelectorAll('#chart-latency svg text')].map((x) => x.textContent)`)
	if slices.ContainsFunc(labels, func(l string) bool { return strings.HasPrefix(l, "NETWORK_ERROR") }) {
		t.Errorf("latency chart labels %q: the cut exchanges' NETWORK_ERROR is no latency", labels)
	}
	want := fmt.Sprintf("%d of %d records · %d cut by shutdown (the proxy's or server's own; incomplete; not failures)", len(recs), len(recs), s.CutByShutdown)
	if got := browser.Eval[string](t, p, `document.getElementById('count').textContent`); got != want {
		t.Errorf("count line %q, want %q", got, want)
	}
}
