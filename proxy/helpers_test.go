package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The upstreams in these tests are real MCP servers (go-sdk v1.8.0) on
// 127.0.0.1 with these tools:
//
//	echo    read-only, succeeds
//	fail    read-only, reports isError
//	slow    sends progress notifications every 10 ms, then succeeds
//	write   destructive, succeeds
//
// and scripted handlers that send exact bytes (see scripted).

func ptr[T any](v T) *T { return &v }

var objSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"steps":{"type":"integer"}}}`)

func mcpServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := &mcp.CallToolResult{}
			r.SetError(fmt.Errorf("the tool failed on purpose"))
			return r, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Steps int }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			if in.Steps == 0 {
				in.Steps = 5
			}
			for i := 1; i <= in.Steps; i++ {
				if tok := req.Params.GetProgressToken(); tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps)})
				}
				select {
				case <-time.After(10 * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "write", InputSchema: objSchema, Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "written"}}}, nil
		})
	return s
}

// bothEras serves 2026-07-28 statelessly and older versions with sessions.
func bothEras(s *mcp.Server, jsonResponse bool) http.Handler {
	get := func(*http.Request) *mcp.Server { return s }
	modern := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResponse})
	legacy := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("MCP-Protocol-Version") == "2026-07-28" {
			modern.ServeHTTP(w, r)
			return
		}
		legacy.ServeHTTP(w, r)
	})
}

// serve starts h on 127.0.0.1 and returns its /mcp URL.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("server not on loopback: %s", ts.URL)
	}
	return ts.URL + "/mcp"
}

// memSink keeps the records it is given, encoded and decoded again, so that
// tests see exactly what a record file would hold.
type memSink struct {
	enc   record.Encoder
	mu    sync.Mutex
	lines [][]byte
}

func (m *memSink) Write(rec *record.Record) error {
	line, err := m.enc.Encode(rec)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.lines = append(m.lines, line)
	m.mu.Unlock()
	return nil
}

func (m *memSink) records(t testing.TB) []*record.Record {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*record.Record
	for _, l := range m.lines {
		r, err := record.Decode(l)
		if err != nil {
			t.Fatalf("bad record line %s: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

// exchanges returns the exchange records in the order the exchanges
// started (records are written as exchanges finish).
func (m *memSink) exchanges(t testing.TB) []*record.Record {
	var out []*record.Record
	for _, r := range m.records(t) {
		if r.Kind == record.KindExchange {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
}

// startProxy starts a recording proxy in front of upstream and returns its
// URL for the upstream's path, the proxy and its sink. The proxy is closed
// (and every record written) when the test ends, or earlier through stop.
func startProxy(t testing.TB, upstream string, opts proxy.Options) (string, *proxy.Proxy, *memSink, func()) {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	opts.Upstream = u
	sink := &memSink{}
	if opts.Records == nil {
		opts.Records = sink
	}
	p, err := proxy.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(p)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			ts.CloseClientConnections()
			ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := p.Close(ctx); err != nil {
				t.Errorf("proxy close: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return ts.URL + u.Path, p, sink, stop
}

// post sends a JSON-RPC body and returns status, headers and body (read to
// its end or its error).
func post(t testing.TB, c *http.Client, u, body string, hdr map[string]string) (int, http.Header, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

// callBody builds a 2026-07-28 tools/call request.
func callBody(id int, tool, args string) string {
	if args == "" {
		args = "{}"
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"test-client","version":"9"},"progressToken":%d}}}`, id, tool, args, id)
}

// modernHeaders are the 2026-07-28 headers of a tools/call.
func modernHeaders(tool string) map[string]string {
	return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
}

// settleGoroutines waits until the goroutine count is back to at most base
// (plus slack), and fails with a dump when it is not.
func settleGoroutines(t *testing.T, base, slack int) {
	t.Helper()
	deadline := time.Now().Add(testwait.Bound)
	for {
		n := runtime.NumGoroutine()
		if n <= base+slack {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutine leak: %d goroutines, %d before\n%s", n, base, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var _ = bytes.Equal

func openFile(path string) (*os.File, error) { return os.Open(path) }
