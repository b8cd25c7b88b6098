package recorder_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/recorder"
)

// resumeStep is one request of a resumption test and what its record must
// say: the server answers a POST with the stream streams[body] and a GET
// with the stream streams["GET "+step.stream].
type resumeStep struct {
	method, session, lastEventID, body string
	stream                             string // the GET's stream (its key in streams, sent as X-Stream)
	// The record's outcome and resume member (nil: none).
	outcome classify.Outcome
	resume  *record.Resume
}

func callBody(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"long-task","arguments":{}}}`
}

const (
	priming    = "id: e1\nretry: 500\ndata: \n\n"
	toolResult = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}]}}`
)

func ms(n int64) *int64 { return &n }

// TestResumedStreamRecorded: a 2025-11-25 request's stream the server
// closes after an event with an id, before the response (SEP-1699's
// polling), is recorded resumable after that id (a plain cut, or one with
// its response, is not); the GET that resumes it (Last-Event-ID) is
// recorded with the responses its stream carried, each judged as the
// response of the request of its id (and JSON type) in the same session:
// TOOL_SUCCESS for the tools/call, as mcpdiag call judges its own resume.
// A response of an id of another JSON type, or in another session, is
// judged with no method (the classifier reads the tool result's shape:
// TOOL_SUCCESS still), its method and tool empty. A GET resumed after the
// previous GET's last id still finds the request.
func TestResumedStreamRecorded(t *testing.T) {
	t.Parallel()
	resumable := &record.Resume{LastEventID: "e1", RetryMs: ms(500), Resumable: true}
	answered := func(after, event, method, tool string, o classify.Outcome) *record.Resume {
		return &record.Resume{After: after, LastEventID: event, Responses: []record.StreamResponse{{EventID: event, Method: method, Tool: tool, Outcome: o}}}
	}
	streams := map[string]string{
		callBody("1"):    priming,
		callBody(`"s"`):  priming,
		callBody("2"):    "id: x1\ndata: " + strings.Replace(toolResult, `"id":1`, `"id":2`, 1) + "\n\n",
		callBody("3"):    "data: \n\n",
		"GET e1":         "id: e2\ndata: " + toolResult + "\n\n",
		"GET e1-chain":   "id: e3\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n",
		"GET e3":         "id: e4\ndata: " + toolResult + "\n\n",
		"GET e1-strings": "id: e5\ndata: " + toolResult + "\n\n",
	}
	for _, c := range []struct {
		name  string
		steps []resumeStep
	}{
		{"resumed", []resumeStep{
			{method: "POST", session: "s1", body: callBody("1"), outcome: classify.StreamIncomplete, resume: resumable},
			{method: "GET", session: "s1", lastEventID: "e1", stream: "e1", outcome: classify.HTTPSuccess, resume: answered("e1", "e2", "tools/call", "long-task", classify.ToolSuccess)},
		}},
		{"resumed twice", []resumeStep{
			{method: "POST", session: "s1", body: callBody("1"), outcome: classify.StreamIncomplete, resume: resumable},
			{method: "GET", session: "s1", lastEventID: "e1", stream: "e1-chain", outcome: classify.HTTPSuccess, resume: &record.Resume{After: "e1", LastEventID: "e3"}},
			{method: "GET", session: "s1", lastEventID: "e3", stream: "e3", outcome: classify.HTTPSuccess, resume: answered("e3", "e4", "tools/call", "long-task", classify.ToolSuccess)},
		}},
		{"id of another JSON type", []resumeStep{
			{method: "POST", session: "s1", body: callBody(`"s"`), outcome: classify.StreamIncomplete, resume: resumable},
			{method: "GET", session: "s1", lastEventID: "e1", stream: "e1-strings", outcome: classify.HTTPSuccess, resume: answered("e1", "e5", "", "", classify.ToolSuccess)},
		}},
		{"another session", []resumeStep{
			{method: "POST", session: "s1", body: callBody("1"), outcome: classify.StreamIncomplete, resume: resumable},
			{method: "GET", session: "s2", lastEventID: "e1", stream: "e1", outcome: classify.HTTPSuccess, resume: answered("e1", "e2", "", "", classify.ToolSuccess)},
		}},
		{"answered on its own stream", []resumeStep{
			{method: "POST", session: "s1", body: callBody("2"), outcome: classify.ToolSuccess},
		}},
		{"cut without an id", []resumeStep{
			{method: "POST", session: "s1", body: callBody("3"), outcome: classify.StreamIncomplete},
		}},
		{"no session", []resumeStep{
			{method: "POST", body: callBody("1"), outcome: classify.StreamIncomplete},
		}},
	} {
		for _, fwd := range []bool{false, true} {
			name := c.name
			if fwd {
				name += ", forwarded byte by byte"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				resumedStreamSteps(t, fwd, streams, c.steps)
			})
		}
	}
}

// resumedStreamSteps runs TestResumedStreamRecorded's steps against a
// recorder whose server writes each stream whole (Sync: the record is
// made as the handler ends) or, fwd, forwards it through ForwardChunk one
// byte at a time, as the proxy forwards an upstream's pieces: a request's
// stream is then classified on the forwarding goroutine, which parks its
// reader between events (the record is waited for before the next step).
func resumedStreamSteps(t *testing.T, fwd bool, streams map[string]string, steps []resumeStep) {
	s := &sink{}
	rc, err := recorder.New(recorder.Options{Records: s, Sync: !fwd})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		key := string(b)
		if r.Method == http.MethodGet {
			key = "GET " + r.Header.Get("X-Stream")
		}
		stream, ok := streams[key]
		if !ok {
			http.Error(w, "no stream for "+key, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if !fwd {
			_, _ = io.WriteString(w, stream)
			return
		}
		ex := recorder.From(r.Context())
		ch := recorder.Chunk(16 << 10)
		for i := range len(stream) {
			if ch == nil {
				ch = recorder.Chunk(16 << 10)
			}
			ch[0] = stream[i]
			if ch, err = ex.ForwardChunk(ch, 1); err != nil {
				t.Errorf("ForwardChunk: %v", err)
				break
			}
		}
		if ch != nil {
			recorder.PutChunk(ch)
		}
	})))
	defer srv.Close()
	for i, st := range steps {
		req, _ := http.NewRequest(st.method, srv.URL+"/mcp", strings.NewReader(st.body))
		if st.session != "" {
			req.Header.Set("Mcp-Session-Id", st.session)
		}
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if st.lastEventID != "" {
			req.Header.Set("Last-Event-ID", st.lastEventID)
		}
		req.Header.Set("X-Stream", st.stream)
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if fwd {
			// (The record is made on a finishing goroutine.)
			if err := rc.Wait(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		s.mu.Lock()
		n := len(s.recs)
		var got *record.Record
		if n == i+1 {
			got = s.recs[i]
		}
		s.mu.Unlock()
		if got == nil {
			t.Fatalf("step %d: %d records, want %d", i+1, n, i+1)
		}
		if got.Outcome != st.outcome {
			t.Errorf("step %d (%s): outcome %s, want %s (%s)", i+1, st.method, got.Outcome, st.outcome, got.Reason)
		}
		checkResume(t, i+1, got.Resume, st.resume)
		if st.method == "POST" && (got.Method != "tools/call" || got.Tool != "long-task") {
			t.Errorf("step %d: method %q tool %q", i+1, got.Method, got.Tool)
		}
	}
}

// checkResume compares a record's resume member with want, the responses'
// ids with their JSON type as the bodies sent them (1, a number).
func checkResume(t *testing.T, step int, got, want *record.Resume) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Errorf("step %d: resume %+v, want none", step, *got)
		}
		return
	}
	if got == nil {
		t.Errorf("step %d: no resume, want %+v", step, *want)
		return
	}
	gr, wr := got.RetryMs, want.RetryMs
	if got.After != want.After || got.LastEventID != want.LastEventID || got.Resumable != want.Resumable || (gr == nil) != (wr == nil) || gr != nil && *gr != *wr {
		t.Errorf("step %d: resume after %q last %q resumable %v retry %v; want %q %q %v %v", step, got.After, got.LastEventID, got.Resumable, gr, want.After, want.LastEventID, want.Resumable, wr)
	}
	if len(got.Responses) != len(want.Responses) {
		t.Fatalf("step %d: %d responses, want %d", step, len(got.Responses), len(want.Responses))
	}
	for i, w := range want.Responses {
		g := got.Responses[i]
		id, _ := json.Marshal(g.ID)
		if string(id) != "1" || g.EventID != w.EventID || g.Method != w.Method || g.Tool != w.Tool || g.Outcome != w.Outcome {
			t.Errorf("step %d response %d: id %s event %q method %q tool %q %s; want 1 %q %q %q %s", step, i, id, g.EventID, g.Method, g.Tool, g.Outcome, w.EventID, w.Method, w.Tool, w.Outcome)
		}
	}
}
