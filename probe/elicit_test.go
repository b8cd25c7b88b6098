package probe_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
)

// TestProbeToolThatAsks: an mcp-go v1.2.1 server whose read-only tool asks
// the user to confirm (an MRTR form elicitation, which mcp-go bridges to an
// elicitation/create request on the tools/call stream for a 2025-11-25
// client, and waits for its answer). A server that asks a question is not
// at fault: on 2025-11-25 the probe answers (it declines) and the tool
// finishes; on 2026-07-28 the input_required result is an answer.
// probe.answered passes in both eras, its evidence says the server asked,
// and the server saw the probe's decline.
func TestProbeToolThatAsks(t *testing.T) {
	var mu sync.Mutex
	var actions []string
	s := mcpgoserver.NewMCPServer("mcpgo-asks", "1", mcpgoserver.WithToolCapabilities(false), mcpgoserver.WithElicitation())
	s.AddTool(mcpgo.NewTool("confirm", mcpgo.WithReadOnlyHintAnnotation(true), mcpgo.WithString("text", mcpgo.MaxLength(3))),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			if r := mcpgoserver.ElicitationResponse(req.Params.InputResponses, "approval"); r != nil {
				mu.Lock()
				actions = append(actions, string(r.Action))
				mu.Unlock()
				return mcpgo.NewToolResultError("not confirmed: " + string(r.Action)), nil
			}
			return mcpgoserver.NewInputRequestBuilder("state-1").Elicit("approval", mcpgo.ElicitationParams{
				Message:         "Approve the lookup?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`),
			}).ToolResult(), nil
		})
	ts := httptest.NewServer(mcpgoserver.NewStreamableHTTPServer(s))
	defer ts.Close()
	for _, tc := range []struct{ protocol, says string }{
		{"2025-11-25", "asked the client (elicitation/create)"},
		{"2026-07-28", "answered with a question (input_required)"},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			mu.Lock()
			actions = nil
			mu.Unlock()
			rep := run(t, ts.URL, tc.protocol, probe.Options{MaxPerTool: 2, Timeout: 2 * time.Second})
			t.Logf("%s", checks(rep.Checks))
			var answered *judge.Check
			for i, c := range rep.Checks {
				if c.Rule == "probe.answered" {
					answered = &rep.Checks[i]
				}
			}
			if answered == nil {
				t.Fatal("no probe.answered check")
			}
			if answered.Verdict != judge.Pass {
				t.Errorf("probe.answered %s, want pass: %s", answered.Verdict, answered.Evidence)
			}
			if !strings.Contains(answered.Evidence, tc.says) {
				t.Errorf("probe.answered evidence %q does not say %q", answered.Evidence, tc.says)
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.protocol == "2025-11-25" {
				if len(actions) == 0 {
					t.Errorf("the tool never got the probe's answer")
				}
				for _, a := range actions {
					if a != "decline" {
						t.Errorf("the probe answered the elicitation with %q, want decline", a)
					}
				}
			}
		})
	}
}
