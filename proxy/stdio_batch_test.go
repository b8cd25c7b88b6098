package proxy_test

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// A JSON-RPC batch line of the client (a JSON array of messages,
// 2025-03-26 batching) is taken apart: each request in it gets its own
// record, paired with its answer in the server's batch line, and says it
// came in a batch (Batch, the note); the server's batch line is not an
// orphan INVALID_ENVELOPE. On 2025-11-25, which has no batches (go-sdk
// refuses one by ending the session), each batched request's record says
// so, and nothing is silently lost. Before, the batch line got no record
// at all and the server's answer was recorded as "JSON but not a JSON-RPC
// message".
func TestStdioBatchLine(t *testing.T) {
	t.Parallel()
	// No notification in it: go-sdk v1.8.0 holds a batch's answer line until
	// every message in it was answered, a notification too, so forever.
	batch := "[" + toolLine(2, "echo") + "," + toolLine(3, "fail") + "]"
	for _, c := range []struct {
		protocol string
		answered bool   // the server answers the batch (with a batch line)
		note     string // in each batched request's note
	}{
		{"2025-03-26", true, "the server's answer was message"},
		{"2025-11-25", false, "batches exist in 2025-03-26 only, not in 2025-11-25"},
	} {
		t.Run(c.protocol, func(t *testing.T) {
			t.Parallel()
			run := startStdio(t, proxy.StdioOptions{})
			init := strings.Replace(initLine, "2025-11-25", c.protocol, 1)
			conversation(t, run.in, run.out, []string{init, readyLine})
			if _, err := io.WriteString(run.in, batch+"\n"); err != nil {
				t.Fatal(err)
			}
			if c.answered {
				line, err := run.out.ReadString('\n')
				if err != nil || !strings.HasPrefix(line, "[") {
					t.Fatalf("the server's answer to the batch: %q, %v; want a batch line", line, err)
				}
			}
			run.in.Close()
			go io.Copy(io.Discard, run.out)
			run.wait(t)
			recs := run.sink.records(t)
			for _, r := range recs {
				if r.Outcome == classify.InvalidEnvelope && r.Tool == "" {
					t.Errorf("a record of a line answering no request: %s (%s)", r.Reason, r.Note)
				}
			}
			for i, tool := range []string{"echo", "fail"} {
				id := fmt.Sprint(i + 2)
				var got *record.Record
				for _, r := range recs {
					if r.JSONRPC.ID.String() == id {
						got = r
					}
				}
				if got == nil {
					t.Fatalf("no record of the batched tools/call %s (id %s); records: %d", tool, id, len(recs))
				}
				if got.Tool != tool || got.Batch != 2 || !strings.Contains(got.Note, fmt.Sprintf("message %d of a JSON-RPC batch of 2", i+1)) || !strings.Contains(got.Note, c.note) {
					t.Errorf("id %s: tool %q batch %d note %q; want tool %s, batch 2, a note with %q", id, got.Tool, got.Batch, got.Note, tool, c.note)
				}
				if c.answered && i == 0 && got.Outcome != classify.ToolSuccess {
					t.Errorf("echo in a batch: %s (%s)", got.Outcome, got.Reason)
				}
			}
			if want := int64(3); run.res.Exchanges != want {
				t.Errorf("%d exchanges, want %d (initialize and the two batched calls)", run.res.Exchanges, want)
			}
		})
	}
}

// TestStdioClientLineNotJSONRPC: a line the client writes that is not a
// JSON-RPC message gets a record saying so (the client's line, with the
// requests pending), so that what the server does next (an error with id
// null, or its end) has its cause in the records; before, nothing recorded
// it. The calls after it are still paired and recorded.
func TestStdioClientLineNotJSONRPC(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1"), Bodies: proxy.BodiesAll})
	for _, l := range []string{"hello server", `{"greeting":"hi"}`} {
		if _, err := io.WriteString(run.in, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("2", "echo")}), "")
	if want := scriptedAnswer("2", "echo"); got != want {
		t.Fatalf("the client received %q, want %q", got, want)
	}
	run.in.Close()
	run.wait(t)
	for _, c := range []struct {
		line    string
		outcome classify.Outcome
		reason  string
	}{
		{"hello server", classify.MalformedJSON, "a line the client wrote to the server's stdin is not JSON"},
		{`{"greeting":"hi"}`, classify.InvalidEnvelope, "a line the client wrote to the server's stdin is JSON but not a JSON-RPC message"},
	} {
		r := waitRecord(t, run.sink, "for "+c.line, func(r *record.Record) bool { return r.RequestBody != nil && r.RequestBody.Text == c.line })
		if r.Outcome != c.outcome || !strings.Contains(r.Reason, c.reason) || !strings.Contains(r.Note, "client → server") {
			t.Errorf("%q: %s (%s; %s), want %s saying %q", c.line, r.Outcome, r.Reason, r.Note, c.outcome, c.reason)
		}
	}
	if r := waitRecord(t, run.sink, "for echo", func(r *record.Record) bool { return r.Tool == "echo" }); r.Outcome != classify.ToolSuccess {
		t.Errorf("echo: %s (%s)", r.Outcome, r.Reason)
	}
}

// TestStdioClientBatchNotJSONRPC: a batch line of the client that is empty
// ([]) or holds a member that is not a JSON-RPC message gets a record of
// each such member (or of the empty batch), as a line of its own does
// (TestStdioClientLineNotJSONRPC): the server answers each with an error of
// id null (JSON-RPC 2.0 §6), and without the record that answer would have
// no cause in the records. The request in the same batch keeps its record.
func TestStdioClientBatchNotJSONRPC(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1"), Bodies: proxy.BodiesAll})
	for _, l := range []string{"[]", `[1,{"greeting":"hi"}]`} {
		if _, err := io.WriteString(run.in, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("2", "echo")}), "")
	if want := scriptedAnswer("2", "echo"); got != want {
		t.Fatalf("the client received %q, want %q", got, want)
	}
	run.in.Close()
	run.wait(t)
	for _, c := range []struct {
		body, reason, note string
	}{
		{"[]", "an empty JSON array: a batch must hold at least one message", "client → server"},
		{"1", "is JSON but not a JSON-RPC message", "message 1 of a JSON-RPC batch of 2"},
		{`{"greeting":"hi"}`, "is JSON but not a JSON-RPC message", "message 2 of a JSON-RPC batch of 2"},
	} {
		r := waitRecord(t, run.sink, "for "+c.body, func(r *record.Record) bool { return r.RequestBody != nil && r.RequestBody.Text == c.body })
		if r.Outcome != classify.InvalidEnvelope || !strings.Contains(r.Reason, c.reason) || !strings.Contains(r.Note, c.note) {
			t.Errorf("%s: %s (%s; %s), want %s saying %q, noting %q", c.body, r.Outcome, r.Reason, r.Note, classify.InvalidEnvelope, c.reason, c.note)
		}
	}
}

// TestStdioNullIDAnswerToClientNoise: a server that answers the client's
// line that is not a JSON-RPC message with an error of id null, as
// JSON-RPC 2.0 §5 asks, did right: its answer is recorded as that
// (JSONRPC_ERROR saying so), not as INVALID_ENVELOPE "a response for id
// null, which no pending request has", which blamed the server's envelope.
func TestStdioNullIDAnswerToClientNoise(t *testing.T) {
	t.Parallel()
	for _, answers := range []int{1, 2} {
		t.Run(fmt.Sprint(answers), func(t *testing.T) {
			t.Parallel()
			run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1", fmt.Sprintf("%s=%d", stdioScriptNullIDEnv, answers))})
			if _, err := io.WriteString(run.in, "hello server\n"); err != nil {
				t.Fatal(err)
			}
			for range answers {
				if line, err := run.out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":null`) {
					t.Fatalf("the client received %q, %v; want the server's error of id null", line, err)
				}
			}
			got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("2", "echo")}), "")
			if want := scriptedAnswer("2", "echo"); got != want {
				t.Fatalf("the client received %q, want %q", got, want)
			}
			run.in.Close()
			run.wait(t)
			var outcomes []classify.Outcome
			for _, r := range run.sink.records(t) {
				if strings.Contains(r.Reason, "id null") && r.Tool == "" && r.Outcome != classify.MalformedJSON {
					outcomes = append(outcomes, r.Outcome)
					if r.Outcome == classify.JSONRPCError && !strings.Contains(r.Reason, "the server's answer (JSON-RPC 2.0 §5) to a line the client wrote") {
						t.Errorf("%s: %s", r.Outcome, r.Reason)
					}
					// The answer's own facts, as any answer's record has
					// them: its id null (not absent), its error code.
					if !r.JSONRPC.ID.IsNull() || r.JSONRPC.ErrorCode == nil || *r.JSONRPC.ErrorCode != -32700 || r.JSONRPC.ErrorName != "ParseError" || r.ErrorMessage != "Parse error" {
						t.Errorf("%s: jsonrpc id %q, error code %v %q, message %q; want id null, -32700 ParseError, \"Parse error\"", r.Outcome, r.JSONRPC.ID, r.JSONRPC.ErrorCode, r.JSONRPC.ErrorName, r.ErrorMessage)
					}
				}
			}
			// The answer to the client's line is that; a second one answers
			// nothing the client sent.
			want := []classify.Outcome{classify.JSONRPCError, classify.InvalidEnvelope}[:answers]
			if fmt.Sprint(outcomes) != fmt.Sprint(want) {
				t.Errorf("the records of the server's id-null errors: %v, want %v", outcomes, want)
			}
		})
	}
}

// TestStdioNullIDRequest: a client's request of id null (MCP forbids it;
// JSON-RPC 2.0 §4 makes it a request, not a notification) was passed over
// in silence: wire reads it as a notification, and client notifications get
// no record on stdio. Its line now has a record of its own that says so,
// with its method and tool, and the server's answer under id null (the
// scripted server echoes the id) is recorded as that answer, not as a
// response "which no pending request has". What the client receives is the
// server's bytes.
func TestStdioNullIDRequest(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
	got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("null", "echo"), scriptedCall("3", "echo")}), "")
	if want := scriptedAnswer("null", "echo") + scriptedAnswer("3", "echo"); got != want {
		t.Fatalf("the client received %q, want %q", got, want)
	}
	run.in.Close()
	run.wait(t)
	var client, answer, call int
	for _, r := range run.sink.records(t) {
		switch {
		case strings.Contains(r.Reason, "the client wrote a tools/call request of id null"):
			client++
			if r.Outcome != classify.InvalidEnvelope || r.Method != "tools/call" || r.Tool != "echo" || !strings.Contains(r.Reason, "MCP forbids a null id") {
				t.Errorf("the client's line: %s %s %s: %s", r.Method, r.Tool, r.Outcome, r.Reason)
			}
		case strings.Contains(r.Reason, "the server's answer to a request of id null the client wrote"):
			answer++
		case r.JSONRPC.ID.String() == "3":
			call++
			if r.Outcome != classify.ToolSuccess {
				t.Errorf("the call of id 3: %s: %s", r.Outcome, r.Reason)
			}
		default:
			t.Errorf("an unexpected record: %s %s id %s: %s (%s)", r.Method, r.Tool, r.JSONRPC.ID.String(), r.Outcome, r.Reason)
		}
	}
	if client != 1 || answer != 1 || call != 1 {
		t.Errorf("records: %d of the client's line, %d of the server's answer to it, %d of the call of id 3; want 1 each", client, answer, call)
	}
}
