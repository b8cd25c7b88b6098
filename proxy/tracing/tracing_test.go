package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/proxy/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

const (
	traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	spanID  = "00f067aa0ba902b7"
)

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
	m := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value.Emit()
	}
	return m
}

// Each exchange gives a SERVER span and a CLIENT span with the MCP
// semantic conventions, parented by the traceparent in params._meta.
func TestSpansThroughProxy(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(string(b), `"fail"`):
			io.WriteString(w, `{"jsonrpc":"2.0","id":"a-1","result":{"content":[],"isError":true}}`)
		case strings.Contains(string(b), `"bad"`):
			io.WriteString(w, `{"jsonrpc":"2.0","id":"a-1","error":{"code":-32602,"message":"bad arguments"}}`)
		default:
			io.WriteString(w, `{"jsonrpc":"2.0","id":"a-1","result":{"content":[{"type":"text","text":"ok"}]}}`)
		}
	}))
	defer up.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	u, _ := url.Parse(up.URL + "/mcp")
	p, err := proxy.New(proxy.Options{Upstream: u, Observer: tracing.New(tp)})
	if err != nil {
		t.Fatal(err)
	}
	ps := httptest.NewServer(p)
	for _, tool := range []string{"echo", "fail", "bad"} {
		body := `{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"` + tool + `","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"00-` + traceID + `-` + spanID + `-01"}}}`
		resp, err := http.Post(ps.URL+"/mcp", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	ps.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	spans := rec.Ended()
	if len(spans) != 6 {
		t.Fatalf("%d spans, want 6", len(spans))
	}
	byTool := map[string][2]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		a := attrs(s)
		pair := byTool[a["gen_ai.tool.name"]]
		switch s.SpanKind() {
		case trace.SpanKindServer:
			pair[0] = s
		case trace.SpanKindClient:
			pair[1] = s
		}
		byTool[a["gen_ai.tool.name"]] = pair
	}
	for tool, want := range map[string]struct {
		errType string
		status  codes.Code
	}{"echo": {"", codes.Unset}, "fail": {"tool_error", codes.Error}, "bad": {"-32602", codes.Error}} {
		server, client := byTool[tool][0], byTool[tool][1]
		if server == nil || client == nil {
			t.Fatalf("%s: spans missing", tool)
		}
		if server.Name() != "tools/call "+tool || client.Name() != server.Name() {
			t.Errorf("%s: names %q %q", tool, server.Name(), client.Name())
		}
		if server.Parent().TraceID().String() != traceID || server.Parent().SpanID().String() != spanID {
			t.Errorf("%s: the server span's parent is %v, not the client's traceparent", tool, server.Parent())
		}
		if client.Parent().SpanID() != server.SpanContext().SpanID() {
			t.Errorf("%s: the client span is not a child of the server span", tool)
		}
		a := attrs(server)
		for k, v := range map[attribute.Key]string{
			"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool", "mcp.protocol.version": "2026-07-28",
			"jsonrpc.request.id": "a-1", "network.transport": "tcp", "error.type": want.errType,
		} {
			if a[k] != v {
				t.Errorf("%s: %s = %q, want %q", tool, k, a[k], v)
			}
		}
		if tool == "bad" && a["rpc.response.status_code"] != "-32602" {
			t.Errorf("rpc.response.status_code = %q", a["rpc.response.status_code"])
		}
		if server.Status().Code != want.status || client.Status().Code != want.status {
			t.Errorf("%s: status %v/%v, want %v", tool, server.Status().Code, client.Status().Code, want.status)
		}
		if attrs(client)["server.address"] != "127.0.0.1" || client.StartTime().Before(server.StartTime()) || client.EndTime().After(server.EndTime()) {
			t.Errorf("%s: client span %v..%v outside the server span %v..%v, or no server.address", tool, client.StartTime(), client.EndTime(), server.StartTime(), server.EndTime())
		}
	}
}
