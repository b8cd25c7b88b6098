package recorder_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/recorder"
)

// TestGetStreamRequestsAsClassifier: on a GET event stream (read at the
// HTTP layer only, not by the classifier) the recorder counts and notes as
// server requests what the classifier hands on (wire.IsServerRequest):
// not a request in an event of another type, nor one without jsonrpc
// "2.0", nor a method with a result. Before, it counted all four
// (requests 4) and noted the large typed one (over what the writer's watch
// looks at), so that the client's answer of its id named
// sampling/createMessage, a request the client was never asked.
func TestGetStreamRequestsAsClassifier(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 70<<10)
	stream := "event: ping\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sampling/createMessage\",\"params\":{\"pad\":\"" + big + "\"}}\n\n" +
		"data: {\"id\":2,\"method\":\"roots/list\"}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"roots/list\",\"result\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"roots/list\"}\n\n"
	s := &sink{}
	rc, err := recorder.New(recorder.Options{Records: s, Sync: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, stream)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})))
	defer srv.Close()
	do := func(method, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Mcp-Session-Id", "s1")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	do(http.MethodGet, "")
	do(http.MethodPost, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	do(http.MethodPost, `{"jsonrpc":"2.0","id":4,"result":{"roots":[]}}`)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recs) != 3 {
		t.Fatalf("%d records, want 3", len(s.recs))
	}
	if g := s.recs[0]; g.SSE == nil || g.SSE.Requests != 1 || g.SSE.Events != 4 {
		t.Errorf("the GET stream's record: sse %+v, want 4 events, 1 request", g.SSE)
	}
	for i, want := range []struct{ id, method string }{{"1", ""}, {"4", "roots/list"}} {
		a := s.recs[i+1]
		if !a.ClientAnswer || a.JSONRPC.ID.String() != want.id || a.Method != want.method {
			t.Errorf("answer %s: clientAnswer %v, id %s, method %q; want method %q", want.id, a.ClientAnswer, a.JSONRPC.ID.String(), a.Method, want.method)
		}
	}
}
