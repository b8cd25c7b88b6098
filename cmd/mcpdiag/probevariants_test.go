package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/faults"
)

// TestProbeServerVariants: mcpdiag probe against mcpdiag serve: the healthy
// endpoint passes every rule, and each server.* scenario (the fixture made to
// commit one server mistake) fails exactly its rules, with evidence that
// names the mistake, in each era the mistake exists in. Every server.*
// scenario of the catalogue has a row.
func TestProbeServerVariants(t *testing.T) {
	tests := []struct {
		scenario string
		// fail maps each rule that must fail, per era, to what its
		// evidence says.
		fail map[string]map[string]string
	}{
		{"", nil},
		{"server.unknown_tool_as_tool_error", map[string]map[string]string{
			"2026-07-28": {"probe.unknown-tool": "TOOL_ERROR, not a JSON-RPC error"},
			"2025-11-25": {"probe.unknown-tool": "TOOL_ERROR, not a JSON-RPC error"}}},
		{"server.validation_as_success", map[string]map[string]string{
			"2026-07-28": {"probe.invalid-arguments": "an error dressed as success", "probe.is-error-missing": "TOOL_SUCCESS, isError missing"},
			"2025-11-25": {"probe.invalid-arguments": "an error dressed as success", "probe.is-error-missing": "TOOL_SUCCESS, isError missing"}}},
		{"server.no_result_type", map[string]map[string]string{
			"2026-07-28": {"probe.result-type": "without resultType"}}},
		{"server.id_as_string", map[string]map[string]string{
			"2026-07-28": {"probe.id-type": "(number), the answer's id is \""},
			"2025-11-25": {"probe.id-type": "(number), the answer's id is \""}}},
		{"server.notification_200", map[string]map[string]string{
			"2026-07-28": {"probe.notification-202": "HTTP 200 with"},
			"2025-11-25": {"probe.notification-202": "HTTP 200 with"}}},
		{"server.no_origin_check", map[string]map[string]string{
			"2026-07-28": {"probe.origin": "not 403"},
			"2025-11-25": {"probe.origin": "not 403"}}},
	}
	covered := map[string]bool{}
	for _, tc := range tests {
		covered[tc.scenario] = true
	}
	for _, e := range faults.Catalogue() {
		if e.ServerMistake && !covered[e.ID] {
			t.Errorf("%s has no row here", e.ID)
		}
	}
	u, _ := startServe(t, serveOptions{})
	base := strings.TrimSuffix(u, "/mcp")
	for _, tc := range tests {
		for _, era := range []string{"2026-07-28", "2025-11-25"} {
			name := tc.scenario
			if name == "" {
				name = "healthy"
			}
			t.Run(name+"@"+era, func(t *testing.T) {
				url := u
				if tc.scenario != "" {
					url = base + "/s/" + tc.scenario + "/mcp?run=" + era
				}
				var stdout, stderr bytes.Buffer
				code := run([]string{"probe", url, "--protocol", era, "--max-probes", "3", "--interval", "0", "--timeout", "5s", "--json"}, strings.NewReader(""), &stdout, &stderr)
				var rep struct {
					Checks []struct{ Rule, Verdict, Evidence string } `json:"checks"`
				}
				if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil || len(rep.Checks) == 0 {
					t.Fatalf("exit %d, --json: %v\n%s%s", code, err, stdout.String(), stderr.String())
				}
				want := tc.fail[era]
				if wantCode := map[bool]int{true: 1, false: 0}[len(want) > 0]; code != wantCode {
					t.Errorf("exit %d, want %d", code, wantCode)
				}
				failed := map[string]bool{}
				for _, c := range rep.Checks {
					if c.Verdict != "fail" {
						continue
					}
					failed[c.Rule] = true
					frag, ok := want[c.Rule]
					switch {
					case !ok:
						t.Errorf("%s failed: %s", c.Rule, c.Evidence)
					case !strings.Contains(c.Evidence, frag):
						t.Errorf("%s evidence %q does not say %q", c.Rule, c.Evidence, frag)
					}
				}
				for rule := range want {
					if !failed[rule] {
						t.Errorf("%s did not fail:\n%s", rule, stdout.String())
					}
				}
			})
		}
	}
}
