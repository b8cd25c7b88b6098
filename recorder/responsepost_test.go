package recorder_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// TestClientResponsePostReason: a POST that carries the client's answer to
// a server request (a JSON-RPC response, as the MCP Inspector CLI sends to
// server-everything's roots/list) answered 202 says so in its reason, not
// "the notification was accepted": it was no notification. Before, the
// reason named a notification while the note said a response.
func TestClientResponsePostReason(t *testing.T) {
	s := &sink{}
	rc, err := recorder.New(recorder.Options{Records: s, Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	})))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"result":{"roots":[]},"jsonrpc":"2.0","id":0}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recs) != 1 {
		t.Fatalf("%d records, want 1", len(s.recs))
	}
	r := s.recs[0]
	if r.Outcome != classify.NotificationAccepted || r.Reason != "the client's response to a server request was accepted (HTTP 202, no body)" ||
		r.Note != "the client's response to a server request" {
		t.Errorf("outcome %s, reason %q, note %q", r.Outcome, r.Reason, r.Note)
	}
}
