package classify_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestInputValidationTextByRevision: the TypeScript SDK v1's "MCP error
// -32602: Input validation error: …" as an isError result is what SEP-1303
// asks for on 2025-11-25 and later (no warning), and a protocol failure
// dressed as a tool error before it, on 2025-06-18, which the proxy sees
// from real clients though mcpdiag's own CLI speaks only the two newest
// revisions (so this is no golden: TestThreeViewsAgree runs every golden
// through `mcpdiag classify --protocol`).
func TestInputValidationTextByRevision(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"MCP error -32602: Input validation error: Invalid arguments for tool get-sum: expected number"}],"isError":true}}`
	for _, tt := range []struct {
		protocol string
		warned   bool
	}{
		{"2025-06-18", true},
		{"2025-03-26", true},
		{classify.Protocol2025, false},
		{classify.Protocol2026, false},
	} {
		r, err := classify.Classify(&classify.Exchange{
			Method: "tools/call", ID: wire.IntID(5), ProtocolVersion: tt.protocol, Status: http.StatusOK,
			Header: http.Header{"Content-Type": {"application/json"}}, BodyBytes: []byte(body),
		})
		if err != nil {
			t.Fatal(err)
		}
		warned := slices.ContainsFunc(r.Warnings(), func(w classify.Warning) bool { return w.Code == classify.WarnProtocolErrorAsTool })
		if r.Outcome != classify.ToolError || warned != tt.warned {
			t.Errorf("%s: %s, warned %v; want TOOL_ERROR, warned %v", tt.protocol, r.Outcome, warned, tt.warned)
		}
	}
}
