package judge

import (
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestToolErrorEvidenceInPlainWords: when the server's own tool answered
// the last tools/call with isError and no scenario fired on it, the client
// that printed TOOL_ERROR passes client.classification, and the evidence
// says why in plain words, naming the call and the outcome the scenario
// expects (it said "the scenario's TOOL_SUCCESS needs a call the tool
// accepts" before).
func TestToolErrorEvidenceInPlainWords(t *testing.T) {
	t.Parallel()
	isError := true
	recs := []*record.Record{
		{Kind: record.KindExchange, HTTPMethod: http.MethodPost, URL: "/s/elicitation.approval/mcp", Method: "tools/list",
			Status: http.StatusOK, Outcome: classify.ResultSuccess, JSONRPC: record.JSONRPC{ID: wire.IntID(1)}},
		{Kind: record.KindExchange, HTTPMethod: http.MethodPost, URL: "/s/elicitation.approval/mcp", Method: "tools/call", Tool: "approve",
			Status: http.StatusOK, Outcome: classify.ToolError, IsError: &isError, JSONRPC: record.JSONRPC{ID: wire.IntID(2)}},
	}
	tr := NewTrace("elicitation.approval", recs, &Case{Name: "elicitation.approval", Expected: classify.ToolSuccess, Tool: "approve"})
	tr.Client = &ClientRun{Command: []string{"client"}, Outcome: classify.ToolError, Exited: true}
	const want = "printed TOOL_ERROR; expected TOOL_ERROR: the server's tool answered the last tools/call, POST 2 (tools/call approve, id 2), " +
		"with isError true, and no scenario fired on it (the scenario expects TOOL_SUCCESS only when its tool accepts the call)"
	for _, ch := range Judge(tr) {
		if ch.Rule != "client.classification" {
			continue
		}
		if ch.Verdict != Pass || ch.Evidence != want {
			t.Errorf("client.classification %s: %s\nwant pass: %s", ch.Verdict, ch.Evidence, want)
		}
		return
	}
	t.Fatal("client.classification did not run")
}
