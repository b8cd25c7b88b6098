package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The servers in these tests are real MCP servers (go-sdk v1.8.0, mcp-go
// v1.2.1) on 127.0.0.1, each with the same four tools:
//
//	echo     read-only, succeeds
//	fail     read-only, reports isError
//	confirm  needs a form elicitation (MRTR) before it succeeds
//	write    destructive, not idempotent, succeeds
//
// A flaky handler in front injects the transport faults.

func ptr[T any](v T) *T { return &v }

// goSDKServer builds the go-sdk server with the fixture tools.
func goSDKServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture-gosdk", Version: "1"}, nil)
	obj := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: obj, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := &mcp.CallToolResult{}
			r.SetError(fmt.Errorf("the tool failed on purpose"))
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "write", InputSchema: obj, Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: false}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "confirm", InputSchema: obj},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["approval"].(*mcp.ElicitResult); ok {
				if req.Params.RequestState != "" && req.Params.RequestState != "state-1" {
					return nil, fmt.Errorf("requestState was not echoed: %q", req.Params.RequestState)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "confirmed: " + r.Action}}}, nil
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"approval": &mcp.ElicitParams{
					Message:         "Approve the change?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`),
				}},
				RequestState: "state-1",
			}, nil
		})
	return s
}

// goSDKHandler serves the go-sdk server: stateless (2026-07-28) or stateful
// (2025-11-25).
func goSDKHandler(stateless bool) http.Handler {
	srv := goSDKServer()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: false})
}

// bothEras routes 2026-07-28 requests to a stateless handler and the rest to
// a stateful one, as `mcpdiag serve` will.
func bothEras() http.Handler {
	modern, legacy := goSDKHandler(true), goSDKHandler(false)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("MCP-Protocol-Version") == "2026-07-28" {
			modern.ServeHTTP(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	})
}

// flaky counts POSTs per JSON-RPC method and injects one fault into the
// first tools/call it sees.
type flaky struct {
	next  http.Handler
	fault string

	mu      sync.Mutex
	posts   int
	methods map[string]int
	calls   []string // tools/call bodies, in order
	fired   bool
}

func (f *flaky) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.methods[method]
}

// wireRounds counts the POSTs that answered the server's input requests as
// they went on the wire: a tools/call carrying inputResponses (an MRTR
// round) or a JSON-RPC response (an answer to a 2025-11-25 server request).
func (f *flaky) wireRounds() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.methods[""]
	for _, b := range f.calls {
		if strings.Contains(b, `"inputResponses"`) {
			n++
		}
	}
	return n
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	f.mu.Lock()
	if r.Method == http.MethodPost {
		f.posts++
		if f.methods == nil {
			f.methods = map[string]int{}
		}
		f.methods[msg.Method]++
	}
	fire := false
	if msg.Method == "tools/call" {
		f.calls = append(f.calls, string(body))
		if !f.fired && f.fault != "" {
			f.fired, fire = true, true
		}
	}
	f.mu.Unlock()
	if !fire {
		f.next.ServeHTTP(w, r)
		return
	}
	switch f.fault {
	case "503":
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	case "429":
		w.Header().Set("Retry-After", "1")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	case "reset":
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	case "sse-cut":
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		w.(http.Flusher).Flush()
		// Returning ends the stream before the response.
	default:
		panic("unknown fault " + f.fault)
	}
}

// serve starts h (wrapped by a flaky handler with fault) on 127.0.0.1.
func serve(t *testing.T, h http.Handler, fault string) (*flaky, string) {
	t.Helper()
	f := &flaky{next: h, fault: fault}
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close)
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("test server is not on loopback: %s", ts.URL)
	}
	return f, ts.URL + "/mcp"
}
