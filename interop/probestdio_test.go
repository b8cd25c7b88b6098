package interop_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	mjudge "github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
)

// everythingStdioProbe is what `mcpdiag probe -- COMMAND` (default options)
// must find on the pinned server-everything over stdio: the same unknown-tool
// finding as over HTTP, the HTTP-only rules n/a (stdio has no Origin, no
// MCP-Protocol-Version header, no Accept), and no line answering the
// notification.
var everythingStdioProbe = map[string]probeWant{
	"probe.answered":                 {mjudge.Pass, []string{"probes checked"}},
	"probe.answer-shape":             {mjudge.Pass, []string{"probes checked"}},
	"probe.result-type":              {mjudge.NotApplicable, []string{"not applicable on 2025-11-25: resultType is a 2026-07-28 field"}},
	"probe.invalid-arguments":        {mjudge.Pass, []string{"answered isError true, 0 a JSON-RPC error"}},
	"probe.is-error-missing":         {mjudge.Pass, []string{"probes checked"}},
	"probe.unknown-tool":             {mjudge.Fail, []string{"unknown-tool mcpdiag_no_such_tool_", "TOOL_ERROR, not a JSON-RPC error"}},
	"probe.malformed-call":           {mjudge.Pass, []string{"probes checked"}},
	"probe.id-type":                  {mjudge.Pass, []string{"probes checked"}},
	"probe.origin":                   {mjudge.NotApplicable, []string{"not applicable on stdio"}},
	"probe.protocol-version":         {mjudge.NotApplicable, []string{"not applicable on stdio"}},
	"probe.notification-202":         {mjudge.Pass, []string{"1 probe checked"}},
	"probe.protocol-version-missing": {mjudge.NotApplicable, []string{"not applicable on stdio"}},
	"probe.accept":                   {mjudge.NotApplicable, []string{"not applicable on stdio"}},
}

// TestProbeStdioPeers runs `mcpdiag probe -- node …/server-everything stdio`
// (the probe package's stdio transport, default options, 10 s per probe)
// and holds every probe rule's verdict to everythingStdioProbe, plus one row
// for the unknown tool's record (isError "MCP error -32602", the
// protocol-error-as-tool-error warning) and one for the server's stop.
func TestProbeStdioPeers(t *testing.T) {
	t.Parallel()
	const peer = "server-everything 2026.8.31"
	rules := probeRules()
	var rows []row
	for j, rule := range rules {
		rows = append(rows, row{Section: 5, Order: 200 + j, Peer: peer, Direction: fromDiag, Era: "2025-11-25",
			Scenario: "mcpdiag probe (stdio): " + rule, Route: "stdio"})
	}
	rows = append(rows,
		row{Section: 5, Order: 298, Peer: peer, Direction: fromDiag, Era: "2025-11-25", Scenario: "mcpdiag probe (stdio): the unknown tool's record", Route: "stdio"},
		row{Section: 5, Order: 299, Peer: peer, Direction: fromDiag, Era: "2025-11-25", Scenario: "mcpdiag probe (stdio): the server stopped", Route: "stdio"})
	results.expect(t, rows)
	skipShort(t, "server-everything runs on node", rows...)
	nt := needNode(t, rows...)
	if v := nt.packages["@modelcontextprotocol/server-everything"]; v != "2026.8.31" {
		t.Fatalf("@modelcontextprotocol/server-everything %s installed, want the pinned 2026.8.31", v)
	}
	// env keeps the node child to the test's tools; the probe starts it.
	argv := []string{"env", "-i", "PATH=" + nt.bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), nt.node,
		filepath.Join(nt.prefix, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	// 30 s per exchange: the first one waits for node to start
	// server-everything, which took more than 10 s at load 28 (the
	// discover timed out, and its late answer was read as initialize's:
	// "the response id 1 does not match the request id 2"). Each wait ends
	// when its answer comes.
	rep, err := probe.Run(ctx, probe.Options{Command: argv, Timeout: 30 * time.Second})
	cancel()
	if err != nil {
		t.Fatalf("probe.Run %s: %v", strings.Join(argv, " "), err)
	}
	t.Logf("era %s (%s), %d probes, stopped: %s", rep.Protocol, rep.EraReason, len(rep.Probes), rep.Stopped)
	holdProbeRules(t, rep, rows, rules, everythingStdioProbe, "2025-11-25")

	r := rows[len(rules)]
	r.Want = "one record: TOOL_ERROR, isError true, text with \"MCP error -32602\", warning " + classify.WarnProtocolErrorAsTool + ", no HTTP status"
	r.Got, r.Pass = unknownToolAsToolError(rep, true)
	results.add(t, r)

	r = rows[len(rules)+1]
	r.Want = "exited after stdin closed (no kill)"
	r.Got = rep.Stopped
	r.Pass = rep.Stopped == "exited after stdin closed"
	results.add(t, r)
}
