package proxy_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestClientAnswerPairsByIDValue: through the proxy, a client's answer
// whose id is the server request's spelled otherwise names the request's
// method, as the server pairs it. A go-sdk server asks elicitation/create
// (id 1, a number) during a tools/call; the client answers with id 1.0 and
// go-sdk takes it as its request's answer (the tool returns "hello
// accept"); the answer's record names elicitation/create and keeps the id
// as sent (1.0). A server that asks with the string id "srv-1" is answered
// "\u0073rv-1", the same JSON string. Before, the recorder keyed server
// requests by the id's bytes: both answers' records had no method.
func TestClientAnswerPairsByIDValue(t *testing.T) {
	t.Parallel()
	t.Run("go-sdk, 1 answered as 1.0", func(t *testing.T) {
		t.Parallel()
		s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: objSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
					Message:         "your name?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
				})
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + res.Action}}}, nil
			})
		up := serve(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		u, _, sink, stop := startProxy(t, up, proxy.Options{})
		c := &http.Client{Timeout: 60 * time.Second}
		st, h, body, err := post(t, c, u, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"respelling","version":"1"}}}`, nil)
		if err != nil || st != http.StatusOK {
			t.Fatalf("initialize: %d %q %v", st, body, err)
		}
		hdr := map[string]string{"Mcp-Session-Id": h.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
		if st, _, body, err := post(t, c, u, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr); err != nil || st != http.StatusAccepted {
			t.Fatalf("initialized: %d %q %v", st, body, err)
		}
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		rd := wire.NewSSEReader(resp.Body, wire.DefaultMaxEventSize)
		sent, result := "", ""
		for result == "" {
			ev, err := rd.Next()
			if err != nil {
				t.Fatalf("the tools/call stream ended before its result (answered %q): %v", sent, err)
			}
			m := wire.ParseMessage(ev.Data)
			switch {
			case m.Kind == wire.MessageRequest && m.Method == "elicitation/create" && m.ID.IsNumber():
				sent = m.ID.String() + ".0"
				answer := `{"jsonrpc":"2.0","id":` + sent + `,"result":{"action":"accept","content":{"name":"ada"}}}`
				if st, _, body, err := post(t, c, u, answer, hdr); err != nil || st != http.StatusAccepted {
					t.Fatalf("answer: %d %q %v", st, body, err)
				}
			case m.Kind == wire.MessageResponse:
				result = string(ev.Data)
			}
		}
		if !strings.Contains(result, "hello accept") {
			t.Fatalf("go-sdk did not take the answer of id %s as its request's: %s", sent, result)
		}
		resp.Body.Close()
		stop()
		checkAnswerRecord(t, sink.records(t), "elicitation/create", sent)
	})
	t.Run(`"srv-1" answered as "\u0073rv-1"`, func(t *testing.T) {
		t.Parallel()
		up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			if strings.Contains(string(b), `"method":"tools/call"`) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"roots/list\"}\n\n")
				io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n")
				return
			}
			w.WriteHeader(http.StatusAccepted)
		}))
		u, _, sink, stop := startProxy(t, up, proxy.Options{})
		hdr := map[string]string{"Mcp-Session-Id": "s-1", "MCP-Protocol-Version": "2025-11-25"}
		if st, _, body, err := post(t, http.DefaultClient, u, scriptedCall("2", "ask-roots"), hdr); err != nil || st != http.StatusOK || !strings.Contains(string(body), "roots/list") {
			t.Fatalf("tools/call: %d %q %v", st, body, err)
		}
		sent := `"\u0073rv-1"`
		if st, _, body, err := post(t, http.DefaultClient, u, `{"jsonrpc":"2.0","id":`+sent+`,"result":{"roots":[]}}`, hdr); err != nil || st != http.StatusAccepted {
			t.Fatalf("answer: %d %q %v", st, body, err)
		}
		stop()
		checkAnswerRecord(t, sink.records(t), "roots/list", sent)
	})
}

// checkAnswerRecord checks the one record of a client's answer: its
// method, its id as sent, and the answer judged as accepted.
func checkAnswerRecord(t *testing.T, recs []*record.Record, method, id string) {
	t.Helper()
	var answers []*record.Record
	for _, r := range recs {
		if r.ClientAnswer {
			answers = append(answers, r)
		}
	}
	if len(answers) != 1 {
		t.Fatalf("%d records of a client's answer, want 1", len(answers))
	}
	if a := answers[0]; a.Method != method || string(a.JSONRPC.ID.Raw()) != id || a.Outcome != "RESULT_SUCCESS" {
		t.Errorf("the answer's record: method %q id %s outcome %s (%s); want %s, id %s, RESULT_SUCCESS", a.Method, a.JSONRPC.ID.Raw(), a.Outcome, a.Reason, method, id)
	}
}
