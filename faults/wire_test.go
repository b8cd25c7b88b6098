package faults_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
)

// standIn is a deterministic healthy server: it answers every request with
// one SSE event carrying a fixed result for the request's id, as go-sdk
// frames it.
var standIn = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &msg)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", result(string(msg.ID)))
})

func result(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`
}

func progress(i, n int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":%d,"total":%d,"message":"step %d of %d"}}`, i, n, i, n)
}

func ev(data string) string { return "event: message\ndata: " + data + "\n\n" }

const callBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// serveOnce runs one tools/call through scenario id with params over the
// stand-in and returns the recorded response.
func serveOnce(t *testing.T, id, params string) *httptest.ResponseRecorder {
	t.Helper()
	sel, err := faults.Select(id, json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	ep := faults.NewEndpoint(sel, standIn, faults.EndpointOptions{Path: "/mcp", Seed: 1})
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(callBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	rec := httptest.NewRecorder()
	ep.ServeHTTP(rec, req)
	return rec
}

// TestSSEWire asserts the exact bytes every SSE fault sends.
func TestSSEWire(t *testing.T) {
	resp := result("7")
	tests := []struct {
		name, id, params, want string
	}{
		{"truncated after a notification", "sse.truncated", `{}`, ev(progress(1, 1))},
		{"truncated mid-event", "sse.truncated", `{"notifications":2,"afterEvents":1,"midEvent":true}`,
			ev(progress(1, 2)) + ev(progress(2, 2))[:len(ev(progress(2, 2)))/2]},
		{"truncated before any event", "sse.truncated", `{"notifications":0,"afterEvents":0}`, ""},
		{"error in stream", "sse.error_in_stream", `{}`,
			ev(progress(1, 1)) + ev(`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}`)},
		{"error in stream with data", "sse.error_in_stream", `{"notifications":0,"code":-32602,"message":"Invalid params","data":{"field":"text"}}`,
			ev(`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params","data":{"field":"text"}}}`)},
		{"notifications then result", "sse.notifications_then_result", `{"notifications":2,"intervalMs":0}`,
			ev(progress(1, 2)) + ev(progress(2, 2)) + ev(resp)},
		{"wrong id", "sse.wrong_id", `{}`, ev(result("1007"))},
		{"wrong id then correct", "sse.wrong_id", `{"thenCorrect":true}`, ev(result("1007")) + ev(resp)},
		{"server request", "sse.server_request", `{"method":"ping"}`,
			ev(`{"jsonrpc":"2.0","id":"mcpdiag-server-request-1","method":"ping"}`) + ev(resp)},
		{"server request, elicitation, no result", "sse.server_request", `{"thenResult":false}`,
			ev(`{"jsonrpc":"2.0","id":"mcpdiag-server-request-1","method":"elicitation/create","params":{"mode":"form","message":"Which environment?","requestedSchema":{"type":"object","properties":{"env":{"type":"string"}},"required":["env"]}}}`)},
		{"keep-alive then hang", "sse.keepalive_then_hang", `{"intervalMs":10,"hangMs":0}`, ": keepalive\n\n"},
		{"slow drip", "sse.slow_drip", `{"bytesPerChunk":5,"intervalMs":0}`, ev(resp)},
		{"framing cr", "sse.framing", `{"style":"cr"}`, "event: message\rdata: " + resp + "\r\r"},
		{"framing crlf", "sse.framing", `{"style":"crlf"}`, "event: message\r\ndata: " + resp + "\r\n\r\n"},
		{"framing bom", "sse.framing", `{"style":"bom"}`, "\xEF\xBB\xBFevent: message\ndata: " + resp + "\n\n"},
		{"framing multiline", "sse.framing", `{"style":"multiline"}`,
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":7,\ndata: \"result\":{\"content\":[{\"type\":\"text\",\ndata: \"text\":\"hi\"}],\ndata: \"resultType\":\"complete\"}}\n\n"},
		{"framing no space", "sse.framing", `{"style":"nospace"}`, "event:message\ndata:" + resp + "\n\n"},
		{"framing comments", "sse.framing", `{"style":"comments"}`, ": comment before the event\nevent: message\ndata: " + resp + "\n\n"},
		{"framing all", "sse.framing", `{}`,
			"\xEF\xBB\xBF:comment before the event\r\nevent:message\r\ndata:{\"jsonrpc\":\"2.0\",\r\n: a comment between data lines\r\ndata:\"id\":7,\r\n" +
				"data:\"result\":{\"content\":[{\"type\":\"text\",\r\ndata:\"text\":\"hi\"}],\r\ndata:\"resultType\":\"complete\"}}\r\n\r\n"},
		{"unterminated, lf", "sse.unterminated_final_event", `{}`, "event: message\ndata: " + resp + "\n"},
		{"unterminated, none", "sse.unterminated_final_event", `{"trailing":"none"}`, "event: message\ndata: " + resp},
		{"large result over lines", "errors.large_result", `{"bytes":40,"lineBytes":64,"format":"sse_lines"}`,
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[\n" +
				"data: {\"type\":\"text\",\"text\":\"mcpdiag large result 0123456789 \"},\n" +
				"data: {\"type\":\"text\",\"text\":\"abcdefgh\"}\n" +
				"data: ],\"resultType\":\"complete\"}}\n\n"},
		{"large result in one event", "errors.large_result", `{"bytes":8,"format":"sse"}`,
			ev(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"mcpdiag ","type":"text"}],"resultType":"complete"}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serveOnce(t, tt.id, tt.params)
			if rec.Code != http.StatusOK {
				t.Errorf("status %d, want 200", rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type %q", ct)
			}
			if got := rec.Body.String(); got != tt.want {
				t.Errorf("body\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestJSONWire asserts the exact bodies of the JSON-RPC faults.
func TestJSONWire(t *testing.T) {
	tests := []struct {
		name, id, params string
		status           int
		header           string // "Name: value" that must be present
		want             string
	}{
		{"jsonrpc error", "errors.jsonrpc_error", `{}`, 200, "Content-Type: application/json",
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params"}}`},
		{"invalid json", "errors.malformed_payload", `{}`, 200, "", `{ not valid json`},
		{"wrong id", "errors.malformed_payload", `{"kind":"wrong_id"}`, 200, "", result("1007")},
		{"missing jsonrpc", "errors.malformed_payload", `{"kind":"missing_jsonrpc"}`, 200, "",
			`{"id":7,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`},
		{"duplicate", "errors.malformed_payload", `{"kind":"duplicate_response"}`, 200, "", result("7") + "\n" + result("7")},
		{"result and error", "errors.malformed_payload", `{"kind":"result_and_error"}`, 200, "",
			`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"},"error":{"code":-32603,"message":"Internal error"}}`},
		{"non-compliant envelope", "errors.non_compliant_envelope", `{}`, 500, "Content-Type: application/json", result("7")},
		{"unsupported version", "errors.unsupported_version", `{}`, 400, "",
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":"2026-07-28","supported":["2025-11-25"]}}}`},
		{"header mismatch", "errors.header_mismatch", `{}`, 400, "",
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name does not match the request body","data":{"header":"Mcp-Name","received":""}}}`},
		{"missing capability", "errors.missing_capability", `{}`, 400, "",
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32021,"message":"Server requires the elicitation capability for this request","data":{"requiredCapabilities":{"elicitation":{}}}}}`},
		{"rate limited", "errors.rate_limited", `{}`, 429, "Retry-After: 2", "rate limited: too many requests\n"},
		{"status sequence", "errors.http_status_sequence", `{"retryAfter":"3"}`, 503, "Retry-After: 3", ""},
		{"empty", "errors.empty_response", `{}`, 202, "", ""},
		{"token lifecycle", "auth.token_lifecycle", `{}`, 401,
			`Www-Authenticate: Bearer resource_metadata="http://example.com/.well-known/oauth-protected-resource/mcp"`, "unauthorized\n"},
		{"insufficient scope", "auth.insufficient_scope", `{"match":{}}`, 403,
			`Www-Authenticate: Bearer error="insufficient_scope", scope="mcp:tools:write", resource_metadata="http://example.com/.well-known/oauth-protected-resource/mcp", error_description="This operation needs scope mcp:tools:write"`,
			"forbidden: insufficient scope\n"},
		{"tool error keeps the framing", "errors.tool_error", `{}`, 200, "Content-Type: text/event-stream",
			ev(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"Tool-side failure","type":"text"}],"isError":true,"resultType":"complete"}}`)},
		{"legacy result", "compat.legacy_result", `{}`, 200, "",
			ev(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`)},
		{"injection", "content.injection", `{"text":"obey"}`, 200, "",
			ev(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"hi","type":"text"},{"text":"obey","type":"text"}],"resultType":"complete"}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serveOnce(t, tt.id, tt.params)
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d", rec.Code, tt.status)
			}
			if tt.header != "" {
				k, v, _ := strings.Cut(tt.header, ": ")
				if got := rec.Header().Get(k); got != v {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
			if got := rec.Body.String(); got != tt.want {
				t.Errorf("body\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// rawExchange sends callBody over a raw TCP connection and returns every
// byte the server sent until it closed the connection.
func rawExchange(t *testing.T, h http.Handler) []byte {
	t.Helper()
	ts := httptest.NewServer(h)
	defer ts.Close()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(callBody), callBody)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(bufio.NewReader(conn))
	return b
}

// TestStreamEndsOnTheSocket checks how a cut stream ends on the wire: a
// clean end of the chunked body (close), or none (abort).
func TestStreamEndsOnTheSocket(t *testing.T) {
	for _, tt := range []struct {
		end      string
		terminal bool
	}{{"close", true}, {"abort", false}} {
		t.Run(tt.end, func(t *testing.T) {
			sel, err := faults.Select("sse.truncated", json.RawMessage(`{"end":"`+tt.end+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			b := rawExchange(t, faults.NewEndpoint(sel, standIn, faults.EndpointOptions{Seed: 1}))
			if !bytes.HasPrefix(b, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.Contains(b, []byte("Transfer-Encoding: chunked\r\n")) {
				t.Fatalf("response %q", b)
			}
			data := ev(progress(1, 1))
			if !bytes.Contains(b, []byte(fmt.Sprintf("%x\r\n%s\r\n", len(data), data))) {
				t.Errorf("the event is not one chunk in %q", b)
			}
			if got := bytes.HasSuffix(b, []byte("\r\n0\r\n\r\n")); got != tt.terminal {
				t.Errorf("ends with the last chunk: %v, want %v (%q)", got, tt.terminal, b)
			}
		})
	}
}

// TestConnectionReset checks that the reset sends no HTTP bytes at all.
func TestConnectionReset(t *testing.T) {
	for _, when := range []string{"before_handler", "after_handler"} {
		sel, err := faults.Select("errors.connection_close", json.RawMessage(`{"when":"`+when+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		if b := rawExchange(t, faults.NewEndpoint(sel, standIn, faults.EndpointOptions{Seed: 1})); len(b) != 0 {
			t.Errorf("%s: the server sent %q", when, b)
		}
	}
}
