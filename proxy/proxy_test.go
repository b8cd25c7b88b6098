package proxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// A real client through the proxy to a real server, in both eras: every
// exchange has one record with the client's name, the method, the tool and
// the verdict.
func TestRecordsRealClientBothEras(t *testing.T) {
	up := serve(t, bothEras(mcpServer(), false))
	for _, proto := range []string{client.Protocol2026, client.Protocol2025} {
		t.Run(proto, func(t *testing.T) {
			purl, _, sink, stop := startProxy(t, up, proxy.Options{})
			c, err := client.New(client.Options{URL: purl, Protocol: proto, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, tc := range []struct {
				tool string
				want classify.Outcome
			}{{"echo", classify.ToolSuccess}, {"fail", classify.ToolError}} {
				call, err := c.CallTool(ctx, tc.tool, json.RawMessage(`{"text":"hi"}`))
				if err != nil {
					t.Fatal(err)
				}
				if call.Outcome != tc.want {
					t.Fatalf("%s: client saw %s, want %s", tc.tool, call.Outcome, tc.want)
				}
			}
			n := len(c.Exchanges())
			stop()
			recs := sink.exchanges(t)
			if len(recs) != n {
				for _, r := range recs {
					t.Logf("record: %s %s %s %s", r.HTTPMethod, r.Method, r.Outcome, r.Reason)
				}
				t.Fatalf("%d records for %d client exchanges", len(recs), n)
			}
			var calls []*record.Record
			for _, r := range recs {
				if r.Method == "tools/call" {
					calls = append(calls, r)
				}
				if r.Client != "mcpdiag@"+client.DefaultClientInfo.Version && !strings.HasPrefix(r.Client, client.DefaultClientInfo.Name) {
					t.Errorf("record client %q, want the client's clientInfo", r.Client)
				}
				if r.ProtocolVersion != proto {
					t.Errorf("%s record protocolVersion %q, want %s", r.Method, r.ProtocolVersion, proto)
				}
			}
			if len(calls) != 2 {
				t.Fatalf("%d tools/call records, want 2", len(calls))
			}
			if calls[0].Tool != "echo" || calls[0].Outcome != classify.ToolSuccess || calls[0].Layer != classify.LayerApplication {
				t.Errorf("echo record: %s %s %s", calls[0].Tool, calls[0].Outcome, calls[0].Layer)
			}
			if calls[1].Tool != "fail" || calls[1].Outcome != classify.ToolError {
				t.Errorf("fail record: %s %s", calls[1].Tool, calls[1].Outcome)
			}
			if calls[1].ResponseBody == nil || !strings.Contains(calls[1].ResponseBody.Text, "failed on purpose") {
				t.Errorf("the failed call's response body is not recorded: %+v", calls[1].ResponseBody)
			}
			if calls[0].ResponseBody != nil {
				t.Errorf("the successful call's body is recorded in the default mode")
			}
			if calls[0].ArgsHash != record.ArgsHash("tools/call", "echo", json.RawMessage(`{"text":"hi"}`)) {
				t.Errorf("argsHash %s", calls[0].ArgsHash)
			}
			if calls[0].JSONRPC.ID.IsZero() || calls[0].Timings.Total <= 0 || calls[0].Status != http.StatusOK {
				t.Errorf("record lacks id/timings/status: %+v", calls[0])
			}
		})
	}
}
