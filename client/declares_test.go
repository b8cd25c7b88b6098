package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/retry"
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
