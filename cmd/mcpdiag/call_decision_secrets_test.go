package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
)

// TestCallJSONDecisionScrubsServerError: a server whose JSON-RPC error
// message carries a bearer token and an OpenAI-shaped key, answered to a
// tools/call (-32603, which the retry policy decides by the tool's safety,
// and -32001, which it refuses to retry: both put the message into the
// decision's reason), gives `mcpdiag call --json` records whose reason,
// errorMessage and decision.reason hold neither, in no spelling (raw, URL-
// or JSON-escaped), and show the masks where they were: the decision's
// text is scrubbed as every string of a record is (mend18 was asked to
// check it; it held before).
func TestCallJSONDecisionScrubsServerError(t *testing.T) {
	token := canary("decisiontok") + "Zm9vYmFy0123"
	key := "sk-proj-" + "Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7fGh9jKl1nOp3rSt5v"
	for _, code := range []int{-32603, -32001} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			msg := fmt.Sprintf("upstream refused Bearer %s and the key %s", token, key)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				m, ok := readRPCRequest(r)
				if !ok {
					http.Error(w, "not JSON-RPC", http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				if m.Method == "tools/list" {
					fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`, m.ID)
					return
				}
				e, _ := json.Marshal(map[string]any{"code": code, "message": msg})
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":%s}`, m.ID, e)
			}))
			defer srv.Close()
			var stdout, stderr bytes.Buffer
			exit := run([]string{"call", srv.URL + "/mcp", "echo", "--args", `{}`, "--protocol", "2026-07-28", "--retries", "0", "--json"}, strings.NewReader(""), &stdout, &stderr)
			if exit != 3 {
				t.Fatalf("exit %d, want 3 (JSONRPC_ERROR); stderr:\n%s", exit, stderr.String())
			}
			for _, s := range []string{token, key} {
				for _, form := range []string{s, url.QueryEscape(s), mustJSON(t, s)} {
					for name, out := range map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()} {
						if bytes.Contains(out, []byte(form)) {
							t.Errorf("%s holds %q", name, form)
						}
					}
				}
			}
			var call *record.Record
			for line := range bytes.SplitSeq(bytes.TrimSpace(stdout.Bytes()), []byte("\n")) {
				r, err := record.Decode(line)
				if err != nil {
					t.Fatalf("line %q: %v", line, err)
				}
				if r.Kind == record.KindCall {
					call = r
				}
			}
			if call == nil || call.Decision == nil {
				t.Fatalf("no call line with a decision:\n%s", stdout.String())
			}
			if want := fmt.Sprintf("JSON-RPC error %d", code); !strings.Contains(call.Decision.Reason, want) {
				t.Errorf("decision %q: want it to name %q (the message's context, not only a mask)", call.Decision.Reason, want)
			}
			for _, field := range []string{call.Decision.Reason, call.ErrorMessage, call.Reason} {
				if !strings.Contains(field, "upstream refused Bearer [redacted:") || strings.Count(field, "[redacted:") < 2 {
					t.Errorf("%q: want the message with the token and the key masked", field)
				}
			}
		})
	}
}
