package probe_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goSDKServer is a go-sdk server nobody on the team wrote the validation
// of: a typed tool (go-sdk infers its inputSchema from the struct and
// validates the arguments itself) and a destructive one.
func goSDKServer(stateless bool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-peer", Version: "1"}, nil)
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
		func(_ context.Context, _ *mcp.CallToolRequest, in dropIn) (*mcp.CallToolResult, any, error) {
			panic("drop_table ran")
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// TestProbeGoSDK: go-sdk v1.8.0's typed tools, in both eras, pass every
// rule but one: its handler checks the Host header against DNS rebinding,
// not the Origin (unless wrapped in http.CrossOriginProtection), so a
// foreign Origin is served. What it gets is recorded in docs/probe.md.
func TestProbeGoSDK(t *testing.T) {
	for _, tc := range []struct {
		protocol  string
		stateless bool
	}{{"2026-07-28", true}, {"2025-11-25", false}} {
		t.Run(tc.protocol, func(t *testing.T) {
			ts := httptest.NewServer(goSDKServer(tc.stateless))
			defer ts.Close()
			rep := run(t, ts.URL, tc.protocol, probe.Options{})
			t.Logf("%s", checks(rep.Checks))
			for _, c := range rep.Checks {
				if c.Rule == "probe.origin" {
					if c.Verdict != judge.Fail || !strings.Contains(c.Evidence, "HTTP 200") {
						t.Errorf("probe.origin %s: %s (go-sdk v1.8.0 serves a foreign Origin)", c.Verdict, c.Evidence)
					}
					continue
				}
				if c.Verdict == judge.Fail {
					t.Errorf("%s failed: %s", c.Rule, c.Evidence)
				}
			}
		})
	}
}
