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

// pairingServer is a 2024-11-05 HTTP+SSE server (GET /sse names
// /message?sessionId=…; POSTs answered 202 "Accepted") whose answers on the
// stream depend on the tool called: "echo" a result, "fail" a result with
// isError, "rpcerr" a JSON-RPC error, "first" a result sent on the stream
// before the POST's 202, "retype" a result whose id has the other JSON
// type (a number's id as a string), "never" no answer, "hold" a result sent
// once release is closed, "big" a result of 100 KiB whose id comes first,
// "bigtail" one whose id comes last (as the TypeScript SDK writes it).
type pairingServer struct {
	mu      sync.Mutex
	streams map[string]chan streamMsg
	n       int
	release chan struct{}
	split   bool // the endpoint event is written in two flushes, 50 ms apart
	shared  bool // every stream names /message (no session id), and every answer goes on the first stream
}

type streamMsg struct {
	data string
	sent chan struct{} // closed once the event was flushed (nil: not waited for)
}

func newPairingServer() *pairingServer {
	return &pairingServer{streams: map[string]chan streamMsg{}, release: make(chan struct{})}
}

func (s *pairingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/sse":
		s.mu.Lock()
		s.n++
		id := fmt.Sprintf("session-%d", s.n)
		ch := make(chan streamMsg, 64)
		s.streams[id] = ch
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		ev := fmt.Sprintf("event: endpoint\ndata: /message?sessionId=%s\n\n", id)
		if s.shared {
			ev = "event: endpoint\ndata: /message\n\n"
		}
		if s.split {
			io.WriteString(w, ev[:22])
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
			ev = ev[22:]
		}
		io.WriteString(w, ev)
		w.(http.Flusher).Flush()
		for {
			select {
			case m := <-ch:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", m.data)
				w.(http.Flusher).Flush()
				if m.sent != nil {
					close(m.sent)
				}
			case <-r.Context().Done():
				return
			}
		}
	case r.Method == http.MethodPost && r.URL.Path == "/message":
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		ch := s.streams[r.URL.Query().Get("sessionId")]
		if s.shared {
			ch = s.streams["session-1"]
		}
		s.mu.Unlock()
		var answer string
		id := string(m.ID)
		switch {
		case len(m.ID) == 0:
		case m.Method == "initialize":
			answer = `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}}`
		case m.Params.Name == "fail":
			answer = `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"boom"}],"isError":true}}`
		case m.Params.Name == "rpcerr":
			answer = `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"Invalid params"}}`
		case m.Params.Name == "retype":
			answer = `{"jsonrpc":"2.0","id":"` + id + `","result":{"content":[{"type":"text","text":"Echo: hi"}]}}`
		case m.Params.Name == "big":
			answer = `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 100<<10) + `"}],"isError":true}}`
		case m.Params.Name == "bigtail":
			answer = `{"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 100<<10) + `"}]},"jsonrpc":"2.0","id":` + id + `}`
		case m.Params.Name == "never":
		default:
			answer = `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`
		}
		if answer != "" && m.Params.Name == "first" {
			sent := make(chan struct{})
			ch <- streamMsg{data: answer, sent: sent}
			<-sent
			answer = ""
		}
		w.Header()["Content-Type"] = nil // as Express's res.end: none
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "Accepted")
		switch {
		case answer == "":
		case m.Params.Name == "hold":
			go func() {
				<-s.release
				ch <- streamMsg{data: answer}
			}()
		default:
			ch <- streamMsg{data: answer}
		}
	default:
		http.NotFound(w, r)
	}
}

// legacySession opens the proxied GET stream at purl and returns the
// endpoint URL (through the proxy), a reader of the stream's data lines and
// the response to close.
func legacySession(t *testing.T, c *http.Client, purl string) (string, *bufio.Reader, *http.Response) {
	t.Helper()
	resp, err := c.Get(purl)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the endpoint event: %v", err)
		}
		if after, ok := strings.CutPrefix(line, "data: "); ok {
			return strings.TrimSuffix(purl, "/sse") + strings.TrimSpace(after), br, resp
		}
	}
}

// readAnswers reads n messages off the stream.
func readAnswers(t *testing.T, br *bufio.Reader, n int) {
	t.Helper()
	for range n {
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
}

func call(id, tool string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"message":"hi"}}}`
}

func postAll(t *testing.T, c *http.Client, endpoint string, msgs ...string) {
	t.Helper()
	for _, m := range msgs {
		status, _, body, err := post(t, c, endpoint, m, nil)
		if err != nil || status != http.StatusAccepted || string(body) != "Accepted" {
			t.Fatalf("POST %s: %d %q %v", m, status, body, err)
		}
	}
}

// byID returns the POST records by their raw JSON-RPC id, and the GET's.
func byID(t *testing.T, sink *memSink) (map[string]*record.Record, *record.Record) {
	t.Helper()
	posts := map[string]*record.Record{}
	var get *record.Record
	for _, r := range sink.exchanges(t) {
		switch r.HTTPMethod {
		case http.MethodGet:
			get = r
		case http.MethodPost:
			if k := r.JSONRPC.ID.String(); k != "" {
				if posts[k] != nil {
					t.Errorf("two records of id %s", k)
				}
				posts[k] = r
			}
		}
	}
	return posts, get
}

// waitFor polls the sink until cond holds (60 s at most).
// seenAnswers is waitFor's condition that n records have their answer
// from the stream (streamAnswer.seen).
func seenAnswers(n int) func([]*record.Record) bool {
	return func(recs []*record.Record) bool {
		seen := 0
		for _, r := range recs {
			if r.StreamAnswer != nil && r.StreamAnswer.Seen {
				seen++
			}
		}
		return seen == n
	}
}

func waitFor(t *testing.T, sink *memSink, what string, cond func([]*record.Record) bool) {
	t.Helper()
	deadline := time.Now().Add(testwait.Bound)
	for !cond(sink.exchanges(t)) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s", what, testwait.Bound)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type answerWant struct {
	outcome classify.Outcome
	tool    string
	seen    bool
	notSeen string
	isError bool
	code    int64  // JSON-RPC error code, 0 for none
	respID  string // the answer's id as written, when it is not the request's ("" none)
}

func checkPost(t *testing.T, posts map[string]*record.Record, id string, w answerWant) {
	t.Helper()
	r := posts[id]
	if r == nil {
		t.Errorf("id %s: no record", id)
		return
	}
	sa := r.StreamAnswer
	if sa == nil {
		t.Errorf("id %s: no streamAnswer (%s: %s)", id, r.Outcome, r.Reason)
		return
	}
	code := int64(0)
	if r.JSONRPC.ErrorCode != nil {
		code = *r.JSONRPC.ErrorCode
	}
	isError := r.IsError != nil && *r.IsError
	if r.Outcome != w.outcome || r.Layer != w.outcome.Layer() || r.Method != "tools/call" && w.tool != "" || r.Tool != w.tool ||
		sa.Seen != w.seen || sa.NotSeen != w.notSeen || isError != w.isError || code != w.code ||
		r.Status != http.StatusAccepted || r.AnsweredOn != record.AnsweredOnStream || string(r.JSONRPC.ResponseID.Raw()) != w.respID {
		t.Errorf("id %s: %s (%s) method %q tool %q streamAnswer %+v isError %v code %d status %d answeredOn %q responseId %s;\n want %s tool %q seen %v notSeen %q isError %v code %d status 202 (reason %q)",
			id, r.Outcome, r.Layer, r.Method, r.Tool, *sa, isError, code, r.Status, r.AnsweredOn, r.JSONRPC.ResponseID,
			w.outcome, w.tool, w.seen, w.notSeen, w.isError, w.code, r.Reason)
	}
	for _, x := range r.Warnings {
		if x.Code == classify.WarnRequestAnswered202 {
			t.Errorf("id %s: warned %s", id, x.Code)
		}
	}
	if w.seen && (sa.Bytes <= 0 || sa.After <= 0) {
		t.Errorf("id %s: answer bytes %d, after %v", id, sa.Bytes, sa.After)
	}
}

// TestLegacySSEPairsAnswers: through the proxy, the answers a 2024-11-05
// HTTP+SSE server sends on its GET stream are paired with the requests
// POSTed to the stream's endpoint (same stream, same id of the same JSON
// type) and judged by the classifier: each request's record has its real
// outcome (TOOL_SUCCESS, TOOL_ERROR with isError, JSONRPC_ERROR), with
// its id, method and tool as sent, its HTTP 202 kept, and streamAnswer
// seen; an answer sent before the POST's 202 is paired too. A request
// whose answer never comes is written REQUEST_ACCEPTED when the stream
// ends (notSeen "stream-ended"). An answer of id "5" for the request of id
// 5 (stdio22: the other JSON type's text, as the stdio proxy pairs it) is
// that request's, INVALID_ENVELOPE with the answer's id kept (before, it
// was counted unpaired and the request never answered). The stream's
// record counts the responses it carried.
// Before, every request was REQUEST_ACCEPTED and the stream's record
// counted nothing.
func TestLegacySSEPairsAnswers(t *testing.T) {
	t.Parallel()
	srv := newPairingServer()
	up := serve(t, srv)
	purl, _, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{})
	c := &http.Client{Timeout: 30 * time.Second}
	endpoint, br, resp := legacySession(t, c, purl)
	postAll(t, c, endpoint,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		call(`1`, "echo"), call(`"c-2"`, "fail"), call(`3`, "rpcerr"), call(`"4"`, "first"),
		call(`5`, "retype"), call(`6`, "never"))
	readAnswers(t, br, 6)
	// Every answer paired (or counted) before the stream ends.
	waitFor(t, sink, "paired records", seenAnswers(6))
	resp.Body.Close()
	stop()

	posts, get := byID(t, sink)
	checkPost(t, posts, `1`, answerWant{outcome: classify.ToolSuccess, tool: "echo", seen: true})
	checkPost(t, posts, `"c-2"`, answerWant{outcome: classify.ToolError, tool: "fail", seen: true, isError: true})
	checkPost(t, posts, `3`, answerWant{outcome: classify.JSONRPCError, tool: "rpcerr", seen: true, code: -32602})
	checkPost(t, posts, `"4"`, answerWant{outcome: classify.ToolSuccess, tool: "first", seen: true})
	checkPost(t, posts, `5`, answerWant{outcome: classify.InvalidEnvelope, tool: "retype", seen: true, respID: `"5"`})
	checkPost(t, posts, `6`, answerWant{outcome: classify.RequestAccepted, tool: "never", notSeen: record.AnswerStreamEnded})
	if r := posts[`0`]; r == nil || r.Method != "initialize" || r.StreamAnswer == nil || !r.StreamAnswer.Seen || !r.Outcome.Success() || r.Outcome == classify.RequestAccepted {
		t.Errorf("initialize: %+v", r)
	}
	if r := posts[`"c-2"`]; r != nil && r.ErrorMessage != "" {
		t.Errorf("tool error: errorMessage %q", r.ErrorMessage)
	}
	if r := posts[`3`]; r != nil && r.ErrorMessage != "Invalid params" {
		t.Errorf("JSON-RPC error: errorMessage %q", r.ErrorMessage)
	}
	// The default body mode (errors) records a failed call's answer, not
	// the POST's "Accepted": a reader of a tool error needs its text.
	for id, want := range map[string]string{
		`"c-2"`: `{"jsonrpc":"2.0","id":"c-2","result":{"content":[{"type":"text","text":"boom"}],"isError":true}}`,
		`3`:     `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params"}}`,
	} {
		if r := posts[id]; r == nil || r.ResponseBody == nil || r.ResponseBody.Text != want || r.ResponseBody.Truncated {
			t.Errorf("id %s: response body %+v, want the answer %s", id, r.ResponseBody, want)
		}
	}
	for _, id := range []string{`1`, `"4"`} {
		if r := posts[id]; r == nil || r.ResponseBody != nil {
			t.Errorf("id %s: a success records no body in errors mode, got %+v", id, r.ResponseBody)
		}
	}
	if get == nil || get.StreamAnswers == nil {
		t.Fatalf("the GET stream's record: %+v", get)
	}
	if want := (record.StreamAnswers{Responses: 6, Paired: 6}); *get.StreamAnswers != want {
		t.Errorf("the stream's answers %+v, want %+v", *get.StreamAnswers, want)
	}
	if get.Outcome != classify.HTTPSuccess {
		t.Errorf("the GET stream: %s (%s)", get.Outcome, get.Reason)
	}
}

// TestLegacySSEAnswerAfterItsWait: a request whose answer comes on the
// stream after the proxy's wait (LegacyAnswerWait) is recorded once, when
// the wait runs out: REQUEST_ACCEPTED with notSeen "timeout"; the answer,
// when it comes, is counted late on the stream's record, and no second
// record of the request is written.
func TestLegacySSEAnswerAfterItsWait(t *testing.T) {
	t.Parallel()
	srv := newPairingServer()
	up := serve(t, srv)
	purl, _, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{LegacyAnswerWait: 50 * time.Millisecond})
	c := &http.Client{Timeout: 30 * time.Second}
	endpoint, br, resp := legacySession(t, c, purl)
	postAll(t, c, endpoint, call(`7`, "hold"))
	waitFor(t, sink, "record of the held request", func(recs []*record.Record) bool {
		for _, r := range recs {
			if r.HTTPMethod == http.MethodPost {
				return true
			}
		}
		return false
	})
	close(srv.release)
	readAnswers(t, br, 1)
	resp.Body.Close()
	stop()
	posts, get := byID(t, sink)
	if len(posts) != 1 {
		t.Errorf("%d POST records, want 1", len(posts))
	}
	checkPost(t, posts, `7`, answerWant{outcome: classify.RequestAccepted, tool: "hold", notSeen: record.AnswerTimeout})
	if get == nil || get.StreamAnswers == nil || *get.StreamAnswers != (record.StreamAnswers{Responses: 1, Late: 1}) {
		t.Errorf("the GET stream's record: %+v", get)
	}
}

// TestLegacySSEPendingCap: past the bound on requests waiting for their
// answer, the oldest is written without it (notSeen "evicted"), its later
// answer counted late; the others are paired as usual.
func TestLegacySSEPendingCap(t *testing.T) {
	t.Parallel()
	srv := newPairingServer()
	up := serve(t, srv)
	purl, p, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{})
	proxy.SetLegacyPendingMax(p, 2)
	c := &http.Client{Timeout: 30 * time.Second}
	endpoint, br, resp := legacySession(t, c, purl)
	postAll(t, c, endpoint, call(`10`, "hold"), call(`11`, "hold"), call(`12`, "hold"))
	close(srv.release)
	readAnswers(t, br, 3)
	waitFor(t, sink, "paired records", func(recs []*record.Record) bool {
		n := 0
		for _, r := range recs {
			if r.StreamAnswer != nil {
				n++
			}
		}
		return n == 3
	})
	resp.Body.Close()
	stop()
	posts, get := byID(t, sink)
	checkPost(t, posts, `10`, answerWant{outcome: classify.RequestAccepted, tool: "hold", notSeen: record.AnswerEvicted})
	checkPost(t, posts, `11`, answerWant{outcome: classify.ToolSuccess, tool: "hold", seen: true})
	checkPost(t, posts, `12`, answerWant{outcome: classify.ToolSuccess, tool: "hold", seen: true})
	if get == nil || get.StreamAnswers == nil || *get.StreamAnswers != (record.StreamAnswers{Responses: 3, Paired: 2, Late: 1}) {
		t.Errorf("the GET stream's record: %+v", get)
	}
}

// TestLegacySSESplitEndpoint: a server that writes its stream's first
// event, endpoint, in two flushes ("event: endpoint\ndata: /mes", then the
// rest) is recognised all the same: the requests POSTed to the endpoint are
// paired with their answers. Before, only an endpoint event whole in the
// stream's first write was looked at, and such POSTs were
// UNEXPECTED_CONTENT_TYPE with request-answered-202.
func TestLegacySSESplitEndpoint(t *testing.T) {
	t.Parallel()
	srv := newPairingServer()
	srv.split = true
	up := serve(t, srv)
	purl, _, sink, stop := startProxy(t, strings.TrimSuffix(up, "/mcp")+"/sse", proxy.Options{})
	c := &http.Client{Timeout: 30 * time.Second}
	endpoint, br, resp := legacySession(t, c, purl)
	postAll(t, c, endpoint, call(`1`, "echo"), call(`"two"`, "fail"))
	readAnswers(t, br, 2)
	waitFor(t, sink, "paired records", func(recs []*record.Record) bool {
		n := 0
		for _, r := range recs {
			if r.StreamAnswer != nil {
				n++
			}
		}
		return n == 2
	})
	resp.Body.Close()
	stop()
	posts, get := byID(t, sink)
	checkPost(t, posts, `1`, answerWant{outcome: classify.ToolSuccess, tool: "echo", seen: true})
	checkPost(t, posts, `"two"`, answerWant{outcome: classify.ToolError, tool: "fail", seen: true, isError: true})
	if get == nil || get.StreamAnswers == nil || *get.StreamAnswers != (record.StreamAnswers{Responses: 2, Paired: 2}) {
		t.Errorf("the GET stream's record: %+v", get)
	}
}
