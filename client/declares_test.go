package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/wire"
)

// TestInputsDeclareWhatTheyAnswer: the capabilities the client declares in
// initialize follow what --input answers. A file that answers sampling
// declared elicitation only, so a server that offers a sampling tool only
// to a client that samples (server-everything's trigger-sampling-request)
// did not list it and the call said "Tool … not found".
func TestInputsDeclareWhatTheyAnswer(t *testing.T) {
	const sampling = `{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}`
	tests := []struct {
		name   string
		inputs InputProvider
		want   string
	}{
		{"no inputs", nil, `{}`},
		{"an empty file", MapInputs{}, `{"elicitation":{"form":{},"url":{}}}`},
		{"sampling by method", MapInputs{"sampling/createMessage": json.RawMessage(sampling)}, `{"sampling":{}}`},
		{"sampling by key", MapInputs{"k1": json.RawMessage(sampling)}, `{"sampling":{}}`},
		{"roots by method", MapInputs{"roots/list": json.RawMessage(`{"roots":[]}`)}, `{"roots":{}}`},
		{"roots by key", MapInputs{"r": json.RawMessage(`{"roots":[{"uri":"file:///tmp"}]}`)}, `{"roots":{}}`},
		{"elicitation by method", MapInputs{"elicitation/create": json.RawMessage(`{"action":"decline"}`)}, `{"elicitation":{"form":{},"url":{}}}`},
		{"elicitation by key", MapInputs{"github_login": json.RawMessage(`{"action":"accept","content":{"name":"x"}}`)}, `{"elicitation":{"form":{},"url":{}}}`},
		{"all three", MapInputs{"sampling/createMessage": json.RawMessage(sampling), "roots/list": json.RawMessage(`{"roots":[]}`), "k": json.RawMessage(`{"action":"cancel"}`)},
			`{"elicitation":{"form":{},"url":{}},"roots":{},"sampling":{}}`},
		{"a terminal", &PromptInputs{}, `{"elicitation":{"form":{},"url":{}}}`},
	}
	noRetry := retry.DefaultPolicy()
	noRetry.MaxRetries = 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var got json.RawMessage
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var msg struct {
					Method string `json:"method"`
					Params struct {
						Capabilities json.RawMessage `json:"capabilities"`
					} `json:"params"`
				}
				_ = json.Unmarshal(body, &msg)
				if msg.Method == "initialize" {
					mu.Lock()
					got = msg.Params.Capabilities
					mu.Unlock()
				}
				http.Error(w, "no", http.StatusInternalServerError)
			}))
			defer srv.Close()
			c, err := New(Options{URL: srv.URL, Protocol: Protocol2025, Inputs: tt.inputs, Timeout: 5 * time.Second, Policy: &noRetry})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.CallTool(context.Background(), "t", json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if string(got) != tt.want {
				t.Fatalf("initialize declared %s, want %s", got, tt.want)
			}
		})
	}
}

// TestEveryRequestDeclaresItsCapabilities: over 2026-07-28 each request
// carries the client's capabilities in its own _meta (the schema requires
// io.modelcontextprotocol/clientCapabilities on every request, and a server
// must not infer them from a prior one): tools/list, the tools/call, its
// retry after a 503 and its MRTR re-issue (inputResponses, requestState)
// all declare the same object. A server that reads the re-issue's own
// _meta, as mcpdiag serve's elicitation scenarios do, refuses a re-issue
// without it with -32021.
func TestEveryRequestDeclaresItsCapabilities(t *testing.T) {
	type seen struct {
		method string
		round  bool
		caps   json.RawMessage
		ok     bool
	}
	var mu sync.Mutex
	var got []seen
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestState json.RawMessage            `json:"requestState"`
				Meta         map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &msg); err != nil {
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
		caps, ok := msg.Params.Meta[wire.MetaClientCapabilities]
		mu.Lock()
		got = append(got, seen{msg.Method, msg.Params.RequestState != nil, caps, ok})
		n := 0
		if msg.Method == "tools/call" {
			calls++
			n = calls
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case msg.Method == "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}`, msg.ID)
		case n == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case n == 2:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"ok?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"s1"}}`, msg.ID)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[]}}`, msg.ID)
		}
	}))
	defer srv.Close()
	pol := retry.DefaultPolicy()
	pol.Backoff, pol.MaxBackoff = time.Millisecond, time.Millisecond
	c, err := New(Options{URL: srv.URL, Protocol: Protocol2026, Policy: &pol,
		Inputs: MapInputs{"q": json.RawMessage(`{"action":"accept","content":{}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	call, err := c.CallTool(context.Background(), "t", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if call.Retries != 1 || call.Rounds != 1 {
		t.Fatalf("retries %d, rounds %d: want one retry (the 503) and one MRTR round", call.Retries, call.Rounds)
	}
	mu.Lock()
	defer mu.Unlock()
	const want = `{"elicitation":{"form":{},"url":{}}}`
	var methods []string
	rounds := 0
	for i, s := range got {
		methods = append(methods, s.method)
		if s.round {
			rounds++
		}
		if !s.ok || string(s.caps) != want {
			t.Errorf("request %d (%s, MRTR round %v): _meta clientCapabilities %s (present %v), want %s", i+1, s.method, s.round, s.caps, s.ok, want)
		}
	}
	if strings.Join(methods, ",") != "tools/list,tools/call,tools/call,tools/call" || rounds != 1 {
		t.Errorf("requests %v with %d MRTR round(s); want tools/list and three tools/call (the 503, its retry, the re-issue)", methods, rounds)
	}
}
