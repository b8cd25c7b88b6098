package proxy_test

import (
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// TestStdioInjectedJSONLine: stdio.garbage given a line that is JSON but
// no request writes it to the client unchanged, and its record says what
// it is, with the scenario and FI: a notification (its method), a response
// for the id of the call the fault fired on (the client takes it as that
// call's answer: the call's method and id, the classifier's verdict on it,
// and the call's own record says an injected answer came first), a
// response for an id no request has (INVALID_ENVELOPE, its id with its
// type), a line that starts like JSON and does not parse (MALFORMED_JSON),
// a JSON value that is no message (INVALID_ENVELOPE). Before, each was
// STDIO_NOISE, "a line on the server's stdout is not JSON".
func TestStdioInjectedJSONLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, line   string
		outcome      classify.Outcome
		method, id   string // the injected line's record's (id null: none, as a record keeps none)
		reason, note string // contained
		callNote     string // contained in the call's own record's note
	}{
		{name: "notification", line: `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
			outcome: classify.HTTPSuccess, method: "notifications/message", id: "null", reason: "notifications/message notification"},
		{name: "response for the call", line: `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"fake"}]}}`,
			outcome: classify.ToolSuccess, method: "tools/call", id: "2", note: "the client takes it as the answer to its pending tools/call (id 2)",
			callNote: "the fault wrote a response of id 2 to the client before the server's answer"},
		{name: "response for no request", line: `{"jsonrpc":"2.0","id":"x-9","result":{}}`,
			outcome: classify.InvalidEnvelope, id: `"x-9"`, reason: `a response for id "x-9" (a string)`},
		{name: "malformed", line: `{"jsonrpc":"2.0","id":`, outcome: classify.MalformedJSON, id: "null", reason: "starts like JSON but is not valid JSON"},
		{name: "not a message", line: `42`, outcome: classify.InvalidEnvelope, id: "null", reason: "JSON but not a JSON-RPC message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := startScripted(t, proxy.StdioOptions{Faults: garbageFaults(t, tc.line)}, nil)
			got := run.talk(t, scriptedCall("2", "echo"))
			if tc.id == "2" {
				// The injected answer of id 2 ended talk's read; the
				// server's own follows.
				rest, err := run.out.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				got += rest
			}
			if want := tc.line + "\n" + scriptedAnswer("2", "echo"); got != want {
				t.Fatalf("the client received %q, want %q", got, want)
			}
			run.end(t)
			var injected, calls int
			for _, rec := range run.sink.records(t) {
				if !strings.Contains(rec.Note, "injected by the fault (FI)") {
					if rec.Method == "tools/call" {
						calls++
						if rec.Outcome != classify.ToolSuccess || string(rec.JSONRPC.ID.Raw()) != "2" || !strings.Contains(rec.Note, tc.callNote) {
							t.Errorf("the call's record: %s id %s note %q; want TOOL_SUCCESS, id 2, note with %q", rec.Outcome, rec.JSONRPC.ID.Raw(), rec.Note, tc.callNote)
						}
						continue
					}
					t.Errorf("a record: %s %q id %s, reason %q, note %q", rec.Outcome, rec.Method, rec.JSONRPC.ID.Raw(), rec.Reason, rec.Note)
					continue
				}
				injected++
				id := string(rec.JSONRPC.ID.Raw())
				if rec.Outcome != tc.outcome || rec.Method != tc.method || id != tc.id || rec.Scenario != "stdio.garbage" || !rec.Flags.Has(record.FlagFI) ||
					!strings.Contains(rec.Reason, tc.reason) || !strings.Contains(rec.Note, tc.note) || rec.ClientAnswer {
					t.Errorf("the injected line's record: %s method %q id %s scenario %q flags %v clientAnswer %v reason %q note %q; want %s, %q, id %s, stdio.garbage, FI, reason with %q, note with %q",
						rec.Outcome, rec.Method, id, rec.Scenario, rec.Flags, rec.ClientAnswer, rec.Reason, rec.Note, tc.outcome, tc.method, tc.id, tc.reason, tc.note)
				}
				if rec.ResponseBody == nil || rec.ResponseBody.Text != tc.line {
					t.Errorf("the injected line's record's body: %+v, want the line", rec.ResponseBody)
				}
			}
			if injected != 1 || calls != 1 {
				t.Errorf("%d records of the injected line and %d of the call, want 1 and 1", injected, calls)
			}
		})
	}
}
