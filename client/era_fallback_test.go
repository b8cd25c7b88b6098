package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
	"github.com/mcpdiag/mcpdiag/retry"
)

// TestEraFallbackNotAFailure: in auto mode the first request is a
// 2026-07-28 tools/list that decides the era; a 2025-11-25 server refuses
// it with 400 (go-sdk v1's stateful handler: -32022 listing older versions;
// a session server: "Missing session ID" in JSON, or plain text), and the
// client falls back to initialize, as the spec's backward-compatibility
// rule says. The exchange keeps the server's verdict (HTTP_ERROR), its
// decision is that fallback (renegotiate: it was "fail", a client bug, on a
// 400 without a modern error, though the client went on), it is marked
// eraFallback, and report counts it apart: 0 failed exchanges, no worst
// offender, the gates pass (it was 1 failed of 5, the one offender).
func TestEraFallbackNotAFailure(t *testing.T) {
	t.Parallel()
	sessionJSON := &legacyServer{call: func(w http.ResponseWriter, m rpc, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"ok"}]}}`))
	}}
	for _, s := range []struct {
		name, tool string
		h          http.Handler
	}{
		{"go-sdk stateful", "echo", goSDKHandler(false)},
		{"session server, plain 400", "t", sessionJSON},
		{"session server, JSON 400", "t", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && r.Header.Get("MCP-Protocol-Version") == client.Protocol2026 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}`))
				return
			}
			sessionJSON.ServeHTTP(w, r)
		})},
	} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ts := httptest.NewServer(s.h)
			t.Cleanup(ts.Close)
			c, err := client.New(client.Options{URL: ts.URL + "/mcp"})
			if err != nil {
				t.Fatal(err)
			}
			call, err := c.CallTool(context.Background(), s.tool, nil)
			if err != nil {
				t.Fatal(err)
			}
			if call.Outcome != classify.ToolSuccess || call.Protocol != client.Protocol2025 {
				t.Fatalf("call %s on %s (%s); want TOOL_SUCCESS on 2025-11-25", call.Outcome, call.Protocol, call.Decision.Reason)
			}
			probe := call.Exchanges[0]
			if probe.Status != http.StatusBadRequest || probe.Result.Outcome != classify.HTTPError || !probe.EraFallback ||
				probe.Decision == nil || probe.Decision.Action != retry.Renegotiate || probe.Decision.Version != client.Protocol2025 {
				t.Fatalf("the probe: %d %s, eraFallback %v, decision %+v", probe.Status, probe.Result.Outcome, probe.EraFallback, probe.Decision)
			}
			for _, ex := range call.Exchanges[1:] {
				if ex.EraFallback {
					t.Errorf("%s marked eraFallback", ex.Method)
				}
			}
			exs, sum := call.Records(record.Record{Client: "test"}, ts.URL+"/mcp")
			acc := report.New(report.Options{})
			for _, r := range append(exs, sum) {
				line, err := (&record.Encoder{}).Encode(r)
				if err != nil {
					t.Fatal(err)
				}
				back, err := record.Decode(line)
				if err != nil {
					t.Fatal(err)
				}
				acc.Add(back)
			}
			acc.Close()
			got := acc.Summary().Exchanges
			if got.Total != int64(len(exs)) || got.Failures != 0 || got.EraFallbacks != 1 || len(got.WorstOffenders) != 0 || got.Outcome(string(classify.HTTPError)).Count != 1 {
				t.Errorf("exchanges: %d, %d failed, %d era fallbacks, offenders %v, HTTP_ERROR %d; want %d, 0, 1, none, 1",
					got.Total, got.Failures, got.EraFallbacks, got.WorstOffenders, got.Outcome(string(classify.HTTPError)).Count, len(exs))
			}
			gr, err := (&report.Gates{On: "exchange", FailOn: []classify.Outcome{classify.HTTPError}}).Check(acc.Summary())
			if err != nil || !gr.Passed {
				t.Errorf("--fail-on HTTP_ERROR: %+v, %v", gr, err)
			}
		})
	}
}
