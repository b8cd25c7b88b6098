package proxy_test

import (
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestStdioInjectedIDCollision: stdio.garbage's request-shaped line whose
// id is the id of a server request still waiting for the client's answer
// (real servers number theirs 0, 1, 2…, and a user injects id 0). The
// client would answer both with that id, and the proxy could not tell
// which answer is which. Server request first: the injection is not
// written, its record says why (NETWORK_ERROR, FI, not a client answer),
// and the client's answer is paired with the server's request it answers.
// The same injection twice: the second is not written. Injection first,
// then the server's own request of its id: the injected one is recorded
// not answered, and the server's request's record says the answer paired
// with it may be the answer to the injected one. No record pairs an answer
// with a request it did not answer: on d35ba40..93ce8a5 the roots/list
// answer was the injected ping's record's (clientAnswer, {"roots":[]}) and
// the roots/list record said it was not answered.
func TestStdioInjectedIDCollision(t *testing.T) {
	t.Parallel()
	type want struct {
		outcome  classify.Outcome
		answered bool
		fi       bool
		reason   string // exact, when set
		note     string // contained
	}
	for _, tc := range []struct {
		name    string
		id      string   // the injected ping's id
		tools   []string // the calls, ids 2, 3…
		answer  string   // written by the client after the calls; "" none
		client  string   // what the client reads
		records map[string][]want
	}{
		{
			name: "server's request first", id: `"srv-1"`, tools: []string{"ask-roots", "echo"},
			answer: `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`,
			client: scriptedAnswer("2", "ask-roots") + scriptedAnswer("3", "echo"),
			records: map[string][]want{
				"roots/list": {{outcome: classify.ResultSuccess, answered: true, note: "answered by the client"}},
				"ping": {{outcome: classify.NetworkError, fi: true,
					reason: `not written to the client: its id "srv-1" is the id of the server's own roots/list (id "srv-1"), still waiting for the client's answer: the client's answers of that id could not be told apart`,
					note:   "a request the fault was to inject (server → client), not written to the client"}},
			},
		},
		{
			name: "injected twice", id: `"inj-1"`, tools: []string{"echo", "echo"},
			client: "INJ" + scriptedAnswer("2", "echo") + scriptedAnswer("3", "echo"),
			records: map[string][]want{
				"ping": {
					{outcome: classify.NetworkError, fi: true,
						reason: `not written to the client: its id "inj-1" is the id of the ping the fault injected before (id "inj-1"), still waiting for the client's answer: the client's answers of that id could not be told apart`},
					{outcome: classify.HTTPSuccess, fi: true, note: "not answered: the client closed the server's stdin"},
				},
			},
		},
		{
			name: "injected first", id: `"srv-1"`, tools: []string{"echo", "ask-roots"},
			answer: `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`,
			client: "INJ" + scriptedAnswer("2", "echo") + scriptedAnswer("3", "ask-roots"),
			records: map[string][]want{
				"ping": {{outcome: classify.NetworkError, fi: true,
					reason: `no answer line from the client after the server sent its request: the server's own roots/list of the same id "srv-1" reached the client before this injected request was answered: the client's answers of that id cannot be told apart, and none is paired with this one`}},
				"roots/list": {{outcome: classify.ResultSuccess, answered: true,
					note: `its id "srv-1" was also the id of the ping the fault injected, which the client had not answered when this request reached it: the proxy cannot tell their answers apart; the answer paired here is the client's first of that id after this request, and may be its answer to the injected ping`}},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			injected := `{"jsonrpc":"2.0","id":` + tc.id + `,"method":"ping"}`
			run := startScripted(t, proxy.StdioOptions{Faults: garbageFaults(t, injected)}, nil)
			var calls []string
			for i, tool := range tc.tools {
				calls = append(calls, scriptedCall(string(rune('2'+i)), tool))
			}
			if got, want := run.talk(t, calls...), strings.ReplaceAll(tc.client, "INJ", injected+"\n"); got != want {
				t.Fatalf("the client received %q, want %q", got, want)
			}
			if tc.answer != "" {
				run.send(t, tc.answer)
			}
			run.end(t)
			seen := map[string]int{}
			for _, rec := range run.sink.records(t) {
				if rec.Method == "tools/call" {
					seen[rec.Method]++
					continue
				}
				ws := tc.records[rec.Method]
				i := seen[rec.Method]
				seen[rec.Method]++
				if i >= len(ws) {
					t.Errorf("a record of %q too many: %s, reason %q, note %q", rec.Method, rec.Outcome, rec.Reason, rec.Note)
					continue
				}
				w := ws[i]
				if id := string(rec.JSONRPC.ID.Raw()); rec.Method == "ping" && id != tc.id || rec.Method == "roots/list" && id != `"srv-1"` {
					t.Errorf("%s record %d: id %s", rec.Method, i, id)
				}
				if rec.Outcome != w.outcome || rec.ClientAnswer != w.answered || rec.Flags.Has(record.FlagFI) != w.fi {
					t.Errorf("%s record %d: %s, clientAnswer %v, FI %v; want %s, %v, %v (reason %q, note %q)", rec.Method, i, rec.Outcome, rec.ClientAnswer, rec.Flags.Has(record.FlagFI), w.outcome, w.answered, w.fi, rec.Reason, rec.Note)
				}
				if w.reason != "" && rec.Reason != w.reason {
					t.Errorf("%s record %d: reason %q, want %q", rec.Method, i, rec.Reason, w.reason)
				}
				if !strings.Contains(rec.Note, w.note) {
					t.Errorf("%s record %d: note %q lacks %q", rec.Method, i, rec.Note, w.note)
				}
				// No record pairs an answer with a request it did not
				// answer: the roots answer only with roots/list.
				if rec.ClientAnswer && rec.Method != "roots/list" {
					t.Errorf("%s record %d pairs the client's answer %s", rec.Method, i, tc.answer)
				}
			}
			if seen["tools/call"] != len(tc.tools) {
				t.Errorf("%d tools/call records, want %d", seen["tools/call"], len(tc.tools))
			}
			for m, ws := range tc.records {
				if seen[m] != len(ws) {
					t.Errorf("%d records of %s, want %d", seen[m], m, len(ws))
				}
			}
		})
	}
}

// TestStdioInjectedAnswerNotPassedOn: the client's answer to a request
// stdio.garbage injected is not passed on to the server, which never sent
// that request (a server numbering its own requests 0, 1, 2… would take an
// answer to an injected id 0 as one to its own); the answer to the
// server's own request is. The scripted server's tool answers-seen names
// the ids of the answers it read. The injected ping's record says its
// answer was kept back. Before (mend21 to collide21), the server read both
// ("srv-1","inj-1").
func TestStdioInjectedAnswerNotPassedOn(t *testing.T) {
	t.Parallel()
	const injected = `{"jsonrpc":"2.0","id":"inj-1","method":"ping"}`
	run := startScripted(t, proxy.StdioOptions{Faults: garbageFaults(t, injected)}, nil)
	var got string
	for _, step := range []struct{ call, answer string }{
		{scriptedCall("2", "ask-roots"), `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}`},
		{scriptedCall("3", "echo"), `{"jsonrpc":"2.0","id":"inj-1","result":{}}`},
		{scriptedCall("4", "answers-seen"), ""},
	} {
		got += run.talk(t, step.call)
		if step.answer != "" {
			run.send(t, step.answer)
		}
	}
	seen := `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"\"srv-1\""}]}}` + "\n"
	if want := scriptedAnswer("2", "ask-roots") + injected + "\n" + scriptedAnswer("3", "echo") + seen; got != want {
		t.Fatalf("the client received %q, want %q", got, want)
	}
	run.end(t)
	var pings, roots int
	for _, rec := range run.sink.records(t) {
		switch rec.Method {
		case "ping":
			pings++
			if !rec.ClientAnswer || rec.Outcome != classify.ResultSuccess || string(rec.JSONRPC.ID.Raw()) != `"inj-1"` ||
				!strings.Contains(rec.Note, "the client's answer was not passed on to the server, which never sent this request") {
				t.Errorf("the injected ping's record: clientAnswer %v, %s, id %s, note %q", rec.ClientAnswer, rec.Outcome, rec.JSONRPC.ID.Raw(), rec.Note)
			}
		case "roots/list":
			roots++
			if !rec.ClientAnswer || rec.Outcome != classify.ResultSuccess || strings.Contains(rec.Note, "passed on") {
				t.Errorf("roots/list's record: clientAnswer %v, %s, note %q", rec.ClientAnswer, rec.Outcome, rec.Note)
			}
		}
	}
	if pings != 1 || roots != 1 {
		t.Errorf("%d ping and %d roots/list records, want 1 and 1", pings, roots)
	}
}
