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
)

// scripted is a 2026-07-28 server written by hand, so tests control every
// byte: tools/list names one tool; tools/call is answered by reply.
type scripted struct {
	mu     sync.Mutex
	bodies [][]byte
	heads  []http.Header
	reply  func(n int, w http.ResponseWriter, body []byte)
	calls  int
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &msg)
	w.Header().Set("Content-Type", "application/json")
	if msg.Method == "tools/list" {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"t","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}},"annotations":{"readOnlyHint":true}}],"ttlMs":0,"cacheScope":"public"}}`, msg.ID)
		return
	}
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.bodies = append(s.bodies, body)
	s.heads = append(s.heads, r.Header.Clone())
	s.mu.Unlock()
	s.reply(n, w, body)
}

func startScripted(t *testing.T, reply func(n int, w http.ResponseWriter, body []byte)) (*scripted, string) {
	s := &scripted{reply: reply}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL + "/mcp"
}

func idOf(body []byte) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	return string(m.ID)
}

// TestMRTREchoesRequestStateByteForByte: the second round must carry a new
// id, the same name and arguments, the answers, and requestState exactly
// as the server wrote it (escapes included).
func TestMRTREchoesRequestStateByteForByte(t *testing.T) {
	const state = `"st\u0061te+/=\"x\""`
	srv, url := startScripted(t, func(n int, w http.ResponseWriter, body []byte) {
		if n == 1 {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"ok?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":%s}}`, idOf(body), state)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[]}}`, idOf(body))
	})
	c, _ := client.New(client.Options{URL: url, Protocol: client.Protocol2026, Inputs: client.MapInputs{"q": json.RawMessage(`{"action":"accept","content":{}}`)}})
	call, err := c.CallTool(context.Background(), "t", json.RawMessage(`{"region":"eu west","n":1}`))
	if err != nil || call.Outcome != classify.ToolSuccess || call.Rounds != 1 {
		t.Fatalf("outcome %v rounds %d err %v", call.Outcome, call.Rounds, err)
	}
	first, second := srv.bodies[0], srv.bodies[1]
	if idOf(first) == idOf(second) {
		t.Errorf("the MRTR round reused id %s", idOf(first))
	}
	if !bytes.Contains(second, []byte(`"requestState":`+state)) {
		t.Errorf("requestState not echoed byte for byte:\n%s", second)
	}
	if bytes.Contains(first, []byte("requestState")) {
		t.Errorf("the first request invented a requestState")
	}
	for _, b := range [][]byte{first, second} {
		if !bytes.Contains(b, []byte(`"name":"t","arguments":{"region":"eu west","n":1}`)) {
			t.Errorf("name and arguments not kept: %s", b)
		}
	}
	if !bytes.Contains(second, []byte(`"inputResponses":{"q":{"action":"accept","content":{}}}`)) {
		t.Errorf("inputResponses missing: %s", second)
	}
	h := srv.heads[0]
	want := map[string]string{
		"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "t",
		"Mcp-Param-Region": "eu west",
	}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, h.Get(k), v)
		}
	}
	for _, key := range []string{"io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities", "io.modelcontextprotocol/clientInfo"} {
		if !bytes.Contains(first, []byte(key)) {
			t.Errorf("_meta lacks %s", key)
		}
	}
	if call.Exchanges[len(call.Exchanges)-1].Origin != client.OriginMRTR {
		t.Errorf("the second round is not marked mrtr")
	}
}

// TestMaxRoundsIsItsOwnOutcome: a server that always needs more input stops
// after --max-rounds with INPUT_ROUNDS_EXCEEDED (exit 5).
func TestMaxRoundsIsItsOwnOutcome(t *testing.T) {
	srv, url := startScripted(t, func(n int, w http.ResponseWriter, body []byte) {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"input_required","requestState":"round-%d"}}`, idOf(body), n)
	})
	c, _ := client.New(client.Options{URL: url, Protocol: client.Protocol2026, MaxRounds: 3})
	call, _ := c.CallTool(context.Background(), "t", nil)
	if call.Outcome != client.InputRoundsExceeded || call.ExitCode() != 5 || call.Rounds != 3 {
		t.Fatalf("outcome %s exit %d rounds %d", call.Outcome, call.ExitCode(), call.Rounds)
	}
	if srv.calls != 4 {
		t.Errorf("server saw %d tools/call, want 4 (first + 3 rounds)", srv.calls)
	}
	_, sum := call.Records(record.Record{Client: "t"}, url)
	if sum.Outcome != client.InputRoundsExceeded || sum.InputRounds != 3 {
		t.Errorf("summary outcome %s rounds %d", sum.Outcome, sum.InputRounds)
	}
}

// TestTimeoutsNeverHang: a server that never answers, and one that streams a
// notification and then goes silent, end the call within the timeout as
// NETWORK_ERROR and STREAM_INCOMPLETE.
func TestTimeoutsNeverHang(t *testing.T) {
	// Each hang ends when its test does: the release channel is closed by a
	// cleanup that runs before the server's Close waits for the handler.
	var release chan struct{}
	tests := []struct {
		name  string
		reply func(n int, w http.ResponseWriter, body []byte)
		want  classify.Outcome
	}{
		{"no headers", func(n int, w http.ResponseWriter, body []byte) {
			<-release
		}, classify.NetworkError},
		{"silent stream", func(n int, w http.ResponseWriter, body []byte) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
			w.(http.Flusher).Flush()
			<-release
		}, classify.StreamIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release = make(chan struct{})
			_, url := startScripted(t, tt.reply)
			rel := release
			t.Cleanup(func() { close(rel) })
			c, _ := client.New(client.Options{URL: url, Protocol: client.Protocol2026, Timeout: 400 * time.Millisecond, Safety: retry.Unsafe})
			// The server holds every answer until the test ends (release is
			// closed by the cleanup): a call that waited for the server
			// instead of its own timeout never ends, and the wait's bound
			// fails it.
			calls := make(chan *client.Call, 1)
			go func() {
				call, _ := c.CallTool(context.Background(), "t", nil)
				calls <- call
			}()
			call := testwait.Recv(t, calls, "the call to end at its own timeout while the server holds the answer")
			if call.Outcome != tt.want {
				t.Fatalf("outcome %s (%s), want %s", call.Outcome, call.Final.Reason, tt.want)
			}
			if tt.want == classify.NetworkError && (call.Final.Network() == nil || !call.Final.Network().Timeout) {
				t.Errorf("network details %+v do not say timeout", call.Final.Network())
			}
		})
	}
}

// TestSessionExpiredReinitializesOnce: on 2025-11-25 a 404 while holding a
// session re-initializes once, says so, and re-sends the call.
func TestSessionExpiredReinitializesOnce(t *testing.T) {
	inner := goSDKHandler(false)
	var mu sync.Mutex
	expired := false
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		mu.Lock()
		first := !expired && bytes.Contains(body, []byte(`"tools/call"`))
		if first {
			expired = true
		}
		mu.Unlock()
		if first {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		inner.ServeHTTP(w, r)
	})
	srv, url := serve(t, h, "")
	c := newClient(t, url, client.Protocol2025, nil)
	call, _ := c.CallTool(context.Background(), "write", nil)
	if call.Outcome != classify.ToolSuccess {
		t.Fatalf("outcome %s (%s)", call.Outcome, call.Decision.Reason)
	}
	if srv.count("initialize") != 2 || srv.count("tools/call") != 2 {
		t.Errorf("initialize %d, tools/call %d; want 2 and 2", srv.count("initialize"), srv.count("tools/call"))
	}
	if len(call.Recoveries) != 1 || !strings.Contains(call.Recoveries[0], "reinitialize") {
		t.Errorf("recoveries %v, want one reinitialize", call.Recoveries)
	}
}

// TestRecordsHoldNoSecrets: the records of a call carry the article's
// fields and never the bearer token, whatever happened.
func TestRecordsHoldNoSecrets(t *testing.T) {
	const token = "s3cr3t-token-value"
	for _, fault := range []string{"", "503", "sse-cut"} {
		srv, url := serve(t, goSDKHandler(true), fault)
		_ = srv
		c := newClient(t, url, client.Protocol2026, nil)
		call, _ := c.CallTool(context.Background(), "echo", json.RawMessage(`{"text":"access_token=abc"}`))
		exs, sum := call.Records(record.Record{Client: "mcpdiag@test"}, url)
		red := record.NewRedactor()
		_ = red.AddSecret(token)
		var buf bytes.Buffer
		w := record.NewStreamWriter(&buf, record.Encoder{Redactor: red})
		for _, r := range append(exs, sum) {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if bytes.Contains(buf.Bytes(), []byte(token)) {
			t.Fatalf("fault %q: the token is in the records", fault)
		}
		for _, field := range []string{`"client":`, `"protocolVersion":`, `"scenario":`, `"method":`, `"postCount":`, `"httpStatuses":`, `"jsonrpc":{"id":`, `"errorCode":`, `"resultType":`, `"outcome":`, `"retryOrigin":`, `"layer":`, `"decision":`, `"timings":`} {
			if !bytes.Contains(buf.Bytes(), []byte(field)) {
				t.Errorf("fault %q: records lack %s", fault, field)
			}
		}
		if sum.PostCount != len(call.Exchanges) {
			t.Errorf("fault %q: summary postCount %d, exchanges %d", fault, sum.PostCount, len(call.Exchanges))
		}
		if fault == "503" && sum.RetryOrigin != record.OriginPolicy {
			t.Errorf("a retried call's origin is %q", sum.RetryOrigin)
		}
	}
}

func TestPromptInputs(t *testing.T) {
	var out bytes.Buffer
	p := &client.PromptInputs{In: strings.NewReader("maybe\na\n42\nAda\ntrue\n"), Out: &out}
	ans, err := p.Answer(context.Background(), client.InputRequest{Key: "k", Method: "elicitation/create",
		Params: json.RawMessage(`{"message":"Who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},"ok":{"type":"boolean"}}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(ans) != `{"action":"accept","content":{"age":42,"name":"Ada","ok":true}}` {
		t.Fatalf("answer %s", ans)
	}
	if !strings.Contains(out.String(), "Who?") {
		t.Errorf("the prompt did not show the message: %q", out.String())
	}
	p = &client.PromptInputs{In: strings.NewReader("d\n"), Out: &out}
	ans, _ = p.Answer(context.Background(), client.InputRequest{Method: "elicitation/create", Params: json.RawMessage(`{"message":"?"}`)})
	if string(ans) != `{"action":"decline"}` {
		t.Fatalf("decline answer %s", ans)
	}
	if _, err := p.Answer(context.Background(), client.InputRequest{Method: "sampling/createMessage"}); err != client.ErrNoAnswer {
		t.Fatalf("sampling: %v", err)
	}
}

// TestProbeRetried: in auto mode a 503 on the first request (the probe that
// decides the era) is retried like any read-only request, not the end of
// the call.
func TestProbeRetried(t *testing.T) {
	inner := goSDKHandler(true)
	var mu sync.Mutex
	first := true
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		f := first
		first = false
		mu.Unlock()
		if f {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		inner.ServeHTTP(w, r)
	})
	srv, url := serve(t, h, "")
	c := newClient(t, url, client.ProtocolAuto, nil)
	call, _ := c.CallTool(context.Background(), "echo", nil)
	if call.Outcome != classify.ToolSuccess || call.Retries != 1 || call.Protocol != client.Protocol2026 {
		t.Fatalf("outcome %s, retries %d, era %s (%s)", call.Outcome, call.Retries, call.Protocol, call.Decision.Reason)
	}
	if srv.count("tools/list") != 2 {
		t.Errorf("tools/list POSTs %d, want 2", srv.count("tools/list"))
	}
	// A deadline that leaves no time for the retry ends as a failure that
	// says so, not as a pending "retry".
	mu.Lock()
	first = true
	mu.Unlock()
	c2, _ := client.New(client.Options{URL: url, Timeout: 50 * time.Millisecond, Policy: &retry.Policy{MaxRetries: 2, Backoff: time.Second, MaxBackoff: time.Second}})
	call, _ = c2.CallTool(context.Background(), "echo", nil)
	if call.Decision.Action == retry.Retry {
		t.Fatalf("the call ended on a retry decision: %s", call.Decision.Reason)
	}
}

// TestURLElicitationErrorNotLooped: a 2025-11-25 -32042 (URL elicitation
// required) with nothing to answer ends the call; it is not re-sent round
// after round unchanged.
func TestURLElicitationErrorNotLooped(t *testing.T) {
	inner := goSDKHandler(false)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32042,"message":"URL elicitation required","data":{"elicitations":[{"mode":"url","message":"log in","url":"https://example.com/login","elicitationId":"e1"}]}}}`, idOf(body))
			return
		}
		inner.ServeHTTP(w, r)
	})
	srv, url := serve(t, h, "")
	c := newClient(t, url, client.Protocol2025, nil)
	call, _ := c.CallTool(context.Background(), "echo", nil)
	if got := srv.count("tools/call"); got != 1 {
		t.Fatalf("tools/call sent %d times (outcome %s, %s)", got, call.Outcome, call.Decision.Reason)
	}
	if call.ExitCode() == 0 {
		t.Errorf("exit 0 for an unanswered URL elicitation")
	}
}
