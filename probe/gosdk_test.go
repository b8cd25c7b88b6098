package probe_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/internal/probepeer"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/probe"
)

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
			ts := httptest.NewServer(probepeer.GoSDK(tc.stateless))
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
