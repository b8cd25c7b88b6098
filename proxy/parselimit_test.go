package proxy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestRequestParseLimit: a request body over Options.MaxRequestParse
// reaches the upstream byte for byte and its answer reaches the client;
// the limit bounds what is parsed, not what the head says: the record has
// the method, tool and id (with its JSON type) that are whole in the
// bytes read, and the answer is judged by them when the id is there; when
// the id lies past them (the TypeScript SDK writes method, params,
// jsonrpc, id) the method and tool are recorded and the answer judged at
// the HTTP layer; nothing is guessed from the rest. Before, every such
// record had no method (outsider21).
func TestRequestParseLimit(t *testing.T) {
	const limit = 1024
	big := `{"text":"` + strings.Repeat("x", 5*limit) + `"}`
	tests := []struct {
		name, body   string
		method, tool string
		id           string // the record's id, raw ("" for none)
		outcome      classify.Outcome
		note         string
	}{
		{"id first", callBody(1, "echo", big), "tools/call", "echo", "1", classify.ToolSuccess,
			"larger than 1024 bytes; it was forwarded whole and parsed only as far as that: method tools/call, tool echo and id read from its head (its arguments unread)"},
		{"string id", `{"jsonrpc":"2.0","id":"1","method":"tools/call","params":{"name":"echo","arguments":` + big + `}}`, "tools/call", "echo", `"1"`, classify.ToolSuccess,
			"method tools/call, tool echo and id read from its head"},
		{"id last (TS SDK)", `{"method":"tools/call","params":{"name":"echo","arguments":` + big + `},"jsonrpc":"2.0","id":1}`, "tools/call", "echo", "", classify.HTTPSuccess,
			"parsed only as far as that: method tools/call and tool echo read from its head; its id, if any, lies past it, so the answer is judged at the HTTP layer only"},
		{"tool after arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":` + big + `,"name":"echo"}}`, "tools/call", "", "1", classify.ToolSuccess,
			"method tools/call and id read from its head (its arguments unread)"},
		{"no method in the head", `{"jsonrpc":"2.0","params":{"name":"echo","arguments":` + big + `},"id":1,"method":"tools/call"}`, "", "", "", classify.HTTPSuccess,
			"parsed only as far as that (no method in it), so the answer is judged at the HTTP layer only"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []byte
			up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				got = b
				mu.Unlock()
				var m struct{ ID json.RawMessage }
				_ = json.Unmarshal(b, &m)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"content":[{"type":"text","text":"ok"}]}}`)
			}))
			u, p, sink, stop := startProxy(t, up, proxy.Options{MaxRequestParse: limit})
			status, _, resp, err := post(t, &http.Client{Timeout: 10 * time.Second}, u, tc.body, modernHeaders("echo"))
			if err != nil || status != 200 || !bytes.Contains(resp, []byte(`"text":"ok"`)) {
				t.Fatalf("client got %d %v %s", status, err, resp)
			}
			waitExchanges(t, p, 1)
			stop()
			mu.Lock()
			defer mu.Unlock()
			if !bytes.Equal(got, []byte(tc.body)) {
				t.Errorf("the upstream received %d bytes, want the %d sent, unchanged", len(got), len(tc.body))
			}
			recs := sink.exchanges(t)
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			r := recs[0]
			id := ""
			if !r.JSONRPC.ID.IsZero() && !r.JSONRPC.ID.IsNull() {
				id = string(r.JSONRPC.ID.Raw())
			}
			if r.Method != tc.method || r.Tool != tc.tool || id != tc.id || r.Outcome != tc.outcome || r.ArgsHash != "" {
				t.Errorf("record method %q tool %q id %s outcome %s argsHash %q; want %q %q %s %s and no args hash (the arguments were not read)",
					r.Method, r.Tool, id, r.Outcome, r.ArgsHash, tc.method, tc.tool, tc.id, tc.outcome)
			}
			if !strings.Contains(r.Note, tc.note) || r.RequestBytes != int64(len(tc.body)) {
				t.Errorf("note %q, requestBytes %d; want the note to hold %q, and %d bytes", r.Note, r.RequestBytes, tc.note, len(tc.body))
			}
		})
	}
}
