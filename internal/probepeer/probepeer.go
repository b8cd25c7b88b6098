// Package probepeer holds the Go SDK servers that mcpdiag probe is tested
// against (probe's own tests and interop's rows): servers written the
// SDK's documented way, with validation nobody on the team wrote, a
// read-only tool the probe calls and a destructive one it must never call.
package probepeer

import (
	"context"
	"net/http"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GoSDK is a go-sdk v1.8.0 server: a typed read-only tool lookup (go-sdk
// infers its inputSchema from the struct and validates the arguments
// against it) and a destructive drop_table that panics if it runs.
// stateless picks go-sdk's stateless handler (the 2026-07-28 way) or a
// session one (2025-11-25).
func GoSDK(stateless bool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "probepeer-go-sdk", Version: "1.8.0"}, nil)
	type lookupIn struct {
		Q    string `json:"q" jsonschema:"the word"`
		N    int    `json:"n,omitempty" jsonschema:"how many"`
		Lang string `json:"lang,omitempty" jsonschema:"en or fr"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "lookup", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in lookupIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "found " + in.Q}}}, nil, nil
		})
	type dropIn struct {
		Table string `json:"table"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "drop_table", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(bool)}},
		func(context.Context, *mcp.CallToolRequest, dropIn) (*mcp.CallToolResult, any, error) {
			panic("drop_table ran")
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// MCPGo is an mcp-go v1.2.1 server whose read-only tool lookup declares
// constraints (q required, at most 5 long; n from 1 to 3), reads its
// arguments the library's way (RequireString, which answers a missing or
// mistyped q with a tool error) and checks nothing else, and a destructive
// drop_table that panics if it runs.
func MCPGo() http.Handler {
	s := mcpgoserver.NewMCPServer("probepeer-mcp-go", "1.2.1", mcpgoserver.WithToolCapabilities(false))
	s.AddTool(mcpgo.NewTool("lookup", mcpgo.WithReadOnlyHintAnnotation(true),
		mcpgo.WithString("q", mcpgo.Required(), mcpgo.MaxLength(5)),
		mcpgo.WithNumber("n", mcpgo.Min(1), mcpgo.Max(3))),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			q, err := req.RequireString("q")
			if err != nil {
				return mcpgo.NewToolResultError(err.Error()), nil
			}
			return mcpgo.NewToolResultText("found " + q), nil
		})
	s.AddTool(mcpgo.NewTool("drop_table", mcpgo.WithDestructiveHintAnnotation(true), mcpgo.WithString("t", mcpgo.Required())),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			panic("drop_table ran")
		})
	return mcpgoserver.NewStreamableHTTPServer(s)
}
