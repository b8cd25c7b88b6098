package recorder_test

import (
	"context"
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
// reason named a notification while the note said a response. It is
// judged as the answer it is (issue answers13): RESULT_SUCCESS, marked
// clientAnswer, with no method (no stream carried the server request),
// its status the 202.
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
	// Many times: the client closes its connection as soon as it has the
	// head (it does not read the empty chunked body to its end), and the
	// record must not call that a disconnect during the exchange (before,
	// 1 run in 20 recorded DC "after 0 response bytes").
	for i := range 50 {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"result":{"roots":[]},"jsonrpc":"2.0","id":0}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// The client may have its 202 before the handler's record is
		// made (the recorder flushes a head with no body): wait for it.
		if err := rc.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		if len(s.recs) != i+1 {
			s.mu.Unlock()
			t.Fatalf("%d records after %d exchanges", len(s.recs), i+1)
		}
		r := s.recs[i]
		s.mu.Unlock()
		if r.Outcome != classify.ResultSuccess || !r.ClientAnswer || r.Method != "" || r.Status != http.StatusAccepted ||
			!strings.HasPrefix(r.Reason, "the server accepted the client's answer (HTTP 202); as an answer: ") || strings.Contains(r.Reason, "notification") ||
			r.Note != "the client's response to a server request" || len(r.Flags) != 0 {
			t.Fatalf("exchange %d: outcome %s, clientAnswer %v, method %q, status %d, reason %q, note %q, flags %v", i, r.Outcome, r.ClientAnswer, r.Method, r.Status, r.Reason, r.Note, r.Flags)
		}
	}
}
