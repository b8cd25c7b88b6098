package interop_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/probepeer"
	mjudge "github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
)

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
		want["probe.result-type"] = probeWant{mjudge.NotApplicable, []string{"not applicable on 2025-11-25: resultType is a 2026-07-28 field"}}
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
		{goSDK, era26, probepeer.GoSDK(true), map[string][]string{"probe.origin": origin}},
		{goSDK, era25, probepeer.GoSDK(false), map[string][]string{"probe.origin": origin}},
		{mcpGo, era26, probepeer.MCPGo(), map[string][]string{"probe.origin": origin, "probe.invalid-arguments": mcpGoArgs}},
		{mcpGo, era25, probepeer.MCPGo(), map[string][]string{"probe.origin": origin, "probe.invalid-arguments": mcpGoArgs}},
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
