package ui

import (
	"net/url"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/browser"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestProbeRecordsNotFailedInBrowser: a probe's record (mcpdiag probe
// --record: a deliberate bad call answered with a tool error) is not
// marked failed on the page, as mcpdiag report does not count it; the same
// outcome on a record that is not a probe is. Before, both were red.
func TestProbeRecordsNotFailedInBrowser(t *testing.T) {
	recs := []*record.Record{
		{Kind: record.KindExchange, ID: "PROBE1", Method: "tools/call", Tool: "echo", Outcome: classify.ToolError, Layer: classify.LayerApplication,
			Probe: &record.Probe{Kind: "wrong-type", Seed: "1", Answer: record.ProbeAnswerResponse}},
		{Kind: record.KindExchange, ID: "REAL1", Method: "tools/call", Tool: "echo", Outcome: classify.ToolError, Layer: classify.LayerApplication},
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	browser.WaitFor(t, p, "the rows", `document.querySelectorAll('#rows tr.row[data-id]').length === 2`)
	for id, want := range map[string]bool{"PROBE1": false, "REAL1": true} {
		if got := browser.Eval[bool](t, p, `document.querySelector('#rows tr.row[data-id="`+id+`"]').classList.contains('fail')`); got != want {
			t.Errorf("row %s marked failed: %v, want %v", id, got, want)
		}
	}
}

// TestEraFallbackRecordsNotFailedInBrowser: the client's refused 2026-07-28
// probe after which it fell back to initialize (mcpdiag call --record in
// auto mode against a 2025-11-25 server: eraFallback, decision renegotiate)
// is not marked failed on the page, as mcpdiag report counts it apart; the
// same 400 without the mark is. Before, both were red.
func TestEraFallbackRecordsNotFailedInBrowser(t *testing.T) {
	recs := []*record.Record{
		{Kind: record.KindExchange, ID: "FALLBACK1", Method: "tools/list", Status: 400, Outcome: classify.HTTPError, Layer: classify.LayerTransport,
			EraFallback: true, Decision: &record.Decision{Action: "renegotiate"}},
		{Kind: record.KindExchange, ID: "REAL1", Method: "tools/list", Status: 400, Outcome: classify.HTTPError, Layer: classify.LayerTransport,
			Decision: &record.Decision{Action: "stop"}},
	}
	p := browser.Open(t, (&url.URL{Scheme: "file", Path: writePage(t, recs)}).String())
	browser.WaitFor(t, p, "the rows", `document.querySelectorAll('#rows tr.row[data-id]').length === 2`)
	for id, want := range map[string]bool{"FALLBACK1": false, "REAL1": true} {
		if got := browser.Eval[bool](t, p, `document.querySelector('#rows tr.row[data-id="`+id+`"]').classList.contains('fail')`); got != want {
			t.Errorf("row %s marked failed: %v, want %v", id, got, want)
		}
	}
}
