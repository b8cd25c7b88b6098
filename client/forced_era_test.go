package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/pysdk"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestForced2026OnSessionServer is defect 11(c): --protocol 2026-07-28
// against a server that speaks only 2025-11-25 and answers a request
// without Mcp-Session-Id with 400 "Missing session ID" (the Python SDK v1,
// byte for byte). The decision names the likely cause, a session-era
// server, and the way out (--protocol 2025-11-25 or auto), not "a client
// bug"; and nothing is sent after it (the era was fixed by the caller).
// The go-sdk v1 stateful handler answers -32022 with its supported
// versions instead: the decision says the same.
func TestForced2026OnSessionServer(t *testing.T) {
	t.Parallel()
	servers := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"python-sdk", func(t *testing.T) string { return pysdk.Start(t, false).URL }},
		{"python-sdk json", func(t *testing.T) string { return pysdk.Start(t, true).URL }},
		{"go-sdk stateful", func(t *testing.T) string {
			ts := httptest.NewServer(goSDKHandler(false))
			t.Cleanup(ts.Close)
			return ts.URL + "/mcp"
		}},
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			url := s.url(t)
			c, err := client.New(client.Options{URL: url, Protocol: client.Protocol2026})
			if err != nil {
				t.Fatal(err)
			}
			call, err := c.CallTool(context.Background(), "get_forecast", nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(call.Exchanges) != 1 || call.Final.Status != http.StatusBadRequest || call.Outcome != classify.HTTPError {
				t.Fatalf("%d exchanges, final %d %s; want the one refused 2026-07-28 request", len(call.Exchanges), call.Final.Status, call.Outcome)
			}
			d := call.Decision
			for _, want := range []string{"2025-11-25", "--protocol 2025-11-25", "--protocol auto"} {
				if !strings.Contains(d.Reason, want) {
					t.Errorf("decision %s %q does not say %q", d.Action, d.Reason, want)
				}
			}
			if strings.Contains(d.Reason, "client bug") || d.Action == retry.Renegotiate {
				t.Errorf("decision %s %q: blames the client, or promises a renegotiation the fixed era forbids", d.Action, d.Reason)
			}
		})
	}
}
