package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
)

// TestServerRequestIDIsNoInputKey: a 2025-11-25 server request is answered
// by its method, never by an --input key that reads like its id. The key
// was the id's text with its quotes trimmed, so the requests of ids 1 and
// "1" (two ids: docs/decisions.md "Ids pair by value") shared the input
// key "1", and a file's "1", an MRTR input request key, answered both.
func TestServerRequestIDIsNoInputKey(t *testing.T) {
	answered := make(chan []byte, 4)
	s := &legacyServer{t: t}
	s.post = func(m rpc, body []byte) {
		if m.Method == "" && bytes.Contains(body, []byte(`"result"`)) {
			answered <- body
		}
	}
	s.call = func(w http.ResponseWriter, m rpc, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, id := range []string{`1`, `"1"`} {
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"elicitation/create\",\"params\":{\"message\":\"ok?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n\n", id)
		}
		w.(http.Flusher).Flush()
		var got []string
		for len(got) < 2 {
			select {
			case b := <-answered:
				got = append(got, string(b))
			case <-time.After(testwait.Bound): // a bound, not a measure: the answers come at once
				http.Error(w, "no answer", http.StatusInternalServerError)
				return
			}
		}
		sort.Strings(got)
		text, _ := json.Marshal(got)
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", m.ID, text)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	inputs := client.MapInputs{
		"1":                  json.RawMessage(`{"action":"accept","content":{"by":"key"}}`),
		"elicitation/create": json.RawMessage(`{"action":"decline"}`),
	}
	seen := &seenInputs{inner: inputs}
	c, _ := client.New(client.Options{URL: ts.URL, Protocol: client.Protocol2025, Inputs: seen})
	call, _ := c.CallTool(context.Background(), "t", nil)
	if call.Outcome != classify.ToolSuccess {
		t.Fatalf("outcome %s: %s", call.Outcome, call.Decision.Reason)
	}
	answers := map[string]string{}
	for _, ex := range call.Exchanges {
		if ex.ClientAnswer {
			answers[string(ex.ID.Raw())] = string(ex.RequestBody)
		}
	}
	for id, want := range map[string]string{
		`1`:   `{"jsonrpc":"2.0","id":1,"result":{"action":"decline"}}`,
		`"1"`: `{"jsonrpc":"2.0","id":"1","result":{"action":"decline"}}`,
	} {
		if answers[id] != want {
			t.Errorf("the answer to id %s: %s; want %s (by its method, not the input key \"1\")", id, answers[id], want)
		}
	}
	// The provider is told each request's id with its JSON type, and its
	// method as the key.
	sort.Strings(seen.got)
	if want := []string{`"1" elicitation/create`, `1 elicitation/create`}; fmt.Sprint(seen.got) != fmt.Sprint(want) {
		t.Errorf("the provider saw %q, want %q", seen.got, want)
	}
}

// seenInputs answers as inner does and notes each request's id and key.
type seenInputs struct {
	inner client.MapInputs
	mu    sync.Mutex
	got   []string
}

func (s *seenInputs) Answer(ctx context.Context, req client.InputRequest) (json.RawMessage, error) {
	s.mu.Lock()
	s.got = append(s.got, string(req.ID.Raw())+" "+req.Key)
	s.mu.Unlock()
	return s.inner.Answer(ctx, req)
}
