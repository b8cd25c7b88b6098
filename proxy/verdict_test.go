package proxy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestRecordKeepsIDAfterTerminal: through the proxy, on real sockets, the
// record of a stream whose response for id 1 is followed by other events
// names id 1, a number (issue 10, defects 1 and 2: the id aliased the
// classifier's event buffer, so the record said 7, or failed to encode and
// was lost).
func TestRecordKeepsIDAfterTerminal(t *testing.T) {
	t.Parallel()
	result := `data: {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}` + "\n\n"
	after := map[string]string{
		"/then-777":          `data: {"jsonrpc":"2.0","id":777,"result":{}}` + "\n\n",
		"/then-notification": `data: {"method":"notifications/message","jsonrpc":"2.0","params":{"level":"info","data":"x"}}` + "\n\n",
		"/then-request":      ": keep-alive\n\n" + `data: {"method":"ping","id":"p","jsonrpc":"2.0"}` + "\n\n",
	}
	mux := http.NewServeMux()
	for path, ev := range after {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, result)
			w.(http.Flusher).Flush()
			io.WriteString(w, ev)
		})
	}
	base := serve(t, mux)
	base = base[:len(base)-len("/mcp")]
	for path := range after {
		t.Run(path[1:], func(t *testing.T) {
			t.Parallel()
			purl, _, sink, stop := startProxy(t, base+path, proxy.Options{})
			direct := fetch(t, base+path, callBody(1, "echo", ""), modernHeaders("echo"))
			via := fetch(t, purl, callBody(1, "echo", ""), modernHeaders("echo"))
			if direct.String() != via.String() {
				t.Errorf("through the proxy the client received something else\ndirect: %s\nproxy:  %s", direct, via)
			}
			stop()
			recs := sink.exchanges(t)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1 (a record that fails to encode is lost)", len(recs))
			}
			r := recs[0]
			if r.Outcome != classify.ToolSuccess || string(r.JSONRPC.ID.Raw()) != "1" || !r.JSONRPC.ResponseID.IsZero() {
				t.Fatalf("record %s, id %s, responseId %s; want TOOL_SUCCESS for id 1 (a number)", r.Outcome, r.JSONRPC.ID, r.JSONRPC.ResponseID)
			}
		})
	}
}

// rawExchanges returns the proxy's exchange lines decoded as generic JSON,
// for fields a test reads by name.
func rawExchanges(t *testing.T, sink *memSink) []map[string]any {
	t.Helper()
	sink.mu.Lock()
	defer sink.mu.Unlock()
	var out []map[string]any
	for _, l := range sink.lines {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("bad line %s: %v", l, err)
		}
		if m["kind"] == "exchange" {
			out = append(out, m)
		}
	}
	return out
}

// TestOverLimitNotClassified: a complete response larger than the proxy's
// --max-event-size reaches the client whole, and its record says it was
// not classified, why (cause, size, limit), and never that the stream was
// cut (issue 10, defect 4: it was STREAM_INCOMPLETE "classifier stopped").
func TestOverLimitNotClassified(t *testing.T) {
	t.Parallel()
	const limit = 256 << 10
	big := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 2<<20) + `"}]}}`
	event := "data: " + big + "\n\n"
	mux := http.NewServeMux()
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, event)
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, big)
	})
	base := strings.TrimSuffix(serve(t, mux), "/mcp")
	for _, tc := range []struct {
		path, cause string
		size        int
	}{
		{"/sse", "event-too-large", len(event)},
		{"/json", "body-too-large", len(big)},
	} {
		t.Run(tc.path[1:], func(t *testing.T) {
			t.Parallel()
			purl, _, sink, stop := startProxy(t, base+tc.path, proxy.Options{MaxEventSize: limit})
			direct := fetch(t, base+tc.path, callBody(1, "echo", ""), modernHeaders("echo"))
			via := fetch(t, purl, callBody(1, "echo", ""), modernHeaders("echo"))
			if direct.String() != via.String() || via.cut || via.bodyLen != tc.size {
				t.Errorf("through the proxy the client received something else\ndirect: %s\nproxy:  %s", direct, via)
			}
			stop()
			recs := rawExchanges(t, sink)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			r := recs[0]
			nc, _ := r["notClassified"].(map[string]any)
			if r["outcome"] != "NOT_CLASSIFIED" || r["layer"] != "none" || nc == nil ||
				nc["cause"] != tc.cause || nc["size"] != float64(tc.size) || nc["limit"] != float64(limit) {
				t.Fatalf("record %v/%v notClassified %v; want NOT_CLASSIFIED/none, cause %s, size %d, limit %d (reason %q, note %q)",
					r["outcome"], r["layer"], nc, tc.cause, tc.size, limit, r["reason"], r["note"])
			}
			if r["responseBytes"] != float64(tc.size) {
				t.Errorf("responseBytes %v, want %d", r["responseBytes"], tc.size)
			}
			text := strings.ToLower(fmt.Sprint(r["reason"], " ", r["note"]))
			for _, bad := range []string{"cut", "incomplete", "stopped", "retry"} {
				if strings.Contains(text, bad) {
					t.Errorf("reason/note %q says %q", text, bad)
				}
			}
		})
	}
}

// TestRecordRequestOfIDNull: through the proxy, a tools/call of id null
// (MCP forbids it; JSON-RPC 2.0 §4 makes it a request) that the server
// refuses with a JSON-RPC error under 200 is recorded JSONRPC_ERROR with
// the warning request-id-null, and the echo of a result under id null
// INVALID_ENVELOPE: as a notification, both were NOTIFICATION_ACCEPTED (the
// refusal hidden in a success). The client receives the server's bytes.
func TestRecordRequestOfIDNull(t *testing.T) {
	t.Parallel()
	answers := map[string]struct {
		body    string
		outcome classify.Outcome
	}{
		"/refuse": {`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id null"}}`, classify.JSONRPCError},
		"/echo":   {`{"jsonrpc":"2.0","id":null,"result":{"content":[{"type":"text","text":"ok"}]}}`, classify.InvalidEnvelope},
	}
	mux := http.NewServeMux()
	for path, a := range answers {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, a.body)
		})
	}
	base := serve(t, mux)
	base = base[:len(base)-len("/mcp")]
	body := strings.Replace(callBody(1, "echo", ""), `"id":1,`, `"id":null,`, 1)
	for path, a := range answers {
		t.Run(path[1:], func(t *testing.T) {
			t.Parallel()
			purl, _, sink, stop := startProxy(t, base+path, proxy.Options{})
			direct := fetch(t, base+path, body, modernHeaders("echo"))
			if via := fetch(t, purl, body, modernHeaders("echo")); via.String() != direct.String() {
				t.Errorf("through the proxy the client received something else\ndirect: %s\nproxy:  %s", direct, via)
			}
			stop()
			recs := sink.exchanges(t)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			r := recs[0]
			var warned bool
			for _, w := range r.Warnings {
				warned = warned || w.Code == classify.WarnRequestIDNull
			}
			if r.Outcome != a.outcome || r.Method != "tools/call" || r.Tool != "echo" || !warned {
				t.Errorf("record %s %s: %s (%s), warnings %v; want %s with %s", r.Method, r.Tool, r.Outcome, r.Reason, r.Warnings, a.outcome, classify.WarnRequestIDNull)
			}
		})
	}
}
