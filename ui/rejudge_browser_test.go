package ui

import (
	"net/url"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestOlderHTTPSuccessAsReportCounts: an exchange record of an mcpdiag
// before 15d740b (2026-12-06) said RESULT_SUCCESS in the application layer
// for an exchange that is not a JSON-RPC request (here a 2025-11-25 GET
// stream that mcpdiag proxy recorded, written back as such a build wrote
// it). mcpdiag report counts it HTTP_SUCCESS in the transport layer; the
// page showed RESULT_SUCCESS and drew it in the application layer (found by
// newuser7 comparing report's text with report --html).
func TestOlderHTTPSuccessAsReportCounts(t *testing.T) {
	recs := recordtest.ReadFile(t, "testdata/older-get.jsonl")
	acc := report.New(report.Options{})
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	s := acc.Summary()
	if s.Rejudged != 1 || len(s.Exchanges.ByOutcome) != 1 || s.Exchanges.ByOutcome[0].Outcome != "HTTP_SUCCESS" || s.Exchanges.ByLayer["transport"] != 1 {
		t.Fatalf("report: rejudged %d, outcomes %+v, layers %v", s.Rejudged, s.Exchanges.ByOutcome, s.Exchanges.ByLayer)
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	id := recs[0].ID
	clickRow(t, p, id)
	got := browser.Eval[[]string](t, p, `(() => {
	  const tr = document.querySelector('#rows tr.row[data-id="`+id+`"]');
	  return tr ? [tr.querySelector('.c-outcome').textContent, tr.dataset.layer] : [];
	})()`)
	if len(got) != 2 || got[0] != "HTTP_SUCCESS" || got[1] != "transport" {
		t.Errorf("the row shows outcome and layer %q, want HTTP_SUCCESS in transport (as report counts it)", got)
	}
	if !browser.Eval[bool](t, p, `document.getElementById('detail').textContent.includes('re-judged')`) {
		t.Errorf("the detail does not say the record was re-judged")
	}
}

// TestClientAnswerAsRecorded: a client's answer to a server request the
// proxy did not see (testdata/inspector-clientanswer.jsonl, recorded today
// by mcpdiag proxy for the Inspector CLI in front of server-everything: a
// POST with clientAnswer, no method, 202, RESULT_SUCCESS) is this version's
// record, not an older one: the page shows it as recorded, as report counts
// it. Before, both re-judged it HTTP_SUCCESS in the transport layer and said
// it was "of an older mcpdiag".
func TestClientAnswerAsRecorded(t *testing.T) {
	recs := recordtest.ReadFile(t, "testdata/inspector-clientanswer.jsonl")
	var id string
	for _, r := range recs {
		if r.ClientAnswer && r.Method == "" {
			id = r.ID
		}
	}
	if id == "" {
		t.Fatal("the testdata holds no unpaired client answer")
	}
	acc := report.New(report.Options{})
	for _, r := range recs {
		acc.Add(r)
	}
	acc.Close()
	if s := acc.Summary(); s.Rejudged != 0 {
		t.Fatalf("report re-judged %d records", s.Rejudged)
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	clickRow(t, p, id)
	got := browser.Eval[[]string](t, p, `(() => {
	  const tr = document.querySelector('#rows tr.row[data-id="`+id+`"]');
	  return tr ? [tr.querySelector('.c-outcome').textContent, tr.dataset.layer] : [];
	})()`)
	if len(got) != 2 || got[0] != "RESULT_SUCCESS" || got[1] != "application" {
		t.Errorf("the answer's row shows outcome and layer %q, want RESULT_SUCCESS in application, as recorded", got)
	}
	if browser.Eval[bool](t, p, `document.getElementById('detail').textContent.includes('re-judged')`) {
		t.Errorf("the detail says the record was re-judged")
	}
}
