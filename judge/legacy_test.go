package judge

import (
	"net/http"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestLegacySSEAccept: spec.accept is a Streamable HTTP rule; a message
// POSTed over the 2024-11-05 HTTP+SSE transport (answeredOn "stream", as
// the Inspector CLI's --transport sse sends with Accept "*/*") is not
// judged by it. A trace of such POSTs only has it not applicable; one
// with a Streamable HTTP POST too still fails on that POST alone.
func TestLegacySSEAccept(t *testing.T) {
	t.Parallel()
	post := func(n int, on string) *record.Record {
		return &record.Record{
			Kind: record.KindExchange, Time: time.Date(2026, 12, 6, 12, 0, n, 0, time.UTC), HTTPMethod: http.MethodPost,
			Method: "tools/call", Tool: "echo", JSONRPC: record.JSONRPC{ID: wire.IDFromRaw([]byte{'0' + byte(n)})},
			Status: http.StatusAccepted, Outcome: classify.RequestAccepted, AnsweredOn: on,
			RequestHeaders: map[string][]string{"Accept": {"*/*"}}, URL: "http://127.0.0.1:1/message?sessionId=x",
		}
	}
	for _, tc := range []struct {
		name string
		recs []*record.Record
		want Verdict
	}{
		{"legacy only", []*record.Record{post(1, record.AnsweredOnStream), post(2, record.AnsweredOnStream)}, NotApplicable},
		{"a Streamable HTTP POST too", []*record.Record{post(1, record.AnsweredOnStream), post(2, "")}, Fail},
		{"Streamable HTTP only", []*record.Record{post(1, "")}, Fail},
	} {
		tr := NewPassiveTrace(tc.name, tc.recs, func(*record.Record) classify.Outcome { return "" })
		for _, c := range Judge(tr) {
			if c.Rule != "spec.accept" {
				continue
			}
			if c.Verdict != tc.want {
				t.Errorf("%s: spec.accept %s (%s), want %s", tc.name, c.Verdict, c.Evidence, tc.want)
			}
			if tc.want == Fail && c.Evidence != "POST 2 (tools/call echo, id 2): Accept \"*/*\"" && c.Evidence != "POST 1 (tools/call echo, id 1): Accept \"*/*\"" {
				t.Errorf("%s: evidence %q names more than the Streamable HTTP POST", tc.name, c.Evidence)
			}
		}
	}
}

// TestLegacySSEAcceptPassEvidence: a passing spec.accept counts the POSTs
// it checked, not the 2024-11-05 HTTP+SSE POSTs it skipped (before, a trace
// of one Streamable HTTP POST and two legacy ones said "3 POST(s) checked").
func TestLegacySSEAcceptPassEvidence(t *testing.T) {
	t.Parallel()
	post := func(n int, on, accept string) *record.Record {
		return &record.Record{
			Kind: record.KindExchange, Time: time.Date(2026, 12, 6, 12, 0, n, 0, time.UTC), HTTPMethod: http.MethodPost,
			Method: "tools/call", Tool: "echo", JSONRPC: record.JSONRPC{ID: wire.IDFromRaw([]byte{'0' + byte(n)})},
			Status: http.StatusAccepted, Outcome: classify.RequestAccepted, AnsweredOn: on,
			RequestHeaders: map[string][]string{"Accept": {accept}}, URL: "http://127.0.0.1:1/message?sessionId=x",
		}
	}
	recs := []*record.Record{post(1, record.AnsweredOnStream, "*/*"), post(2, "", "application/json, text/event-stream"), post(3, record.AnsweredOnStream, "*/*")}
	tr := NewPassiveTrace("mixed", recs, func(*record.Record) classify.Outcome { return "" })
	found := false
	for _, c := range Judge(tr) {
		if c.Rule != "spec.accept" {
			continue
		}
		found = true
		if want := "1 POST(s) checked (2 over the 2024-11-05 HTTP+SSE transport not judged)"; c.Verdict != Pass || c.Evidence != want {
			t.Errorf("spec.accept %s (%q), want pass (%q)", c.Verdict, c.Evidence, want)
		}
	}
	if !found {
		t.Fatal("no spec.accept check")
	}
}
