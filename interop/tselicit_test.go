//go:build unix

package interop_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	judgepkg "github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/matrix"
)

// TestTypeScriptClientWithoutElicitationJudgedTruly runs the TypeScript
// SDK's matrix client (interop/node/ts-matrix-client.mjs: it declares no
// elicitation capability) on elicitation.approval, with no era pinned (the SDK falls back to
// 2025-11-25 through initialize). The server
// answers such a client's approve with a tool error (isError: true), and
// the client prints TOOL_ERROR: what the server answered. The matrix said
// "client.classification: printed TOOL_ERROR; expected TOOL_SUCCESS", a
// misclassification the client never made; then (d339519) it passed the
// row, for an elicitation round that never took place. The run is "not
// tested" (client.capability, from the capabilities its initialize
// declared: none), neither passed nor failed, and the classification of
// the tool error still passes.
func TestTypeScriptClientWithoutElicitationJudgedTruly(t *testing.T) {
	t.Parallel()
	const peer = "TS SDK v2 client 2.4.0"
	r := row{Section: 7, Order: 1, Peer: peer, Direction: "peer → mcpdiag matrix", Era: "2025-11-25",
		Scenario: "elicitation.approval with no elicitation capability: not tested (no elicitation round), and the tool error it prints is what the server answered", Route: "mcpdiag matrix -- node …"}
	results.expect(t, []row{r})
	skipShort(t, "the TypeScript SDK runs on node", r)
	nt := needNode(t, r)
	cases, err := matrix.Select(matrix.Cases(), []string{"elicitation.approval"}, matrix.Era2026)
	if err != nil || len(cases) != 1 {
		t.Fatalf("elicitation.approval: %d case(s), %v", len(cases), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := matrix.Run(ctx, matrix.Options{
		Cases:    cases,
		Command:  []string{nt.node, filepath.Join(root, "interop", "node", "ts-matrix-client.mjs")},
		Env:      append(os.Environ(), "MCPDIAG_NODE_PREFIX="+nt.prefix),
		Parallel: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 1 {
		t.Fatalf("%d cases judged, want 1", len(rep.Cases))
	}
	run := rep.Cases[0].Runs[0]
	var bad []string
	if run.Client.Outcome != "TOOL_ERROR" {
		bad = append(bad, "printed "+string(run.Client.Outcome)+", want TOOL_ERROR; stderr "+run.Client.Stderr)
	}
	for _, ch := range run.Checks {
		t.Logf("%s %s: %s", ch.Rule, ch.Verdict, ch.Evidence)
		switch {
		case ch.Rule == "client.classification" && (ch.Verdict != judgepkg.Pass || !strings.Contains(ch.Evidence, "printed TOOL_ERROR")):
			bad = append(bad, "client.classification "+string(ch.Verdict)+": "+ch.Evidence)
		case ch.Rule == "client.capability" && (ch.Verdict != judgepkg.NotTested ||
			!strings.Contains(ch.Evidence, "the client declared no elicitation capability (POST 1 (initialize") ||
			!strings.Contains(ch.Evidence, "with a tool error (isError: true)") || !strings.Contains(ch.Evidence, "the interaction was not exercised")):
			bad = append(bad, "client.capability "+string(ch.Verdict)+": "+ch.Evidence)
		case ch.Verdict == judgepkg.Fail:
			bad = append(bad, ch.Rule+" failed: "+ch.Evidence)
		}
	}
	if v := run.Verdict(); v != judgepkg.NotTested || rep.Failed() {
		bad = append(bad, fmt.Sprintf("the run's verdict is %s (the matrix failed: %v), want not tested", v, rep.Failed()))
	}
	r.Want = "not tested (no elicitation capability declared at initialize), TOOL_ERROR printed and client.classification passing on it"
	r.Got = strings.Join(bad, "; ")
	r.Pass = len(bad) == 0
	if r.Pass {
		r.Got = "as wanted"
	}
	results.add(t, r)
}
