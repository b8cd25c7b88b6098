package proxy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// cancellingServer answers a 2025-11-25 tools/call as the TypeScript SDK v1
// (server-everything's trigger-long-running-operation) does: an SSE stream
// with a progress event, and, when its client cancels the request with a
// notifications/cancelled POST in the same session, the stream's end
// without a response (MCP 2025-11-25 cancellation: the receiver SHOULD NOT
// respond). A request nobody cancels ends the same way when the test says
// so (end): a condition, not a timer (a second's timer ended a stream
// before its cancel came on a loaded machine, and the note was missing).
type cancellingServer struct {
	mu      sync.Mutex
	waiting map[string]chan struct{} // by session and raw id
}

// end ends the stream of the call key (session and raw id), as its cancel
// does; a key the server does not hold is ignored.
func (s *cancellingServer) end(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch := s.waiting[key]; ch != nil {
		close(ch)
		delete(s.waiting, key)
	}
}

// holds reports whether the server has the call key (session and raw id)
// open, waiting for its cancel.
func (s *cancellingServer) holds(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting[key] != nil
}

func (s *cancellingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	session := r.Header.Get("Mcp-Session-Id")
	switch m.Method {
	case "notifications/cancelled":
		s.end(session + " " + string(m.Params.RequestID))
		w.WriteHeader(http.StatusAccepted)
	case "tools/call":
		ch := make(chan struct{})
		s.mu.Lock()
		s.waiting[session+" "+string(m.ID)] = ch
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1,\"total\":5}}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-ch:
		case <-r.Context().Done(): // the proxy's shutdown
		}
	default:
		http.Error(w, "unexpected "+m.Method, http.StatusBadRequest)
	}
}

// TestProxyNotesHTTPCancel: a request its client cancelled with a
// notifications/cancelled POST (2025-11-25 over HTTP), whose stream the
// server then ended without a response, is recorded as proxy --stdio
// records it: the outcome as it was (STREAM_INCOMPLETE, transport) and the
// note "the client cancelled the request (notifications/cancelled) after
// D". Before, the record said only that the stream ended without the
// response (server-everything and the TS SDK v1 client: a cancelled
// trigger-long-running-operation). A request of the same id in another
// session, and one whose cancel names another id, get no such note.
func TestProxyNotesHTTPCancel(t *testing.T) {
	t.Parallel()
	srv := &cancellingServer{waiting: map[string]chan struct{}{}}
	up := serve(t, srv)
	purl, _, sink, stop := startProxy(t, up, proxy.Options{})
	c := &http.Client{Timeout: 10 * time.Second}
	cases := []struct {
		session, id, cancel string // cancel: the requestId the client cancels ("" none)
		wantNote            bool
	}{
		{"session-a", `"call-7"`, `"call-7"`, true},
		{"session-b", `"call-7"`, ``, false},
		{"session-c", `7`, `7`, true},
		{"session-d", `8`, `9`, false},
	}
	for _, tc := range cases {
		hdr := map[string]string{"Mcp-Session-Id": tc.session, "MCP-Protocol-Version": "2025-11-25"}
		done := make(chan error, 1)
		go func() {
			_, _, _, err := post(t, c, purl, `{"jsonrpc":"2.0","id":`+tc.id+`,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":5},"_meta":{"progressToken":1}}}`, hdr)
			done <- err
		}()
		// The call is under way once the server holds it: a cancel
		// sent after a fixed sleep arrived first on a slow start (the
		// fresh-clone run at 19:14 UTC: no note on session-a).
		key := tc.session + " " + tc.id
		testwait.Until(t, tc.session+": the server to hold the call", func() bool { return srv.holds(key) })
		if tc.cancel != "" {
			status, _, _, err := post(t, c, purl, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+tc.cancel+`,"reason":"user cancelled"}}`, hdr)
			if err != nil || status != http.StatusAccepted {
				t.Fatalf("%s: cancel: %d %v", tc.session, status, err)
			}
		}
		// A stream its cancel did not end (none sent, or one naming
		// another id, already through the proxy) the server ends itself.
		srv.end(key)
		if err := testwait.Recv(t, done, "the cancelled call to end"); err != nil {
			t.Fatalf("%s: call: %v", tc.session, err)
		}
	}
	stop()
	note := regexp.MustCompile(`^the client cancelled the request \(notifications/cancelled\) after ([0-9]+ms|[0-9]+(\.[0-9]+)?s)$`)
	calls := 0
	for _, r := range sink.exchanges(t) {
		if r.Method != "tools/call" {
			continue
		}
		calls++
		var tc = cases[0]
		found := false
		for _, c := range cases {
			if r.Session == record.HashSession(c.session) {
				tc, found = c, true
			}
		}
		if !found {
			t.Fatalf("a record of an unknown session %q", r.Session)
		}
		if r.Outcome != classify.StreamIncomplete || r.Layer != classify.LayerTransport {
			t.Errorf("%s: %s (%s), want STREAM_INCOMPLETE (transport): the outcome is what arrived", tc.session, r.Outcome, r.Layer)
		}
		if want := wire.IDFromRaw([]byte(tc.id)); !r.JSONRPC.ID.Equal(want) {
			t.Errorf("%s: id %s, want %s", tc.session, r.JSONRPC.ID.Raw(), tc.id)
		}
		if got := note.MatchString(r.Note); got != tc.wantNote {
			t.Errorf("%s: note %q; want the cancel noted: %v", tc.session, r.Note, tc.wantNote)
		}
		if !tc.wantNote && strings.Contains(r.Note, "cancelled the request") {
			t.Errorf("%s: note %q names a cancel the client did not send for this request", tc.session, r.Note)
		}
	}
	if calls != len(cases) {
		t.Errorf("%d tools/call records, want %d", calls, len(cases))
	}
}
