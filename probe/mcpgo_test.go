package probe_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/probepeer"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
)

// TestProbeMCPGo: an mcp-go v1.2.1 server whose tool handler reads its
// arguments the library's way (RequireString, which reports a missing or
// mistyped argument as a tool error) and checks nothing else, in both eras.
// mcp-go does not validate arguments against the inputSchema it declares,
// so what the handler does not check is accepted (probe.invalid-arguments:
// n of the wrong type or out of range, q too long), and it serves a foreign
// Origin (probe.origin); everything else passes. docs/probe.md has it.
func TestProbeMCPGo(t *testing.T) {
	ts := httptest.NewServer(probepeer.MCPGo())
	defer ts.Close()
	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			rep := run(t, ts.URL, protocol, probe.Options{MaxPerTool: 20})
			want := map[string][]string{
				"probe.invalid-arguments": {"wrong-type lookup.n", "above-maximum lookup.n", "too-long lookup.q", "accepted as a success"},
				"probe.origin":            {"HTTP 200 (RESULT_SUCCESS), not 403"},
			}
			for _, c := range rep.Checks {
				words, ok := want[c.Rule]
				switch {
				case !ok && c.Verdict == judge.Fail:
					t.Errorf("%s failed: %s", c.Rule, c.Evidence)
				case ok && c.Verdict != judge.Fail:
					t.Errorf("%s %s, want fail: %s", c.Rule, c.Verdict, c.Evidence)
				case ok:
					for _, w := range words {
						if !strings.Contains(c.Evidence, w) {
							t.Errorf("%s evidence %q does not say %q", c.Rule, c.Evidence, w)
						}
					}
					if strings.Contains(c.Evidence, "required-missing") {
						t.Errorf("%s: RequireString reports a missing q, yet: %s", c.Rule, c.Evidence)
					}
				}
			}
		})
	}
}
