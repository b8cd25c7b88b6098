package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/retry"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
)

// mcpGoHandler serves the fixture tools from mcp-go v1.2.1, which decides
// the era per request on one endpoint.
func mcpGoHandler() http.Handler {
	s := mcpgoserver.NewMCPServer("fixture-mcpgo", "1", mcpgoserver.WithToolCapabilities(false), mcpgoserver.WithElicitation())
	s.AddTool(mcpgo.NewTool("echo", mcpgo.WithReadOnlyHintAnnotation(true), mcpgo.WithString("text")),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcpgo.NewTool("fail", mcpgo.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultError("the tool failed on purpose"), nil
		})
	s.AddTool(mcpgo.NewTool("write", mcpgo.WithReadOnlyHintAnnotation(false), mcpgo.WithDestructiveHintAnnotation(true), mcpgo.WithIdempotentHintAnnotation(false)),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText("written"), nil
		})
	s.AddTool(mcpgo.NewTool("confirm"),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			if r := mcpgoserver.ElicitationResponse(req.Params.InputResponses, "approval"); r != nil {
				return mcpgo.NewToolResultText("confirmed: " + string(r.Action)), nil
			}
			return mcpgoserver.NewInputRequestBuilder("state-1").Elicit("approval", mcpgo.ElicitationParams{
				Message:         "Approve the change?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`),
			}).ToolResult(), nil
		})
	return mcpgoserver.NewStreamableHTTPServer(s)
}

func TestCallMCPGo(t *testing.T) {
	answer := json.RawMessage(`{"action":"accept","content":{"ok":true}}`)
	approve := client.MapInputs{"approval": answer, "elicitation/create": answer}
	tests := []struct {
		name      string
		protocol  string
		tool      string
		fault     string
		inputs    client.InputProvider
		want      classify.Outcome
		action    retry.Action
		toolCalls int
	}{
		{"2026 success", "2026-07-28", "echo", "", nil, classify.ToolSuccess, retry.Done, 1},
		{"2026 tool error", "2026-07-28", "fail", "", nil, classify.ToolError, retry.SurfaceToModel, 1},
		{"2026 MRTR answered", "2026-07-28", "confirm", "", approve, classify.ToolSuccess, retry.Done, 2},
		{"2026 503 then 200", "2026-07-28", "echo", "503", nil, classify.ToolSuccess, retry.Done, 2},
		{"2026 SSE cut, destructive not retried", "2026-07-28", "write", "sse-cut", nil, classify.StreamIncomplete, retry.Fail, 1},
		{"2026 reset, read-only retried", "2026-07-28", "echo", "reset", nil, classify.ToolSuccess, retry.Done, 2},
		{"2025 success", "2025-11-25", "echo", "", nil, classify.ToolSuccess, retry.Done, 1},
		{"2025 tool error", "2025-11-25", "fail", "", nil, classify.ToolError, retry.SurfaceToModel, 1},
		{"2025 429 then 200", "2025-11-25", "write", "429", nil, classify.ToolSuccess, retry.Done, 2},
		{"auto is modern", "auto", "echo", "", nil, classify.ToolSuccess, retry.Done, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := serve(t, mcpGoHandler(), tt.fault)
			c := newClient(t, url, tt.protocol, tt.inputs)
			call, err := c.CallTool(context.Background(), tt.tool, json.RawMessage(`{"text":"hi"}`))
			if err != nil {
				t.Fatal(err)
			}
			if call.Outcome != tt.want || call.Decision.Action != tt.action {
				for _, ex := range call.Exchanges {
					t.Logf("%d %s %d %s %s", ex.Seq, ex.Method, ex.Status, ex.Result.Outcome, ex.Result.Reason)
				}
				t.Fatalf("outcome %s, decision %s (%s); want %s, %s", call.Outcome, call.Decision.Action, call.Decision.Reason, tt.want, tt.action)
			}
			checkRounds(t, call, srv)
			if got := srv.count("tools/call"); got != tt.toolCalls {
				t.Errorf("server saw %d tools/call POSTs, want %d", got, tt.toolCalls)
			}
		})
	}
}
