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
		{"server.any_protocol_version", map[string]map[string]string{
			"2026-07-28": {"probe.protocol-version": "HTTP 200 (RESULT_SUCCESS), not 400"},
			"2025-11-25": {"probe.protocol-version": "HTTP 200 (RESULT_SUCCESS), not 400"}}},
		// 2025-11-25 requests carry no _meta version: nothing changes.
		{"server.missing_version_served", map[string]map[string]string{
			"2026-07-28": {"probe.protocol-version-missing": "served as a 2026-07-28 request (its result has resultType) although the header is missing"}}},
		{"server.not_acceptable_500", map[string]map[string]string{
			"2026-07-28": {"probe.accept": "HTTP 500 (HTTP_ERROR), not 406 Not Acceptable, 400 or an answer: a server error"},
			"2025-11-25": {"probe.accept": "HTTP 500 (HTTP_ERROR), not 406 Not Acceptable, 400 or an answer: a server error"}}},
		{"server.malformed_call_as_success", map[string]map[string]string{
			"2026-07-28": {"probe.malformed-call": "missing-name (id "},
			"2025-11-25": {"probe.malformed-call": "missing-name (id "}}},
		{"server.error_stream_cut", map[string]map[string]string{
			"2026-07-28": {"probe.answered": "unknown-tool mcpdiag_no_such_tool_"},
			"2025-11-25": {"probe.answered": "unknown-tool mcpdiag_no_such_tool_"}}},
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
