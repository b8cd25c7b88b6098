package report

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/recordtest"
	"github.com/mcpdiag/mcpdiag/record"
	"github.com/mcpdiag/mcpdiag/wire"
)

// pollingFile holds the records of the TypeScript SDK's (1.32.2) SSE
// polling example (SEP-1699) through `mcpdiag proxy --record`: its server
// (ssePollingExample.js, retryInterval 2000, an InMemoryEventStore) closes
// the tools/call long-task's stream after the priming event (an id, retry
// 2000, empty data); its client (ssePollingClient.js) resumes with a GET
// carrying Last-Event-ID, on which the result arrives. The POST is
// STREAM_INCOMPLETE with resume {lastEventId, retryMs 2000, resumable}; the
// GET that resumed it is HTTP_SUCCESS with resume {after, responses: [{id
// 1, method tools/call, tool long-task, TOOL_SUCCESS}]}; another GET is
// the session's standalone stream (notifications only). pollingCallFile is
// `mcpdiag call URL long-task --protocol 2025-11-25 --record` against the
// same server directly: its call line says TOOL_SUCCESS. Made with
//
//	MCPDIAG_LISTEN_PORT=0 node --import port.mjs --import interop/node/loopback.mjs sdk/dist/esm/examples/server/ssePollingExample.js &
//	mcpdiag proxy --upstream http://127.0.0.1:PORT/mcp --listen 127.0.0.1:0 --record sse-polling.jsonl &
//	MCPDIAG_TARGET=http://127.0.0.1:PROXY node --import fetch.mjs sdk/dist/esm/examples/client/ssePollingClient.js
//	mcpdiag call http://127.0.0.1:PORT/mcp long-task --protocol 2025-11-25 --record sse-polling-call.jsonl
//
// (port.mjs moves the example's listen(3001) to MCPDIAG_LISTEN_PORT,
// fetch.mjs the client's http://localhost:3001 to MCPDIAG_TARGET: both in
// interop/node; interop's TestSSEPollingThroughProxy runs the same live.)
const (
	pollingFile     = "testdata/sse-polling.jsonl"
	pollingCallFile = "testdata/sse-polling-call.jsonl"
)

// pollingRecords returns the real records: the resumable POST, the GET
// that resumed it, and all of them in file order.
func pollingRecords(t *testing.T) (post, get *record.Record, all []*record.Record) {
	t.Helper()
	all = recordtest.ReadFile(t, pollingFile)
	for _, r := range all {
		switch {
		case r.Resume != nil && r.Resume.Resumable:
			post = r
		case r.Resume != nil && len(r.Resume.Responses) > 0:
			get = r
		}
	}
	if post == nil || get == nil || post.Method != "tools/call" || post.Tool != "long-task" || get.HTTPMethod != http.MethodGet ||
		get.Resume.After != post.Resume.LastEventID || post.Session == "" || post.Session != get.Session {
		t.Fatalf("%s: not the records this test is about (post %v, get %v)", pollingFile, post, get)
	}
	return post, get, all
}

func encodeAll(t *testing.T, recs []*record.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := record.NewStreamWriter(&buf, record.Encoder{})
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// clone returns a deep enough copy of r for the cases to change.
func cloneResume(r *record.Record) *record.Record {
	c := *r
	if r.Resume != nil {
		v := *r.Resume
		v.Responses = append([]record.StreamResponse(nil), r.Resume.Responses...)
		c.Resume = &v
	}
	return &c
}

// TestResumedStreamCounted: the real records of the SDK's polling
// example through the proxy are counted as mcpdiag call directly judges
// the same call: the tools/call long-task is TOOL_SUCCESS (the response
// on the GET that resumed its stream), not a failure; the id, method and
// tool of the link are the request's. Before, report said 1 failed
// (STREAM_INCOMPLETE) where call said TOOL_SUCCESS.
func TestResumedStreamCounted(t *testing.T) {
	post, get, all := pollingRecords(t)
	calls := recordtest.ReadFile(t, pollingCallFile)
	var direct classify.Outcome
	for _, r := range calls {
		if r.Kind == record.KindCall {
			direct = r.Outcome
		}
	}
	if direct != classify.ToolSuccess {
		t.Fatalf("%s: the direct call says %s, want TOOL_SUCCESS (the test's premise)", pollingCallFile, direct)
	}
	sum, _ := summarize(t, encodeAll(t, all), Options{})
	ex := sum.Exchanges
	if ex.Failures != 0 || ex.Resumed != 1 || ex.NotResumed != 0 || ex.UnlinkedResponses != 0 {
		t.Fatalf("failures %d, resumed %d, not resumed %d, unlinked %d; want 0 1 0 0", ex.Failures, ex.Resumed, ex.NotResumed, ex.UnlinkedResponses)
	}
	var tool *ToolStats
	for i := range ex.ByTool {
		if ex.ByTool[i].Tool == "long-task" {
			tool = &ex.ByTool[i]
		}
	}
	if tool == nil || tool.Method != "tools/call" || tool.Total != 1 || tool.Failures != 0 || tool.ByOutcome[string(direct)] != 1 {
		t.Fatalf("long-task: %+v; want 1 exchange, %s (as the direct call), not failed", tool, direct)
	}
	if len(ex.ResumeLinks) != 1 {
		t.Fatalf("%d resume links, want 1", len(ex.ResumeLinks))
	}
	l := ex.ResumeLinks[0]
	if l.ID != post.ID || l.ResumedBy != get.ID || l.Method != post.Method || l.Tool != post.Tool || l.Outcome != string(direct) {
		t.Errorf("link %+v; want %s resumed by %s, %s %s, %s", l, post.ID, get.ID, post.Method, post.Tool, direct)
	}
	if !get.Resume.Responses[0].ID.Equal(post.JSONRPC.ID) || string(get.Resume.Responses[0].ID.Raw()) != string(post.JSONRPC.ID.Raw()) {
		t.Errorf("the GET's response id %s, the request's %s: the records disagree", get.Resume.Responses[0].ID, post.JSONRPC.ID)
	}
	var text bytes.Buffer
	if err := NewTextReporter(sum).Report(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exchanges: 5, 0 failed", "1 request whose stream the server closed before the response, resumed by the client's GET",
		"long-task " + post.ID + " resumed by " + get.ID + ": TOOL_SUCCESS"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	js, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"resumed":1`)) || !bytes.Contains(js, []byte(`"resumedBy":"`+get.ID+`"`)) {
		t.Errorf("JSON lacks the link: %s", js)
	}
	// The --fail-on gate reads the same counts.
	if sum.Exchanges.FailureRate != 0 {
		t.Errorf("failure rate %v", sum.Exchanges.FailureRate)
	}
}

// TestResumeLinkRules: the link's window and ambiguity rules
// (docs/decisions.md, "A resumed stream in a proxy's records"), each case
// the real records changed. A resumable request no GET resumed, resumed
// in another session or recording process, past ResumeWindow, by a
// response of its id with another JSON type or another method, or in
// another input stays a failure (notResumed); a response no request took
// is counted unlinked; two requests of the id in the session of which the
// GET resumed neither are ambiguous (both failures); the GET that resumed
// one of them (Last-Event-ID) answers that one; a GET recorded before the
// request, and a chain of two GETs, still link; a response that is an
// error counts as the failure it is.
func TestResumeLinkRules(t *testing.T) {
	post, get, all := pollingRecords(t)
	others := func() []*record.Record {
		var out []*record.Record
		for _, r := range all {
			if r.ID != post.ID && r.ID != get.ID {
				out = append(out, r)
			}
		}
		return out
	}
	later := func(r *record.Record, d time.Duration) { r.Time = r.Time.Add(d) }
	for _, c := range []struct {
		name string
		// recs returns the records, in file order; inputs splits them
		// into two inputs at index split when > 0.
		recs                                     func(p, g *record.Record) []*record.Record
		split                                    int
		failures, resumed, notResumed, ambiguous int64
		unlinked, ambiguousResponses             int64
		outcome                                  classify.Outcome // long-task's, when resumed
	}{
		{name: "the real records", recs: func(p, g *record.Record) []*record.Record { return append(others(), p, g) }, resumed: 1, outcome: classify.ToolSuccess},
		{name: "never resumed", recs: func(p, g *record.Record) []*record.Record { return append(others(), p) }, failures: 1, notResumed: 1},
		{name: "resumed in another session", recs: func(p, g *record.Record) []*record.Record {
			g.Session = "sha256:0000000000000000"
			return append(others(), p, g)
		}, failures: 1, notResumed: 1, unlinked: 1},
		{name: "another recording process", recs: func(p, g *record.Record) []*record.Record {
			g.Conn = "OTHER-1"
			return append(others(), p, g)
		}, failures: 1, notResumed: 1, unlinked: 1},
		{name: "past the window", recs: func(p, g *record.Record) []*record.Record {
			later(g, ResumeWindow+time.Minute)
			return append(others(), p, g)
		}, failures: 1, notResumed: 1, unlinked: 1},
		{name: "an id of another JSON type", recs: func(p, g *record.Record) []*record.Record {
			g.Resume.Responses[0].ID = wire.StringID(p.JSONRPC.ID.String())
			return append(others(), p, g)
		}, failures: 1, notResumed: 1, unlinked: 1},
		{name: "another method", recs: func(p, g *record.Record) []*record.Record {
			g.Resume.Responses[0].Method = ""
			return append(others(), p, g)
		}, failures: 1, notResumed: 1, unlinked: 1},
		{name: "another input", recs: func(p, g *record.Record) []*record.Record { return append(others(), p, g) }, split: -2,
			failures: 1, notResumed: 1, unlinked: 1},
		{name: "the GET recorded first", recs: func(p, g *record.Record) []*record.Record { return append(others(), g, p) }, resumed: 1, outcome: classify.ToolSuccess},
		{name: "an error response", recs: func(p, g *record.Record) []*record.Record {
			r := &g.Resume.Responses[0]
			r.Outcome, r.Layer = classify.JSONRPCError, classify.JSONRPCError.Layer()
			return append(others(), p, g)
		}, failures: 1, resumed: 1, outcome: classify.JSONRPCError},
		{name: "two requests of the id, neither resumed by the GET", recs: func(p, g *record.Record) []*record.Record {
			q := cloneResume(p)
			q.ID, q.Resume.LastEventID = p.ID+"Q", "another-event"
			g.Resume.After = "a-third-event"
			return append(others(), p, q, g)
		}, failures: 2, notResumed: 2, ambiguous: 2, ambiguousResponses: 1},
		{name: "two requests of the id, the GET resumed one", recs: func(p, g *record.Record) []*record.Record {
			q := cloneResume(p)
			q.ID, q.Resume.LastEventID = p.ID+"Q", "another-event"
			return append(others(), q, p, g)
		}, failures: 1, resumed: 1, notResumed: 1, outcome: classify.ToolSuccess},
		{name: "resumed twice", recs: func(p, g *record.Record) []*record.Record {
			g1 := cloneResume(g)
			g1.ID, g1.Resume.Responses, g1.Resume.LastEventID = g.ID+"1", nil, "between"
			later(g, time.Second)
			g.Resume.After = "between"
			return append(others(), p, g1, g)
		}, resumed: 1, outcome: classify.ToolSuccess},
		{name: "resumed twice, the second GET not after the first", recs: func(p, g *record.Record) []*record.Record {
			g1 := cloneResume(g)
			g1.ID, g1.Resume.Responses, g1.Resume.LastEventID = g.ID+"1", nil, "between"
			later(g, time.Second)
			g.Resume.After = "elsewhere"
			return append(others(), p, g1, g)
		}, resumed: 1, outcome: classify.ToolSuccess},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs := c.recs(cloneResume(post), cloneResume(get))
			acc := New(Options{})
			var parts [][]*record.Record
			if c.split < 0 {
				k := len(recs) + c.split + 1
				parts = [][]*record.Record{recs[:k], recs[k:]}
			} else {
				parts = [][]*record.Record{recs}
			}
			for i, part := range parts {
				if _, err := Read(bytes.NewReader(encodeAll(t, part)), "part.jsonl", nil, acc); err != nil {
					t.Fatal(err)
				}
				_ = i
			}
			acc.Close()
			ex := acc.Summary().Exchanges
			got := []int64{ex.Failures, ex.Resumed, ex.NotResumed, ex.ResumeAmbiguous, ex.UnlinkedResponses, ex.AmbiguousResponses}
			want := []int64{c.failures, c.resumed, c.notResumed, c.ambiguous, c.unlinked, c.ambiguousResponses}
			if !equalInts(got, want) {
				t.Errorf("failures, resumed, notResumed, resumeAmbiguous, unlinked, ambiguousResponses = %v, want %v", got, want)
			}
			if c.resumed > 0 {
				n := int64(0)
				for _, tl := range ex.ByTool {
					if tl.Tool == "long-task" {
						n = tl.ByOutcome[string(c.outcome)]
					}
				}
				if n != 1 {
					t.Errorf("long-task counted %d times %s, want once", n, c.outcome)
				}
			}
		})
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
