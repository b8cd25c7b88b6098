package probe_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/fixture"
	"github.com/mcpdiag/mcpdiag/probe"
)

// TestToolLineCountsWhatTheRuleCounts: the per-tool line said "N argument
// probes" and counted the arguments-not-object probe among them (a
// JSON-RPC error, its expected answer), so its JSON-RPC errors did not add
// up to probe.invalid-arguments' "K a JSON-RPC error". The line counts the
// argument probes as the rule does, and names the arguments-not-object
// probe as probe.malformed-call's.
func TestToolLineCountsWhatTheRuleCounts(t *testing.T) {
	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			ts := httptest.NewServer(fixture.New(fixture.Options{}))
			defer ts.Close()
			rep := run(t, ts.URL, protocol, probe.Options{})
			var text strings.Builder
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			toolErrors, rpcErrors := 0, 0
			for _, tp := range rep.Tools {
				toolErrors += tp.ToolErrors
				rpcErrors += tp.RPCErrors
				if tp.Probes != tp.Arguments+tp.NotObject {
					t.Errorf("%s: %d probes, %d argument + %d arguments-not-object", tp.Name, tp.Probes, tp.Arguments, tp.NotObject)
				}
			}
			want := fmt.Sprintf("PASS probe.invalid-arguments: %d answered isError true, %d a JSON-RPC error", toolErrors, rpcErrors)
			if !strings.Contains(text.String(), want) {
				t.Errorf("the per-tool lines count %d isError and %d JSON-RPC errors; the rule's line is not %q:\n%s", toolErrors, rpcErrors, want, text.String())
			}
			for _, line := range []string{
				"  tool echo: 1 argument probe: 1 isError, 0 JSON-RPC error, 0 success, 0 other; 1 arguments-not-object probe (probe.malformed-call)\n",
				"  tool protocol_report: no argument probe; 1 arguments-not-object probe (probe.malformed-call)\n",
			} {
				if !strings.Contains(text.String(), line) {
					t.Errorf("text lacks %q:\n%s", line, text.String())
				}
			}
		})
	}
}
