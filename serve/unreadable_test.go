package serve_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/faults"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/judge"
	"github.com/mcpdiag/mcpdiag/serve"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestUnreadableRequestParamsUnknown holds that a request the fault endpoint
// could not read as a JSON-RPC request (a body over MaxBody, invalid JSON, a
// batch, a response, a GET) is logged without params facts, so that the judge
// reads its _meta as not shown, never as "declared none"; a request it read
// keeps its facts, an empty _meta as the empty list. Before, every one of them
// was logged with "params":{"meta":[]}, which the judge reads as a request
// whose _meta carried no clientCapabilities (Exchange.NoCapabilities).
func TestUnreadableRequestParamsUnknown(t *testing.T) {
	_, base := start(t, serve.Options{Seed: 3})
	call := func(id, meta string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"approve","arguments":{"change":"x"}` + meta + `}}`
	}
	withCaps := `,"_meta":{"` + wire.MetaProtocolVersion + `":"2026-07-28","` + wire.MetaClientCapabilities + `":{"elicitation":{}}}`
	huge := call("4", `,"pad":"`+strings.Repeat("x", faults.DefaultMaxBody)+`"`+withCaps)
	tests := []struct {
		name, method, body string
		status             int
		known              bool     // the log line has params facts
		meta               []string // then its _meta keys
	}{
		{"invalid JSON", "POST", call("1", withCaps)[:60], http.StatusBadRequest, false, nil},
		{"batch", "POST", "[" + call("2", withCaps) + "]", http.StatusBadRequest, false, nil},
		{"response", "POST", `{"jsonrpc":"2.0","id":3,"result":{}}`, http.StatusAccepted, false, nil},
		{"over MaxBody", "POST", huge, http.StatusRequestEntityTooLarge, false, nil},
		{"GET", "GET", "", 0, false, nil},
		{"no _meta", "POST", call("5", ""), 0, true, []string{}},
		{"declared", "POST", call("6", withCaps), 0, true, []string{wire.MetaClientCapabilities, wire.MetaProtocolVersion}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := "/s/elicitation.approval/mcp?run=" + strings.ReplaceAll(tt.name, " ", "-")
			var body *bytes.Reader
			if tt.body != "" {
				body = bytes.NewReader([]byte(tt.body))
			}
			req, err := http.NewRequest(tt.method, base+ep, nil)
			if body != nil {
				req, err = http.NewRequest(tt.method, base+ep, body)
			}
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if tt.status != 0 && resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			// A line is written when the request ends, which may be after
			// the client read the answer: wait for it, bounded.
			var lines []logLine
			for deadline := time.Now().Add(testwait.Bound); len(lines) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				for _, l := range readLog(t, base, ep) {
					if l.rec.HTTPMethod == tt.method {
						lines = append(lines, l)
					}
				}
			}
			if len(lines) != 1 {
				t.Fatalf("%d log lines for %s %s", len(lines), tt.method, ep)
			}
			r := lines[0].rec
			if r.Fault == nil {
				t.Fatalf("no fault facts: %.400s", lines[0].raw)
			}
			x := judge.FromRecord(r, "")
			if !tt.known {
				if r.Params != nil || x.MetaKnown || x.StateKnown || x.NoCapabilities {
					t.Errorf("params %+v (judge: meta known %v, state known %v, no capabilities %v), want unknown: %.400s",
						r.Params, x.MetaKnown, x.StateKnown, x.NoCapabilities, lines[0].raw)
				}
				return
			}
			if r.Params == nil || !slices.Equal(r.Params.Meta, tt.meta) || !x.MetaKnown || x.NoCapabilities != !slices.Contains(tt.meta, wire.MetaClientCapabilities) {
				t.Errorf("params %+v, want meta %q: %.400s", r.Params, tt.meta, lines[0].raw)
			}
		})
	}
}
