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

// TestNotJSONRPCIsHTTPSuccess: an exchange that is not a JSON-RPC request
// and got a 2xx (a 2025-11-25 standalone GET event stream of server
// notifications, a DELETE of the session, a metadata GET, a batch POST) is
// recorded HTTP_SUCCESS in the transport layer, with the request's HTTP
// method, no JSON-RPC method or id, the status and content type the client
// got, and a stream's events counted. It was RESULT_SUCCESS in the
// application layer: a result that no method returned (a GET stream
// carries no response), against its own reason ("judged at the HTTP layer
// only"). A non-2xx stays HTTP_ERROR.
func TestNotJSONRPCIsHTTPSuccess(t *testing.T) {
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	stream := "event: message\nid: 1\ndata: " + note + "\n\nevent: message\nid: 2\ndata: " + note + "\n\n"
	for _, tc := range []struct {
		name, method, body string
		status             int
		ct, respBody       string
		outcome            classify.Outcome
		layer              classify.Layer
		events             int
	}{
		{"GET stream", http.MethodGet, "", 200, "text/event-stream", stream, classify.HTTPSuccess, classify.LayerTransport, 2},
		{"DELETE session", http.MethodDelete, "", 200, "", "", classify.HTTPSuccess, classify.LayerTransport, -1},
		{"DELETE 204", http.MethodDelete, "", 204, "", "", classify.HTTPSuccess, classify.LayerTransport, -1},
		{"metadata GET", http.MethodGet, "", 200, "application/json", `{"resource":"http://127.0.0.1/mcp"}`, classify.HTTPSuccess, classify.LayerTransport, -1},
		{"batch POST", http.MethodPost, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 200, "application/json", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, classify.HTTPSuccess, classify.LayerTransport, -1},
		{"GET 405", http.MethodGet, "", 405, "", "", classify.HTTPError, classify.LayerTransport, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{}
			rc, err := recorder.New(recorder.Options{Records: s, Sync: true})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if tc.ct != "" {
					w.Header().Set("Content-Type", tc.ct)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.respBody)
			})))
			defer srv.Close()
			req, _ := http.NewRequest(tc.method, srv.URL+"/mcp", strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.recs) != 1 {
				t.Fatalf("%d records, want 1", len(s.recs))
			}
			r := s.recs[0]
			if r.Outcome != tc.outcome || r.Layer != tc.layer || r.HTTPMethod != tc.method || r.Method != "" ||
				r.Status != tc.status || r.ContentType != tc.ct || !(r.JSONRPC.ID.IsZero() || r.JSONRPC.ID.IsNull()) {
				t.Errorf("recorded %s (%s layer), %s, method %q, id %s, status %d, content type %q; want %s (%s layer), %s, no method, no id, %d, %q (%s)",
					r.Outcome, r.Layer, r.HTTPMethod, r.Method, r.JSONRPC.ID.String(), r.Status, r.ContentType,
					tc.outcome, tc.layer, tc.method, tc.status, tc.ct, r.Reason)
			}
			if tc.outcome == classify.HTTPSuccess && (!strings.Contains(r.Reason, "judged at the HTTP layer only") || !r.Outcome.Success()) {
				t.Errorf("reason %q, success %v", r.Reason, r.Outcome.Success())
			}
			if tc.events >= 0 && (r.SSE == nil || r.SSE.Events != tc.events || r.SSE.Notifications != tc.events) {
				t.Errorf("sse %+v, want %d events, %d notifications", r.SSE, tc.events, tc.events)
			}
		})
	}
}
