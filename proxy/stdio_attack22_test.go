package proxy_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/proxy"
)

// TestStdioAttackLines: what a user's stdio server and client do to the
// lines, through the proxy in front of the scripted server. For each: the
// client receives the server's bytes unchanged, and each call has one
// record, with its id as the client wrote it (its JSON type kept), its
// method and a true outcome; no other record.
//
//   - An answer whose id is the request's of another JSON type ("7" for 7,
//     8 for "8"): the server broke the envelope; a client that reads the id
//     loosely (the TypeScript SDK's Number(response.id)) takes it as the
//     answer, a strict one does not. The call's record is INVALID_ENVELOPE
//     naming both ids. Before: a record "a response for id "7", which no
//     pending request has", and the call recorded as never answered.
//   - A request line longer than --max-event-size, its id first or last
//     (as the TypeScript SDK writes a request: method, params, jsonrpc, id):
//     the call's record, paired with its answer. Before: no record of the
//     call, and its answer recorded as answering no request.
//   - A UTF-8 byte order mark before the answer (a runtime that writes one
//     at the start of its stdout): MALFORMED_JSON, as classify says of a
//     body after a BOM over HTTP. Before: STDIO_NOISE "not JSON", and the
//     call recorded as never answered.
//     Its record's request body is the line's head, marked truncated.
//   - Lines ended by CR LF, the client's and the server's, and an empty
//     line of the client's: passed as they are, the call paired.
func TestStdioAttackLines(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("p", 32<<10)
	for _, tc := range []struct {
		name     string
		line     string // the client's line (its newline added)
		answer   string // what the client receives
		id       string // the call's record's id
		outcome  classify.Outcome
		reason   string // contained
		respID   string // the record's responseId (the answer's id as written), when it differs
		readLine bool   // the answer's id is not the call's: read one line, not up to the id
	}{
		{name: "string id for a number", line: scriptedCall("7", "string-id"), answer: scriptedAnswer("7", "string-id"), id: "7",
			outcome: classify.InvalidEnvelope, reason: `the response id "7" does not match the request id 7`, respID: `"7"`, readLine: true},
		{name: "number id for a string", line: scriptedCall(`"8"`, "number-id"), answer: scriptedAnswer(`"8"`, "number-id"), id: `"8"`,
			outcome: classify.InvalidEnvelope, reason: `the response id 8 does not match the request id "8"`, respID: "8", readLine: true},
		{name: "long request, id first", line: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"pad":"` + pad + `"}}}`,
			answer: scriptedAnswer("9", "echo"), id: "9", outcome: classify.ToolSuccess},
		{name: "long request, id last", line: `{"method":"tools/call","params":{"name":"echo","arguments":{"pad":"` + pad + `"}},"jsonrpc":"2.0","id":"c-10"}`,
			answer: scriptedAnswer(`"c-10"`, "echo"), id: `"c-10"`, outcome: classify.ToolSuccess},
		{name: "BOM before the answer", line: scriptedCall("11", "bom"), answer: scriptedAnswer("11", "bom"), id: "11",
			outcome: classify.MalformedJSON, reason: "byte order mark", readLine: true},
		{name: "CR LF", line: scriptedCall("12", "crlf") + "\r", answer: scriptedAnswer("12", "crlf"), id: "12", outcome: classify.ToolSuccess},
		{name: "an empty line first", line: "\n" + scriptedCall("13", "echo"), answer: scriptedAnswer("13", "echo"), id: "13", outcome: classify.ToolSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := startScripted(t, proxy.StdioOptions{MaxLineSize: 16 << 10, Bodies: proxy.BodiesAll}, nil)
			var got string
			if tc.readLine {
				run.send(t, tc.line)
				l, err := run.out.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				got = l
			} else {
				got = run.talk(t, tc.line)
			}
			if got != tc.answer {
				t.Fatalf("the client received %q, want %q", got, tc.answer)
			}
			run.end(t)
			recs := run.sink.records(t)
			for _, rec := range recs {
				t.Logf("record: %s %q id %s responseId %s: %s (%s)", rec.Outcome, rec.Method, rec.JSONRPC.ID.Raw(), rec.JSONRPC.ResponseID.Raw(), rec.Reason, rec.Note)
			}
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1: the call's", len(recs))
			}
			rec := recs[0]
			if rec.Method != "tools/call" || string(rec.JSONRPC.ID.Raw()) != tc.id || rec.Outcome != tc.outcome || !strings.Contains(rec.Reason, tc.reason) ||
				string(rec.JSONRPC.ResponseID.Raw()) != tc.respID || rec.ClientAnswer {
				t.Errorf("the call's record: %q id %s %s responseId %s reason %q; want tools/call, id %s, %s, responseId %s, reason with %q",
					rec.Method, rec.JSONRPC.ID.Raw(), rec.Outcome, rec.JSONRPC.ResponseID.Raw(), rec.Reason, tc.id, tc.outcome, tc.respID, tc.reason)
			}
			// A long line's record keeps its head, marked cut.
			if long := strings.HasPrefix(tc.name, "long"); rec.RequestBody == nil || rec.RequestBody.Truncated != long {
				t.Errorf("the call's request body: %+v, want one, truncated %v", rec.RequestBody != nil, long)
			}
		})
	}
}

// TestStdioClientLineAfterABOM: a client whose first line starts with a
// UTF-8 byte order mark (a tool that writes its requests through a
// UTF-8-with-BOM encoder). The line reaches the server unchanged; the
// scripted server, as Go's and Node's readers do, cannot read it and
// answers with a parse error of id null. The client's line's record is
// MALFORMED_JSON naming the BOM, with the method, tool and id of the
// request after it (id with its JSON type); the server's error is its
// answer to that line (JSONRPC_ERROR). Before, the line's reason was
// "not JSON" of a line that is JSON after three bytes, with no method.
func TestStdioClientLineAfterABOM(t *testing.T) {
	t.Parallel()
	run := startScripted(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptNullIDEnv+"=1")}, nil)
	run.send(t, "\xef\xbb\xbf"+scriptedCall(`"b-1"`, "echo"))
	got, err := run.out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n"; got != want {
		t.Fatalf("the client received %q, want %q", got, want)
	}
	run.end(t)
	var line, answer int
	for _, rec := range run.sink.records(t) {
		switch {
		case rec.Outcome == classify.MalformedJSON:
			line++
			if rec.Method != "tools/call" || rec.Tool != "echo" || string(rec.JSONRPC.ID.Raw()) != `"b-1"` || !strings.Contains(rec.Reason, "byte order mark") {
				t.Errorf("the client's line's record: %q %q id %s, reason %q", rec.Method, rec.Tool, rec.JSONRPC.ID.Raw(), rec.Reason)
			}
		case rec.Outcome == classify.JSONRPCError && rec.JSONRPC.ID.IsNull():
			answer++
		default:
			t.Errorf("a record: %s %q id %s, reason %q", rec.Outcome, rec.Method, rec.JSONRPC.ID.Raw(), rec.Reason)
		}
	}
	if line != 1 || answer != 1 {
		t.Errorf("%d records of the client's line and %d of the server's error, want 1 and 1", line, answer)
	}
}

// TestStdioClientLinesReachTheServerUnchanged: the lines of the attacks
// above, the other way: what the client writes reaches the server byte for
// byte (the scripted server's lines-seen gives each line's size and
// digest): a CR LF line, an empty line, a line after a UTF-8 BOM, a request
// longer than --max-event-size with its id last, a string with escapes and
// characters outside ASCII.
func TestStdioClientLinesReachTheServerUnchanged(t *testing.T) {
	t.Parallel()
	lines := []string{
		scriptedCall("1", "echo") + "\r",
		"",
		"\xef\xbb\xbf" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"method":"tools/call","params":{"name":"echo","arguments":{"pad":"` + strings.Repeat("p", 32<<10) + `"}},"jsonrpc":"2.0","id":"c-2"}`,
		`{"jsonrpc":"2.0","id":"\u00e9-3","method":"tools/call","params":{"name":"echo","arguments":{"t":"é ✓ \"q\" \\ \/"}}}`,
	}
	run := startScripted(t, proxy.StdioOptions{MaxLineSize: 16 << 10}, nil)
	var want []string
	for _, l := range lines {
		run.send(t, l)
		sum := sha256.Sum256([]byte(l))
		want = append(want, fmt.Sprintf("%d:%x", len(l), sum[:4]))
	}
	got := run.talk(t, scriptedCall("9", "lines-seen"))
	text, _ := json.Marshal(strings.Join(want, ","))
	if !strings.HasSuffix(got, `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":`+string(text)+`}]}}`+"\n") {
		t.Errorf("the server read %q,\nwant the lines as the client wrote them: %s", got, text)
	}
	run.end(t)
}

// TestStdioServerBOMLineAnswersNothing: a server line that is JSON after a
// UTF-8 byte order mark and answers no request (a notification a runtime
// wrote first on its stdout) reaches the client unchanged and stays
// STDIO_NOISE (the client's reader refuses it), its reason naming the BOM;
// the call after it is paired as usual. Before, the reason said the line
// was not JSON.
func TestStdioServerBOMLineAnswersNothing(t *testing.T) {
	t.Parallel()
	run := startScripted(t, proxy.StdioOptions{}, nil)
	if got, want := run.talk(t, scriptedCall("2", "bom-notification")), scriptedAnswer("2", "bom-notification"); got != want {
		t.Fatalf("the client received %q, want %q", got, want)
	}
	run.end(t)
	var noise, calls int
	for _, rec := range run.sink.records(t) {
		switch {
		case rec.Outcome == proxy.StdioNoise:
			noise++
			if !strings.Contains(rec.Reason, "JSON after a UTF-8 byte order mark") {
				t.Errorf("the BOM line's reason: %q", rec.Reason)
			}
		case rec.Method == "tools/call" && rec.Outcome == classify.ToolSuccess:
			calls++
		default:
			t.Errorf("a record: %s %q id %s, reason %q", rec.Outcome, rec.Method, rec.JSONRPC.ID.Raw(), rec.Reason)
		}
	}
	if noise != 1 || calls != 1 {
		t.Errorf("%d noise records and %d of the call, want 1 and 1", noise, calls)
	}
}

// TestStdioLongClientAnswer: the client's answer to a server request on a
// line longer than --max-event-size (a large sampling result, a long roots
// list), its id first or last (as the TypeScript SDK writes a response:
// result, jsonrpc, id). It reaches the server whole, and the server
// request's record is the client's answer: NOT_CLASSIFIED with the line's
// size and the limit, the request's method and id. Before, the answer was
// read as nothing, and the server request was recorded as one the client
// left unanswered when it ended the session.
func TestStdioLongClientAnswer(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("r", 32<<10)
	for _, tc := range []struct{ name, answer string }{
		{"id first", `{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[{"uri":"file:///` + pad + `"}]}}`},
		{"id last", `{"result":{"roots":[{"uri":"file:///` + pad + `"}]},"jsonrpc":"2.0","id":"srv-1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := startScripted(t, proxy.StdioOptions{MaxLineSize: 16 << 10}, nil)
			if got, want := run.talk(t, scriptedCall("2", "ask-roots")), scriptedAnswer("2", "ask-roots"); got != want {
				t.Fatalf("the client received %q, want %q", got, want)
			}
			run.send(t, tc.answer)
			sum := sha256.Sum256([]byte(tc.answer))
			digest := fmt.Sprintf(",%d:%x\"", len(tc.answer), sum[:4]) // the last line before lines-seen
			if got := run.talk(t, scriptedCall("3", "lines-seen")); !strings.Contains(got, digest) {
				t.Errorf("the server read %q, want the answer whole after the call (%s)", got, digest)
			}
			run.end(t)
			var roots int
			for _, rec := range run.sink.records(t) {
				if rec.Method != "roots/list" {
					continue
				}
				roots++
				if rec.Outcome != classify.NotClassified || !rec.ClientAnswer || string(rec.JSONRPC.ID.Raw()) != `"srv-1"` ||
					rec.NotClassified == nil || rec.NotClassified.Size != int64(len(tc.answer)+1) || rec.NotClassified.Limit != 16<<10 {
					t.Errorf("roots/list's record: %s clientAnswer %v id %s %+v, reason %q; want NOT_CLASSIFIED, the client's answer, \"srv-1\", size %d, limit %d",
						rec.Outcome, rec.ClientAnswer, rec.JSONRPC.ID.Raw(), rec.NotClassified, rec.Reason, len(tc.answer)+1, 16<<10)
				}
			}
			if roots != 1 {
				t.Errorf("%d roots/list records, want 1", roots)
			}
		})
	}
}

// TestStdioLongClientRequestIDOfServerRequest: a request of the client on a
// line longer than --max-event-size whose head hides its method (params
// written first, a 32 KiB argument), its id the id of a server request
// still waiting ("srv-1"). Before, a long line whose head showed no method
// was read as the client's answer to the server request of its id: the
// roots/list was recorded answered (NOT_CLASSIFIED, clientAnswer true) and
// the server's answer to the tools/call as a response to no request
// (INVALID_ENVELOPE). Now the method the line's tail shows makes it the
// request it is: the tools/call of id "srv-1" (a string) is recorded with
// the server's answer, and the roots/list as one the client never answered.
func TestStdioLongClientRequestIDOfServerRequest(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("r", 32<<10)
	params := `"params":{"name":"echo","arguments":{"pad":"` + pad + `"}}`
	for _, tc := range []struct{ name, request string }{
		{"params first, id last", `{` + params + `,"method":"tools/call","jsonrpc":"2.0","id":"srv-1"}`},
		{"id first, method last", `{"jsonrpc":"2.0","id":"srv-1",` + params + `,"method":"tools/call"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			run := startScripted(t, proxy.StdioOptions{MaxLineSize: 16 << 10}, nil)
			if got, want := run.talk(t, scriptedCall("2", "ask-roots")), scriptedAnswer("2", "ask-roots"); got != want {
				t.Fatalf("the client received %q, want %q", got, want)
			}
			run.send(t, tc.request)
			run.end(t)
			type key struct{ method, id string }
			got := map[key][]string{}
			for _, rec := range run.sink.records(t) {
				k := key{rec.Method, string(rec.JSONRPC.ID.Raw())}
				got[k] = append(got[k], fmt.Sprintf("%s clientAnswer %v", rec.Outcome, rec.ClientAnswer))
				switch k {
				case key{"tools/call", "2"}:
					if rec.Outcome != classify.ToolSuccess {
						t.Errorf("tools/call 2: %s, reason %q; want TOOL_SUCCESS", rec.Outcome, rec.Reason)
					}
				case key{"tools/call", `"srv-1"`}:
					if rec.Outcome != classify.ToolSuccess || rec.ClientAnswer {
						t.Errorf("the long tools/call: %s clientAnswer %v, reason %q; want TOOL_SUCCESS, the server's answer to it", rec.Outcome, rec.ClientAnswer, rec.Reason)
					}
				case key{"roots/list", `"srv-1"`}:
					if rec.Outcome != classify.HTTPSuccess || rec.ClientAnswer || !strings.Contains(rec.Note, "not answered: the client closed the server's stdin") {
						t.Errorf("roots/list: %s clientAnswer %v, note %q; want HTTP_SUCCESS, not answered (the client closed the server's stdin)", rec.Outcome, rec.ClientAnswer, rec.Note)
					}
				default:
					t.Errorf("a record of %q id %s: %s clientAnswer %v, reason %q", rec.Method, rec.JSONRPC.ID.Raw(), rec.Outcome, rec.ClientAnswer, rec.Reason)
				}
			}
			for _, k := range []key{{"tools/call", "2"}, {"tools/call", `"srv-1"`}, {"roots/list", `"srv-1"`}} {
				if len(got[k]) != 1 {
					t.Errorf("%d records of %s id %s, want 1 (all: %v)", len(got[k]), k.method, k.id, got)
				}
			}
		})
	}
}
