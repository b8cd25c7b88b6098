package serve_test

import (
	"context"
	"strings"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpdiag/mcpdiag/serve"
)

// answer is an mcp-go elicitation handler that answers every request with
// one action.
type answer struct {
	action  mcpgo.ElicitationResponseAction
	content any
	asked   int
}

func (a *answer) Elicit(context.Context, mcpgo.ElicitationRequest) (*mcpgo.ElicitationResult, error) {
	a.asked++
	return &mcpgo.ElicitationResult{ElicitationResponse: mcpgo.ElicitationResponse{Action: a.action, Content: a.content}}, nil
}

// TestMCPGoClient has mcp-go v1.2.1's client, written by others, call the
// baseline, tool-error, JSON-RPC-error and elicitation scenarios: it must
// see what each scenario says.
func TestMCPGoClient(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 1})
	tests := []struct {
		name, path, tool string
		args             map[string]any
		elicit           *answer
		check            func(t *testing.T, res *mcpgo.CallToolResult, err error)
	}{
		{"baseline", "/s/baseline/mcp", "echo", map[string]any{"text": "hi"}, nil, func(t *testing.T, res *mcpgo.CallToolResult, err error) {
			if err != nil || res.IsError || !strings.Contains(text(res), "hi") {
				t.Errorf("%v %+v", err, res)
			}
		}},
		{"tool error", "/s/errors.tool_error/mcp", "echo", map[string]any{"text": "hi"}, nil, func(t *testing.T, res *mcpgo.CallToolResult, err error) {
			if err != nil || !res.IsError || text(res) != "Tool-side failure" {
				t.Errorf("%v %+v", err, res)
			}
		}},
		{"JSON-RPC error", "/s/errors.jsonrpc_error/mcp?code=-32603&message=boom", "echo", map[string]any{"text": "hi"}, nil, func(t *testing.T, res *mcpgo.CallToolResult, err error) {
			if err == nil || !strings.Contains(err.Error(), "boom") {
				t.Errorf("want the -32603 error, got %v %+v", err, res)
			}
		}},
		{"elicitation accepted", "/s/elicitation.approval/mcp", "approve", map[string]any{"change": "x"},
			&answer{action: mcpgo.ElicitationResponseActionAccept, content: map[string]any{"reason": "fine"}},
			func(t *testing.T, res *mcpgo.CallToolResult, err error) {
				if err != nil || res.IsError || text(res) != "approved: fine" {
					t.Errorf("%v %+v", err, res)
				}
			}},
		{"elicitation declined", "/s/elicitation.approval/mcp?run=decline", "approve", map[string]any{"change": "x"},
			&answer{action: mcpgo.ElicitationResponseActionDecline},
			func(t *testing.T, res *mcpgo.CallToolResult, err error) {
				if err != nil || !res.IsError || !strings.Contains(text(res), "decline") {
					t.Errorf("%v %+v", err, res)
				}
			}},
		{"decline scenario", "/s/elicitation.decline/mcp", "delete_item", map[string]any{"id": "*"},
			&answer{action: mcpgo.ElicitationResponseActionDecline},
			func(t *testing.T, res *mcpgo.CallToolResult, err error) {
				if err != nil || res.IsError || !strings.Contains(text(res), `"asExpected":true`) {
					t.Errorf("%v %+v", err, res)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, err := transport.NewStreamableHTTP(base + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			var opts []mcpgoclient.ClientOption
			if tt.elicit != nil {
				opts = append(opts, mcpgoclient.WithElicitationHandler(tt.elicit))
			}
			c := mcpgoclient.NewClient(tr, opts...)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			init := mcpgo.InitializeRequest{}
			init.Params.ClientInfo = mcpgo.Implementation{Name: "mcp-go-interop", Version: "1"}
			if tt.elicit != nil {
				init.Params.Capabilities.Elicitation = &mcpgo.ElicitationCapability{}
			}
			ir, err := c.Initialize(ctx, init)
			if err != nil {
				t.Fatal(err)
			}
			if ir.ProtocolVersion != "2026-07-28" {
				t.Logf("mcp-go negotiated %s", ir.ProtocolVersion)
			}
			req := mcpgo.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = tt.tool, tt.args
			res, err := c.CallTool(ctx, req)
			tt.check(t, res, err)
			if tt.elicit != nil && tt.elicit.asked != 1 {
				t.Errorf("the elicitation handler was asked %d times", tt.elicit.asked)
			}
		})
	}
}

func text(res *mcpgo.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcpgo.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
