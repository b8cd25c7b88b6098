package proxy_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdiag/mcpdiag/classify"
	"github.com/mcpdiag/mcpdiag/internal/testwait"
	"github.com/mcpdiag/mcpdiag/proxy"
	"github.com/mcpdiag/mcpdiag/record"
)

// The scripted stdio server is this test binary, re-executed with
// MCPDIAG_TEST_STDIO_SCRIPT=1: it answers each tools/call line with the
// bytes scriptedAnswer gives for the tool's name (deterministic, so a test
// knows every byte the client must receive).
const stdioScriptEnv = "MCPDIAG_TEST_STDIO_SCRIPT"

// stdioScriptNullIDEnv makes the scripted server answer a line it cannot
// read (no id) with a parse error of id null ("1"), or with two ("2").
const stdioScriptNullIDEnv = "MCPDIAG_TEST_STDIO_SCRIPT_NULLID"

func runScriptedStdio() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	// Lines end at LF only: a CR before it is the line's (ScanLines would
	// drop it, and lines-seen would not show what the proxy passed on).
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	listen := "null" // the id of the open subscriptions/listen request
	var answers []string
	var seen []string // a digest of every line read, for lines-seen
	for sc.Scan() {
		sum := sha256.Sum256(sc.Bytes())
		seen = append(seen, fmt.Sprintf("%d:%x", len(sc.Bytes()), sum[:4]))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		err := json.Unmarshal(sc.Bytes(), &m)
		if err == nil && m.ID != nil && m.Method == "" {
			answers = append(answers, string(m.ID))
			continue // the client's answer to a server request
		}
		if m.Params.Name == "lines-seen" {
			// Each line this server read before this one, as its size
			// and the start of its SHA-256 (joined by commas): what the
			// proxy passed on, byte for byte.
			text, _ := json.Marshal(strings.Join(seen[:len(seen)-1], ","))
			out.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":` + string(text) + `}]}}` + "\n")
			out.Flush()
			continue
		}
		if m.Params.Name == "answers-seen" {
			// The ids of the client's answers this server read, in order
			// (a text of them joined by commas): what the proxy passed on.
			text, _ := json.Marshal(strings.Join(answers, ","))
			out.WriteString(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[{"type":"text","text":` + string(text) + `}]}}` + "\n")
			out.Flush()
			continue
		}
		if err == nil && m.ID != nil && m.Method == "subscriptions/listen" {
			// A 2026-07-28 subscription: acknowledged, never answered
			// (the tools end-listen and listen-result end it).
			listen = string(m.ID)
			out.WriteString(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + listen + `}}}` + "\n")
			out.Flush()
			continue
		}
		switch m.Params.Name {
		case "end-listen": // the stdio server's end of a subscription (MCP 2026-07-28: notifications/cancelled)
			out.WriteString(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + listen + `}}` + "\n")
		case "listen-result": // the graceful end: SubscriptionsListenResult
			out.WriteString(`{"jsonrpc":"2.0","id":` + listen + `,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":` + listen + `}}}` + "\n")
		}
		if err != nil || m.ID == nil {
			// As JSON-RPC 2.0 §5 asks: an error of id null for a message
			// the server could not read ("2": twice, one too many).
			for range map[string]int{"1": 1, "2": 2}[os.Getenv(stdioScriptNullIDEnv)] {
				out.WriteString(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` + "\n")
			}
			out.Flush()
			continue
		}
		if m.Params.Name == "cut-exit" || m.Params.Name == "cut-exit-id-last" {
			// Half a response line, no newline, and the server exits
			// (-id-last: the result first, as the TypeScript SDK writes
			// it, so the cut hides the id).
			out.WriteString(cutAnswer(string(m.ID), m.Params.Name))
			out.Flush()
			os.Exit(0)
		}
		if m.Params.Name == "close-stdin" {
			// The server stops reading its stdin (it answers first, then
			// waits to be killed): what the client writes next never
			// reaches it.
			os.Stdin.Close()
			out.WriteString(scriptedAnswer(string(m.ID), m.Params.Name))
			out.Flush()
			time.Sleep(time.Hour)
		}
		out.WriteString(scriptedAnswer(string(m.ID), m.Params.Name))
		out.Flush()
		if m.Params.Name == "ask-roots-exit" || m.Params.Name == "no-answer-exit" {
			os.Exit(0)
		}
	}
}

// cutAnswer is the half response line the tools cut-exit and
// cut-exit-id-last write before the server exits.
func cutAnswer(id, tool string) string {
	if tool == "cut-exit-id-last" {
		return `{"result":{"content":[{"type":"text","te`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[`
}

// big is n bytes of tool result text.
func big(n int) string { return strings.Repeat("x", n) }

// scriptedAnswer is what the scripted server writes for a tools/call of
// tool with the given raw id: one or more lines.
func scriptedAnswer(id, tool string) string {
	small := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`+"\n", id)
	if x, ok := strings.CutPrefix(tool, "ask-roots-id:"); ok { // a server request (roots/list) of id x, then the answer
		return `{"jsonrpc":"2.0","id":` + x + `,"method":"roots/list"}` + "\n" + small
	}
	if x, ok := strings.CutPrefix(tool, "ask-roots-big-id:"); ok { // a server request (roots/list) of id x, a line of 32 KiB and more, then the answer
		return `{"jsonrpc":"2.0","id":` + x + `,"method":"roots/list","params":{"_meta":{"pad":"` + big(32<<10) + `"}}}` + "\n" + small
	}
	if x, ok := strings.CutPrefix(tool, "stray-id:"); ok { // a response for id x, which no request has, then the answer
		return `{"jsonrpc":"2.0","id":` + x + `,"result":{}}` + "\n" + small
	}
	switch tool {
	case "big-id-first": // as go-sdk and the Python SDK write a response
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`+"\n", id, big(1<<20))
	case "big-id-last": // as the TypeScript SDK writes it: result first, id last
		return fmt.Sprintf(`{"result":{"content":[{"type":"text","text":"%s","_meta":{"id":7}}]},"jsonrpc":"2.0","id":%s}`+"\r\n", big(1<<20), id)
	case "big-default": // over the default 16 MiB limit
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`+"\n", id, big(17<<20))
	case "garbage": // a huge non-JSON line, then the answer
		return strings.Repeat("garbage ", 1<<18) + "\n" + small
	case "unknown-id": // a huge response for an id nobody sent, then the answer
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":424242,"result":{"content":[{"type":"text","text":"%s"}]}}`+"\n", big(1<<20)) + small
	case "rounded-id": // the id read into a float64, as a JavaScript server does
		if f, err := strconv.ParseFloat(id, 64); err == nil {
			return strings.Replace(small, `"id":`+id, `"id":`+strconv.FormatFloat(f, 'f', -1, 64), 1)
		}
		return small
	case "js-id": // the id as JavaScript's JSON.stringify writes the number it read: -0 as 0, 1e2 as 100
		if f, err := strconv.ParseFloat(id, 64); err == nil {
			if f == 0 {
				f = 0 // JSON.stringify(-0) is "0"
			}
			return strings.Replace(small, `"id":`+id, `"id":`+strconv.FormatFloat(f, 'f', -1, 64), 1)
		}
		return small
	case "escaped-id": // a string id spelled with every character escaped ("1" as "\u0031")
		var v string
		if json.Unmarshal([]byte(id), &v) == nil && strings.HasPrefix(id, `"`) {
			var b strings.Builder
			b.WriteByte('"')
			for _, r := range v {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			b.WriteByte('"')
			return strings.Replace(small, `"id":`+id, `"id":`+b.String(), 1)
		}
		return small
	case "string-id": // a number id answered as a string ("7" for 7)
		return strings.Replace(small, `"id":`+id, `"id":`+strconv.Quote(id), 1)
	case "number-id": // a string id of digits answered as a number (8 for "8")
		if v, err := strconv.Unquote(id); err == nil {
			return strings.Replace(small, `"id":`+id, `"id":`+v, 1)
		}
		return small
	case "bom": // the answer after a UTF-8 byte order mark, as a server whose runtime writes one first does
		return "\xef\xbb\xbf" + small
	case "bom-notification": // a notification after a UTF-8 byte order mark, then the answer
		return "\xef\xbb\xbf" + `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"up"}}` + "\n" + small
	case "crlf": // the answer ended by CR LF
		return strings.TrimSuffix(small, "\n") + "\r\n"
	case "malformed": // a line that starts like JSON and is not, then the answer
		return `{"jsonrpc":"2.0","id":` + "\n" + small
	case "not-a-message": // a JSON object that is no JSON-RPC message, then the answer
		return `{"hello":"world"}` + "\n" + small
	case "ask-roots", "ask-roots-exit": // a server request (roots/list) first, then the answer; -exit: then the server exits
		return `{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}` + "\n" + small
	case "ask-roots-batch": // the server request inside a batch line (2025-03-26), with a notification, then the answer
		return `[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}},{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}]` + "\n" + small
	case "no-answer", "no-answer-exit": // nothing; -exit: then the server exits
		return ""
	case "flood": // 2500 small responses for ids nobody sent, then the answer
		var b strings.Builder
		for i := range 2500 {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":"stray-%d","result":{}}`+"\n", i)
		}
		return b.String() + small
	}
	return small
}

func scriptedCall(id, tool string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, tool)
}

// waitRecord waits until the sink holds a record that ok accepts, up to
// testwait.Bound: under -race at load 30-40 TestStdioUnsentRequestsCapped
// outwaited 20 s.
func waitRecord(t *testing.T, sink *memSink, what string, ok func(*record.Record) bool) *record.Record {
	t.Helper()
	deadline := time.Now().Add(testwait.Bound)
	for {
		for _, r := range sink.records(t) {
			if ok(r) {
				return r
			}
		}
		if time.Now().After(deadline) {
			for _, r := range sink.records(t) {
				t.Logf("%s %s %s %s", r.Outcome, r.JSONRPC.ID, r.Tool, r.Reason)
			}
			t.Fatalf("no record %s while the server runs", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStdioLongLines: lines longer than the proxy inspects reach the client
// byte for byte, and each gets a true record at once, while the server
// still runs: a response over the limit is its request's NOT_CLASSIFIED
// record (id with its JSON type, method, tool, size and limit), whether its
// id comes first or last; a huge non-JSON line is STDIO_NOISE with its
// size; a huge response for an unknown id, and a flood of them, answer no
// request and are recorded as such, capped. No request is later recorded as
// cut by the server's exit.
func TestStdioLongLines(t *testing.T) {
	t.Parallel()
	const limit = 256 << 10
	calls := []struct{ id, tool string }{
		{"2", "big-id-first"}, {`"s-3"`, "big-id-last"}, {"4", "garbage"}, {"5", "unknown-id"}, {"6", "flood"}, {"7", "echo"},
	}
	run := startStdio(t, proxy.StdioOptions{MaxLineSize: limit, Env: append(os.Environ(), stdioScriptEnv+"=1")})
	for _, c := range calls {
		script := []string{scriptedCall(c.id, c.tool)}
		got := strings.Join(conversation(t, run.in, run.out, script), "")
		if want := scriptedAnswer(c.id, c.tool); got != want {
			t.Fatalf("%s: the client received %d bytes, not the %d the server wrote", c.tool, len(got), len(want))
		}
	}
	// The records, before the server exits.
	sink := run.sink
	for _, c := range []struct {
		id, tool string
		size     int
	}{{"2", "big-id-first", len(scriptedAnswer("2", "big-id-first"))}, {`"s-3"`, "big-id-last", len(scriptedAnswer(`"s-3"`, "big-id-last"))}} {
		r := waitRecord(t, sink, "for "+c.tool, func(r *record.Record) bool { return r.Tool == c.tool })
		if r.Outcome != classify.NotClassified || r.Layer != classify.NotClassified.Layer() || r.JSONRPC.ID.String() != c.id || r.Method != "tools/call" ||
			r.NotClassified == nil || r.NotClassified.Cause != classify.CauseBodyTooLarge || r.NotClassified.Size != int64(c.size) || r.NotClassified.Limit != limit {
			t.Errorf("%s: %s/%s id %s method %s %+v (%s)", c.tool, r.Layer, r.Outcome, r.JSONRPC.ID, r.Method, r.NotClassified, r.Reason)
		}
		if strings.Contains(r.Reason, "exited") || r.Network != nil || !strings.Contains(r.Note, "forwarded to the client untouched") {
			t.Errorf("%s: reason %q note %q network %+v", c.tool, r.Reason, r.Note, r.Network)
		}
	}
	garbage := waitRecord(t, sink, "for the garbage line", func(r *record.Record) bool { return r.Outcome == proxy.StdioNoise })
	if gsize := int64(len("garbage ") << 18); garbage.ResponseBytes != gsize+1 || !strings.Contains(garbage.Reason, fmt.Sprint(gsize+1)) ||
		garbage.ResponseBody == nil || !strings.HasPrefix(garbage.ResponseBody.Text, "garbage garbage") || !garbage.ResponseBody.Truncated {
		t.Errorf("garbage record: %d bytes, %q, body %+v", garbage.ResponseBytes, garbage.Reason, garbage.ResponseBody != nil)
	}
	unknown := waitRecord(t, sink, "for the unknown id", func(r *record.Record) bool {
		return r.Outcome == classify.NotClassified && strings.Contains(r.Reason, "424242")
	})
	if !strings.Contains(unknown.Reason, "no pending request") || unknown.Tool != "" {
		t.Errorf("unknown-id record: tool %q reason %q", unknown.Tool, unknown.Reason)
	}
	for _, tool := range []string{"unknown-id", "flood", "echo", "garbage"} {
		r := waitRecord(t, sink, "for "+tool, func(r *record.Record) bool { return r.Tool == tool })
		if r.Outcome != classify.ToolSuccess {
			t.Errorf("%s: %s (%s)", tool, r.Outcome, r.Reason)
		}
	}
	run.in.Close()
	run.wait(t)

	// After the exit: the flood is capped, with the count stated, and no
	// request was left to be called cut.
	stray, summaries := 0, 0
	for _, r := range sink.records(t) {
		if r.Outcome == classify.NetworkError {
			t.Errorf("a false cut: %s %s %s", r.Tool, r.JSONRPC.ID, r.Reason)
		}
		if r.Outcome == classify.InvalidEnvelope {
			if r.Summarized > 0 {
				summaries++
				// The cap of 1000 records is shared with the unknown-id
				// line's: 999 of the flood are recorded, 1501 counted.
				if r.Summarized != 1501 || !strings.Contains(r.Reason, "1501 more lines") {
					t.Errorf("summary record: %d, %q", r.Summarized, r.Reason)
				}
			} else {
				stray++
			}
		}
	}
	if stray != 999 || summaries != 1 {
		t.Errorf("%d records of stray responses and %d summaries; want 999 and one summary of the other 1501", stray, summaries)
	}
}

// TestStdioLineOverDefaultLimit is the defect as reported: a response line
// over the default 16 MiB reaches the client whole and is recorded at once
// as not classified, not as a request the server left when it exited.
func TestStdioLineOverDefaultLimit(t *testing.T) {
	t.Parallel()
	run := startStdio(t, proxy.StdioOptions{Env: append(os.Environ(), stdioScriptEnv+"=1")})
	got := strings.Join(conversation(t, run.in, run.out, []string{scriptedCall("9", "big-default")}), "")
	if want := scriptedAnswer("9", "big-default"); got != want {
		t.Fatalf("the client received %d bytes, not %d", len(got), len(want))
	}
	r := waitRecord(t, run.sink, "for big-default", func(r *record.Record) bool { return r.Tool == "big-default" })
	if r.Outcome != classify.NotClassified || r.JSONRPC.ID.String() != "9" || r.NotClassified == nil || r.NotClassified.Limit != 16<<20 {
		t.Errorf("%s id %s %+v (%s)", r.Outcome, r.JSONRPC.ID, r.NotClassified, r.Reason)
	}
	run.in.Close()
	run.wait(t)
}
