package recorder_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// TestListenClosedByClient: a 2026-07-28 subscriptions/listen stream ends
// when its client closes it: MCP sends no response then ("an abrupt
// transport close carries no response"; SubscriptionsListenResult comes only
// when the server tears the subscription down). The record says so,
// HTTP_SUCCESS in the transport layer with the client-left flag, the method
// and id of the request; it was STREAM_INCOMPLETE, which report counts as a
// failure of every subscription a client ever closed. A listen stream the
// server ends without the result stays STREAM_INCOMPLETE, and so does a
// tools/call stream the client leaves.
func TestListenClosedByClient(t *testing.T) {
	ack := `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"s1"}}}`
	listen := `{"jsonrpc":"2.0","id":"listen:0","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	for _, tc := range []struct {
		name, body string
		serverEnds bool
		outcome    classify.Outcome
		method, id string
		wantDCFlag bool
	}{
		{"client closes listen", listen, false, classify.HTTPSuccess, "subscriptions/listen", `"listen:0"`, true},
		{"server ends listen", listen, true, classify.StreamIncomplete, "subscriptions/listen", `"listen:0"`, false},
		{"client leaves a tools/call", call, false, classify.StreamIncomplete, "tools/call", "7", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &sink{}
			rc, err := recorder.New(recorder.Options{Records: s})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte("data: " + ack + "\n\n"))
				w.(http.Flusher).Flush()
				if tc.serverEnds {
					return
				}
				select {
				case <-r.Context().Done():
				case <-time.After(20 * time.Second):
				}
			})))
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", classify.Protocol2026)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || !strings.Contains(line, "acknowledged") {
				t.Fatalf("the client read %q, %v", line, err)
			}
			if tc.serverEnds {
				// The client reads on until the server's end: closing at
				// once would race it (the close first is the client's end).
				_, _ = io.Copy(io.Discard, resp.Body)
			}
			resp.Body.Close() // the client closes its stream
			http.DefaultClient.CloseIdleConnections()
			deadline := time.Now().Add(testwait.Bound)
			for {
				s.mu.Lock()
				n := len(s.recs)
				s.mu.Unlock()
				if n > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.recs) != 1 {
				t.Fatalf("%d records, want 1", len(s.recs))
			}
			r := s.recs[0]
			dc := r.Flags.Has(record.FlagDC)
			if r.Outcome != tc.outcome || r.Method != tc.method || r.JSONRPC.ID.String() != tc.id || dc != tc.wantDCFlag {
				t.Errorf("recorded %s (%s layer), method %s, id %s, DC %v: %s; want %s, %s, %s, DC %v",
					r.Outcome, r.Layer, r.Method, r.JSONRPC.ID.String(), dc, r.Reason, tc.outcome, tc.method, tc.id, tc.wantDCFlag)
			}
			if tc.outcome == classify.HTTPSuccess && (r.Layer != classify.LayerTransport || !r.Outcome.Success() || !strings.Contains(r.Reason, "closed its subscriptions/listen stream")) {
				t.Errorf("layer %s, success %v, reason %q", r.Layer, r.Outcome.Success(), r.Reason)
			}
		})
	}
}
