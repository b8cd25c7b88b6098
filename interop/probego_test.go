package interop_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mjudge "github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
)

// probeGoSDKServer is a go-sdk server written the SDK's documented way: a
// typed read-only tool (go-sdk infers its inputSchema from the struct and
// validates the arguments against it) and a destructive one that must
// never run (the probe does not call a tool that is not read-only).
func probeGoSDKServer(stateless bool) http.Handler {
	s := mcp.NewServer(&mcp.Implementation{Name: "interop-probe-go-sdk", Version: "1.8.0"}, nil)
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

// probeMCPGoServer is an mcp-go server whose read-only tool declares
// constraints (q required, at most 5 long; n from 1 to 3) and reads its
// arguments the library's way (RequireString) and checks nothing else, and
// a destructive tool that must never run.
func probeMCPGoServer() http.Handler {
	s := mcpgoserver.NewMCPServer("interop-probe-mcp-go", "1.2.1", mcpgoserver.WithToolCapabilities(false))
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

// goProbeWant is what the probe must find on a Go peer in an era: every
// rule passes (result-type is n/a on 2025-11-25, which has none) but the
// ones in fail, with those evidence words; a passing
// probe.invalid-arguments must say every answer was isError.
func goProbeWant(era string, fail map[string][]string) map[string]probeWant {
	want := map[string]probeWant{}
	for _, rule := range probeRules() {
		want[rule] = probeWant{mjudge.Pass, nil}
	}
	// Every bad argument a tool execution error, as SEP-1303 wants.
	want["probe.invalid-arguments"] = probeWant{mjudge.Pass, []string{"answered isError true, 0 a JSON-RPC error"}}
	if era == era25 {
		want["probe.result-type"] = probeWant{mjudge.NotApplicable, []string{"no probe of this kind was answered"}}
	}
	for rule, words := range fail {
		want[rule] = probeWant{mjudge.Fail, words}
	}
	return want
}

// TestProbeGoPeers runs `mcpdiag probe` (the probe package, default
// options, each probe bounded by 10 s) against go-sdk's and mcp-go's
// servers on 127.0.0.1, in both eras, and holds every probe rule's verdict:
// one row per rule. go-sdk (typed tools, its own validation) fails only
// probe.origin: its handler checks the Host header, not the Origin. mcp-go
// also fails probe.invalid-arguments: it does not validate arguments against
// the inputSchema it declares, so a mistyped n and a too-long q are
// successes (a missing q is RequireString's tool error). docs/probe.md has
// the results.
func TestProbeGoPeers(t *testing.T) {
	t.Parallel()
	origin := []string{"foreign-origin", "HTTP 200 (RESULT_SUCCESS), not 403"}
	mcpGoArgs := []string{"wrong-type lookup.n", "too-long lookup.q", "accepted as a success"}
	runs := []struct {
		peer, era string
		handler   http.Handler
		fail      map[string][]string
	}{
		{goSDK, era26, probeGoSDKServer(true), map[string][]string{"probe.origin": origin}},
		{goSDK, era25, probeGoSDKServer(false), map[string][]string{"probe.origin": origin}},
		{mcpGo, era26, probeMCPGoServer(), map[string][]string{"probe.origin": origin, "probe.invalid-arguments": mcpGoArgs}},
		{mcpGo, era25, probeMCPGoServer(), map[string][]string{"probe.origin": origin, "probe.invalid-arguments": mcpGoArgs}},
	}
	rules := probeRules()
	var rows []row
	for i, r := range runs {
		for j, rule := range rules {
			rows = append(rows, row{Section: 6, Order: i*100 + j, Peer: r.peer, Direction: fromDiag, Era: r.era,
				Scenario: "mcpdiag probe: " + rule, Route: "direct"})
		}
	}
	results.expect(t, rows)
	for i, r := range runs {
		url := startHandler(t, r.handler)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		rep, err := probe.Run(ctx, probe.Options{URL: url, Protocol: r.era, Timeout: 10 * time.Second})
		cancel()
		if err != nil {
			t.Errorf("probe.Run %s (%s %s): %v", url, r.peer, r.era, err)
			continue // the rows are counted as failed by expect
		}
		t.Logf("%s %s: %d probes", r.peer, rep.Protocol, len(rep.Probes))
		holdProbeRules(t, rep, rows[i*len(rules):], rules, goProbeWant(r.era, r.fail), r.era)
	}
}
