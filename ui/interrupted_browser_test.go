package ui

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestInterruptedRowsAgreeWithReport: on the page of a real interrupted
// matrix's records, the rows of the run the stop cut short (the warning
// matrix-run-interrupted) are marked INTERRUPTED and are not failed rows,
// kind by kind as many as mcpdiag report counts interrupted, the failed
// rows are as many as its failures, and the count line says how many
// records are of interrupted runs. Before, the cut run's NETWORK_ERROR
// call and exchanges were red rows, as report counted them failures.
func TestInterruptedRowsAgreeWithReport(t *testing.T) {
	recs := recordtest.ReadFile(t, "../report/testdata/matrix-interrupted.jsonl")
	acc := report.New(report.Options{})
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	s := acc.Summary()
	if s.Interrupted == 0 {
		t.Fatal("the report counts no interrupted record: not the file this test is about")
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	browser.WaitFor(t, p, "the rows", fmt.Sprintf(`document.querySelectorAll('#rows tr.row[data-id]').length === %d`, len(recs)))
	type rowState struct {
		Fail        bool   `json:"fail"`
		Interrupted bool   `json:"interrupted"`
		Flags       string `json:"flags"`
	}
	rows := browser.Eval[map[string]rowState](t, p, `Object.fromEntries([...document.querySelectorAll('#rows tr.row[data-id]')].map((tr) =>
	  [tr.dataset.id, {fail: tr.classList.contains('fail'), interrupted: tr.classList.contains('interrupted'), flags: tr.querySelector('.c-flags').textContent}]))`)
	failed, interrupted := map[record.Kind]int64{}, map[record.Kind]int64{}
	for _, r := range recs {
		st, ok := rows[r.ID]
		if !ok {
			t.Fatalf("no row for %s", r.ID)
		}
		if st.Interrupted != r.Interrupted() {
			t.Errorf("%s %s: row interrupted %v, the record's warnings %v", r.Kind, r.ID, st.Interrupted, r.Warnings)
		}
		if st.Interrupted && (st.Fail || st.Flags == "" || st.Flags[:len("INTERRUPTED")] != "INTERRUPTED") {
			t.Errorf("%s %s: an interrupted row failed %v, flags %q", r.Kind, r.ID, st.Fail, st.Flags)
		}
		if st.Fail {
			failed[r.Kind]++
		}
		if st.Interrupted {
			interrupted[r.Kind]++
		}
	}
	for _, sec := range []*report.Section{s.Calls, s.Exchanges, s.Server} {
		k := record.Kind(sec.Kind)
		if failed[k] != sec.Failures || interrupted[k] != sec.Interrupted {
			t.Errorf("%s: the page %d failed, %d interrupted; report %d failures, %d interrupted", k, failed[k], interrupted[k], sec.Failures, sec.Interrupted)
		}
	}
	// The latency chart (of the calls) leaves the cut call out, as the
	// report's percentiles do: its time is the stop's.
	browser.WaitFor(t, p, "the latency chart", `document.querySelector('#chart-latency svg') !== null`)
	labels := browser.Eval[[]string](t, p, `[...document.querySelectorAll('#chart-latency svg text')].map((x) => x.textContent)`)
	if !slices.Contains(labels, "JSONRPC_ERROR (1)") || slices.ContainsFunc(labels, func(l string) bool { return strings.HasPrefix(l, "NETWORK_ERROR") }) {
		t.Errorf("latency chart labels %q: want JSONRPC_ERROR (1) and no NETWORK_ERROR (the interrupted call's)", labels)
	}
	want := fmt.Sprintf("%d of %d records · %d of interrupted runs (incomplete; not failures)", len(recs), len(recs), s.Interrupted)
	if got := browser.Eval[string](t, p, `document.getElementById('count').textContent`); got != want {
		t.Errorf("count line %q, want %q", got, want)
	}
}
