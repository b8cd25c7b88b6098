package judge_test

import (
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestProbeAnsweredQuestions: probe.answered reads a server's question as
// an answer (a 2025-11-25 server request the probe answered, then the
// response; a 2026-07-28 input_required), and a stream that still ends
// without a response fails, saying the server had asked.
func TestProbeAnsweredQuestions(t *testing.T) {
	probeRec := func(protocol string, outcome classify.Outcome, requests int) *record.Record {
		return &record.Record{Kind: record.KindExchange, HTTPMethod: "POST", Method: "tools/call", Tool: "confirm", Status: 200,
			Outcome: outcome, ProtocolVersion: protocol, SSE: &record.SSE{Requests: requests},
			Probe: &record.Probe{Kind: "wrong-type", Index: 0, Property: "text"}}
	}
	answer := &record.Record{Kind: record.KindExchange, HTTPMethod: "POST", Method: "elicitation/create", ClientAnswer: true, Status: 202,
		JSONRPC: record.JSONRPC{ID: wire.StringID("srv-1")}, Outcome: classify.ResultSuccess, ProtocolVersion: "2025-11-25"}
	for _, tc := range []struct {
		name    string
		recs    []*record.Record
		verdict judge.Verdict
		says    string
	}{
		{"asked then answered", []*record.Record{answer, probeRec("2025-11-25", classify.ToolError, 1)}, judge.Pass,
			"1 asked the client (elicitation/create)"},
		{"input_required", []*record.Record{probeRec("2026-07-28", classify.InputRequired, 0)}, judge.Pass,
			"1 answered with a question (input_required)"},
		{"asked, never finished", []*record.Record{answer, probeRec("2025-11-25", classify.StreamIncomplete, 1)}, judge.Fail,
			"STREAM_INCOMPLETE after 1 server request(s)"},
		{"2026 stream request", []*record.Record{probeRec("2026-07-28", classify.StreamIncomplete, 1)}, judge.Fail,
			"which 2026-07-28 forbids"},
		// Over stdio (no SSE facts) the probe's own count says the server
		// asked before it went silent.
		{"stdio asked, never answered", []*record.Record{{Kind: record.KindExchange, Method: "tools/call", Tool: "confirm", URL: "stdio:x",
			Outcome: classify.NetworkError, ProtocolVersion: "2025-11-25",
			Probe: &record.Probe{Kind: "wrong-type", Property: "text", Answer: record.ProbeAnswerNone, Asked: 1}}}, judge.Fail,
			"no answer (NETWORK_ERROR) after 1 server request(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := judge.NewTrace("probe", tc.recs, nil)
			tr.Probe = true
			for _, c := range judge.Judge(tr) {
				if c.Rule != "probe.answered" {
					continue
				}
				if c.Verdict != tc.verdict || !strings.Contains(c.Evidence, tc.says) {
					t.Errorf("probe.answered %s %q, want %s saying %q", c.Verdict, c.Evidence, tc.verdict, tc.says)
				}
				return
			}
			t.Fatal("no probe.answered check")
		})
	}
}
