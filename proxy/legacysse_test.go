package proxy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// legacySSEServer is a server of the 2024-11-05 HTTP+SSE transport as the
// TypeScript SDK's SSEServerTransport serves it (server-everything's sse
// mode): GET /sse opens the session's event stream, whose first event,
// endpoint, names /message?sessionId=…; a message POSTed there is answered
// 202 with the body "Accepted" and no Content-Type, and the answer to a
// request is sent on the stream.
type legacySSEServer struct {
	mu      sync.Mutex
	streams map[string]chan []byte // by session id
	n       int
}

func (s *legacySSEServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		s.mu.Lock()
		s.n++
		id := fmt.Sprintf("session-%d", s.n)
		ch := make(chan []byte, 16)
		s.streams[id] = ch
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: endpoint\ndata: /message?sessionId=%s\n\n", id)
		w.(http.Flusher).Flush()
		for {
			select {
			case msg := <-ch:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodPost && r.URL.Path == "/message":
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		ch := s.streams[r.URL.Query().Get("sessionId")]
		s.mu.Unlock()
		w.Header()["Content-Type"] = nil // as Express's res.end: none (net/http would sniff one)
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "Accepted")
		if ch != nil && len(m.ID) > 0 {
			ch <- []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`)
		}
	default:
		http.NotFound(w, r)
	}
}

// TestLegacySSEAccepted: through the proxy, a client of the 2024-11-05
// HTTP+SSE transport opens GET /sse (first event: endpoint) and POSTs its
// messages to the endpoint it names; each is answered 202 "Accepted" and
// the requests' answers arrive on the stream. A request's record has its
// answer's outcome (paired, TestLegacySSEPairsAnswers) with answeredOn
// "stream" and no warning request-answered-202; a notification's is
// NOTIFICATION_ACCEPTED.
// Before, each was UNEXPECTED_CONTENT_TYPE, the requests with the warning
// that their caller never gets the answer. A POST answered so to a URL no
// open stream named (another session; the stream's own endpoint after the
// stream ended) keeps that verdict.
func TestLegacySSEAccepted(t *testing.T) {
	t.Parallel()
	up := serve(t, &legacySSEServer{streams: map[string]chan []byte{}})
	purl, _, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{})
	base := strings.TrimSuffix(purl, "/sse")
	c := &http.Client{Timeout: 10 * time.Second}

	resp, err := c.Get(purl)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	var endpoint string
	for endpoint == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the endpoint event: %v", err)
		}
		if after, ok := strings.CutPrefix(line, "data: "); ok {
			endpoint = strings.TrimSpace(after)
		}
	}
	msgs := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
	}
	for _, m := range msgs {
		status, _, body, err := post(t, c, base+endpoint, m, nil)
		if err != nil || status != http.StatusAccepted || string(body) != "Accepted" {
			t.Fatalf("POST %s: %d %q %v", m, status, body, err)
		}
	}
	// The answers arrive on the stream.
	for range 2 {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("reading an answer: %v", err)
			}
			if strings.HasPrefix(line, "data: {") {
				break
			}
		}
	}
	// A session no stream named.
	if status, _, _, err := post(t, c, base+"/message?sessionId=unknown", `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, nil); err != nil || status != http.StatusAccepted {
		t.Fatalf("POST to another session: %d %v", status, err)
	}
	resp.Body.Close()
	// The stream's own endpoint, once its GET's record is written.
	deadline := time.Now().Add(testwait.Bound)
	for !hasGET(sink.exchanges(t)) {
		if time.Now().After(deadline) {
			t.Fatalf("no record of the GET stream after %s", testwait.Bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status, _, _, err := post(t, c, base+endpoint, `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`, nil); err != nil || status != http.StatusAccepted {
		t.Fatalf("POST after the stream ended: %d %v", status, err)
	}
	stop()

	type want struct {
		outcome classify.Outcome
		id      string // the record's id, raw JSON
		on      string
		warned  bool // request-answered-202
	}
	wants := map[string]want{
		"initialize":                {classify.ResultSuccess, `0`, record.AnsweredOnStream, false},
		"notifications/initialized": {classify.NotificationAccepted, ``, record.AnsweredOnStream, false},
		"tools/call":                {classify.ToolSuccess, `"c-1"`, record.AnsweredOnStream, false},
	}
	var after []*record.Record
	for _, r := range sink.exchanges(t) {
		if r.HTTPMethod != http.MethodPost {
			continue
		}
		if r.JSONRPC.ID.String() == "9" || r.JSONRPC.ID.String() == "10" {
			after = append(after, r)
			continue
		}
		w, ok := wants[r.Method]
		if !ok {
			t.Fatalf("a record of %q", r.Method)
		}
		delete(wants, r.Method)
		warned := false
		for _, x := range r.Warnings {
			warned = warned || x.Code == classify.WarnRequestAnswered202
		}
		if r.Outcome != w.outcome || r.Layer != w.outcome.Layer() || r.AnsweredOn != w.on || warned != w.warned ||
			r.Status != http.StatusAccepted || w.id != "" && r.JSONRPC.ID.String() != w.id {
			t.Errorf("%s: %s (%s), answeredOn %q, warned %v, status %d, id %s; want %s (transport), answeredOn %q, warned %v, 202, id %s (reason %q)",
				r.Method, r.Outcome, r.Layer, r.AnsweredOn, warned, r.Status, r.JSONRPC.ID.Raw(), w.outcome, w.on, w.warned, w.id, r.Reason)
		}
		if r.Method != "notifications/initialized" && !strings.Contains(r.Reason, "answered on the 2024-11-05 HTTP+SSE event stream (GET /sse)") {
			t.Errorf("%s: reason %q does not say where the answer came from", r.Method, r.Reason)
		}
	}
	if len(wants) != 0 {
		t.Errorf("no record of %v", wants)
	}
	if len(after) != 2 {
		t.Fatalf("%d records of the POSTs no open stream named, want 2", len(after))
	}
	for _, r := range after {
		warned := false
		for _, x := range r.Warnings {
			warned = warned || x.Code == classify.WarnRequestAnswered202
		}
		if r.Outcome != classify.UnexpectedContentType || r.AnsweredOn != "" || !warned {
			t.Errorf("id %s (no open stream named its URL): %s, answeredOn %q, warned %v; want UNEXPECTED_CONTENT_TYPE with request-answered-202",
				r.JSONRPC.ID.Raw(), r.Outcome, r.AnsweredOn, warned)
		}
	}
}

func hasGET(recs []*record.Record) bool {
	for _, r := range recs {
		if r.HTTPMethod == http.MethodGet {
			return true
		}
	}
	return false
}
