package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
)

// answerFacts are the facts of the record of a client's answer to a server
// request that must not depend on where they were recorded.
type answerFacts struct {
	Method        string
	ID            string // raw, with its JSON type
	Status        int
	Outcome       classify.Outcome
	ContentType   string
	ClientAnswer  bool
	AnswerRefused bool
}

func factsOf(r *record.Record) answerFacts {
	return answerFacts{Method: r.Method, ID: string(r.JSONRPC.ID.Raw()), Status: r.Status, Outcome: r.Outcome, ContentType: r.ContentType,
		ClientAnswer: r.ClientAnswer, AnswerRefused: r.AnswerRefused}
}

// answerRecord is the one record of recs of the client's answer to a
// server request, found by what is not under test: in call's records, its
// one exchange sent to answer the server (retryOrigin mrtr; a 2025-11-25
// call has no other), in the proxy's, the request body that is a JSON-RPC
// response (an id, no method).
func answerRecord(t *testing.T, where string, recs []*record.Record) *record.Record {
	t.Helper()
	var found []*record.Record
	for _, r := range recs {
		if r.Kind != record.KindExchange {
			continue
		}
		if r.RetryOrigin == record.OriginMRTR {
			found = append(found, r)
			continue
		}
		if r.RequestBody == nil {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(r.RequestBody.Text), &m) == nil && m.ID != nil && m.Method == nil && (m.Result != nil || m.Error != nil) {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d records of the client's answer, want 1", where, len(found))
	}
	return found[0]
}

// recordingProxy runs mcpdiag proxy in front of upstream with --record
// (full bodies); stop ends it and returns its records.
func recordingProxy(t *testing.T, upstream string) (url string, stop func() []*record.Record) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proxy.jsonl")
	ready, sigs, done := make(chan string, 1), make(chan os.Signal, 1), make(chan error, 1)
	o := proxyOptions{
		upstream: upstream, listen: "127.0.0.1:0", recordFile: path, recordBodies: "full",
		queue: 16, queuePolicy: "block", fsync: "close", shutdownTimeout: 5 * time.Second,
		ready: func(p, _ string) { ready <- p }, signals: sigs,
	}
	var stderr syncBuffer
	go func() { done <- runProxy(context.Background(), nil, io.Discard, &stderr, nil, o) }()
	select {
	case url = <-ready:
	case err := <-done:
		t.Fatalf("the proxy ended: %v: %s", err, stderr.String())
	case <-time.After(testwait.Bound):
		t.Fatalf("the proxy neither gave its URL nor ended within %s", testwait.Bound)
	}
	return strings.TrimSuffix(url, "/"), func() []*record.Record {
		sigs <- syscall.SIGTERM
		if err := testwait.Recv(t, done, "the proxy to end after SIGTERM"); err != nil {
			t.Fatalf("runProxy: %v: %s", err, stderr.String())
		}
		return recordtest.ReadFile(t, path)
	}
}

// TestCallAnswerSameDirectAndThroughProxy is metamorphic: the record
// `mcpdiag call` writes of its own answer to a 2025-11-25 elicitation/create
// (the fixture's elicitation.approval; a server that refuses the answer in
// a 200's body) is the same whether call connects directly or through
// `mcpdiag proxy`, and the same as the proxy's record of that POST: method,
// id with its JSON type, status, outcome, clientAnswer, answerRefused.
// Before call judged its answers as the recorder does, its record said
// "(response to elicitation/create)", NOTIFICATION_ACCEPTED.
func TestCallAnswerSameDirectAndThroughProxy(t *testing.T) {
	serveURL, _ := startServe(t, serveOptions{seed: 1})
	serveBase := strings.TrimSuffix(serveURL, "/mcp")
	refusing := httptest.NewServer(refusingAnswers())
	t.Cleanup(refusing.Close)
	for _, tc := range []struct {
		name, base, path, input string
		want                    answerFacts // an ID of "" is the fixture's, not known here
	}{
		{"answered", serveBase, "/s/elicitation.approval/mcp", `{"elicitation/create":{"action":"decline"}}`,
			answerFacts{Method: "elicitation/create", Status: 202, Outcome: classify.ResultSuccess, ClientAnswer: true}},
		// An empty --input declares elicitation and answers nothing: call
		// answers with a JSON-RPC error.
		{"answered with an error", serveBase, "/s/elicitation.approval/mcp", `{}`,
			answerFacts{Method: "elicitation/create", Status: 202, Outcome: classify.JSONRPCError, ClientAnswer: true}},
		{"refused", refusing.URL, "/mcp", `{"elicitation/create":{"action":"decline"}}`,
			answerFacts{Method: "elicitation/create", ID: `"el-1"`, Status: 200, Outcome: classify.JSONRPCError, ContentType: "application/json", ClientAnswer: true, AnswerRefused: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "input.json")
			if err := os.WriteFile(in, []byte(tc.input), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"approve", "--protocol", "2025-11-25", "--input", in, "--retries", "0", "--timeout", "10s"}
			direct := runCallRecorded(t, append([]string{"call", tc.base + tc.path}, args...)...)
			proxyURL, stop := recordingProxy(t, tc.base+"/")
			through := runCallRecorded(t, append([]string{"call", proxyURL + tc.path}, args...)...)
			proxied := stop()

			views := []struct {
				name string
				r    *record.Record
			}{
				{"call directly", answerRecord(t, "call directly", direct.exchanges)},
				{"call through the proxy", answerRecord(t, "call through the proxy", through.exchanges)},
				{"the proxy", answerRecord(t, "the proxy", proxied)},
			}
			want := factsOf(views[0].r)
			for _, v := range views {
				got := factsOf(v.r)
				if got != want {
					t.Errorf("%s recorded %+v, %s %+v", v.name, got, views[0].name, want)
				}
			}
			w := tc.want
			if w.ID == "" {
				w.ID = want.ID // the fixture's: whatever it is, the same in all three
			}
			if want != w || want.ID == "" {
				t.Errorf("the answer's record %+v, want %+v", want, w)
			}
		})
	}
}

// refusingAnswers is a 2025-11-25 server whose tool "approve" asks the
// client (elicitation/create, id "el-1", on the tools/call stream) and
// refuses the answer with a JSON-RPC error in a 200's body, then ends the
// call with a tool result.
func refusingAnswers() http.Handler {
	answered := make(chan struct{}, 1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &m) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Mcp-Session-Id", "s-1")
		switch {
		case m.Method == "" && m.ID != nil:
			// The client's answer: refused.
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"no such request"}}`, m.ID)
			select {
			case answered <- struct{}{}:
			default:
			}
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		case m.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"refusing","version":"1"}}}`, m.ID)
		case m.Method == "tools/list":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"approve","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}`, m.ID)
		case m.Method == "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"el-1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"approve?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-answered:
			case <-r.Context().Done():
				return
			}
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n", m.ID)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}`, m.ID)
		}
	})
}
