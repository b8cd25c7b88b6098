package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/client"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/retry"
	"github.com/mcpdiag/mcpdiag/wire"
)

// The behaviours the official conformance suite's client scenarios check,
// each against a server written by hand (scripts/conformance-client.sh runs
// the suite itself).

type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

func readRPC(r *http.Request) ([]byte, rpc) {
	body, _ := io.ReadAll(r.Body)
	var m rpc
	_ = json.Unmarshal(body, &m)
	return body, m
}

// modernServer answers tools/list with tools and every tools/call with a
// text result, counting the calls per tool; reject, when set, may answer a
// request first.
type modernServer struct {
	mu     sync.Mutex
	tools  string
	calls  map[string]int
	posts  int
	reject func(n int, m rpc, w http.ResponseWriter) bool
}

func (s *modernServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, m := readRPC(r)
	s.mu.Lock()
	s.posts++
	n := s.posts
	if m.Method == "tools/call" {
		if s.calls == nil {
			s.calls = map[string]int{}
		}
		s.calls[m.Params.Name]++
	}
	s.mu.Unlock()
	if s.reject != nil && s.reject(n, m, w) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch m.Method {
	case "tools/list":
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":%s}}`, m.ID, s.tools)
	default:
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`, m.ID)
	}
}

func startModern(t *testing.T, s *modernServer) string {
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

const mixedTools = `[
 {"name":"good","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},
 {"name":"bad_number","inputSchema":{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}},
 {"name":"plain","inputSchema":{"type":"object"}},
 {"name":"bad_dup","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"K"},"b":{"type":"string","x-mcp-header":"k"}}}}]`

// TestInvalidHeaderToolsExcluded: on 2026-07-28 a tool whose x-mcp-header
// annotations break the rules is left out of the listing with a warning, the
// others are kept in order, and calling an excluded tool sends nothing and
// fails at the protocol layer.
func TestInvalidHeaderToolsExcluded(t *testing.T) {
	srv := &modernServer{tools: mixedTools}
	url := startModern(t, srv)
	c, _ := client.New(client.Options{URL: url, Protocol: client.Protocol2026})
	l := c.ListTools(context.Background())
	if !l.OK || l.Protocol != client.Protocol2026 {
		t.Fatalf("listing failed: %+v", l.Final)
	}
	var kept, dropped []string
	for _, tl := range l.Tools {
		kept = append(kept, tl.Name)
	}
	for _, ex := range l.Excluded {
		dropped = append(dropped, ex.Name+": "+strings.Join(ex.Reasons, "; "))
	}
	if strings.Join(kept, ",") != "good,plain" {
		t.Errorf("kept %v, want good, plain", kept)
	}
	if len(dropped) != 2 || !strings.Contains(dropped[0], "bad_dup: ") || !strings.Contains(dropped[1], "bad_number: ") || !strings.Contains(dropped[1], "type number") {
		t.Errorf("excluded %q", dropped)
	}
	var warned []string
	for _, w := range l.Final.Warnings() {
		if w.Code == client.WarnToolExcluded {
			warned = append(warned, w.Message)
		}
	}
	if len(warned) != 2 || !strings.HasPrefix(warned[0], `tool "bad_number" excluded: `) {
		t.Errorf("tools/list warnings %q", warned)
	}

	// A client that has not listed yet lists as part of the call, so the
	// call's report carries the warning.
	c2, _ := client.New(client.Options{URL: url, Protocol: client.Protocol2026})
	call, err := c2.CallTool(context.Background(), "bad_number", json.RawMessage(`{"score":1.5}`))
	if err != nil {
		t.Fatal(err)
	}
	if call.Outcome != client.ToolExcluded || call.Layer() != classify.LayerProtocol || call.ExitCode() != client.ExitProtocol || call.Decision.Action != retry.Fail {
		t.Fatalf("outcome %s layer %s exit %d decision %s", call.Outcome, call.Layer(), call.ExitCode(), call.Decision.Action)
	}
	if srv.calls["bad_number"] != 0 {
		t.Errorf("an excluded tool was called")
	}
	var report bytes.Buffer
	_ = call.WriteReport(&report)
	for _, want := range []string{"TOOL_EXCLUDED (protocol layer)", `warning:   #1 tools/list: tool-excluded: tool "bad_number" excluded`, "no tools/call was sent"} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, report.String())
		}
	}
	_, sum := call.Records(record.Record{Client: "t"}, url)
	if sum.Outcome != client.ToolExcluded || sum.Layer != classify.LayerProtocol {
		t.Errorf("summary %s %s", sum.Outcome, sum.Layer)
	}
	if call, _ := c.CallTool(context.Background(), "good", json.RawMessage(`{"region":"eu"}`)); call.Outcome != classify.ToolSuccess {
		t.Errorf("a valid tool: %s", call.Outcome)
	}
}

// TestInvalidHeaderToolsKeptOn2025: x-mcp-header is a 2026-07-28 transport
// rule; a 2025-11-25 session keeps every tool.
func TestInvalidHeaderToolsKeptOn2025(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, m := readRPC(r)
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`, m.ID)
		case "notifications/initialized":
			w.WriteHeader(http.StatusAccepted)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":%s}}`, m.ID, mixedTools)
		}
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	c, _ := client.New(client.Options{URL: ts.URL, Protocol: client.Protocol2025})
	if l := c.ListTools(context.Background()); !l.OK || len(l.Tools) != 4 || len(l.Excluded) != 0 {
		t.Fatalf("2025-11-25 listing: ok %v, %d kept, %d excluded", l.OK, len(l.Tools), len(l.Excluded))
	}
}

// TestUnsupportedVersionListingItResentOnce: a -32022 whose data.supported
// lists the version the request used is re-sent once at that version, for
// set-up and for the call; a second such answer ends the call.
func TestUnsupportedVersionListingItResentOnce(t *testing.T) {
	reject := func(w http.ResponseWriter, m rpc) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2026-07-28"}}}`, m.ID)
	}
	tests := []struct {
		name     string
		protocol string
		rejectN  func(n int, m rpc) bool
		want     classify.Outcome
		posts    int
	}{
		{"first tools/list, fixed era", client.Protocol2026, func(n int, m rpc) bool { return n == 1 }, classify.ToolSuccess, 3},
		{"first tools/list, auto", client.ProtocolAuto, func(n int, m rpc) bool { return n == 1 }, classify.ToolSuccess, 3},
		{"first tools/call", client.Protocol2026, func(n int, m rpc) bool { return n == 2 }, classify.ToolSuccess, 3},
		{"every tools/call", client.Protocol2026, func(n int, m rpc) bool { return m.Method == "tools/call" }, classify.HTTPError, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &modernServer{tools: `[{"name":"t","inputSchema":{"type":"object"}}]`, reject: func(n int, m rpc, w http.ResponseWriter) bool {
				if tt.rejectN(n, m) {
					reject(w, m)
					return true
				}
				return false
			}}
			c, _ := client.New(client.Options{URL: startModern(t, srv), Protocol: tt.protocol})
			call, _ := c.CallTool(context.Background(), "t", nil)
			if call.Outcome != tt.want || srv.posts != tt.posts {
				t.Fatalf("outcome %s after %d POSTs (%s); want %s after %d", call.Outcome, srv.posts, call.Decision.Reason, tt.want, tt.posts)
			}
			if call.Protocol != client.Protocol2026 || len(call.Recoveries) == 0 || !strings.Contains(call.Recoveries[0], "lists 2026-07-28, the version this request used") {
				t.Errorf("era %s, recoveries %q", call.Protocol, call.Recoveries)
			}
		})
	}
}

// legacyServer is a 2025-11-25 server written by hand: a session, a
// standalone GET stream, and tools/call answered by call.
type legacyServer struct {
	t    *testing.T
	call func(w http.ResponseWriter, m rpc, body []byte)
	get  func(w http.ResponseWriter, r *http.Request)
	post func(m rpc, body []byte) // every POST, before it is answered
}

func (s *legacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		if s.get == nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		s.get(w, r)
		return
	}
	body, m := readRPC(r)
	if s.post != nil {
		s.post(m, body)
	}
	if m.Method != "initialize" && r.Header.Get("Mcp-Session-Id") != "s1" {
		http.Error(w, "no session", http.StatusBadRequest)
		return
	}
	switch {
	case m.Method == "initialize":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "s1")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`, m.ID)
	case m.Method == "tools/list":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`, m.ID)
	case m.Method == "tools/call":
		s.call(w, m, body)
	default: // notifications and responses to server requests
		w.WriteHeader(http.StatusAccepted)
	}
}

// TestResumeBrokenStream: on 2025-11-25 a response stream that ends after
// an event id is resumed with GET and Last-Event-ID, waiting at least the
// stream's retry field, and the rest of the response completes the call.
func TestResumeBrokenStream(t *testing.T) {
	var mu sync.Mutex
	var resumed http.Header
	var callID json.RawMessage
	s := &legacyServer{t: t}
	s.call = func(w http.ResponseWriter, m rpc, _ []byte) {
		mu.Lock()
		callID = m.ID
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: ev-1\nretry: 700\ndata: \n\n")
	}
	s.get = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		resumed = r.Header.Clone()
		id := callID
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n", id)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	var waits []time.Duration
	c, _ := client.New(client.Options{URL: ts.URL, Protocol: client.Protocol2025, Sleep: func(_ <-chan struct{}, d time.Duration) bool {
		waits = append(waits, d)
		return true
	}})
	call, _ := c.CallTool(context.Background(), "t", nil)
	if call.Outcome != classify.ToolSuccess {
		t.Fatalf("outcome %s: %s", call.Outcome, call.Decision.Reason)
	}
	if resumed.Get("Last-Event-ID") != "ev-1" || resumed.Get("Mcp-Session-Id") != "s1" || resumed.Get("Accept") != "text/event-stream" {
		t.Errorf("resume headers %v", resumed)
	}
	if len(waits) != 1 || waits[0] < 700*time.Millisecond {
		t.Errorf("waits %v: the retry field asks for 700ms", waits)
	}
	last := call.Exchanges[len(call.Exchanges)-1]
	if last.HTTPMethod != http.MethodGet || last.Method != "tools/call" || last.Origin != client.OriginPolicy {
		t.Errorf("last exchange %s %s origin %s", last.HTTPMethod, last.Method, last.Origin)
	}
	if len(call.Recoveries) != 1 || !strings.HasPrefix(call.Recoveries[0], "resume: ") {
		t.Errorf("recoveries %q", call.Recoveries)
	}
	exs, _ := call.Records(record.Record{Client: "t"}, ts.URL)
	if exs[len(exs)-1].HTTPMethod != http.MethodGet {
		t.Errorf("the resume is recorded as %s", exs[len(exs)-1].HTTPMethod)
	}
	var report bytes.Buffer
	_ = call.WriteReport(&report)
	if !strings.Contains(report.String(), "4 POST(s) and 1 GET(s)") || !strings.Contains(report.String(), "GET tools/call t") {
		t.Errorf("report:\n%s", report.String())
	}
}

// TestStandaloneStreamRequestAnswered: a 2025-11-25 server that sends its
// elicitation on the standalone GET stream (as the TypeScript SDK does for
// server.request) gets the answer while the tools/call waits for it.
func TestStandaloneStreamRequestAnswered(t *testing.T) {
	answered := make(chan []byte, 1)
	opened := make(chan http.ResponseWriter, 1)
	var getDone sync.WaitGroup
	s := &legacyServer{t: t}
	s.get = func(w http.ResponseWriter, r *http.Request) {
		getDone.Add(1)
		defer getDone.Done()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		opened <- w
		<-r.Context().Done()
	}
	s.post = func(m rpc, body []byte) {
		if m.Method == "" && bytes.Contains(body, []byte(`"result"`)) {
			answered <- body
		}
	}
	s.call = func(w http.ResponseWriter, m rpc, _ []byte) {
		var stream http.ResponseWriter
		select {
		case stream = <-opened:
		case <-time.After(testwait.Bound):
			http.Error(w, "no standalone stream", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(stream, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"ok?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n\n")
		stream.(http.Flusher).Flush()
		var ans []byte
		select {
		case ans = <-answered:
		case <-time.After(testwait.Bound):
			http.Error(w, "no answer", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, m.ID, ans)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	c, _ := client.New(client.Options{URL: ts.URL, Protocol: client.Protocol2025, Timeout: 10 * time.Second,
		Inputs: client.MapInputs{"elicitation/create": json.RawMessage(`{"action":"accept","content":{}}`)}})
	call, _ := c.CallTool(context.Background(), "t", nil)
	if call.Outcome != classify.ToolSuccess {
		t.Fatalf("outcome %s: %s", call.Outcome, call.Decision.Reason)
	}
	var answer *client.Exchange
	for _, ex := range call.Exchanges {
		if ex.ClientAnswer && ex.Method == "elicitation/create" {
			answer = ex
		}
	}
	if answer == nil || !bytes.Contains(answer.RequestBody, []byte(`"id":"srv-1","result":{"action":"accept"`)) {
		t.Fatalf("the server request was not answered: %+v", answer)
	}
	// This server sends the call's response before it answers the POST:
	// the call's end closes the standalone stream, and must not cut the
	// answer's POST (it did: a NETWORK_ERROR the client caused itself).
	if answer.Result == nil {
		t.Fatal("the answer's exchange has no result")
	}
	if !answer.ID.Equal(wire.StringID("srv-1")) || answer.Result.Outcome != classify.ResultSuccess {
		t.Errorf("the answer's exchange: id %s, %s (%s); want \"srv-1\", RESULT_SUCCESS", answer.ID.Raw(), answer.Result.Outcome, answer.Result.Reason)
	}
	testwait.Wait(t, &getDone, "the standalone GET stream's handler to end (the call's end closes the stream)")
}
