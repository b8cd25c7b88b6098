package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/retry"
)

// wireLog keeps the method and path of every request a server got.
type wireLog struct {
	next http.Handler
	mu   sync.Mutex
	seen []string
}

func (l *wireLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.seen = append(l.seen, r.Method+" "+r.URL.Path)
	l.mu.Unlock()
	l.next.ServeHTTP(w, r)
}

func (l *wireLog) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

// TestLegacyTransportNamed: a server of the 2024-11-05 HTTP+SSE transport
// (go-sdk's SSEHandler answers a POST to its URL 400 "sessionid must be
// provided", mcp-go's SSEServer 405, server-everything's sse mode 404 —
// interop's TestLegacyServerNamed) fails the call at set-up; the client then
// sends the GET the spec's backward-compatibility rule prescribes, reads the
// endpoint event, and the decision and era say the server speaks the older
// transport, name the message path the event gave and the way out (proxy).
// The verdict is still the last exchange's (HTTP_ERROR, its status); the
// exchanges are the two POSTs that went out, and the GET is the one other
// request. A Streamable HTTP server's 404 (a wrong URL), whose GET is no
// event stream, keeps the plain verdict. Before, every case read "HTTP 400
// Bad Request: the server refused the request" or "HTTP 405 … (a legacy
// endpoint or the wrong URL)" with no word of the older transport.
func TestLegacyTransportNamed(t *testing.T) {
	gs := mcp.NewServer(&mcp.Implementation{Name: "gosdk-sse", Version: "1"}, nil)
	mcp.AddTool(gs, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	ms := mcpgoserver.NewMCPServer("mcpgo-sse", "1")
	ms.AddTool(mcpgo.NewTool("echo"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText("hi"), nil
	})
	tests := []struct {
		name     string
		handler  http.Handler
		path     string
		status   int
		endpoint string // "" for no hint
	}{
		{"go-sdk SSEHandler", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return gs }, nil), "/sse", 400, "/sse"},
		{"mcp-go SSEServer", mcpgoserver.NewSSEServer(ms), "/sse", 405, "/message"},
		{"streamable HTTP, wrong path", goSDKHandler(false), "/nothing", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.handler
			if tt.endpoint == "" {
				mux := http.NewServeMux()
				mux.Handle("/mcp", h)
				h = mux
			}
			wl := &wireLog{next: h}
			ts := httptest.NewServer(wl)
			t.Cleanup(ts.Close)
			if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
				t.Fatalf("test server is not on loopback: %s", ts.URL)
			}
			u := ts.URL + tt.path
			for run := range 2 { // the same verdict on an identical second run
				c, err := client.New(client.Options{URL: u, Timeout: time.Minute})
				if err != nil {
					t.Fatal(err)
				}
				before := len(wl.requests())
				call, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				if call.Outcome != classify.HTTPError || call.Final.Status != tt.status || call.Decision.Action != retry.Fail {
					t.Fatalf("run %d: %s %d %s, want HTTP_ERROR %d fail", run, call.Outcome, call.Final.Status, call.Decision.Action, tt.status)
				}
				var methods []string
				for _, ex := range call.Exchanges {
					methods = append(methods, ex.Method)
				}
				if got := strings.Join(methods, ", "); got != "tools/list, initialize" {
					t.Errorf("run %d: exchanges %s, want tools/list, initialize", run, got)
				}
				wantWire := []string{"POST " + tt.path, "POST " + tt.path, "GET " + tt.path}
				if got := wl.requests()[before:]; strings.Join(got, ",") != strings.Join(wantWire, ",") {
					t.Errorf("run %d: the server got %v, want %v", run, got, wantWire)
				}
				if call.LegacyTransport != tt.endpoint {
					t.Errorf("run %d: LegacyTransport %q, want %q", run, call.LegacyTransport, tt.endpoint)
				}
				named := strings.Contains(call.Decision.Reason, "older HTTP+SSE transport (2024-11-05") &&
					strings.Contains(call.Decision.Reason, "names "+tt.endpoint+" for the messages") &&
					strings.Contains(call.Decision.Reason, "mcpdiag proxy --upstream "+u) &&
					strings.Contains(call.EraReason, "2024-11-05")
				if named != (tt.endpoint != "") {
					t.Errorf("run %d: decision %q, era %q; want the older transport named: %v", run, call.Decision.Reason, call.EraReason, tt.endpoint != "")
				}
				// The report's first line names no era when the era line
				// says none (outsider16: it read `— tool "echo" on
				// 2025-11-25` above `era: none: the server speaks the
				// 2024-11-05 HTTP+SSE transport`).
				var rep strings.Builder
				if err := call.WriteReport(&rep); err != nil {
					t.Fatal(err)
				}
				head, _, _ := strings.Cut(rep.String(), "\n")
				if wantHead := `HTTP_ERROR (transport layer) — tool "echo"`; tt.endpoint != "" && head != wantHead || tt.endpoint == "" && head != wantHead+" on 2025-11-25" {
					t.Errorf("run %d: report head %q; want %q and the era only for a Streamable HTTP server", run, head, wantHead)
				}
				if strings.Contains(call.Decision.Reason, "essionId=") || strings.Contains(call.Decision.Reason, "essionid=") {
					t.Errorf("run %d: the decision carries the session id: %q", run, call.Decision.Reason)
				}

				l := func() *client.Listing {
					c, _ := client.New(client.Options{URL: u, Timeout: time.Minute})
					return c.ListTools(context.Background())
				}()
				if l.OK || l.LegacyTransport != tt.endpoint || strings.Contains(l.EraReason, "2024-11-05") != (tt.endpoint != "") {
					t.Errorf("run %d: listing OK %v, LegacyTransport %q, era %q; want the older transport named: %v", run, l.OK, l.LegacyTransport, l.EraReason, tt.endpoint != "")
				}
			}
		})
	}
}

// TestNoLegacyCheckAfterJSONRPCRefusal: a 4xx whose body is a JSON-RPC
// error comes from a server that reads JSON-RPC POSTs at the URL (go-sdk's
// Streamable HTTP handler refuses a 2026-07-28 request 400 -32022), so it is
// no 2024-11-05 event stream: the client sends no GET to check (it did, and
// through a recording proxy the GET was one more failed exchange:
// proxy's TestProxiedEraFallbackNotAFailure).
func TestNoLegacyCheckAfterJSONRPCRefusal(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.Handle("/mcp", goSDKHandler(false))
	wl := &wireLog{next: mux}
	ts := httptest.NewServer(wl)
	t.Cleanup(ts.Close)
	c, err := client.New(client.Options{URL: ts.URL + "/mcp", Protocol: client.Protocol2026, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	call, err := c.CallTool(context.Background(), "echo", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if code, ok := call.Final.JSONRPC().ErrorCode(); call.Outcome != classify.HTTPError || call.Final.Status != http.StatusBadRequest || !ok || code != -32022 {
		t.Fatalf("%s %d %v, want HTTP_ERROR 400 with -32022", call.Outcome, call.Final.Status, call.Final.JSONRPC())
	}
	if got := wl.requests(); strings.Join(got, ",") != "POST /mcp" || call.LegacyTransport != "" {
		t.Errorf("the server got %v (LegacyTransport %q), want the one POST", got, call.LegacyTransport)
	}
}
