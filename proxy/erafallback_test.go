package proxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/report"
)

// TestProxiedEraFallbackNotAFailure: the recording proxy in front of a
// 2025-11-25-only server (go-sdk's stateful handler, which refuses a
// 2026-07-28 request with 400 -32022 listing older versions), records to a
// file, and report reads it. A client in auto mode (the built-in one)
// probes 2026-07-28, is refused and falls back to initialize on the same
// connection: the proxy records the refused probe HTTP_ERROR (it cannot know
// what comes next), and report counts it an era fallback: 0 failures (it
// was 1, the one worst offender). A client fixed at 2026-07-28 sends the
// probe and nothing more: that refused probe stays 1 failure.
func TestProxiedEraFallbackNotAFailure(t *testing.T) {
	t.Parallel()
	srv := mcpServer()
	upstream := serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{}))
	for _, c := range []struct {
		name                string
		protocol            string
		failures, fallbacks int64
	}{
		{"auto: falls back", client.ProtocolAuto, 0, 1},
		{"2026-07-28 only: gives up", client.Protocol2026, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			u, err := url.Parse(upstream)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "records.jsonl")
			sink, err := record.OpenSink(path, record.SinkOptions{Async: true})
			if err != nil {
				t.Fatal(err)
			}
			p, err := proxy.New(proxy.Options{Upstream: u, Records: sink})
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewUnstartedServer(nil)
			ts.Config = p.HTTPServer(p) // as mcpdiag proxy serves: with its ConnContext
			ts.Start()
			cl, err := client.New(client.Options{URL: ts.URL + u.Path, Protocol: c.protocol})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			call, err := cl.CallTool(ctx, "echo", json.RawMessage(`{"text":"hi"}`))
			if err != nil {
				t.Fatal(err)
			}
			if want := c.failures == 0; (call.Outcome == classify.ToolSuccess) != want {
				t.Fatalf("the call: %s (%s); want success %v", call.Outcome, call.Decision.Reason, want)
			}
			ts.CloseClientConnections()
			ts.Close()
			if err := p.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			acc := report.New(report.Options{})
			if _, err := report.ReadFile(f, path, nil, acc); err != nil {
				t.Fatal(err)
			}
			acc.Close()
			got := acc.Summary().Exchanges
			refused := got.Outcome(string(classify.HTTPError)).Count
			if refused != 1 || got.Failures != c.failures || got.EraFallbacks != c.fallbacks {
				t.Errorf("%d exchanges, %d HTTP_ERROR, %d failed, %d era fallbacks; want 1 HTTP_ERROR, %d failed, %d era fallbacks",
					got.Total, refused, got.Failures, got.EraFallbacks, c.failures, c.fallbacks)
			}
			gr, err := (&report.Gates{On: "exchange", FailOn: []classify.Outcome{classify.HTTPError}}).Check(acc.Summary())
			if err != nil || gr.Passed != (c.failures == 0) {
				t.Errorf("--fail-on HTTP_ERROR: passed %v (%v); want %v", gr.Passed, err, c.failures == 0)
			}
		})
	}
}
