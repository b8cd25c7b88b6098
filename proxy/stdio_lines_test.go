package proxy_test

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// A server line that starts like JSON is told apart by one parse: not JSON
// is MALFORMED_JSON, a JSON object that is no JSON-RPC message is
// INVALID_ENVELOPE; both are forwarded, and the call after them is answered
// and recorded.
func TestStdioMalformedAndForeignLines(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
	for _, c := range []struct{ id, tool string }{{"2", "malformed"}, {"3", "not-a-message"}} {
		got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall(c.id, c.tool)}), "")
		if want := scriptedAnswer(c.id, c.tool); got != want {
			t.Fatalf("%s: the client received %q, want %q", c.tool, got, want)
		}
	}
	for _, c := range []struct {
		outcome classify.Outcome
		reason  string
	}{
		{classify.MalformedJSON, "starts like JSON but is not valid JSON"},
		{classify.InvalidEnvelope, "is JSON but not a JSON-RPC message"},
	} {
		r := waitRecord(t, run.sink, "for "+string(c.outcome), func(r *record.Record) bool { return r.Outcome == c.outcome })
		if !strings.Contains(r.Reason+" "+r.Note, c.reason) {
			t.Errorf("%s record: reason %q note %q, want %q", c.outcome, r.Reason, r.Note, c.reason)
		}
	}
	for _, tool := range []string{"malformed", "not-a-message"} {
		r := waitRecord(t, run.sink, "for "+tool, func(r *record.Record) bool { return r.Tool == tool })
		if r.Outcome != classify.ToolSuccess {
			t.Errorf("%s call: %s (%s)", tool, r.Outcome, r.Reason)
		}
	}
}

// TestStdioIDsMatchExactly: a server that reads ids into a float64 answers
// 9007199254740993 with 9007199254740992. The proxy pairs the answer with
// the call (its pending map keys numbers as float64), and the record says
// the ids differ (INVALID_ENVELOPE), not that the call succeeded; the next
// call is still paired with its own answer.
func TestStdioIDsMatchExactly(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
	if _, err := io.WriteString(run.in, scriptedCall("9007199254740993", "rounded-id")+"\n"); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("8", "echo")}), "")
	if want := scriptedAnswer("9007199254740993", "rounded-id") + scriptedAnswer("8", "echo"); got != want {
		t.Fatalf("the client received %q, want %q", got, want)
	}
	r := waitRecord(t, run.sink, "for rounded-id", func(r *record.Record) bool { return r.Tool == "rounded-id" })
	if r.Outcome != classify.InvalidEnvelope || !strings.Contains(r.Reason, "9007199254740992") {
		t.Errorf("the call with id 9007199254740993 answered with id 9007199254740992: %s (%s), want %s", r.Outcome, r.Reason, classify.InvalidEnvelope)
	}
	if r := waitRecord(t, run.sink, "for echo", func(r *record.Record) bool { return r.Tool == "echo" }); r.Outcome != classify.ToolSuccess {
		t.Errorf("echo: %s (%s)", r.Outcome, r.Reason)
	}
}

// TestStdioNegativeZeroID: a request of id -0 answered with id 0 (as the
// TypeScript SDK's server-everything answers it: JSON.stringify(-0) is "0").
// The two are the same id (wire.ID.Equal: numbers by value; as float64 too),
// but the pending map keyed -0 as "n-0" and 0 as "n0": the proxy recorded the
// answer as "a response for id 0, which no pending request has"
// (INVALID_ENVELOPE) and the call as not answered (NETWORK_ERROR) though the
// client got its answer. Found through mcpdiag proxy --stdio in front of
// server-everything. 1e2 answered as 100 was paired already.
func TestStdioNegativeZeroID(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
	// The answers' ids are not the requests' bytes: write both calls,
	// then hold a conversation that reads up to echo's answer.
	if _, err := io.WriteString(run.in, scriptedCall("1e2", "js-id")+"\n"+scriptedCall("-0", "js-id")+"\n"); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("8", "echo")}), "")
	if want := scriptedAnswer("1e2", "js-id") + scriptedAnswer("-0", "js-id") + scriptedAnswer("8", "echo"); got != want {
		t.Fatalf("the client received %q, want %q", got, want)
	}
	for _, id := range []string{"1e2", "-0", "8"} {
		r := waitRecord(t, run.sink, "for id "+id, func(r *record.Record) bool { return r.JSONRPC.ID.String() == id })
		if r.Method != "tools/call" || r.Outcome != classify.ToolSuccess || r.Layer != classify.LayerApplication {
			t.Errorf("id %s: %s %s (%s layer): %s; want tools/call TOOL_SUCCESS (application)", id, r.Method, r.Outcome, r.Layer, r.Reason)
		}
	}
	run.in.Close()
	run.wait(t)
	for _, r := range run.sink.records(t) {
		if r.Outcome != classify.ToolSuccess {
			t.Errorf("record %s %s id %s: %s (%s) %s", r.Method, r.Tool, r.JSONRPC.ID.String(), r.Outcome, r.Reason, r.Note)
		}
	}
}

// TestStdioIDsPairByValue: the stdio proxy pairs an answer with its
// request by the id's value (wire.ID.Key): two requests waiting at once
// with ids 9007199254740993 and 9007199254740992 are two requests, each
// paired with its own answer (before, keyed by a float64, the second took
// the first's place, and the first's answer was judged as the second's);
// a string id answered spelled with escapes ("\u0061…") is its request's,
// and its record keeps that spelling in responseId.
func TestStdioIDsPairByValue(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
	if _, err := io.WriteString(run.in, scriptedCall("9007199254740993", "echo")+"\n"+scriptedCall("9007199254740992", "echo")+"\n"+scriptedCall(`"a-1"`, "escaped-id")+"\n"); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("8", "echo")}), "")
	if want := scriptedAnswer("9007199254740993", "echo") + scriptedAnswer("9007199254740992", "echo") + scriptedAnswer(`"a-1"`, "escaped-id") + scriptedAnswer("8", "echo"); got != want {
		t.Fatalf("the client received %q, want %q", got, want)
	}
	// The answer's id as it was spelled, when that is not the request's.
	respelled := map[string]string{`"a-1"`: `"\u0061\u002d\u0031"`}
	for _, id := range []string{"9007199254740993", "9007199254740992", `"a-1"`, "8"} {
		r := waitRecord(t, run.sink, "for id "+id, func(r *record.Record) bool { return r.JSONRPC.ID.String() == id })
		if r.Method != "tools/call" || r.Outcome != classify.ToolSuccess || string(r.JSONRPC.ResponseID.Raw()) != respelled[id] {
			t.Errorf("id %s: %s %s (responseId %s): %s; want tools/call TOOL_SUCCESS (responseId %s)", id, r.Method, r.Outcome, r.JSONRPC.ResponseID.String(), r.Reason, respelled[id])
		}
	}
	run.in.Close()
	run.wait(t)
	for _, r := range run.sink.records(t) {
		if r.Outcome != classify.ToolSuccess {
			t.Errorf("record %s %s id %s: %s (%s) %s", r.Method, r.Tool, r.JSONRPC.ID.String(), r.Outcome, r.Reason, r.Note)
		}
	}
}
