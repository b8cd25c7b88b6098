package proxy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/pysdk"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

func warned(ws []record.Warning) bool {
	for _, w := range ws {
		if w.Code == classify.WarnProtocolErrorAsTool {
			return true
		}
	}
	return false
}

// TestProxyUnknownToolAsToolError is defect 11(a) through the proxy: the
// Python SDK v1 (its bytes, on 127.0.0.1) answers a tools/call of a tool it
// does not have with isError "Unknown tool: X". The proxy saw the whole
// tools/list go by, so the tools/call's record carries the
// protocol-error-as-tool-error warning; a listed tool's failure and a
// success do not. The record agrees with what mcpdiag's client, which sent
// the traffic, concluded on its side.
func TestProxyUnknownToolAsToolError(t *testing.T) {
	t.Parallel()
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			t.Parallel()
			py := pysdk.Start(t, jsonResponse)
			purl, _, sink, stop := startProxy(t, py.URL, proxy.Options{})
			c, err := client.New(client.Options{URL: purl, Protocol: client.Protocol2025})
			if err != nil {
				t.Fatal(err)
			}
			calls := map[string]bool{"get_weather": true, "divide": false, "get_forecast": false}
			clientSaw := map[string]bool{}
			for _, tool := range []string{"get_weather", "divide", "get_forecast"} {
				call, err := c.CallTool(context.Background(), tool, []byte(`{"a":1,"b":0,"latitude":1,"longitude":2}`))
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range call.Final.Warnings() {
					clientSaw[tool] = clientSaw[tool] || w.Code == classify.WarnProtocolErrorAsTool
				}
			}
			stop()
			seen := 0
			for _, r := range sink.exchanges(t) {
				if r.Method != "tools/call" {
					continue
				}
				seen++
				want, ok := calls[r.Tool]
				if !ok {
					t.Fatalf("a tools/call of %q", r.Tool)
				}
				if got := warned(r.Warnings); got != want || got != clientSaw[r.Tool] {
					t.Errorf("%s (%s): proxy warns %v, client warns %v, want %v; warnings %v", r.Tool, r.Outcome, got, clientSaw[r.Tool], want, r.Warnings)
				}
				if want && !strings.Contains(fmt.Sprint(r.Warnings), `"get_weather" is not in the tools/list`) {
					t.Errorf("warning text: %v", r.Warnings)
				}
			}
			if seen != 3 {
				t.Fatalf("%d tools/call records, want 3", seen)
			}
		})
	}
}

// TestProxyUnknownToolNeedsAWholeListing: a tools/list cut short (its last
// page never requested) or never seen proves nothing, so an isError answer
// is not called an unknown-tool protocol error; the listing read to its
// end, page by page, does make the call.
func TestProxyUnknownToolNeedsAWholeListing(t *testing.T) {
	t.Parallel()
	up := serve(t, scriptedLister())
	purl, _, sink, stop := startProxy(t, up, proxy.Options{})
	send := func(id int, body string) {
		t.Helper()
		if _, _, _, err := post(t, http.DefaultClient, purl, fmt.Sprintf(body, id), nil); err != nil {
			t.Fatal(err)
		}
	}
	const list = `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`
	const page2 = `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"cursor":"p2"}}`
	const call = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ghost","arguments":{}}}`
	send(1, call)  // no listing yet
	send(2, list)  // page 1 of 2 only
	send(3, call)  // still no whole listing
	send(4, page2) // the listing ends: a, b
	send(5, call)  // ghost is unknown
	stop()
	var got []bool
	for _, r := range sink.exchanges(t) {
		if r.Method == "tools/call" {
			got = append(got, warned(r.Warnings))
		}
	}
	if fmt.Sprint(got) != "[false false true]" {
		t.Errorf("warnings on the three calls %v, want [false false true]", got)
	}
}

// scriptedLister is an upstream in JSON mode with a two-page tools/list
// (a, then b after cursor "p2") that answers every tools/call with
// isError "Unknown tool: NAME", as the Python SDK does.
func scriptedLister() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage
			Method string
			Params struct{ Name, Cursor string }
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &m)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case m.Method == "tools/list" && m.Params.Cursor == "":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"p2"}}`, m.ID)
		case m.Method == "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"b","inputSchema":{"type":"object"}}]}}`, m.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"Unknown tool: %s"}],"isError":true}}`, m.ID, m.Params.Name)
		}
	})
}
